"""Emitters shared by the importers: one lowering per pattern, for every source format.

Each function appends hexagon_nn nodes to ``b.graph`` (a
:class:`~hexnn_import.importers.nodes.builder.GraphBuilder`) and returns the
:class:`Value` of the result. Where an output range is ``None`` (a float
model imported without calibration) the emitters use the ops that compute
ranges from the data at run time (SEMANTICS §2, §4): AutoQuantize,
8x8to32 products, QuantizedBiasAdd_32p32to32,
QuantizeDownAndShrinkRange_32to8.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.errors import ModelFormatError
from hexnn_import.graph import NNPad, OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.values import Value

Range = tuple[float, float]

ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 0, 1, 2, 3  # TFLite's ActivationFunctionType
#: activation -> the real interval it clips to
ACT_CLIP = {ACT_RELU: (0.0, math.inf), ACT_RELU_N1_TO_1: (-1.0, 1.0), ACT_RELU6: (0.0, 6.0)}


def node3(b: GraphBuilder, op: str, refs: list[Ref], shape: tuple[int, ...], name: str,
          rng: Range | None, padding: NNPad = NNPad.NA, etype: str = "quint8") -> Value:
    """Append an op with the usual (data, min, max) outputs and return its value."""
    shape4 = tuple(int(v) for v in shape)
    node = b.graph.append(op, refs, [OutputDef(shape4, etype), OutputDef.scalar(), OutputDef.scalar()], padding, name)
    nid = node.node_id
    return Value(Ref(nid, 0), shape4, etype, Ref(nid, 1), Ref(nid, 2), rng)  # type: ignore[arg-type]


def same_range(a: Range | None, c: Range | None) -> bool:
    """Two known ranges that agree to float32 precision: ``np.allclose(a, c, rtol=1e-6, atol=1e-30)``, on the
    two pairs of floats without numpy's per-call cost (issue 38: a third of a 10,000-ADD import)."""
    if a is None or c is None:
        return False
    if len(a) != len(c):
        return bool(np.allclose(a, c, rtol=1e-6, atol=1e-30))
    return all(_isclose(float(x), float(y)) for x, y in zip(a, c))


def _isclose(x: float, y: float) -> bool:
    """``np.isclose(x, y, rtol=1e-6, atol=1e-30)``: equal infinities close, NaN never."""
    if math.isfinite(x) and math.isfinite(y):
        return abs(x - y) <= 1e-30 + 1e-6 * abs(y)
    return x == y


# ---- quantize / dequantize at the float boundary ----------------------------------------
def quantize_float(b: GraphBuilder, x: Ref, shape: tuple[int, ...], rng: Range | None, name: str) -> Value:
    """float -> quint8: ``Quantize`` on a fixed range, ``AutoQuantize`` when the range is run-time (§2)."""
    if rng is None:
        return node3(b, "AutoQuantize", [x], shape, f"{name}/autoquantize", None)
    mn, mx = b.range_consts(rng, f"{name}/quantize")
    return node3(b, "Quantize", [x, mn, mx], shape, f"{name}/quantize", rng)


def dequantize(b: GraphBuilder, v: Value, name: str) -> Ref:
    """quint8 -> float (``Dequantize``, SEMANTICS §2)."""
    node = b.graph.append("Dequantize", v.triple(), [OutputDef(v.shape, "float")], name=f"{name}/dequantize")
    return Ref(node.node_id, 0)


# ---- requantization --------------------------------------------------------------------
def requantize_to(b: GraphBuilder, v: Value, rng: Range | None, name: str) -> Value:
    """``v`` on range ``rng``: unchanged when it already is, else Requantize_8to8 (SEMANTICS §4).

    ``rng`` None (run-time) keeps ``v``. ``rng`` must hold 0 on an exact code
    (every range from a scale / zero point does).
    """
    if rng is None or same_range(v.range, rng):
        return v
    mn, mx = b.range_consts(rng, f"{name}/requantize")
    return node3(b, "Requantize_8to8", v.triple() + [mn, mx], v.shape, f"{name}/requantize", rng)


