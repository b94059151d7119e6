"""Emitters for 16-bit activations (int16x8 models) on hexagon_nn's 16-bit ops, in **quint16**.

hexagon_nn_ops.txt gives two 16-bit conventions (``ops/kernels/q16_common.py``): qint16 (symmetric,
zero code 0) and quint16 (zero code from the range); both cut a range into 65536 steps. TFLite's int16
activations are symmetric with zero point 0, so scale ``s`` is the range ``[-32768 s, 32768 s]`` in
either: qint16 codes are TFLite's codes, quint16 codes are TFLite's ``XOR 0x8000`` (as int8 is quint8
``XOR 0x80``, SEMANTICS §1).

The graph keeps every 16-bit activation in quint16, because the op set has no lossless qint16 -> quint16
conversion and the only 16-bit op that both takes and gives a 16-bit tensor with weights is
``QuantizedTransposeConv2d_16x16p32to16`` (quint16 in and out; QuantizedConv2d_16x16to32 takes quint16 but
its one 16-bit way out, Requantize_32to16, gives qint16). So:

- conv-like layers (conv, depthwise as a block-diagonal dense filter, fully-connected, mean) are a
  stride-1 transposed convolution with the filter flipped and the crops ``k - 1 - pad``: one float64
  rounding of ``acc * in_step * w_step + bias`` onto the output range (op text). The op has one weight
  range, so each run of output channels sharing an int8 scale is one op on its exact 16-bit grid, the
  runs joined exactly (:func:`emit_linear16`, :func:`concat16`);
- add / sub / mul are QuantizedAdd_u16 / QuantizedSub_u16 / QuantizedMul_u16, a requantize (and a fused
  clip: a range starting at 0 saturates there, a top by :func:`clamp_top16`) QuantizedAdd_u16 with a zero;
- strided convs and pools whose windows tile the input: ``nodes.int16_windows`` (SpaceToDepth_16); other
  pools go through 8 bits: Convert_u16_8, the 8-bit op, Convert_8_u16;
- float <-> quint16 (graph edges, and the float ops between: softmax, logistic, tanh, leaky relu) goes in
  three 8-bit pieces (Quantize / Dequantize only take quint8): ``nodes.int16_float``.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import bias_qint32, node3
from hexnn_import.importers.nodes.int16_narrow import widen_for_narrow_row
from hexnn_import.importers.nodes.values import Value
from hexnn_import.ops.kernels.q16_common import adjust_range_u16
from hexnn_import.ops.quant import adjust_range

Range = tuple[float, float]
STEPS16 = 65536.0


def range16(scale: float) -> Range:
    """The quint16 / qint16 range of TFLite's symmetric int16 scale ``s``: ``[-32768 s, 32768 s]``."""
    return -32768.0 * float(scale), 32768.0 * float(scale)


def step16(rng: Range) -> float:
    """The step of a 16-bit range (65536 steps)."""
    return (rng[1] - rng[0]) / STEPS16


def activation_range(scale: float, lo: float, hi: float) -> tuple[Range, float | None]:
    """The 16-bit range a layer with a fused clip ``[lo, hi]`` writes, and the top to clamp it at (None:
    none needed), so that its codes are TFLite's: TFLite clamps the int16 codes to ``[round(lo / s),
    min(round(hi / s), 32767)]``. A bottom on TFLite's grid (RELU's 0) starts the range (``[0, 65536 s]``:
    step ``s``, codes below saturate at 0); the top, when it is below the range's last code, is clamped
    by :func:`clamp_top16`. A bottom off the grid (RELU_N1_TO_1 on most scales) takes the intersection
    with TFLite's range instead (a finer step, no clamp)."""
    rng = range16(scale)
    top = min(hi, 32767.0 * scale)
    if lo <= rng[0] and top >= 32767.0 * scale:
        return rng, None
    start = max(lo, rng[0])
    if abs(start / scale - round(start / scale)) > 1e-6:
        return (start, min(hi, rng[1])), None
    top = round(top / scale) * scale
    out = (start, start + STEPS16 * scale)
    return out, (top if top < out[1] - scale * 1.5 else None)


