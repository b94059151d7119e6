"""The output stage as SEMANTICS.md §5 specifies it (the project's auto range), as one reusable step.

The plain Supernode kernels (``kernels/supernode.py``) read their bias,
channel scales and output range inline. The other convolution-family ops
with a quint8 output - depthwise supernodes, dilated / grouped / transposed
convolutions, batch norm - end in the very same stage, so it is prepared
here once:

- ``prod = in_step * w_step`` from the given (sane, not zero-fixed) ranges;
- the bias: quint8 (``b_zero``, ``b_step`` from ``step_zero``) or qint32
  (``b_zero = 0``, ``b_step`` = one qint32 code ``(max - min) / 2**32``),
  ``bias32[c] = (b[c] - b_zero) * b_step / prod``;
- channel scales ``k[c]`` (all 1.0 when absent), each in (1/2048, 1] - the
  project's bound for "(0, 1]" - or in (1/32, 1] where the op text says so;
- the output range, fixed or auto (``-inf`` / ``+inf``) with the start the
  op passes (``(0, 0.5)`` for convolutions, ``(-0.125, 0.125)`` depthwise).

:meth:`OutputStage.apply` then runs :func:`requantize_auto` on the exact product
sums: the §5 formula (:mod:`.requant`) per output range, cached per node in an
:class:`OutputPlan`, the auto range widened by :mod:`.spec_autorange`.

Zero-width ranges (SEMANTICS §1, issue 18) are legal: ``prod == 0`` (a
zero-width input or weight range) keeps the bias in real units and gives the
bias alone; a zero-width output range quantizes over the 1e-18 width floor
(:mod:`hexnn_import.ops.output_stage.requant`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.ops.kernel_io import i32_codes, range_out, u8_codes
from hexnn_import.ops.output_stage import spec_autorange
from hexnn_import.ops.output_stage.codes import presat, presat_extremes, saturated
from hexnn_import.ops.output_stage.requant import (FloatStage, Requant, bias_in_prod_units, channel_scales, float_stage,
                                                   requant_params)
from hexnn_import.ops.quant import qint32_one, step_zero
from hexnn_import.ops.registry import KernelContext

#: Auto-range start of a (non-depthwise) convolution (SEMANTICS §5).
CONV_START = (0.0, 0.5)
#: Auto-range start of a depthwise convolution (SEMANTICS §5).
DEPTHWISE_START = (-0.125, 0.125)
#: Lower (excluded) channel-scale bound of the op texts that say "(1/32, 1.0]".
K_LOW_1_32 = 1.0 / 32.0
#: Output ranges whose constants one OutputPlan keeps (auto ranges only grow; a few suffice).
_MAX_STAGES = 8


class OutputPlan:
    """Cached §5 constants of one node: ``prod``, ``bias32``, ``k`` and the bound on ``|sums|``.

    :meth:`stage` keeps the :class:`Requant` (and its :class:`FloatStage`,
    when exact) of every output range met, so a node with a fixed or settled
    auto range derives them once. ``bound`` may be None (no bound known:
    the int64 path is always used). ``kmax``: the op's ``max_k_factor`` when it is not
    ``max(k)`` (see :func:`requant_params`).
    """

    def __init__(self, prod: float, bias32: np.ndarray, k: np.ndarray, bound: np.ndarray | None,
                 kmax: float | None = None):
        self.prod = prod
        self.bias32 = np.ascontiguousarray(bias32, dtype=np.float64)
        self.k = k
        self.kmax = float(np.max(k)) if kmax is None else float(kmax)
        self.bound = bound
        self._stages: dict[tuple[float, float], tuple[Requant, FloatStage | None]] = {}

    def stage(self, lo: float, hi: float) -> tuple[Requant, FloatStage | None]:
        """``(Requant, FloatStage or None)`` for the output range ``[lo, hi]``."""
        got = self._stages.get((lo, hi))
        if got is None:
            if len(self._stages) >= _MAX_STAGES:
                self._stages.clear()
            rq = requant_params(self.prod, lo, hi, self.bias32, self.k, self.kmax)
            got = (rq, None if self.bound is None else float_stage(rq, self.bound))
            self._stages[(lo, hi)] = got
        return got


def requantize_auto(ctx: KernelContext, sums: np.ndarray, prod: float, bias32: np.ndarray,
                    k: np.ndarray, rng: spec_autorange.OutRange, plan: OutputPlan | None = None
                    ) -> tuple[np.ndarray, float, float]:
    """Output stage with fixed or auto ranges: ``(q, out_min_used, out_max_used)`` (SEMANTICS §5).

    ``sums`` is the exact product sum, channel last: int64, or integer-valued
    floats (the BLAS path of :mod:`conv_core`); ``rng`` the range of the
    first computation (:func:`.spec_autorange.initial_range`). Recomputes at
    most :data:`.spec_autorange.MAX_RECOMPUTES` times while an auto end overflows,
    and remembers the range used in ``ctx.state``. ``plan`` (the node's
    cached :class:`OutputPlan` for these ``prod``, ``bias32``, ``k``) serves
    the per-range constants and, with a bound on ``|sums|``, the exact
    float64 evaluation; without it they are derived here (int64 path).
    """
    if plan is None:
        plan = OutputPlan(prod, bias32, k, None)
    for attempt in range(spec_autorange.MAX_RECOMPUTES + 1):
        codes = presat(sums, *plan.stage(rng.lo, rng.hi))
        if not rng.auto or attempt == spec_autorange.MAX_RECOMPUTES or codes.size == 0:
            break
        wider = spec_autorange.widened(rng, *presat_extremes(codes))
        if wider is None:
            break
        rng = wider
    spec_autorange.remember(ctx, rng)
    return saturated(codes), rng.lo, rng.hi


@dataclass(frozen=True)
class ProductSteps:
    """Steps and zero points of the data and weights; ``prod`` is one accumulator unit."""

    in_step: float
    in_zero: int
    w_step: float
    w_zero: int

    @property
    def prod(self) -> float:
        """``in_step * w_step`` (SEMANTICS §5)."""
        return self.in_step * self.w_step


def product_steps(ctx: KernelContext, in_min: np.ndarray, in_max: np.ndarray, w_min: np.ndarray,
                  w_max: np.ndarray, w_what: str = "weights") -> ProductSteps:
    """Read and check the input and weight ranges (both must be sane, SEMANTICS §1)."""
    in_step, in_zero = step_zero(*ctx.sane_range(in_min, in_max, "input"))
    w_step, w_zero = step_zero(*ctx.sane_range(w_min, w_max, w_what))
    return ProductSteps(in_step, in_zero, w_step, w_zero)


def read_bias32(ctx: KernelContext, arr: np.ndarray, b_min: np.ndarray, b_max: np.ndarray, dout: int,
                qint32: bool, prod: float, broadcast: bool = False) -> np.ndarray:
    """``bias32[dout]`` in accumulator units (SEMANTICS §5).

    ``qint32`` picks the p32 flavour (zero 0, one qint32 code per step)
    over the quint8 one. The bias must hold ``dout`` values, or a single one
    when ``broadcast`` (batch norm's ``[1,1,1,1]``).
    """
    b = i32_codes(ctx, arr, "bias") if qint32 else u8_codes(ctx, arr, "bias")
    if b.size != dout and not (broadcast and b.size == 1):
        allowed = f"[1,1,1,{dout}]" + (" or [1,1,1,1]" if broadcast else "")
        raise ctx.fail(f"bias has {b.size} elements (shape {list(np.shape(b))}), expected {allowed} "
                       f"(one per output channel)")
    lo, hi = ctx.sane_range(b_min, b_max, "bias")
    b_step, b_zero = (qint32_one(lo, hi), 0) if qint32 else step_zero(lo, hi)
    return np.broadcast_to(bias_in_prod_units(b.reshape(-1), b_zero, b_step, prod), (dout,))


def read_scales(ctx: KernelContext, arr: np.ndarray | None, dout: int, k_low: float | None = None) -> np.ndarray:
    """Channel scales ``k[dout]`` (SEMANTICS §5); ``k_low`` tightens the lower bound (e.g. 1/32)."""
    k = channel_scales(ctx, arr, dout)
    if k_low is not None:
        bad = k <= k_low
        if bad.any():
            c = int(np.argmax(bad))
            raise ctx.fail(f"channel scale {c} is {k[c]!r}, must be in (1/{round(1 / k_low)}, 1] for this op")
    return k


@dataclass(frozen=True)
class OutputStage:
    """Everything of the §5 output stage known before the product sums are."""

    prod: float
    bias32: np.ndarray
    k: np.ndarray
    rng: spec_autorange.OutRange
    plan: OutputPlan | None = None

    def apply(self, ctx: KernelContext, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(q, out_min, out_max)`` from the exact sums (int64 or integer-valued floats, channel last);
        remembers an auto range."""
        q, lo, hi = requantize_auto(ctx, sums, self.prod, self.bias32, self.k, self.rng, self.plan)
        return (q, *range_out(lo, hi))


def prepare_output(ctx: KernelContext, prod: float, bias32: np.ndarray, k: np.ndarray, o_min: np.ndarray,
                   o_max: np.ndarray, start: tuple[float, float], plan: OutputPlan | None = None) -> OutputStage:
    """Read the requested output range (fixed or auto) and build the :class:`OutputStage`.

    ``plan``: the node's cached :class:`OutputPlan` for these ``prod``,
    ``bias32``, ``k`` (per-range constants kept across runs), if it has one.
    """
    out_min, out_max = ctx.scalar(o_min, "output min"), ctx.scalar(o_max, "output max")
    kmax = plan.kmax if plan is not None else float(np.max(k))
    rng = spec_autorange.initial_range(ctx, out_min, out_max, kmax * prod, start)
    return OutputStage(prod, np.ascontiguousarray(bias32, dtype=np.float64), k, rng, plan)