def to_8bit(b: GraphBuilder, acc: Value, rng: Range | None, name: str) -> Value:
    """qint32 -> quint8: Requantize_32to8 onto ``rng``, or QuantizeDownAndShrinkRange_32to8 (§4)."""
    if rng is None:
        return node3(b, "QuantizeDownAndShrinkRange_32to8", acc.triple(), acc.shape, f"{name}/shrink", None)
    mn, mx = b.range_consts(rng, f"{name}/out")
    return node3(b, "Requantize_32to8", acc.triple() + [mn, mx], acc.shape, f"{name}/requantize", rng)


# ---- activations ------------------------------------------------------------------------
def clip_implied(rng: Range | None, lo: float, hi: float) -> bool:
    """True when a fixed range lies inside the clip interval ``[lo, hi]`` to within half a step: clipping
    then changes no code (the bounds land on codes 0 / 255, as a converter's clamp bounds
    ``round(6 / scale) + zp`` do), so the range is the activation and no node is needed.

    The one rule for every activation folded into a range: a fused TFLite activation
    (:func:`apply_activation`), a Relu / Clip onto its own output range
    (``nodes.activation.emit_clip_activation``, the ONNX Clip handler) and an ONNX Relu / Clip the
    planner folds into the layer before it (``onnx.fuse.plan_activations``).
    """
    if rng is None:
        return False
    half = (rng[1] - rng[0]) / 510.0
    return rng[0] >= lo - half and rng[1] <= hi + half


def apply_activation(b: GraphBuilder, v: Value, act: int, name: str) -> Value:
    """A fused activation (RELU, RELU6, RELU_N1_TO_1): no node when the output range already clips.

    A quantized model's output range usually is the clipped interval, so the
    activation is folded into the range; otherwise QuantizedRelu_8,
    QuantizedReluX_8 or QuantizedClamp_8 is appended.
    """
    if act == ACT_NONE:
        return v
    if act not in ACT_CLIP:
        raise ValueError(f"activation {act} is not RELU, RELU6 or RELU_N1_TO_1")
    lo, hi = ACT_CLIP[act]
    if clip_implied(v.range, lo, hi):
        return v
    if act == ACT_RELU:  # Relu_8 / ReluX_8 keep their input range (SEMANTICS §6)
        return node3(b, "QuantizedRelu_8", v.triple(), v.shape, f"{name}/relu", v.range)
    if act == ACT_RELU6:
        six = b.float_const(6.0, f"{name}/relu6/max")
        return node3(b, "QuantizedReluX_8", v.triple() + [six], v.shape, f"{name}/relu6", v.range)
    c_lo, c_hi = b.range_consts((lo, hi), f"{name}/clamp")
    return node3(b, "QuantizedClamp_8", v.triple() + [c_lo, c_hi], v.shape, f"{name}/clamp", None)


# ---- shape -------------------------------------------------------------------------------
def check_same_count(have: tuple[int, ...], want: tuple[int, ...], name: str) -> None:
    """ModelFormatError (at import, naming the node) when a reshape would change the number of values:
    a file whose declared shapes disagree would otherwise convert and fail when run."""
    if math.prod(have) != math.prod(want):
        raise ModelFormatError(f"{name}: reshapes {list(have)} ({math.prod(have)} values) to {list(want)} "
                               f"({math.prod(want)} values); the file's shapes are inconsistent")


def reshape_value(b: GraphBuilder, v: Value, shape: tuple[int, int, int, int], name: str) -> Value:
    """QuantizedReshape of ``v`` to a 4-D shape (no node when the shape already matches)."""
    if tuple(v.shape) == tuple(shape):
        return v
    check_same_count(v.shape, shape, name)
    target = b.int_const(list(shape), f"{name}/shape")
    return node3(b, "QuantizedReshape", [v.data, target, v.mn, v.mx], shape, name, v.range, etype=v.etype)  # type: ignore[list-item]