def clamp_top16(b: GraphBuilder, v: Value, top: float, name: str) -> Value:
    """``min(v, top)`` exactly: ``v - relu(v - top)``, both QuantizedSub_u16 of gain 1 on ``v``'s step (the
    relu by saturation at code 0 of ``[0, 65536 step]``)."""
    assert v.range is not None
    c = const16(b, np.asarray([top]), v.range, f"{name}/top")
    above = binary16(b, "QuantizedSub_u16", v, c, (0.0, v.range[1] - v.range[0]), v.shape, f"{name}/above")
    return binary16(b, "QuantizedSub_u16", v, above, v.range, v.shape, f"{name}/clamp")


def const16(b: GraphBuilder, real: np.ndarray, rng: Range, name: str) -> Value:
    """A quint16 Const of real values on ``rng`` (zero code from the range)."""
    step = step16(rng)
    zero = int(np.clip(np.round(-rng[0] / step), 0, 65535))
    codes = np.clip(np.round(np.asarray(real, np.float64) / step) + zero, 0, 65535).astype(np.uint16)
    codes = codes.reshape((1,) * (4 - codes.ndim) + codes.shape) if codes.ndim < 4 else codes
    ref = b.graph.const_ref(codes, name)
    return Value(ref, codes.shape, "quint16", *b.range_consts(rng, name), rng)  # type: ignore[arg-type]


# ---- weighted layers -------------------------------------------------------------------
def weights16(w_real: np.ndarray, exact_step: float | None) -> tuple[np.ndarray, Range]:
    """quint16 codes of real weights on a symmetric range (zero code 32768): ``exact_step`` when every
    weight is a multiple of it that fits (per-tensor int8 codes: ``s / 256``), else ``max|w| / 32767``."""
    peak = float(np.max(np.abs(w_real))) if w_real.size else 0.0
    if exact_step is not None and peak / exact_step <= 32767:
        step = exact_step
    else:
        step = peak / 32767.0 if peak > 0 else 1.0
    codes = np.clip(np.round(w_real / step), -32768, 32767).astype(np.int32) + 32768
    return codes.astype(np.uint16), (-32768.0 * step, 32768.0 * step)


#: at most this many output-channel groups (one transposed conv each) make per-channel weights exact
MAX_CHANNEL_GROUPS = 64


def channel_runs(steps: np.ndarray | None, n_out: int) -> list[slice]:
    """Contiguous runs of output channels that share one exact weight step (one run: ``steps`` None, or
    more runs than :data:`MAX_CHANNEL_GROUPS`, when the weights share the finest common grid instead)."""
    if steps is None:
        return [slice(0, n_out)]
    cuts = [0] + [c for c in range(1, n_out) if steps[c] != steps[c - 1]] + [n_out]
    if len(cuts) - 1 > MAX_CHANNEL_GROUPS:
        return [slice(0, n_out)]
    return [slice(a, z) for a, z in zip(cuts[:-1], cuts[1:])]


def emit_linear16(b: GraphBuilder, name: str, x: Value, w_real: np.ndarray, bias_real: np.ndarray,
                  out_range: Range, pads: tuple[int, int, int, int], out_shape: tuple[int, int, int, int],
                  exact_steps: np.ndarray | None = None) -> Value:
    """A stride-1 convolution (correlation, filter ``[O, H, W, I]`` real values, ``pads`` = top, bottom,
    left, right of the input) as QuantizedTransposeConv2d_16x16p32to16 (module doc).

    A transposed convolution of stride 1 sums ``x[o + top - i] * w[i]``; with the filter flipped and the
    crops ``top = fh - 1 - pad_top`` (likewise bottom, left, right) it is the correlation with ``pads``.
    The op has one weight range: with ``exact_steps`` (per output channel, the int8 scale / 256) each run
    of channels sharing a step is one op on its exact grid, the runs joined by ``concat16`` (exact: every
    run is on the output range already); otherwise, or past :data:`MAX_CHANNEL_GROUPS` runs, one op on the
    finest common grid (``max|w| / 32767``: per-channel weights within half a step, about 1 output LSB in
    7 off by one). An input whose byte planes the device would misalign is widened by zero columns and zero
    weights (:mod:`.int16_narrow`).
    """
    w_real, pads = widen_for_narrow_row(w_real, pads, x.shape)  # a device defect (int16_narrow)
    runs = channel_runs(exact_steps, w_real.shape[0])
    if len(runs) == 1:
        step = None if exact_steps is None or len(set(exact_steps.tolist())) > 1 else float(exact_steps[0])
        return _linear16(b, name, x, w_real, bias_real, out_range, pads, out_shape, step)
    parts = [_linear16(b, f"{name}/channels{r.start}", x, w_real[r], bias_real[r], out_range, pads,
                       out_shape[:3] + (r.stop - r.start,), float(exact_steps[r.start]))  # type: ignore[index]
             for r in runs]
    return concat16(b, parts, 3, out_range, out_shape, name)


