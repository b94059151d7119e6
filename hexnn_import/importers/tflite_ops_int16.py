"""The int16 branch of the TFLite builtins an int16x8 CNN uses (TFLiteConverter's 16x8 mode: int16
activations with zero point 0, int8 per-channel weights, int64 biases), onto hexagon_nn's 16-bit ops.

Each builtin here is registered again over its 8-bit handler (this module is last in ``HANDLER_MODULES``):
an operator whose activations are int16 (:func:`int16_op`) is checked and imported here, any other goes
to the 8-bit handler and checker unchanged. Lowering (``emit_int16`` module doc): activations are quint16
(TFLite's int16 codes XOR 0x8000), conv-like layers one QuantizedTransposeConv2d_16x16p32to16, add / mul
QuantizedAdd_u16 / QuantizedMul_u16; pools and softmax go through 8 bits (Convert_u16_8, the 8-bit op,
Convert_8_u16); QUANTIZE / DEQUANTIZE at float edges split a code into two 8-bit halves. Any other builtin
with int16 activations is refused by its own checker (not float32 or per-tensor int8/uint8).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from hexnn_import.graph import NNPad, shape4
from hexnn_import.importers import tflite_ops, tflite_ops_activation, tflite_ops_elementwise  # noqa: F401
from hexnn_import.importers import tflite_ops_quantize, tflite_ops_reduce  # noqa: F401  (registered first)
from hexnn_import.importers.emit import ACT_CLIP, ACT_NONE, ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1, node3
from hexnn_import.importers.emit_activation import emit_softmax
from hexnn_import.importers.emit_int16 import (avg_pool16, block_diagonal, binary16, clipped_range, const16,
                                               dequantize16, emit_linear16, emit_strided16, max_pool16, quantize16,
                                               range16, requantize16, reshape16, to16, to8, zero_exact)
from hexnn_import.importers.tflite_common import PADDING, check_fused, fused
from hexnn_import.importers.tflite_import import HANDLERS, OP_EMITS, Checker, Handler, TFLiteImporter, tflite_op
from hexnn_import.importers.tflite_int16 import is_int16, scale_of
from hexnn_import.importers.tflite_ops import bias_real
from hexnn_import.importers.tflite_ops_int16_checks import (check_conv16, check_edge16, check_elementwise16,
                                                            check_mean16, check_pool16, int16_op, mean_axes)
from hexnn_import.importers.tflite_reader import TFOperator
from hexnn_import.importers.values import Value

CONV16 = ("QuantizedTransposeConv2d_16x16p32to16", "QuantizedPad_u16", "SpaceToDepth_16", "Reshape")
VIA8 = ("Convert_u16_8", "Convert_8_u16", "QuantizedAdd_u16")
POOL16 = VIA8 + ("SpaceToDepth_16", "QuantizedTransposeConv2d_16x16p32to16", "QuantizedSub_u16")
EDGE16 = ("Quantize", "Dequantize", "Sub_f", "Add_f", "Convert_8_u16", "Convert_u16_8", "QuantizedAdd_u16",
          "QuantizedSub_u16")


def emits16(name: str, extra: tuple[str, ...]) -> tuple[str, ...]:
    """The ops builtin ``name`` may emit: its 8-bit handler's and the int16 branch's."""
    return OP_EMITS[name] + tuple(e for e in extra if e not in OP_EMITS[name])


def check16(name: str, check: Checker) -> Checker:
    """The checker of builtin ``name``: ``check`` for an int16 operator, the 8-bit checker otherwise."""
    check8 = HANDLERS[name][0]

    def either(imp: TFLiteImporter, op: TFOperator) -> str | None:
        return check(imp, op) if int16_op(imp, op) else check8(imp, op)

    either.__doc__ = f"{(check8.__doc__ or '').strip()} int16x8: {(check.__doc__ or '').strip()}"
    return either


def branch(name: str) -> Callable[[Handler], Handler]:
    """Wrap the int16 handler of builtin ``name`` so other operators go to the 8-bit handler registered
    before it (apply below ``@tflite_op``, which then registers the wrapper)."""
    handle8 = HANDLERS[name][1]

    def deco(fn: Handler) -> Handler:
        @functools.wraps(fn)
        def handle(imp: TFLiteImporter, op: TFOperator) -> None:
            (fn if int16_op(imp, op) else handle8)(imp, op)

        return handle

    return deco


# ---- helpers ----------------------------------------------------------------------------
def value16(imp: TFLiteImporter, index: int) -> Value:
    """The quint16 value of an int16 tensor (a constant becomes a quint16 Const)."""
    t = imp.tensor(index)
    if t.data is not None:
        s = scale_of(t)
        key = -1 - index
        if key not in imp.values:
            imp.values[key] = const16(imp, np.asarray(t.data, np.float64).reshape(shape4(t.shape)) * s, range16(s),
                                      t.name)
        return imp.values[key]
    return imp.value(index)


def out_range16(imp: TFLiteImporter, op: TFOperator) -> tuple[float, float]:
    """The output tensor's range cut to the fused activation (``emit_int16.clipped_range``)."""
    rng = range16(scale_of(imp.tensor(op.outputs[0])))
    act = fused(op)
    return rng if act == ACT_NONE else clipped_range(rng, *ACT_CLIP[act])