# ---- conv-like layers ------------------------------------------------------------------------
def bias_qint32(b: GraphBuilder, bias_real: np.ndarray, prod: float, name: str) -> list[Ref]:
    """[bias, bias_min, bias_max] refs: qint32 codes on step ``prod / 2**m`` (m as fine as int32 allows).

    The range is ``±2**31`` steps (SEMANTICS §3's qint32 convention), so the
    supernode adds the bias on a power-of-two fraction of its product step.
    """
    target = bias_real / prod
    peak = float(np.max(np.abs(target))) if target.size else 0.0
    m = 24 if peak == 0 else min(24, math.floor(math.log2((2 ** 31 - 1) / peak)))
    codes = np.clip(np.round(target * 2.0 ** m), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    b_step = prod / 2.0 ** m
    return [b.graph.const_ref(codes.reshape(1, 1, 1, -1), name),
            b.float_const(-2.0 ** 31 * b_step, f"{name}/min"), b.float_const(2.0 ** 31 * b_step, f"{name}/max")]


def bias_dynamic(b: GraphBuilder, bias_real: np.ndarray, name: str) -> list[Ref]:
    """[bias, min, max] for QuantizedBiasAdd_32p32to32 when the product step is only known at run time.

    The bias gets its own symmetric qint32 range ``±max|b| * 2**8`` (codes up to
    ``2**23`` in magnitude, so the rescale onto the wider range loses nothing
    that matters); the op rescales both operands to the wider range (§3).
    """
    peak = float(np.max(np.abs(bias_real))) if bias_real.size else 0.0
    half = max(peak, 1e-6) * 2.0 ** 8
    step = 2.0 * half / 2.0 ** 32
    codes = np.clip(np.round(bias_real / step), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    return [b.graph.const_ref(codes.reshape(1, 1, 1, -1), name),
            b.float_const(-half, f"{name}/min"), b.float_const(half, f"{name}/max")]


def check_conv_shape(name: str, x_shape: tuple[int, ...], w_shape: tuple[int, ...], stride: tuple[int, int],
                     padding: NNPad, out_shape: tuple[int, ...], depthwise: bool) -> None:
    """ModelFormatError (at import, naming the layer) when the declared output shape is not what the input,
    the HWIO window, the stride and the padding give (ops/padding.py ``out_and_pad``: VALID
    ``(size - k) // s + 1``, SAME ``ceil(size / s)``): a damaged file would convert and fail when run."""
    if len(x_shape) != 4 or len(w_shape) != 4 or padding not in (NNPad.VALID, NNPad.SAME, NNPad.SAME_CAFFE):
        return
    want = [x_shape[0]]
    for size, k, s in ((x_shape[1], w_shape[0], stride[0]), (x_shape[2], w_shape[1], stride[1])):
        if s < 1 or (padding == NNPad.VALID and 0 < size < k):
            want = []
            break
        want.append(0 if size == 0 else (size - k) // s + 1 if padding == NNPad.VALID else -(-size // s))
    if want:
        want.append(w_shape[2] * w_shape[3] if depthwise else w_shape[3])
    if tuple(want) != tuple(out_shape):
        raise ModelFormatError(
            f"{name}: output shape {list(out_shape)} does not follow from input {list(x_shape)}, window "
            f"{w_shape[0]}x{w_shape[1]}, stride {stride[0]}x{stride[1]}, padding {padding.name}; the file's "
            f"shapes are inconsistent")


def declared_chain(x: Value, out_range: Range | None, k: np.ndarray | None, depthwise: bool) -> bool:
    """Whether :func:`emit_conv` declares the layer's chain for fusion: fixed input and output ranges, and no
    channel scales on a depthwise layer (its doc)."""
    return x.range is not None and out_range is not None and (k is None or not depthwise)


def emit_conv(b: GraphBuilder, name: str, x: Value, w: np.ndarray, w_range: Range, k: np.ndarray | None,
              bias_real: np.ndarray, out_range: Range | None, stride: tuple[int, int], padding: NNPad,
              out_shape: tuple[int, int, int, int], depthwise: bool = False) -> Value:
    """A conv / depthwise / fully-connected layer with bias onto quint8.

    Emits hexagon_nn's canonical chain: 8x8to32 product, QuantizedChannelScale_32xf (per-channel),
    QuantizedBiasAdd_32p32to32 (a qint32 bias on a power-of-two fraction of the product step when the
    input range is fixed), then Requantize_32to8 onto a fixed output range or
    QuantizeDownAndShrinkRange_32to8 (run-time). With a fixed input and output range the source fixes the
    layer as one rounding (SEMANTICS §5), so the chain is declared (``b.fixed_chains``) and the
    optimizer's conv fusion (``optimizer.supernodes.fuse_conv``) makes it a ``Supernode_8x8p32to8``
    (channel scales as its 13th input) or ``DepthwiseSupernode_8x8p32to8`` at the end of the import; a
    per-channel depthwise layer stays a chain (the importers' DepthwiseSupernode takes no channel scales;
    prepare's make_supernodes fuses it where the device would). The Requantize of a declared chain
    carries the layer's name, which the Supernode takes over.
    Weights ``w`` are quint8 codes in HWIO (depthwise: ``[fh, fw, din, mult]``). The importers emit a
    depthwise layer through :func:`.dwise_mult.emit_depthwise`, which gives a declared chain multiplier 1
    (issue 36).
    """
    check_conv_shape(name, tuple(x.shape), w.shape, stride, padding, out_shape, depthwise)
    fixed = declared_chain(x, out_range, k, depthwise)
    g = b.graph
    wref = g.const_ref(w, f"{name}/weights")
    wmn, wmx = b.range_consts(w_range, f"{name}/weights")
    sref = g.shape_ref((1, stride[0], stride[1], 1), f"{name}/stride")
    op = "QuantizedDepthwiseConv2d_8x8to32" if depthwise else "QuantizedConv2d_8x8to32"
    acc = node3(b, op, [x.data, wref, x.mn, x.mx, wmn, wmx, sref], out_shape, f"{name}/conv", None,  # type: ignore[list-item]
                padding, etype="qint32")
    product = g.node(acc.data.src_id)
    if fixed:
        # a declared chain makes its Consts first, in the order of the Supernode's inputs (the list
        # hexagon_nn's prepare.c is given matches the one the importers gave it when they built Supernodes)
        bias = _bias(b, x, w_range, bias_real, name)
        out_refs = list(b.range_consts(out_range, f"{name}/out"))  # type: ignore[arg-type]
    if k is not None:
        kref = g.const_ref(k.astype(np.float32).reshape(1, 1, 1, -1), f"{name}/channel_scale")
        acc = node3(b, "QuantizedChannelScale_32xf", [acc.data, kref, acc.mn, acc.mx], out_shape,  # type: ignore[list-item]
                    f"{name}/channel_scale", None, etype="qint32")
    if not fixed:
        bias = _bias(b, x, w_range, bias_real, name)
    acc = node3(b, "QuantizedBiasAdd_32p32to32", [acc.data, bias[0], acc.mn, acc.mx, bias[1], bias[2]],  # type: ignore[list-item]
                out_shape, f"{name}/bias_add", None, etype="qint32")
    if fixed:
        b.fixed_chains.append(product)
        return node3(b, "Requantize_32to8", acc.triple() + out_refs, out_shape, name, out_range)
    return to_8bit(b, acc, out_range, name)


def _bias(b: GraphBuilder, x: Value, w_range: Range, bias_real: np.ndarray, name: str) -> list[Ref]:
    """The bias refs of a conv layer: exact qint32 on the product step's grid when the input range is
    fixed (:func:`bias_qint32`), else on a range of its own (:func:`bias_dynamic`)."""
    if x.range is None:
        return bias_dynamic(b, bias_real, f"{name}/bias")
    prod = (x.range[1] - x.range[0]) / 255.0 * (w_range[1] - w_range[0]) / 255.0
    return bias_qint32(b, bias_real, prod, f"{name}/bias")
