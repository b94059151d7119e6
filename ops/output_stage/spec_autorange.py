"""Output ranges of the specified output stage: fixed, or "auto" with persistent widening (SEMANTICS.md §5).

An output end given as ``-inf`` (min) or ``+inf`` (max) is *auto*. §5 fixes
the outline; the choices below fill in what it leaves open:

- **Start.** An auto end starts from the node's remembered range when an
  earlier execution left one in ``ctx.state`` (key :data:`STATE_KEY`),
  otherwise from ``start`` (``(0, 0.5)`` for convolutions, ``(-0.125,
  0.125)`` for depthwise). A fixed end is always the given value. The result
  is zero-fixed with ``adjust_range``.
- **The 1.75 rule.** If ``final = max(k) * prod / out_step > 1.75``, the range
  is widened so that ``out_step = max(k) * prod / 1.75``: both ends auto ->
  ``[-63, 192] * out_step`` (each end only ever moves outward, so a
  remembered wider end is kept); only max auto -> ``max = min + 255 *
  out_step``; only min auto -> ``min = max - 255 * out_step``; then
  zero-fixed again.
- **Widening.** After a computation whose pre-saturation codes went above 255
  (below 0) on an auto max (min), that end moves to the real value of the
  extreme code, ``min + code * out_step``, rounded outward to the nearest
  ``2**(n/4)`` (the smallest such power >= the value; for the min, minus the
  smallest power >= its magnitude); the range is then zero-fixed with
  ``adjust_range``. The node is computed again, at most 3 times; after the
  third recompute the result is kept as it is (saturated).
- **Zero-fixing moves whichever end ``adjust_range`` moves**, which may be a
  fixed end when the other is auto (by less than one output step).
- **Persistence.** The range finally used is stored in ``ctx.state`` and
  reported as the op's output min/max, so later executions start from it and
  ranges only grow.
- A fixed end must be finite and on its side of zero; a fully fixed range
  must be sane (SEMANTICS §1). Anything else is an error. An auto min with a
  fixed max of 0 starts as the empty range ``[0, 0]``, which the 1.75 rule
  then opens to ``[-255 * max(k) * prod / 1.75, 0]``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hexnn_import.ops.quant import RANGE_EPS, adjust_range, range_problem
from hexnn_import.ops.registry import KernelContext

STATE_KEY = "auto_out_range"
#: Widest acceptable ``final`` after the auto start (SEMANTICS §5).
FINAL_LIMIT = 1.75
#: Recomputations allowed after the first computation (SEMANTICS §5).
MAX_RECOMPUTES = 3


@dataclass(frozen=True)
class OutRange:
    """An output range and which of its ends are auto."""

    lo: float
    hi: float
    auto_lo: bool
    auto_hi: bool

    @property
    def auto(self) -> bool:
        """True when either end is auto."""
        return self.auto_lo or self.auto_hi

    def with_ends(self, lo: float, hi: float) -> "OutRange":
        """The same auto flags with new (zero-fixed) ends."""
        lo, hi = adjust_range(lo, hi)
        return OutRange(lo, hi, self.auto_lo, self.auto_hi)


def initial_range(ctx: KernelContext, out_min: float, out_max: float, prod_kmax: float,
                  start: tuple[float, float]) -> OutRange:
    """The range of the first computation: fixed ends zero-fixed, auto ends per the module doc.

    ``prod_kmax`` is ``max(k) * prod`` (real value of one accumulator unit of
    the most-scaled channel).
    """
    auto_lo = out_min == -math.inf
    auto_hi = out_max == math.inf
    if not auto_lo and not auto_hi:
        problem = range_problem(out_min, out_max)
        if problem:
            raise ctx.fail(f"output {problem}")
        lo, hi = adjust_range(out_min, out_max)
        return OutRange(lo, hi, False, False)
    if not auto_lo and not (math.isfinite(out_min) and out_min <= 0.0):
        raise ctx.fail(f"output min {out_min} must be -inf (auto) or finite and <= 0")
    if not auto_hi and not (math.isfinite(out_max) and out_max >= 0.0):
        raise ctx.fail(f"output max {out_max} must be +inf (auto) or finite and >= 0")
    kept = ctx.state.get(STATE_KEY)
    lo = (kept[0] if kept else start[0]) if auto_lo else out_min
    hi = (kept[1] if kept else start[1]) if auto_hi else out_max
    rng = OutRange(lo, hi, auto_lo, auto_hi).with_ends(lo, hi)
    return _limit_final(rng, prod_kmax)


def _limit_final(rng: OutRange, prod_kmax: float) -> OutRange:
    """Apply the 1.75 rule: widen so that one accumulator unit is at most 1.75 output codes."""
    step = (rng.hi - rng.lo) / 255.0
    if step > 0.0 and prod_kmax / step <= FINAL_LIMIT:
        return rng
    want = prod_kmax / FINAL_LIMIT
    if rng.auto_lo and rng.auto_hi:
        lo, hi = min(rng.lo, -63.0 * want), max(rng.hi, 192.0 * want)
    elif rng.auto_hi:
        lo, hi = rng.lo, rng.lo + 255.0 * want
    else:
        lo, hi = rng.hi - 255.0 * want, rng.hi
    return rng.with_ends(lo, hi)


def quarter_octave_up(x: float) -> float:
    """Smallest ``2**(n/4)`` (integer n) that is >= ``x`` (``x > 0``)."""
    n = math.ceil(4.0 * math.log2(x))
    while 2.0 ** (n / 4.0) < x:
        n += 1
    while 2.0 ** ((n - 1) / 4.0) >= x:
        n -= 1
    return 2.0 ** (n / 4.0)


def widened(rng: OutRange, code_min: int, code_max: int) -> OutRange | None:
    """The widened range after a computation, or None when no auto end overflowed.

    ``code_min`` / ``code_max`` are the extreme pre-saturation codes. The step
    of a zero-width range is taken over the 1e-18 width floor, as the codes
    were (:func:`.requant.out_step_of`); such a range meets here only with
    ``prod == 0`` (the 1.75 rule opens it otherwise).
    """
    step = max(RANGE_EPS, rng.hi - rng.lo) / 255.0
    lo, hi = rng.lo, rng.hi
    grow = False
    if rng.auto_hi and code_max > 255:
        hi = max(hi, quarter_octave_up(rng.lo + code_max * step))
        grow = True
    if rng.auto_lo and code_min < 0:
        lo = min(lo, -quarter_octave_up(-(rng.lo + code_min * step)))
        grow = True
    return rng.with_ends(lo, hi) if grow else None


def remember(ctx: KernelContext, rng: OutRange) -> None:
    """Keep the range used on the node so later executions start from it (only when auto)."""
    if rng.auto:
        ctx.state[STATE_KEY] = (rng.lo, rng.hi)