def _linear16(b: GraphBuilder, name: str, x: Value, w_real: np.ndarray, bias_real: np.ndarray,
              out_range: Range, pads: tuple[int, int, int, int], out_shape: tuple[int, int, int, int],
              exact_step: float | None) -> Value:
    """One QuantizedTransposeConv2d_16x16p32to16 (:func:`emit_linear16`)."""
    assert x.range is not None, "16-bit layers need a fixed input range"
    fh, fw = w_real.shape[1], w_real.shape[2]
    flipped = np.ascontiguousarray(w_real[:, ::-1, ::-1, :])
    codes, w_range = weights16(flipped, exact_step)
    pt, pb, pl, pr = pads
    crops = np.asarray([fh - 1 - pt, fh - 1 - pb, fw - 1 - pl, fw - 1 - pr], np.int32).reshape(1, 1, 2, 2)
    g = b.graph
    prod = step16(x.range) * step16(w_range)
    refs = [x.data, g.const_ref(codes, f"{name}/weights"), x.mn, x.mx, *b.range_consts(w_range, f"{name}/weights"),
            g.const_ref(crops, f"{name}/crops"), g.shape_ref((1, 1, 1, 1), f"{name}/stride"),
            *bias_qint32(b, np.asarray(bias_real, np.float64), prod, f"{name}/bias"),
            *b.range_consts(out_range, f"{name}/out")]
    return node3(b, "QuantizedTransposeConv2d_16x16p32to16", refs, out_shape, name,  # type: ignore[arg-type]
                 adjust_range_u16(*out_range), etype="quint16")


def mean_steps(n: int, channels: int) -> np.ndarray:
    """Weight steps for a mean over ``n`` values: ``1 / n`` on 16384 codes, exact in binary when ``n`` is a
    power of two, so a sum ending in exactly half a step stays a tie (rounded away from zero, as LiteRT
    rounds a non-negative one). But for ``n`` of 1 or 2: prepare makes the transposed conv a
    Supernode_u16x16p32to16_d32, whose device code divides the output step by the product step (``maxsum``,
    op_supernode_16b.c fill_info_minmax_basics) and wraps its reciprocal to -2**31 - all codes 0 - when that
    is a power of two below 2**16; with equal input and output scales (a pool) ``maxsum`` is ``n`` times the
    codes per unit, 16384 or 32768 there, so those take 32767 codes per unit (``maxsum`` 32767 / 65534)."""
    return np.full(channels, 1.0 / n / (32767.0 if n <= 2 else 16384.0))


