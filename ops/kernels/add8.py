"""QuantizedAdd_8p8to8: quint8 + quint8 -> quint8 as nnlib computes it (hexagon/ops/src/op_add.c).

The arithmetic and the range rules live in :mod:`hexnn_import.ops.nnlib_addsub`; this module reads the
inputs, keeps nnlib's per-node range state (``struct qadd_888_info``) in ``ctx.state`` and runs the
same-shape path ``addsub_flat_direct_execute`` (see :class:`QuantizedAdd8p8to8`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hexnn_import.ops import table_store
from hexnn_import.ops.compiled import pair_lookup
from hexnn_import.ops.kernel_io import kept_range_out, u8_codes
from hexnn_import.ops.kernels.add8_broadcast import broadcast_add
from hexnn_import.ops.nnlib_addsub import (INFO_KEY, AddInfo, Scaling, ScalingFailed, ScalingFailedError, check_info,
                                           codes_from_inter, input_params, inter_table, plan_range, rerun_range,
                                           scaling, underrange_codes)
from hexnn_import.ops.nnlib_f32 import F
from hexnn_import.ops.node_cache import node_memo, replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register

F32Range = tuple[np.float32, np.float32]
#: entries of one flat (a code, b code) table
TABLE_CODES = 256 * 256


def requested_ends(ctx: KernelContext, inputs: Sequence[np.ndarray]) -> tuple[float, float]:
    """Output min/max from optional inputs 6, 7; an absent end is auto (-inf / +inf).

    (Kept for the kernels that share this convention, e.g. ``kernels/activation.py``.)
    """
    lo = ctx.scalar(inputs[6], "output min") if len(inputs) > 6 else -math.inf
    hi = ctx.scalar(inputs[7], "output max") if len(inputs) > 7 else math.inf
    if math.isnan(lo) or math.isnan(hi) or lo == math.inf or hi == -math.inf:
        raise ctx.fail(f"output range [{lo}, {hi}]: min must be finite or -inf (auto), max finite or +inf (auto)")
    if math.isfinite(lo) and math.isfinite(hi) and lo > hi:
        raise ctx.fail(f"output range min {lo} > max {hi}")
    return lo, hi


def f32_range(ctx: KernelContext, mn: np.ndarray, mx: np.ndarray, what: str) -> F32Range:
    """A (min, max) pair as the C reads it (``tensor_get_float``): float32, no sanity check."""
    return F(ctx.scalar(mn, f"{what} min")), F(ctx.scalar(mx, f"{what} max"))


def spec_ends(ctx: KernelContext, inputs: Sequence[np.ndarray]) -> F32Range:
    """Inputs 6/7 as float32; an absent input reads as the auto end (``qadd_888_check``: n_inputs >= 7 / 8)."""
    lo = F(ctx.scalar(inputs[6], "output min")) if len(inputs) > 6 else F(-np.inf)
    hi = F(ctx.scalar(inputs[7], "output max")) if len(inputs) > 7 else F(np.inf)
    return lo, hi


def pair_index(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * 256 + b`` as uint16 (the flat index of a 256x256 table)."""
    idx = np.left_shift(a, 8, dtype=np.uint16)
    np.bitwise_or(idx, b, out=idx)
    return idx


def _tables(ctx: KernelContext, sc: Scaling) -> tuple[np.ndarray | None, np.ndarray]:
    """``(inter, codes)`` 256*256 flat tables for one scaling (``inter`` None in underrange mode): a pure
    function of the scaling, so built once per engine and shared by every node with the same one, its
    size counted against the memory budget first (:mod:`hexnn_import.ops.table_store`)."""
    def build() -> tuple[np.ndarray | None, np.ndarray]:
        if sc.underrange:
            return None, underrange_codes(sc).reshape(-1)
        inter = inter_table(sc).astype(np.int16).reshape(-1)
        return inter, codes_from_inter(inter.astype(np.int32), sc)
    nbytes = TABLE_CODES * (1 if sc.underrange else 3)  # uint8 codes, and int16 intermediates
    return table_store.current().shared(("qadd_tables", sc), nbytes, build, "the add's 256x256 tables")


