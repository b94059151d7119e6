"""The supernodes' output stage as hexagon_nn 2.14.1 executes it (issue 19: bit-exact against the C).

:mod:`.nnlib_constants` holds the C's float32 constants and range logic; this
module applies them to the exact product sums ``S = sum((x - in_zero) * (w - w_zero))``:

- per computation, ``fill_info_minmax_basics`` + ``fill_bias_buf`` give ``recip_shamt``,
  ``recip[c]`` and ``bb[c] = biasbuf[c] + gemsumb[c] * in_zero`` (the HVX loop adds the latter back
  through ``suma``), kept per range in :class:`ExactPlan`;
- the codes are the device's 32-bit arithmetic (:func:`.requant.presat_codes_c32`), or the
  same values in float64 where a bound on ``|S|`` proves nothing wraps (:func:`.requant.float_stage`);
- the execute loop of op_supernode_new.c ``supernode_execute_hvx`` (conv: at most 3 computations; when
  the third still overflows, its codes are kept and the range its check widened is reported) or
  op_dwise_snode_8bit.c ``dwise_supernode_execute`` (at most 5, then an error), the range state
  (:class:`~.nnlib_constants.OutRangeC`) persisting in ``ctx.state`` as the C's
  node info does;
- where the C divides by zero (``prod == 0``), the bias alone (:class:`BiasOnlyPlan`, the engine's rule).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from hexnn_import.ops.output_stage import nnlib_constants as snf
from hexnn_import.ops.compiled import channel_extremes as compiled_extremes, stage_extremes
from hexnn_import.ops.kernel_io import kept_range_out
from hexnn_import.ops.nnlib_f32 import flt_div_255
from hexnn_import.ops.output_stage.codes import final_codes, presat, presat_extremes, saturated
from hexnn_import.ops.output_stage.requant import FloatStage, Requant, float_stage
from hexnn_import.ops.registry import KernelContext

STATE_KEY = "sn_out_range"
_MAX_STAGES = 8
#: Lowest channel scale load_channel_scales accepts (``(float)(1./2048.)``, inclusive).
K_LOW_C = np.float32(1.0 / 2048.0)


def read_channel_scales(ctx: KernelContext, arr: np.ndarray | None, dout: int) -> np.ndarray | None:
    """float32 ``k[dout]`` from input 12, or None when absent: include/supernode_utils.h
    ``check_channelscale_present`` (no input, or a single 1.0, means none; otherwise one float per output
    channel) and ``load_channel_scales`` (each in ``[1/2048, 1]``, float32 compares). Scales that are all
    1.0 still count as present, as in the C (per-channel ``recip`` from ``common_scale * k``)."""
    if arr is None:
        return None
    k32 = np.asarray(arr, dtype=np.float32).reshape(-1)
    if k32.size == 1 and k32[0] == np.float32(1.0):
        return None
    if k32.size != dout:
        raise ctx.fail(f"channel scales have {k32.size} elements (shape {list(np.shape(arr))}), "
                       f"expected one per output channel ({dout}) (supernode_utils.h check_channelscale_present)")
    bad = ~((k32 <= np.float32(1.0)) & (k32 >= K_LOW_C))
    if bad.any():
        c = int(np.argmax(bad))
        raise ctx.fail(f"channel scale {c} is {float(k32[c])!r}, must be in [1/2048, 1] "
                       f"(supernode_utils.h load_channel_scales)")
    return k32


class ExactPlan:
    """A node's :class:`~.nnlib_constants.SnConst` and ``|S|`` bound (None: int64
    path always), with the per-range constants of every range met (cached)."""

    def __init__(self, sc: snf.SnConst, bound: np.ndarray | None, dwise: bool):
        self.sc = sc
        self.bound = bound
        self.dwise = dwise
        self._stages: dict[tuple, tuple] = {}

    def stage(self, ctx: KernelContext, rng: snf.OutRangeC
              ) -> tuple[snf.OutRangeC, np.float32, Requant, FloatStage | None]:
        """``(range after the first guess, out_level, Requant, FloatStage or None)`` for one computation."""
        key = (float(rng.lo), float(rng.hi), rng.firstguess)
        got = self._stages.get(key)
        if got is None:
            if len(self._stages) >= _MAX_STAGES:
                self._stages.clear()
            new, ols, shamt, _, recip = snf.minmax_basics(self.sc, rng)
            bb = snf.bias_buf(self.sc, new.lo)
            if bb is None:
                raise ctx.fail("bias does not fit int32 in accumulator units (hexagon_nn fill_bias_buf: "
                               "\"Final too big, will cause overflow\")")
            rq = Requant(float(new.lo), float(new.hi), shamt, recip, bb, c32=True)
            got = (new, ols, rq, None if self.bound is None else float_stage(rq, self.bound))
            self._stages[key] = got
        return got


class BiasOnlyPlan:
    """The engine's rule where hexagon_nn divides by zero: ``prod == 0`` (a zero-width weight range, or a
    product of levels below float32's smallest value). The C's ``bias_to_prod_ratio`` and ``-out_min /
    prod`` are then infinite and fill_bias_buf fails ("Final too big") or yields nonsense; the engine
    instead gives the bias alone, requantized to each output range tried: ``code[c] = floor((b_real[c] -
    out_min) / out_level + 1/2)``, ``b_real = (float)(b - bias_offset) * bias_level`` as fill_bias_buf
    reads the bias, with the C's own output-range logic around it (setup, no first-guess widening since
    ``final = 0``, quarter-octave retries), so that a converted model with all-zero weights still runs.
    Same interface as :class:`ExactPlan`."""

    sc = None
    bound = None

    def __init__(self, bias_real: np.ndarray, dwise: bool):
        self.bias_real = np.asarray(bias_real, dtype=np.float64)
        self.dwise = dwise
        self._stages: dict[tuple, tuple] = {}

    def stage(self, ctx: KernelContext, rng: snf.OutRangeC) -> tuple[snf.OutRangeC, np.float32, Requant, None]:
        """``(range, out_level, Requant carrying the bias-only codes, None)`` for one computation."""
        key = (float(rng.lo), float(rng.hi), rng.firstguess)
        got = self._stages.get(key)
        if got is None:
            if len(self._stages) >= _MAX_STAGES:
                self._stages.clear()
            ols = flt_div_255(np.float32(rng.hi - rng.lo))
            new = replace(rng, firstguess=False)
            fixed = np.floor((self.bias_real - float(new.lo)) / float(ols) + 0.5)
            zeros = np.zeros(fixed.shape, dtype=np.int64)
            got = (new, ols, Requant(float(new.lo), float(new.hi), 0, zeros, zeros, fixed), None)
            self._stages[key] = got
        return got


def bias_real(bias: np.ndarray, b_min: float, b_max: float, bias32: bool) -> np.ndarray:
    """float64 ``(float)(b - bias_offset) * bias_level`` (fill_bias_buf's reading of the bias, float32 parts)."""
    bias_f, level = snf.bias_parts(bias, b_min, b_max, bias32, np.float32(1.0))
    return bias_f.astype(np.float64) * float(level)


def initial_state(ctx: KernelContext, spec_min: float, spec_max: float, dwise: bool) -> snf.OutRangeC:
    """The node's range state: kept from an earlier execution with the same specified range, else
    ``setup_initial_output_range`` (an invalid specified range is the C's error)."""
    kept = ctx.state.get(STATE_KEY)
    smn, smx = np.float32(spec_min), np.float32(spec_max)
    if kept is not None and kept.spec_lo == smn and kept.spec_hi == smx:
        return kept
    init = snf.setup_range(smn, smx, snf.DWISE_DEFAULT if dwise else snf.CONV_DEFAULT)
    if isinstance(init, str):
        raise ctx.fail(f"output range [{spec_min}, {spec_max}]: {init} (needs min <= 0 <= max, min < max)")
    return init


def channel_sum_extremes(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 per-channel ``(min, max)`` of the sums (channel last)."""
    got = compiled_extremes(sums)
    if got is not None:
        return got
    rows = sums.reshape(-1, sums.shape[-1])
    return rows.min(axis=0).astype(np.float64), rows.max(axis=0).astype(np.float64)


def _code_extremes(ext: tuple[np.ndarray, np.ndarray], fs: FloatStage) -> tuple[int, int]:
    """Smallest and largest pre-saturation code of a :class:`FloatStage` from the per-channel extremes of
    the sums: the code ``floor(s * mm + off)`` is exact there and non-decreasing in ``s`` (``mm >= 0``), so
    a channel's extreme codes are those of its extreme sums (one pass over the sums for every retry)."""
    lo = ext[0] * fs.mm + fs.off
    hi = ext[1] * fs.mm + fs.off
    return math.floor(lo.min()), math.floor(hi.max())


def run_exact(ctx: KernelContext, sums: np.ndarray, plan: ExactPlan | BiasOnlyPlan, spec_min: float, spec_max: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, out_min, out_max)`` of the C's execute loop (module doc) on the exact sums (channel last).

    An auto range needs only the extreme codes of each computation but the last; where the float64
    stage is exact they come from the per-channel extremes of the sums (:func:`_code_extremes`), else from
    the codes themselves."""
    rng = initial_state(ctx, spec_min, spec_max, plan.dwise)
    computed = 0
    ext: tuple[np.ndarray, np.ndarray] | None = None
    codes: np.ndarray | None = None
    first: tuple[FloatStage, np.ndarray] | None = None   # the first computation's stage and its codes
    while True:
        rng, ols, rq, fs = plan.stage(ctx, rng)
        computed += 1
        codes = None
        if not rng.auto:
            break
        if not sums.size:
            vmin, vmax = 1 << 24, -(1 << 24)
        elif fs is not None:
            got = stage_extremes(sums, fs) if ext is None and rq.fixed is None else None
            if got is not None:
                # the codes of this range with the extremes, in one pass: final when the range holds
                first, ext, (vmin, vmax) = (fs, got[0]), got[1], got[2]
            else:
                ext = channel_sum_extremes(sums) if ext is None else ext
                vmin, vmax = _code_extremes(ext, fs)
        else:
            codes = presat(sums, rq, fs)
            vmin, vmax = presat_extremes(codes)
        wider = snf.check_for_retry(rng, ols, min(vmin, 1 << 24), max(vmax, -(1 << 24)))
        if wider is None:
            break
        rng = wider
        if plan.dwise and computed >= 5:
            raise ctx.fail("can't find range for depthwise (hexagon_nn dwise_supernode_execute: 5 computations)")
        if not plan.dwise and computed >= 3:
            break
    ctx.state[STATE_KEY] = rng
    # the codes of the last computation (its range may since have widened: conv); those of the first
    # computation's pass when it was the last (the same stage: final_codes gives the very same codes)
    if first is not None and first[0] is fs and rq.fixed is None:
        q = first[1]
    else:
        q = final_codes(sums, rq, fs) if codes is None else saturated(codes)
    return (q, *kept_range_out(ctx.state, float(rng.lo), float(rng.hi)))