def conv_pads(size: tuple[int, int], k: tuple[int, int], stride: tuple[int, int], out: tuple[int, int],
              padding: NNPad) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of a SAME / VALID correlation (TFLite: the smaller half first)."""
    if padding != NNPad.SAME:
        return 0, 0, 0, 0
    th, tw = (max((o - 1) * s + kk - n, 0) for n, kk, s, o in zip(size, k, stride, out))
    return th // 2, th - th // 2, tw // 2, tw - tw // 2


def _conv(imp: TFLiteImporter, op: TFOperator, w: np.ndarray, n_out: int) -> None:
    """A CONV_2D / DEPTHWISE_CONV_2D of dense real filter ``w`` ``[O, H, W, I]``: stride 1 one transposed
    conv (``emit_linear16``), a larger stride through SpaceToDepth_16 (``emit_strided16``)."""
    xt, wt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    o = op.options
    w = dilate_real(w, o.DilationHFactor(), o.DilationWFactor())
    stride = (o.StrideH(), o.StrideW())
    out = shape4(yt.shape)
    pads = conv_pads(tuple(xt.shape[1:3]), w.shape[1:3], stride, out[1:3], PADDING[o.Padding()])
    x, bias, rng = imp.value(op.inputs[0]), bias_real(imp, op, xt, wt, n_out), out_range16(imp, op)
    if stride == (1, 1):
        y = emit_linear16(imp, yt.name, x, w, bias, rng, pads, out, exact_step(imp, op))
    else:
        y = emit_strided16(imp, yt.name, x, w, bias, rng, stride, (pads[0], pads[2]), out, exact_step(imp, op))
    imp.set_output(op.outputs[0], y)


def dilate_real(w: np.ndarray, dh: int, dw: int) -> np.ndarray:
    """``[O, H, W, I]`` weights with ``d - 1`` zero taps between taps (a dilated filter)."""
    if dh == 1 and dw == 1:
        return w
    o, fh, fw, i = w.shape
    out = np.zeros((o, (fh - 1) * dh + 1, (fw - 1) * dw + 1, i), w.dtype)
    out[:, ::dh, ::dw, :] = w
    return out


def real_weights(imp: TFLiteImporter, op: TFOperator, axis: int) -> np.ndarray:
    """The int8 weights of a conv-like operator in real units (per-channel scales along ``axis``)."""
    wt = imp.tensor(op.inputs[1])
    assert wt.data is not None and wt.quant is not None
    scale = np.asarray(wt.quant.scale, np.float64).reshape(-1)
    shape = [1] * wt.data.ndim
    shape[axis] = -1
    return np.asarray(wt.data, np.float64) * (scale.reshape(shape) if scale.size > 1 else scale[0])


def exact_step(imp: TFLiteImporter, op: TFOperator) -> float | None:
    """``s / 256`` when one weight scale serves every channel (the 16-bit weight grid that holds the int8
    codes exactly), else None."""
    assert imp.tensor(op.inputs[1]).quant is not None
    scale = np.asarray(imp.tensor(op.inputs[1]).quant.scale, np.float64).reshape(-1)
    return float(scale[0]) / 256.0 if np.all(scale == scale[0]) else None


# ---- conv-like ------------------------------------------------------------------------------
@tflite_op("CONV_2D", emits16("CONV_2D", CONV16), check16("CONV_2D", check_conv16))
@branch("CONV_2D")
def conv_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """CONV_2D int16x8: one QuantizedTransposeConv2d_16x16p32to16 (dilation as zero taps); a stride above 1
    through QuantizedPad_u16 + SpaceToDepth_16 first."""
    _conv(imp, op, real_weights(imp, op, 0), imp.tensor(op.inputs[1]).shape[0])


@tflite_op("DEPTHWISE_CONV_2D", emits16("DEPTHWISE_CONV_2D", CONV16),
           check16("DEPTHWISE_CONV_2D", check_conv16))
@branch("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """DEPTHWISE_CONV_2D int16x8: as CONV_2D on a block-diagonal dense filter (the 16-bit transposed conv
    has no groups: ``C`` times the MACs, the same sums)."""
    w = real_weights(imp, op, 3)
    _conv(imp, op, block_diagonal(w[0], imp.tensor(op.inputs[0]).shape[-1]), w.shape[-1])


@tflite_op("FULLY_CONNECTED", emits16("FULLY_CONNECTED", CONV16), check16("FULLY_CONNECTED", check_conv16))
@branch("FULLY_CONNECTED")
def fully_connected(imp: TFLiteImporter, op: TFOperator) -> None:
    """FULLY_CONNECTED int16x8: a 1x1 transposed conv over ``[1, 1, rows, I]`` (Reshape around it)."""
    xt, wt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    n_out, n_in = wt.shape
    x = imp.value(op.inputs[0])
    rows = int(np.prod(x.shape)) // n_in
    x = reshape16(imp, x, (1, 1, rows, n_in), f"{yt.name}/flatten")
    w = real_weights(imp, op, 0)
    y = emit_linear16(imp, yt.name, x, w.reshape(n_out, 1, 1, n_in), bias_real(imp, op, xt, wt, n_out),
                      out_range16(imp, op), (0, 0, 0, 0), (1, 1, rows, n_out), exact_step(imp, op))
    imp.set_output(op.outputs[0], reshape16(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))


@tflite_op("MEAN", emits16("MEAN", CONV16), check16("MEAN", check_mean16))
@branch("MEAN")
def mean(imp: TFLiteImporter, op: TFOperator) -> None:
    """MEAN over height and width int16x8: a VALID transposed conv with a block-diagonal ``1 / (H W)``
    filter (one rounding; the 16-bit weight ``1 / (H W)`` is 32767 codes, exact to float rounding)."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    _, h, w, c = shape4(xt.shape)
    filt = block_diagonal(np.full((h, w, c), 1.0 / (h * w)), c)
    y = emit_linear16(imp, yt.name, imp.value(op.inputs[0]), filt, np.zeros(c), range16(scale_of(yt)),
                      (0, 0, 0, 0), (1, 1, 1, c))
    imp.set_output(op.outputs[0], reshape16(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))
    assert mean_axes(imp, op) == (1, 2)