def block_diagonal(w_dw: np.ndarray, c_in: int) -> np.ndarray:
    """A depthwise filter ``[H, W, C * mult]`` (channel ``c * mult + m`` reads input ``c``) as a dense
    ``[C * mult, H, W, C]`` filter with zeros off the diagonal (the 16-bit transposed conv has no groups)."""
    fh, fw, c_out = w_dw.shape
    dense = np.zeros((c_out, fh, fw, c_in), np.float64)
    o = np.arange(c_out)
    dense[o, :, :, o // (c_out // c_in)] = np.moveaxis(w_dw, 2, 0)
    return dense


# ---- 16-bit elementwise ---------------------------------------------------------------------
def binary16(b: GraphBuilder, op: str, a: Value, c: Value, out_range: Range, shape: tuple[int, int, int, int],
             name: str) -> Value:
    """QuantizedAdd_u16 / QuantizedSub_u16 / QuantizedMul_u16 onto ``out_range`` (numpy broadcast)."""
    refs = [a.data, c.data, a.mn, a.mx, c.mn, c.mx, *b.range_consts(out_range, f"{name}/out")]
    return node3(b, op, refs, shape, name, out_range, etype="quint16")  # type: ignore[arg-type]


def requantize16(b: GraphBuilder, v: Value, rng: Range, name: str) -> Value:
    """``v`` onto ``rng`` (no node when it already is): QuantizedAdd_u16 with a quint16 zero, one rounding;
    codes outside ``rng`` saturate (a range from 0 is a RELU)."""
    if v.range is not None and np.allclose(v.range, rng, rtol=1e-7, atol=0.0):
        return v
    zero = const16(b, np.zeros(1), (-1.0, 1.0), f"{name}/zero")
    return binary16(b, "QuantizedAdd_u16", v, zero, rng, v.shape, f"{name}/requantize16")


def pad16(b: GraphBuilder, v: Value, rows: list[tuple[int, int]], shape: tuple[int, int, int, int],
          name: str) -> Value:
    """QuantizedPad_u16 with 0.0 (before, after) per dimension of the 4-D value (0.0 is an exact code of a
    zero-fixed range); the range passes through."""
    pads = b.graph.const_ref(np.asarray(rows, np.int32).reshape(1, 1, 4, 2), f"{name}/pads")
    return node3(b, "QuantizedPad_u16", v.triple() + [pads], shape, f"{name}/pad", v.range, etype="quint16")


def concat16(b: GraphBuilder, values: list[Value], axis: int, out_range: Range, shape: tuple[int, int, int, int],
             name: str) -> Value:
    """Concatenation along 4-D ``axis``: each input padded with 0.0 into its place (QuantizedPad_u16), the
    padded inputs summed by QuantizedAdd_u16 onto ``out_range``; every element has one non-zero term, so
    each is rounded once onto the output range (none when an input is on it already)."""
    acc: Value | None = None
    start = 0
    for i, v in enumerate(values):
        rows = [(0, 0)] * 4
        rows[axis] = (start, shape[axis] - start - v.shape[axis])
        start += v.shape[axis]
        placed = pad16(b, v, rows, shape, f"{name}/place{i}")
        acc = placed if acc is None else binary16(b, "QuantizedAdd_u16", acc, placed, out_range, shape,
                                                  f"{name}/join{i}")
    assert acc is not None
    return requantize16(b, acc, out_range, f"{name}/join")


def reshape16(b: GraphBuilder, v: Value, shape: tuple[int, int, int, int], name: str) -> Value:
    """``Reshape`` (any element type) of quint16 data; the range refs pass through."""
    if tuple(v.shape) == tuple(shape):
        return v
    node = b.graph.append("Reshape", [v.data, b.int_const(list(shape), f"{name}/shape")],
                          [OutputDef(shape, "quint16")], name=name)
    return Value(Ref(node.node_id, 0), shape, "quint16", v.mn, v.mx, v.range)


# ---- through 8 bits -------------------------------------------------------------------------
def to8(b: GraphBuilder, v: Value, name: str, within: Range | None = None) -> Value:
    """quint16 -> quint8 (Convert_u16_8, one rounding onto 255 steps) over the value's range cut to
    ``within`` (the source tensor's own range: a RELU range ``[0, 65536 s]`` is cut to TFLite's
    ``[0, 32768 s]``, where TFLite saturates anyway, halving the 8-bit step)."""
    assert v.range is not None
    rng = v.range if within is None else (max(v.range[0], within[0]), min(v.range[1], within[1]))
    out = adjust_range(*rng)
    refs = v.triple() + ([] if rng == v.range else list(b.range_consts(rng, f"{name}/to8")))
    return node3(b, "Convert_u16_8", refs, v.shape, f"{name}/to8", out)


def to16(b: GraphBuilder, v: Value, name: str) -> Value:
    """quint8 -> quint16 losslessly (Convert_8_u16: codes x257, max grows by 1/65536 of the width)."""
    assert v.range is not None
    rng = (v.range[0], v.range[1] + (v.range[1] - v.range[0]) / STEPS16)
    return node3(b, "Convert_8_u16", v.triple(), v.shape, f"{name}/to16", rng, etype="quint16")
