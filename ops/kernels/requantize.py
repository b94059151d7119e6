"""qint32 -> quint8: RequantizationRange_32, Requantize_32to8,
QuantizeDownAndShrinkRange_32to8 (SEMANTICS.md §1, §4)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import i32_codes, kept_range_out, range_out
from hexnn_import.ops.nnlib_f32 import F, i32_to_f32, qint32_level, quantize_adjust_range
from hexnn_import.ops.nnlib_requant import requantize_i32_to_qu8
from hexnn_import.ops.node_cache import replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register


def data_range(x: np.ndarray, level: np.float32) -> tuple[np.float32, np.float32]:
    """``(level * (float)min(0, min(x)), level * (float)max(0, max(x)))`` in float32, as op_requantize.c's
    ``do_requantrange_execute`` / ``do_autorequantize_execute`` compute them (the int32 extreme is rounded
    to float32 first); empty x gives (0, 0) (the C's loop starts from 0)."""
    lo = min(0, int(x.min())) if x.size else 0
    hi = max(0, int(x.max())) if x.size else 0
    with np.errstate(over="ignore", invalid="ignore"):
        return F(level * i32_to_f32(lo)), F(level * i32_to_f32(hi))


def finite_ends(ctx: KernelContext, mn_arr: np.ndarray, mx_arr: np.ndarray, what: str) -> tuple[np.float32, np.float32]:
    """A (min, max) pair as the float32 the C reads; any finite values (op_requantize.c checks nothing:
    ranges that exclude 0, or with min > max, are computed with as they are). NaN/Inf is an error."""
    mn, mx = F(ctx.scalar(mn_arr, f"{what} min")), F(ctx.scalar(mx_arr, f"{what} max"))
    if not (np.isfinite(mn) and np.isfinite(mx)):
        raise ctx.fail(f"{what} range [{mn}, {mx}] is not finite")
    return mn, mx


@register("RequantizationRange_32")
class RequantizationRange32(Kernel):
    """Float range of a qint32 tensor's data: op_requantize.c ``do_requantrange_execute``.

    ``level = (in_max - in_min) * 2**-32`` (float32); outputs ``level * (float)min(0, min(x))`` and
    ``level * (float)max(0, max(x))`` in float32, with no zero fix. Any finite input range is used as
    given (the C checks none); an empty tensor gives ``[0, 0]``.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = finite_ends(ctx, mn_arr, mx_arr, "input")
        x = i32_codes(ctx, data, "input data")
        return range_out(*data_range(x, qint32_level(in_min, in_max)))


@register("Requantize_32to8")
class Requantize32to8(Kernel):
    """qint32 -> quint8 over a requested range: op_requantize.c ``do_requantize_execute``.

    ``level = (in_max - in_min) * 2**-32``; the requested range is zero-fixed by
    ``quantize_adjust_range`` (float32, include/quantize.h: it is first widened to contain 0) and the
    codes are ``nn_requantize_i32_to_qu8_hvx``'s, the device path (:mod:`hexnn_import.ops.nnlib_requant`).
    Any finite ranges are accepted, as the C checks none (narrow, zero-width, excluding 0; a zero-width
    output range ``[0, 0]`` gives code 0 everywhere, as the C's infinite gain and NaN offset do).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, in_mn, in_mx, out_mn, out_mx = inputs
        in_min, in_max = finite_ends(ctx, in_mn, in_mx, "input")
        req_min, req_max = finite_ends(ctx, out_mn, out_mx, "requested output")
        out_min, out_max, _, _ = quantize_adjust_range(req_min, req_max)
        x = i32_codes(ctx, data, "input data")
        level = qint32_level(in_min, in_max)
        q = requantize_i32_to_qu8(x, level, out_min, out_max)
        mn, mx = range_out(out_min, out_max)
        if x is data:  # int32 data: later runs with the same ranges redo only the arithmetic (node_cache.Replay)
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda x_new: (requantize_i32_to_qu8(x_new, level, out_min, out_max), mn, mx))
        return (q, mn, mx)


@register("QuantizeDownAndShrinkRange_32to8")
class QuantizeDownAndShrinkRange32to8(Kernel):
    """qint32 -> quint8 over the data's own range: op_requantize.c ``do_autorequantize_execute``.

    The data's range as RequantizationRange_32 computes it (float32), zero-fixed by
    ``quantize_adjust_range``, then the codes of Requantize_32to8 (the device path). All-zero (or empty)
    data, or a zero-width input range, gives the range ``[0, 0]`` and code 0 everywhere, as the C does.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = finite_ends(ctx, mn_arr, mx_arr, "input")
        x = i32_codes(ctx, data, "input data")
        level = qint32_level(in_min, in_max)
        out_min, out_max, _, _ = quantize_adjust_range(*data_range(x, level))
        q = requantize_i32_to_qu8(x, level, out_min, out_max)
        return (q, *kept_range_out(ctx.state, float(out_min), float(out_max)))