# ---- through 8 bits ------------------------------------------------------------------------
def _pool(imp: TFLiteImporter, op: TFOperator, hex_op: str) -> None:
    """A window equal to its stride that tiles the input, on a zero-exact range: in 16 bits
    (``emit_int16.max_pool16`` / ``avg_pool16``); any other pool through 8 bits."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    o = op.options
    x = imp.value(op.inputs[0])
    k = o.FilterHeight()
    tiles = (o.FilterWidth() == k == o.StrideH() == o.StrideW() and x.shape[1] % k == 0 and x.shape[2] % k == 0
             and zero_exact(x.range))
    if tiles and hex_op == "QuantizedMaxPool_8":
        y = max_pool16(imp, x, k, yt.name)
    elif tiles:
        y = avg_pool16(imp, x, k, out_range16(imp, op), yt.name)
    else:
        x8 = to8(imp, x, yt.name, range16(scale_of(xt)))
        g = imp.graph
        refs = x8.triple() + [g.shape_ref((1, k, o.FilterWidth(), 1), f"{yt.name}/window"),
                              g.shape_ref((1, o.StrideH(), o.StrideW(), 1), f"{yt.name}/stride")]
        y = to16(imp, node3(imp, hex_op, refs, shape4(yt.shape), yt.name, x8.range, PADDING[o.Padding()]), yt.name)
    if fused(op) != ACT_NONE and not (tiles and hex_op == "QuantizedAvgPool_8"):
        y = requantize16(imp, y, out_range16(imp, op), yt.name)
    imp.set_output(op.outputs[0], y)


@tflite_op("MAX_POOL_2D", emits16("MAX_POOL_2D", POOL16 + ("QuantizedMaxPool_8",)),
           check16("MAX_POOL_2D", check_pool16))
@branch("MAX_POOL_2D")
def max_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """MAX_POOL_2D int16x8: window = stride, tiling: exact in 16 bits (SpaceToDepth_16, a 1x1 transposed
    conv per tap, QuantizedSub_u16 / QuantizedAdd_u16 for the max); otherwise through 8 bits (Convert_u16_8,
    QuantizedMaxPool_8, Convert_8_u16: the input rounded to 1/255 of its range)."""
    _pool(imp, op, "QuantizedMaxPool_8")


@tflite_op("AVERAGE_POOL_2D", emits16("AVERAGE_POOL_2D", POOL16 + ("QuantizedAvgPool_8",)),
           check16("AVERAGE_POOL_2D", check_pool16))
@branch("AVERAGE_POOL_2D")
def average_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """AVERAGE_POOL_2D int16x8: window = stride, tiling: SpaceToDepth_16 and one 1x1 transposed conv of
    weight ``1 / k**2`` (one rounding); otherwise through 8 bits (QuantizedAvgPool_8)."""
    _pool(imp, op, "QuantizedAvgPool_8")


@tflite_op("SOFTMAX", emits16("SOFTMAX", VIA8 + ("QuantizedSoftmax_8",)), check16("SOFTMAX", check_elementwise16))
@branch("SOFTMAX")
def softmax(imp: TFLiteImporter, op: TFOperator) -> None:
    """SOFTMAX int16x8 through 8 bits: Convert_u16_8, QuantizedSoftmax_8 onto ``[0, 1]``, Convert_8_u16
    (probabilities to 1/255)."""
    yt = imp.tensor(op.outputs[0])
    x8 = to8(imp, imp.value(op.inputs[0]), yt.name, range16(scale_of(imp.tensor(op.inputs[0]))))
    imp.set_output(op.outputs[0], to16(imp, emit_softmax(imp, x8, float(op.options.Beta()), yt.name), yt.name))


# ---- 16-bit elementwise, shape, activations -------------------------------------------------------
@tflite_op("ADD", emits16("ADD", ("QuantizedAdd_u16",)), check16("ADD", check_elementwise16))
@branch("ADD")
def add(imp: TFLiteImporter, op: TFOperator) -> None:
    """ADD int16x8: QuantizedAdd_u16 onto the output range (fused activation: the range cut, codes saturate)."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], binary16(imp, "QuantizedAdd_u16", value16(imp, op.inputs[0]),
                                           value16(imp, op.inputs[1]), out_range16(imp, op), shape4(yt.shape),
                                           yt.name))


