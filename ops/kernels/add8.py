"""QuantizedAdd_8p8to8: quint8 + quint8 -> quint8 on a given or auto range (SEMANTICS.md §6)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hexnn_import.ops.autorange import STATE_KEY
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.kernels.binary import Range, pair_table, read_operands
from hexnn_import.ops.node_cache import node_memo, replay_get, replay_store
from hexnn_import.ops.quant import adjust_range, dequantize_u8, sat_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: The first auto range is this fraction of the sum of the input ranges (SEMANTICS §6).
AUTO_START_FRACTION = 0.125
#: op_add.c floors the theoretical output span at this before taking 1/8 of it
#: (``out_max_all = fmaxf(out_max_all, out_min_all + 0.001f)``).
AUTO_MIN_SPAN = 0.001
#: An auto end that overflowed moves to the observed extreme times this (widened by 15%, §6).
AUTO_WIDEN = 1.15


def requested_ends(ctx: KernelContext, inputs: Sequence[np.ndarray]) -> tuple[float, float]:
    """Output min/max from optional inputs 6, 7; an absent end is auto (-inf / +inf)."""
    lo = ctx.scalar(inputs[6], "output min") if len(inputs) > 6 else -math.inf
    hi = ctx.scalar(inputs[7], "output max") if len(inputs) > 7 else math.inf
    if math.isnan(lo) or math.isnan(hi) or lo == math.inf or hi == -math.inf:
        raise ctx.fail(f"output range [{lo}, {hi}]: min must be finite or -inf (auto), max finite or +inf (auto)")
    if math.isfinite(lo) and math.isfinite(hi) and lo > hi:
        raise ctx.fail(f"output range min {lo} > max {hi}")
    return lo, hi


def start_range(ctx: KernelContext, a_range: Range, b_range: Range, sign: int,
                lo: float, hi: float) -> Range:
    """The range of the first computation: fixed ends as given, auto ends per the kernel doc, zero-fixed."""
    auto_lo, auto_hi = lo == -math.inf, hi == math.inf
    b_lo, b_hi = (b_range if sign > 0 else (-b_range[1], -b_range[0]))
    kept = ctx.state.get(STATE_KEY)
    if auto_lo:
        lo = AUTO_START_FRACTION * (a_range[0] + b_lo)
        lo = min(lo, kept[0]) if kept else lo
    if auto_hi:
        hi = AUTO_START_FRACTION * (a_range[1] + b_hi)
        hi = max(hi, kept[1]) if kept else hi
    lo, hi = adjust_range(lo, hi)
    floor = AUTO_START_FRACTION * AUTO_MIN_SPAN
    if hi - lo < floor and (auto_lo or auto_hi):
        lo, hi = adjust_range(hi - floor, hi) if not auto_hi else adjust_range(lo, lo + floor)
    return lo, hi


def pair_index(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * 256 + b`` as uint16 (the flat index of a 256x256 table), for broadcast quint8 operands."""
    idx = np.left_shift(a, 8, dtype=np.uint16)
    np.bitwise_or(idx, b, out=idx)
    return idx


def cached_tables(ctx: KernelContext, a_range: Range, b_range: Range, op: str,
                  out_range: Range) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, q)``: the flat 256*256 pre-saturation table of :func:`pair_table` and its ``sat_u8``,
    built once per ranges and kept in the node's state (speed, issue 11)."""
    def build() -> tuple[np.ndarray, np.ndarray]:
        codes = pair_table(a_range, b_range, op, out_range).reshape(-1)
        return codes, sat_u8(codes)
    return node_memo(ctx.state, "pair_table", (a_range, b_range, op, out_range), build)


class _AddSub8p8to8(Kernel):
    """Shared body of the flat quint8 add (and a sub, should one be registered)."""

    sign = 1

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0], inputs[1])
        a, b, a_range, b_range = read_operands(ctx, inputs)
        req_lo, req_hi = requested_ends(ctx, inputs)
        auto_lo, auto_hi = req_lo == -math.inf, req_hi == math.inf
        op = "add" if self.sign > 0 else "sub"
        lo, hi = start_range(ctx, a_range, b_range, self.sign, req_lo, req_hi)
        idx = pair_index(a, b)
        if not (auto_lo or auto_hi):
            table = cached_tables(ctx, a_range, b_range, op, (lo, hi))[1]
            mn, mx = range_out(lo, hi)
            if a is inputs[0] and b is inputs[1] and a.ndim == 4 and a.shape == b.shape:
                # uint8 operands of one shape: later runs with the same ranges redo only the lookup
                mn.flags.writeable = mx.flags.writeable = False
                replay_store(ctx.state, inputs, (0, 1), lambda a_new, b_new: (table.take(pair_index(a_new, b_new)),
                                                                              mn, mx))
            return (table.take(idx), mn, mx)
        codes = cached_tables(ctx, a_range, b_range, op, (lo, hi))[0].take(idx)
        if codes.size:
            grow_hi = auto_hi and int(codes.max()) > 255
            grow_lo = auto_lo and int(codes.min()) < 0
            if grow_hi or grow_lo:
                levels = np.arange(256)
                real = (dequantize_u8(levels, *a_range)[a] + self.sign * dequantize_u8(levels, *b_range)[b])
                lo = min(lo, AUTO_WIDEN * float(real.min())) if grow_lo else lo
                hi = max(hi, AUTO_WIDEN * float(real.max())) if grow_hi else hi
                lo, hi = adjust_range(lo, hi)
                codes = cached_tables(ctx, a_range, b_range, op, (lo, hi))[0].take(idx)
        if auto_lo or auto_hi:
            ctx.state[STATE_KEY] = (lo, hi)
        return (sat_u8(codes), *range_out(lo, hi))


@register("QuantizedAdd_8p8to8")
class QuantizedAdd8p8to8(_AddSub8p8to8):
    """``a + b`` of quint8 tensors into quint8, numpy broadcasting (SEMANTICS §6).

    Result: ``q = sat_u8(round_away((a_real + b_real - out_min) / out_step))``
    computed from exact rationals (:mod:`hexnn_import.ops.exact_q8`).
    Deviation from the device: Hexagon adds with 16-bit fixed-point gains and
    a rounding shift, which can land one code away from this exact result.

    Output range: inputs 6/7 absent, or given as -inf/+inf, make that end
    *auto*; a finite given end is used as given. The range is zero-fixed with
    adjust_range (which may move a given end by less than a step when the
    other end is auto, or extend a given range to hold 0). Auto ends (choices
    filling in §6): the first run starts from ``0.125 * (a_min + b_min)`` /
    ``0.125 * (a_max + b_max)`` - the sum of the input ranges scaled by 1/8,
    so 0 sits where it sits in the inputs. When the exact pre-saturation
    codes go above 255 (below 0) on an auto end, that end moves to 1.15 times
    the observed extreme real result, the range is zero-fixed and the node is
    computed once more (which then cannot saturate on that end). The range
    used is kept in ``ctx.state`` and later executions start from the wider
    of it and the 1/8 estimate, so auto ranges only grow. Output min/max
    report the range used. An auto range narrower than ``0.125 * 0.001`` (all
    inputs zero-width, say) is widened to that on its auto side (max first),
    as op_add.c floors the theoretical span at 0.001 before taking 1/8 of it.
    A fixed zero-width output range is legal (SEMANTICS §1): results are
    quantized over hexagon_nn's width floor 1e-18 (include/quantize.h
    ``quantize_uint8``), so 0 gives code 0 and positive sums saturate.
    """

    sign = 1
