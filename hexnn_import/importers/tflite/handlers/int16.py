"""The int16 branch of TFLite's conv-like builtins, pools, MEAN and the data moves (RESHAPE, SQUEEZE,
EXPAND_DIMS, TRANSPOSE, PAD, CONCATENATION) for int16x8 models (TFLiteConverter's 16x8 mode: int16
activations with zero point 0, int8 per-channel weights, int64 biases), onto hexagon_nn's 16-bit ops;
``tflite.handlers.int16_activation`` has the elementwise builtins, activations and edges.

Each builtin is registered again over its 8-bit handler (these modules are last in ``HANDLER_MODULES``;
``tflite.int16_branch``): an operator with an int16 activation is checked and imported here, any other
goes to the 8-bit checker and handler unchanged. Lowering (``nodes.int16`` module doc): activations are
quint16 (TFLite's int16 codes XOR 0x8000); CONV_2D, DEPTHWISE_CONV_2D (block-diagonal), FULLY_CONNECTED
and MEAN are QuantizedTransposeConv2d_16x16p32to16 on LiteRT's own requantization multipliers
(``tflite.int16_weights``; a stride above 1 through QuantizedPad_u16 + SpaceToDepth_16); a pool whose
windows tile the input is exact in 16 bits, any other pool goes through 8 bits (Convert_u16_8, the 8-bit
pool, Convert_8_u16). Any other builtin with int16 activations is refused by its own checker (not
float32 or per-tensor int8/uint8).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import NNPad, shape4
# the 8-bit handlers are registered first, so they are the ones wrapped
import hexnn_import.importers.tflite.handlers.conv_pool  # noqa: F401
import hexnn_import.importers.tflite.handlers.movement  # noqa: F401
import hexnn_import.importers.tflite.handlers.reduce  # noqa: F401
import hexnn_import.importers.tflite.handlers.shape  # noqa: F401
from hexnn_import.importers.nodes.core import ACT_NONE, node3
from hexnn_import.importers.nodes.int16 import (block_diagonal, concat16, emit_linear16, mean_steps, pad16, range16,
                                               requantize16, reshape16, to16, to8)
from hexnn_import.importers.nodes.int16_windows import (avg_pool16, emit_strided16, max_pool16, tiling_windows,
                                                       zero_exact)
from hexnn_import.importers.tflite.common import PADDING, const_ints, fused
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.int16 import scale_of
from hexnn_import.importers.tflite.int16_branch import (CONV16, POOL16, branch, check16, emits16, finish16,
                                                        out_range16, value16)
from hexnn_import.importers.tflite.int16_weights import layer16
from hexnn_import.importers.tflite.int16_checks import (check_concat16, check_conv16, check_elementwise16,
                                                            check_mean16, check_pad16, check_pool16,
                                                            check_transpose16, mean_axes)
from hexnn_import.importers.tflite.reader import TFOperator


def conv_pads(size: tuple[int, int], k: tuple[int, int], stride: tuple[int, int], out: tuple[int, int],
              padding: NNPad) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of a SAME / VALID correlation (TFLite: the smaller half first)."""
    if padding != NNPad.SAME:
        return 0, 0, 0, 0
    th, tw = (max((o - 1) * s + kk - n, 0) for n, kk, s, o in zip(size, k, stride, out))
    return th // 2, th - th // 2, tw // 2, tw - tw // 2