@tflite_op("SUB", emits16("SUB", ("QuantizedSub_u16",)), check16("SUB", check_elementwise16))
@branch("SUB")
def sub(imp: TFLiteImporter, op: TFOperator) -> None:
    """SUB int16x8: QuantizedSub_u16 onto the output range."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], binary16(imp, "QuantizedSub_u16", value16(imp, op.inputs[0]),
                                           value16(imp, op.inputs[1]), out_range16(imp, op), shape4(yt.shape),
                                           yt.name))


@tflite_op("MUL", emits16("MUL", ("QuantizedMul_u16",)), check16("MUL", check_elementwise16))
@branch("MUL")
def mul(imp: TFLiteImporter, op: TFOperator) -> None:
    """MUL int16x8: QuantizedMul_u16 onto the output range."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], binary16(imp, "QuantizedMul_u16", value16(imp, op.inputs[0]),
                                           value16(imp, op.inputs[1]), out_range16(imp, op), shape4(yt.shape),
                                           yt.name))


@tflite_op("RESHAPE", emits16("RESHAPE", ("Reshape",)), check16("RESHAPE", check_elementwise16))
@branch("RESHAPE")
def reshape(imp: TFLiteImporter, op: TFOperator) -> None:
    """RESHAPE int16x8: Reshape (any element type); onto the output's scale only when TFLite's differ."""
    yt = imp.tensor(op.outputs[0])
    y = reshape16(imp, imp.value(op.inputs[0]), shape4(yt.shape), yt.name)
    if scale_of(yt) != scale_of(imp.tensor(op.inputs[0])):  # the value keeps its range otherwise
        y = requantize16(imp, y, range16(scale_of(yt)), yt.name)
    imp.set_output(op.outputs[0], y)


