"""qint32 -> quint8: RequantizationRange_32, Requantize_32to8,
QuantizeDownAndShrinkRange_32to8 (SEMANTICS.md §1, §4)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import i32_codes, range_out
from hexnn_import.ops.node_cache import replay_get, replay_store
from hexnn_import.ops.quant import RANGE_EPS, adjust_range, fast_clip, qint32_one, round_away, sat16, sat_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register

def data_range(x: np.ndarray, one: float) -> tuple[float, float]:
    """``(one * min(0, min(x)), one * max(0, max(x)))`` (SEMANTICS §4), float64; empty x gives (0, 0)."""
    if x.size == 0:
        return 0.0, 0.0
    return one * min(0, int(x.min())), one * max(0, int(x.max()))


def requantize_codes(x: np.ndarray, one: float, out_min: float, out_max: float) -> np.ndarray:
    """qint32 codes (one code = ``one``) to quint8 codes over a zero-fixed ``[out_min, out_max]``.

    SEMANTICS §4: ``sc = 255 / (out_max - out_min)``, ``g = one * sc``;
    ``g >= 1``: ``q = sat_u8(trunc(x * g + 0.5 - out_min * sc))`` in float64
    (float precision is not fixed by the documents; float64 holds every qint32
    code exactly); ``g < 1``: ``gi = round_away(g * 2**31)``,
    ``z = trunc(0.5 - out_min * sc)``,
    ``q = sat_u8(sat16((x * gi + 2**30) >> 31) + z)`` in int64.

    A zero-width output range (SEMANTICS §1: legal) would make ``sc``
    infinite; src/quantize.c documents ``nn_requantize_i32_to_qu8`` as
    ``quantize_uint8(one * x, out_min, out_max)``, whose width is floored at
    1e-18 (include/quantize.h), and that is computed instead:
    ``q = sat_u8(round_away((x * one - out_min) * 255 / 1e-18))`` - code 0
    for every ``x <= 0`` (all of them when ``one = 0``).
    """
    if out_max - out_min <= 0.0:
        v = (x.astype(np.float64) * one - out_min) * (255.0 / RANGE_EPS)
        return sat_u8(round_away(v))
    sc = 255.0 / (out_max - out_min)
    g = one * sc
    if g >= 1.0:
        # ((x * g) + 0.5) - out_min * sc, evaluated in that order, in place; clipping before the
        # truncating cast equals sat_u8(trunc(v)) (the bounds are integers)
        v = x.astype(np.float64)
        v *= g
        v += 0.5
        v -= out_min * sc
        q = np.empty(v.shape, dtype=np.uint8)
        fast_clip(v, 0.0, 255.0, out=q, casting="unsafe")
        return q
    gi = np.int64(round_away(g * 2.0 ** 31))
    z = np.int64(np.trunc(0.5 - out_min * sc))
    v = np.multiply(x.astype(np.int32, copy=False), gi) if x.dtype != np.int64 else x * gi   # int64
    if 0 <= z <= 255:
        # sat_u8(sat16(v') + z) == sat_u8(v' + z) when 0 <= z <= 255 (sat16 only moves values that
        # saturate anyway), and ((x*gi + 2**30) >> 31) + z == (x*gi + 2**30 + z * 2**31) >> 31
        # (|x * gi| < 2**62, so the sum stays in int64)
        v += np.int64(2 ** 30) + z * np.int64(2 ** 31)
        v >>= np.int64(31)
        q = np.empty(v.shape, dtype=np.uint8)
        fast_clip(v, 0, 255, out=q, casting="unsafe")
        return q
    v += np.int64(2 ** 30)
    v >>= np.int64(31)
    return sat_u8(sat16(v) + z)


@register("RequantizationRange_32")
class RequantizationRange32(Kernel):
    """Float range of a qint32 tensor's data (SEMANTICS §4).

    ``one = (in_max - in_min) / 2**32``; outputs ``one * min(0, min(x))`` and
    ``one * max(0, max(x))`` with no zero fix. The input range must be sane;
    an empty tensor is an error (it has no range).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = ctx.sane_range(mn_arr, mx_arr, "input")
        x = i32_codes(ctx, data, "input data")
        if x.size == 0:
            raise ctx.fail("input data is empty, it has no range")
        return range_out(*data_range(x, qint32_one(in_min, in_max)))


@register("Requantize_32to8")
class Requantize32to8(Kernel):
    """qint32 -> quint8 over a requested range, zero-fixed by adjust_range (SEMANTICS §4).

    Choices where the documents are silent: the requested output range only
    needs to be finite with ``min <= max`` (the op text says it "may be
    expanded a little to get an exact zero", so it need not contain 0); the
    input range must be sane. Narrow and zero-width ranges are legal
    (SEMANTICS §1): a zero-width input range makes every value 0, a
    zero-width output range is kept as op_requantize.c keeps it
    (``quantize_adjust_range`` reports ``[0, 0]``) and quantized as
    :func:`requantize_codes` says. Outputs report the zero-fixed range.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, in_mn, in_mx, out_mn, out_mx = inputs
        in_min, in_max = ctx.sane_range(in_mn, in_mx, "input")
        req_min, req_max = ctx.finite_range(out_mn, out_mx, "requested output")
        out_min, out_max = adjust_range(req_min, req_max)
        x = i32_codes(ctx, data, "input data")
        one = qint32_one(in_min, in_max)
        q = requantize_codes(x, one, out_min, out_max)
        mn, mx = range_out(out_min, out_max)
        if x is data:  # int32 data: later runs with the same ranges redo only the arithmetic (node_cache.Replay)
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda x_new: (requantize_codes(x_new, one, out_min, out_max), mn, mx))
        return (q, mn, mx)


@register("QuantizeDownAndShrinkRange_32to8")
class QuantizeDownAndShrinkRange32to8(Kernel):
    """qint32 -> quint8 over the data's own range (SEMANTICS §4).

    Output range = adjust_range(RequantizationRange_32 of the data), then as
    Requantize_32to8. All-zero (or empty) data, or a zero-width input range,
    gives the range ``[0, 0]`` and code 0 everywhere, as op_requantize.c's
    QuantizeDownAndShrinkRange does (``quantize_adjust_range`` of the data's
    range ``[0, 0]`` stays ``[0, 0]``); consumers treat it as all zeros
    (SEMANTICS §1).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = ctx.sane_range(mn_arr, mx_arr, "input")
        x = i32_codes(ctx, data, "input data")
        one = qint32_one(in_min, in_max)
        lo, hi = data_range(x, one)
        out_min, out_max = adjust_range(lo, hi)
        q = requantize_codes(x, one, out_min, out_max)
        return (q, *range_out(out_min, out_max))