def _conv(imp: TFLiteImporter, op: TFOperator, w: np.ndarray, bias: np.ndarray, steps: np.ndarray) -> None:
    """A CONV_2D / DEPTHWISE_CONV_2D of dense real filter ``w`` ``[O, H, W, I]``: stride 1 one transposed
    conv (``emit_linear16``), a larger stride through SpaceToDepth_16 (``emit_strided16``)."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    o = op.options
    w = dilate_real(w, o.DilationHFactor(), o.DilationWFactor())
    stride = (o.StrideH(), o.StrideW())
    out = shape4(yt.shape)
    pads = conv_pads(tuple(xt.shape[1:3]), w.shape[1:3], stride, out[1:3], PADDING[o.Padding()])
    x, rng = imp.value(op.inputs[0]), out_range16(imp, op)
    if stride == (1, 1):
        y = emit_linear16(imp, yt.name, x, w, bias, rng, pads, out, steps)
    else:
        y = emit_strided16(imp, yt.name, x, w, bias, rng, stride, (pads[0], pads[2]), out, steps)
    finish16(imp, op, y)


def dilate_real(w: np.ndarray, dh: int, dw: int) -> np.ndarray:
    """``[O, H, W, I]`` weights with ``d - 1`` zero taps between taps (a dilated filter)."""
    if dh == 1 and dw == 1:
        return w
    o, fh, fw, i = w.shape
    out = np.zeros((o, (fh - 1) * dh + 1, (fw - 1) * dw + 1, i), w.dtype)
    out[:, ::dh, ::dw, :] = w
    return out


def weights16(imp: TFLiteImporter, op: TFOperator, axis: int, n_out: int, reduced: bool = True
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The layer's real weights, bias and exact weight steps on LiteRT's multipliers (``tflite.int16_weights``)."""
    bias = imp.tensor(op.inputs[2]) if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
    return layer16(imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), bias, imp.tensor(op.outputs[0]), axis, n_out,
                   reduced)


# ---- conv-like ------------------------------------------------------------------------------
@tflite_op("CONV_2D", emits16("CONV_2D", CONV16), check16("CONV_2D", check_conv16))
@branch("CONV_2D")
def conv_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """CONV_2D int16x8: one QuantizedTransposeConv2d_16x16p32to16 per run of channels sharing a weight step
    (dilation as zero taps); a stride above 1 through QuantizedPad_u16 + SpaceToDepth_16 first."""
    _conv(imp, op, *weights16(imp, op, 0, imp.tensor(op.inputs[1]).shape[0]))


@tflite_op("DEPTHWISE_CONV_2D", emits16("DEPTHWISE_CONV_2D", CONV16),
           check16("DEPTHWISE_CONV_2D", check_conv16))