def _clip(imp: TFLiteImporter, op: TFOperator, act: int) -> None:
    """QuantizedAdd_u16 with a zero onto the output range cut to the clip interval (one rounding)."""
    yt = imp.tensor(op.outputs[0])
    rng = clipped_range(range16(scale_of(yt)), *ACT_CLIP[act])
    imp.set_output(op.outputs[0], requantize16(imp, imp.value(op.inputs[0]), rng, yt.name))


@tflite_op("RELU", emits16("RELU", ("QuantizedAdd_u16",)), check16("RELU", check_elementwise16))
@branch("RELU")
def relu(imp: TFLiteImporter, op: TFOperator) -> None:
    """RELU int16x8: onto ``[0, 65536 s]`` (codes saturate at 0)."""
    _clip(imp, op, ACT_RELU)


@tflite_op("RELU6", emits16("RELU6", ("QuantizedAdd_u16",)), check16("RELU6", check_elementwise16))
@branch("RELU6")
def relu6(imp: TFLiteImporter, op: TFOperator) -> None:
    """RELU6 int16x8: onto the output range cut to ``[0, 6]``."""
    _clip(imp, op, ACT_RELU6)


@tflite_op("RELU_N1_TO_1", emits16("RELU_N1_TO_1", ("QuantizedAdd_u16",)),
           check16("RELU_N1_TO_1", check_elementwise16))
@branch("RELU_N1_TO_1")
def relu_n1_to_1(imp: TFLiteImporter, op: TFOperator) -> None:
    """RELU_N1_TO_1 int16x8: onto the output range cut to ``[-1, 1]``."""
    _clip(imp, op, ACT_RELU_N1_TO_1)


# ---- float / int8 edges ----------------------------------------------------------------------------
@tflite_op("QUANTIZE", emits16("QUANTIZE", EDGE16), check16("QUANTIZE", check_edge16))
@branch("QUANTIZE")
def quantize(imp: TFLiteImporter, op: TFOperator) -> None:
    """QUANTIZE to or from int16: float -> int16 in two 8-bit halves (``emit_int16.quantize16``), int16 ->
    int16 QuantizedAdd_u16 with a zero, int8 -> int16 Convert_8_u16 then that, int16 -> int8
    Convert_u16_8 onto the int8 range."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    if not is_int16(yt):  # int16 -> int8 / uint8
        v = imp.value(op.inputs[0])
        out = imp.qrange(yt)
        y = node3(imp, "Convert_u16_8", v.triple() + list(imp.range_consts(out, f"{yt.name}/to8")), v.shape,
                  f"{yt.name}/to8", out)
    elif xt.dtype == "float32":
        v = imp.value(op.inputs[0])
        src = imp.graph.node(v.data.src_id)  # the float behind the INPUT's Quantize / AutoQuantize
        y = quantize16(imp, src.inputs[0], v.shape, scale_of(yt), yt.name)
    elif is_int16(xt):
        y = requantize16(imp, value16(imp, op.inputs[0]), range16(scale_of(yt)), yt.name)
    else:  # int8 / uint8 -> int16
        y = requantize16(imp, to16(imp, imp.qvalue(op.inputs[0]), yt.name), range16(scale_of(yt)), yt.name)
    imp.set_output(op.outputs[0], y)


@tflite_op("DEQUANTIZE", emits16("DEQUANTIZE", EDGE16), check16("DEQUANTIZE", check_edge16))
@branch("DEQUANTIZE")
def dequantize(imp: TFLiteImporter, op: TFOperator) -> None:
    """DEQUANTIZE of int16: a graph output in two 8-bit halves (``emit_int16.dequantize16``, float32), an
    inner tensor as the float model's quint8 (Convert_u16_8 over its range)."""
    yt = imp.tensor(op.outputs[0])
    v = imp.value(op.inputs[0])
    if op.outputs[0] in imp.model.outputs:
        imp.set_output(op.outputs[0], Value(dequantize16(imp, v, yt.name), v.shape, "float"))
    else:
        imp.set_output(op.outputs[0], to8(imp, v, yt.name))


__all__ = ["branch", "check16", "emits16", "value16", "check_fused"]