def scaled_codes(ctx: KernelContext, sc: Scaling, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The codes one scaling gives same-shape uint8 operands (the add's table, looked up)."""
    return _tables(ctx, sc)[1].take(pair_index(a, b))


def _scaling(ctx: KernelContext, info: AddInfo, zeros: tuple[int, int], steps: tuple[np.float32, np.float32],
             fixed: bool, subtract: bool = False) -> Scaling:
    """:func:`~hexnn_import.ops.nnlib_addsub.scaling` for the node's current range (a pure function of its
    arguments, memoised: its float32 steps are many small numpy calls)."""
    key = (float(info.out_min), float(info.out_max), zeros, tuple(map(float, steps)), fixed, subtract)
    return node_memo(ctx.state, "qadd_scaling", key,
                     lambda: scaling(info.out_min, info.out_max, zeros, steps, fixed, subtract))


#: ``ctx.state`` keys (node_cache.PREFIX: caches) of :func:`read_ranges` and of the last range set-up that left
#: the node's range as it was (:func:`_plan_range`)
_READ_KEY = "_cache.qadd_read"
_NOOP_KEY = "_cache.qadd_noop"


def read_ranges(ctx: KernelContext, inputs: Sequence[np.ndarray], sign: int
                ) -> tuple[F32Range, F32Range, F32Range, tuple[tuple[int, int], tuple[np.float32, np.float32]]]:
    """``(a_rng, b_rng, spec, (zeros, steps))`` read from inputs 2.. (B's range negated for a subtraction): those
    of the last run when inputs 2.. are the very same objects (held in the state, so their ids are not reused),
    as they are on every run once the nodes before have settled their ranges (``kernel_io.kept_range_out``;
    speed, issue 37). The values and the checks of reading them are pure functions of those objects."""
    others = inputs[2:]
    ids = tuple(map(id, others))
    kept = ctx.state.get(_READ_KEY)
    if kept is not None and kept[0] == ids:
        return kept[2]
    a_rng = f32_range(ctx, inputs[2], inputs[3], "input A")
    b_rng = f32_range(ctx, inputs[4], inputs[5], "input B")
    if sign < 0:  # a - b = a + (-b): codes 255 - b over [-b_max, -b_min]
        b_rng = (F(-b_rng[1]), F(-b_rng[0]))
    spec = spec_ends(ctx, inputs)
    got = (a_rng, b_rng, spec, node_memo(ctx.state, "qadd_inputs", (a_rng, b_rng), lambda: input_params(a_rng, b_rng)))
    ctx.state[_READ_KEY] = (ids, tuple(others), got)
    return got


def _plan_range(ctx: KernelContext, info: AddInfo, a_rng: F32Range, b_rng: F32Range, spec: F32Range) -> None:
    """:func:`~hexnn_import.ops.nnlib_addsub.plan_range` (a pure function of the node's range state and these
    ranges), skipped when the last call with these very range tuples (:func:`read_ranges` hands out the same ones)
    found the node's range as it is now - the very float objects, which it then left in place - and changed
    nothing: it would change nothing again (speed, issue 37)."""
    noop = ctx.state.get(_NOOP_KEY)
    lo, hi, ran = info.out_min, info.out_max, info.has_run_before
    if (noop is not None and ran and noop[0] is a_rng and noop[1] is b_rng and noop[2] is spec and noop[3] is lo
            and noop[4] is hi):
        return
    plan_range(info, a_rng, b_rng, spec)
    if ran and info.out_min is lo and info.out_max is hi and info.has_run_before:
        ctx.state[_NOOP_KEY] = (a_rng, b_rng, spec, lo, hi)


def flat_direct(ctx: KernelContext, a: np.ndarray, b: np.ndarray, a_rng: F32Range, b_rng: F32Range,
                spec: F32Range, subtract: bool = False, params: tuple | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``addsub_flat_direct_execute`` on same-shape uint8 operands: ``(codes, out_min, out_max)``;
    ``subtract``: op_add_d32.c's subtraction (``a - b`` through a negative B scale, issue 36); ``params`` are the
    inputs' ``(zeros, steps)`` when already read (:func:`read_ranges`)."""
    info: AddInfo | None = ctx.state.get(INFO_KEY)
    if info is None:  # qadd_888_check, run once per node
        info = ctx.state[INFO_KEY] = check_info(*spec)
    zeros, steps = params if params is not None else node_memo(ctx.state, "qadd_inputs", (a_rng, b_rng),
                                                                lambda: input_params(a_rng, b_rng))
    try:
        _plan_range(ctx, info, a_rng, (F(-b_rng[1]), F(-b_rng[0])) if subtract else b_rng, spec)
        sc = _scaling(ctx, info, zeros, steps, info.min_pre and info.max_pre, subtract)
        inter, codes = _tables(ctx, sc)
        track = info.tracks()  # op_add.c: need_minmax = !max_precalc || !max_precalc; op_add_d32.c: any end free
        if track and inter is None:
            raise ScalingFailed("underrange scaling with range tracking")  # unreachable: fixed range only
        fast = pair_lookup(a, b, codes, inter if track else None)
        if fast is not None:
            idx = None
            out, vmin, vmax = fast
        else:
            idx = pair_index(a, b)
            out = codes.take(idx)
            vals = inter.take(idx) if track else np.zeros(0, np.int16)
            vmin, vmax = (int(vals.min()), int(vals.max())) if vals.size else (32767, -32768)
        if track:
            lo = min(vmin, sc.intermed_zero) if a.size else 32767
            hi = max(vmax, sc.intermed_zero) if a.size else -32768
            if rerun_range(info, sc, lo, hi, spec):
                sc = _scaling(ctx, info, zeros, steps, False, subtract)
                codes = _tables(ctx, sc)[1]
                out = codes.take(pair_index(a, b) if idx is None else idx)
    except ScalingFailed as e:
        raise ScalingFailedError(ctx.node, ctx.op, f"scaling failed: {e}") from None
    return (out, *kept_range_out(ctx.state, float(info.out_min), float(info.out_max)))


class _AddSub8p8to8(Kernel):
    """Shared body of the flat quint8 add and of the d32 twins' add/sub (B negated for sub)."""

    sign = 1

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0], inputs[1])
        a = u8_codes(ctx, inputs[0], "input A data")
        b = u8_codes(ctx, inputs[1], "input B data")
        a_rng, b_rng, spec, params = read_ranges(ctx, inputs, self.sign)
        if self.sign < 0:  # a - b = a + (-b): codes 255 - b over [-b_max, -b_min]
            b = 255 - b
        a4 = a.reshape((1,) * (4 - a.ndim) + a.shape) if a.ndim < 4 else a
        b4 = b.reshape((1,) * (4 - b.ndim) + b.shape) if b.ndim < 4 else b
        if a4.shape == b4.shape:
            out = flat_direct(ctx, a4, b4, a_rng, b_rng, spec, params=params)
            if a4 is inputs[0] and b4 is inputs[1]:
                store_fixed_replay(ctx, inputs, out, a_rng, b_rng)
            return out
        return broadcast_add(ctx, a4, b4, a_rng, b_rng, spec)


def store_fixed_replay(ctx: KernelContext, inputs: Sequence[np.ndarray], out: tuple[np.ndarray, ...],
                       a_rng: F32Range, b_rng: F32Range) -> None:
    """With a given output range (nnlib fixes it once, then every run uses the same scaling), later runs
    with the same non-data inputs only look the codes up (:mod:`hexnn_import.ops.node_cache`); a run's
    operands are the inputs themselves (an add, not a subtraction)."""
    info: AddInfo = ctx.state[INFO_KEY]
    if not (info.min_pre and info.max_pre):
        return
    zeros, steps = node_memo(ctx.state, "qadd_inputs", (a_rng, b_rng), lambda: input_params(a_rng, b_rng))
    codes = _tables(ctx, _scaling(ctx, info, zeros, steps, True))[1]   # the scaling the run just used
    mn, mx = out[1], out[2]
    mn.flags.writeable = mx.flags.writeable = False   # handed out again by every replay

    def run(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
        fast = pair_lookup(a, b, codes, None)
        return (codes.take(pair_index(a, b)) if fast is None else fast[0]), mn, mx

    replay_store(ctx.state, inputs, (0, 1), run)


@register("QuantizedAdd_8p8to8")
class QuantizedAdd8p8to8(_AddSub8p8to8):
    """``a + b`` of quint8 tensors into quint8, as nnlib 2.14.1's op_add.c computes it.

    Same shapes (``addsub_flat_direct_execute``): 14-bit fixed point, codes
    ``usat8((sat16(inter + offset) + rnd) >> rsh)`` with ``inter`` the HVX
    core's ``(a*a_scale + b*b_scale) / 256`` (8-bit high / 7-bit low split,
    :mod:`hexnn_import.ops.nnlib_addsub` documents the model). Output range:
    inputs 6/7 (absent or -inf/+inf = auto). A given range is zero-fixed
    once (``adjust_minmax_for_zero_with_constraints``) and used on every run.
    An auto range starts at 1/8 of the sum of the input ranges, is kept at
    least 1/32 of it on later runs, and when the max is auto and an auto end
    was exceeded, is set to the observed span + 15% anchored at the other
    observed end and the node computed once more. The range is kept in
    ``ctx.state`` (nnlib's node state) and reported as the output min/max.
    Input ranges are used as given (nnlib accepts ranges excluding 0). A
    range too narrow for the 14-bit scales fails ("scaling failed").

    Different shapes: see :mod:`hexnn_import.ops.kernels.add8_broadcast`.
    """