@branch("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """DEPTHWISE_CONV_2D int16x8: as CONV_2D on a block-diagonal dense filter (the 16-bit transposed conv
    has no groups: ``C`` times the MACs, the same sums)."""
    w, bias, steps = weights16(imp, op, 3, imp.tensor(op.inputs[1]).shape[-1])
    _conv(imp, op, block_diagonal(w[0], imp.tensor(op.inputs[0]).shape[-1]), bias, steps)


@tflite_op("FULLY_CONNECTED", emits16("FULLY_CONNECTED", CONV16), check16("FULLY_CONNECTED", check_conv16))
@branch("FULLY_CONNECTED")
def fully_connected(imp: TFLiteImporter, op: TFOperator) -> None:
    """FULLY_CONNECTED int16x8: a 1x1 transposed conv over ``[1, 1, rows, I]`` (Reshape around it)."""
    wt, yt = imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    n_out, n_in = wt.shape
    x = imp.value(op.inputs[0])
    rows = int(np.prod(x.shape)) // n_in
    x = reshape16(imp, x, (1, 1, rows, n_in), f"{yt.name}/flatten")
    w, bias, steps = weights16(imp, op, 0, n_out, reduced=False)
    y = emit_linear16(imp, yt.name, x, w.reshape(n_out, 1, 1, n_in), bias, out_range16(imp, op), (0, 0, 0, 0),
                      (1, 1, rows, n_out), steps)
    finish16(imp, op, reshape16(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))


@tflite_op("MEAN", emits16("MEAN", ("QuantizedTransposeConv2d_16x16p32to16", "Reshape")), check16("MEAN", check_mean16))
@branch("MEAN")
def mean(imp: TFLiteImporter, op: TFOperator) -> None:
    """MEAN over height and / or width (of the 4-D view) int16x8: a VALID transposed conv whose window is
    the reduced extent, block-diagonal weights ``1 / n`` (one rounding; the 16-bit weight ``1 / n`` is
    32767 codes, exact to float rounding). LiteRT rounds twice (the sum times ``s_in / s_out``, then the
    division by ``n``, reference_integer_ops::Mean), so about 1 output in 10 is 1 LSB apart."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    axes = mean_axes(imp, op)
    assert axes is not None
    n, h, w, c = shape4(xt.shape)
    kh, kw = (h if 1 in axes else 1), (w if 2 in axes else 1)
    filt = block_diagonal(np.full((kh, kw, c), 1.0 / (kh * kw)), c)
    y = emit_linear16(imp, yt.name, imp.value(op.inputs[0]), filt, np.zeros(c), range16(scale_of(yt)),
                      (0, 0, 0, 0), (n, h // kh, w // kw, c), mean_steps(kh * kw, c))
    imp.set_output(op.outputs[0], reshape16(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))


# ---- through 8 bits ------------------------------------------------------------------------
def _pool(imp: TFLiteImporter, op: TFOperator, hex_op: str) -> None:
    """Windows that tile the input (``nodes.int16_windows.tiling_windows``) on a zero-exact range: in 16
    bits (``max_pool16`` / ``avg_pool16``); any other pool through 8 bits."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    o = op.options
    x = imp.value(op.inputs[0])
    k, stride, out = (o.FilterHeight(), o.FilterWidth()), (o.StrideH(), o.StrideW()), shape4(yt.shape)
    layout = tiling_windows(x.shape, k, stride) if zero_exact(x.range) else None
    is_max = hex_op == "QuantizedMaxPool_8"
    if layout and is_max:
        y = max_pool16(imp, x, k, layout, out, yt.name)
    elif layout:
        y = avg_pool16(imp, x, k, layout, out_range16(imp, op), out, yt.name)
    else:
        x8 = to8(imp, x, yt.name, range16(scale_of(xt)))
        g = imp.graph
        refs = x8.triple() + [g.shape_ref((1, k[0], k[1], 1), f"{yt.name}/window"),
                              g.shape_ref((1, stride[0], stride[1], 1), f"{yt.name}/stride")]
        y = to16(imp, node3(imp, hex_op, refs, out, yt.name, x8.range, PADDING[o.Padding()]), yt.name)
    if fused(op) != ACT_NONE and not (layout and not is_max):
        y = requantize16(imp, y, out_range16(imp, op), yt.name)
    finish16(imp, op, y)


@tflite_op("MAX_POOL_2D", emits16("MAX_POOL_2D", POOL16 + ("QuantizedMaxPool_8",)),
           check16("MAX_POOL_2D", check_pool16))
@branch("MAX_POOL_2D")
def max_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """MAX_POOL_2D int16x8: tiling windows exact in 16 bits (SpaceToDepth_16 or a Reshape, a transposed
    conv per tap, QuantizedSub_u16 / QuantizedAdd_u16 for the max); otherwise through 8 bits (Convert_u16_8,
    QuantizedMaxPool_8, Convert_8_u16: the input rounded to 1/255 of its range)."""
    _pool(imp, op, "QuantizedMaxPool_8")


@tflite_op("AVERAGE_POOL_2D", emits16("AVERAGE_POOL_2D", POOL16 + ("QuantizedAvgPool_8",)),
           check16("AVERAGE_POOL_2D", check_pool16))
@branch("AVERAGE_POOL_2D")
def average_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """AVERAGE_POOL_2D int16x8: tiling windows side by side and one transposed conv of weight ``1 / (kh kw)``
    (one rounding); otherwise through 8 bits (QuantizedAvgPool_8)."""
    _pool(imp, op, "QuantizedAvgPool_8")


@tflite_op("SQUEEZE", emits16("SQUEEZE", ("Reshape",)), check16("SQUEEZE", check_elementwise16))
@branch("SQUEEZE")
def squeeze(imp: TFLiteImporter, op: TFOperator) -> None:
    """SQUEEZE int16x8: Reshape (the range passes through)."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], reshape16(imp, imp.value(op.inputs[0]), shape4(yt.shape), yt.name))


@tflite_op("EXPAND_DIMS", emits16("EXPAND_DIMS", ("Reshape",)), check16("EXPAND_DIMS", check_elementwise16))
@branch("EXPAND_DIMS")
def expand_dims(imp: TFLiteImporter, op: TFOperator) -> None:
    """EXPAND_DIMS int16x8: Reshape (the range passes through)."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], reshape16(imp, imp.value(op.inputs[0]), shape4(yt.shape), yt.name))


@tflite_op("TRANSPOSE", emits16("TRANSPOSE", ("Transpose_16",)), check16("TRANSPOSE", check_transpose16))
@branch("TRANSPOSE")
def transpose(imp: TFLiteImporter, op: TFOperator) -> None:
    """TRANSPOSE int16x8: Transpose_16 with the permutation on the 4-D view (the range passes through)."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    rank = len(xt.shape)
    perm = const_ints(imp, op, 1)
    assert perm is not None
    p4 = list(range(4 - rank)) + [int(a) % rank + 4 - rank for a in perm.reshape(-1)]
    x = imp.value(op.inputs[0])
    refs = [x.data, imp.int_const(p4, f"{yt.name}/perm"), x.mn, x.mx]
    y = node3(imp, "Transpose_16", refs, shape4(yt.shape), yt.name, x.range, etype="quint16")  # type: ignore[arg-type]
    imp.set_output(op.outputs[0], y)


@tflite_op("RESHAPE", emits16("RESHAPE", ("Reshape",)), check16("RESHAPE", check_elementwise16))
@branch("RESHAPE")
def reshape(imp: TFLiteImporter, op: TFOperator) -> None:
    """RESHAPE int16x8: Reshape (any element type); onto the output's scale only when TFLite's differ."""
    yt = imp.tensor(op.outputs[0])
    y = reshape16(imp, imp.value(op.inputs[0]), shape4(yt.shape), yt.name)
    if scale_of(yt) != scale_of(imp.tensor(op.inputs[0])):  # the value keeps its range otherwise
        y = requantize16(imp, y, range16(scale_of(yt)), yt.name)
    imp.set_output(op.outputs[0], y)


@tflite_op("PAD", emits16("PAD", ("QuantizedPad_u16", "QuantizedAdd_u16")), check16("PAD", check_pad16))
@branch("PAD")
def pad(imp: TFLiteImporter, op: TFOperator) -> None:
    """PAD int16x8: QuantizedPad_u16 with 0.0 (an exact code; TFLite pads with the zero point 0), then onto
    the output's scale when TFLite's differ."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    x = imp.value(op.inputs[0])
    pads = const_ints(imp, op, 1)
    assert pads is not None
    rows = [(0, 0)] * (4 - len(xt.shape)) + [(int(a), int(b)) for a, b in pads.reshape(-1, 2)]
    y = pad16(imp, x, rows, shape4(yt.shape), yt.name)
    if scale_of(yt) != scale_of(xt):
        y = requantize16(imp, y, range16(scale_of(yt)), yt.name)
    imp.set_output(op.outputs[0], y)


@tflite_op("CONCATENATION", emits16("CONCATENATION", ("QuantizedPad_u16", "QuantizedAdd_u16")),
           check16("CONCATENATION", check_concat16))
@branch("CONCATENATION")
def concatenation(imp: TFLiteImporter, op: TFOperator) -> None:
    """CONCATENATION int16x8 on any axis: each input padded into place, summed by QuantizedAdd_u16 onto the
    output's range (``nodes.int16.concat16``: one rounding per element, none on the output's scale). The
    converter gives the inputs the output's scale; LiteRT's int16 kernel copies codes even where they differ
    (measured), where this rescales them."""
    yt = imp.tensor(op.outputs[0])
    rank = len(yt.shape)
    axis = int(op.options.Axis()) % rank + 4 - rank
    values = [value16(imp, i) for i in op.inputs]
    finish16(imp, op, concat16(imp, values, axis, out_range16(imp, op), shape4(yt.shape), yt.name))
