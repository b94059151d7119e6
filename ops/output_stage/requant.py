"""The §5 output stage's constants and per-element formula (SEMANTICS.md §5): bias, channel scales, 32 -> 8.

Pure functions, shared by every supernode flavour (flat, d32, depthwise) and by both stages of
:mod:`hexnn_import.ops.output_stage` (the specified one and hexagon_nn's):

```
final    = max(k) * prod / out_step
shamt    = 0 if final <= 1 else frexp(final).exp
recip[c] = min(round_away(ldexp(prod / out_step, 31 - shamt) * k[c]), 2**31 - 1)
bb[c]    = round_half_even((bias32[c] + (-out_min / prod)) / k[c])
acc      = bb[c] + sum((x - in_zero) * (w - w_zero))
q        = sat_u8(((acc << shamt) * recip[c] + 2**30) >> 31)
```

Float expressions are evaluated in float64 in exactly the order written
above.

Narrow and zero-width ranges are legal (SEMANTICS §1, issue 18) and never
raise:

- ``prod == 0`` (a zero-width input or weight range, i.e. an all-zero input or
  all-zero weights): the products contribute exactly 0 and the output is the
  bias alone requantized to the output range with §5's rounding (half up):
  ``q[c] = sat_u8(floor((bias_real[c] - out_min) / out_step + 1/2))``, the
  value the formula above tends to (``k`` cancels out). hexagon_nn 2.14.1
  floors the input max at ``in_min + 1e-18f`` (include/supernode_utils.h
  ``fill_info_minmax_basics``) but not the weight range, whose zero width
  there divides by 0 (op_supernode_new.c); the engine departs from both so that
  a converted model always runs (a model a converter emits can hold such ranges).
  :func:`bias_in_prod_units` then keeps the bias in real units (``prod``
  would be a division by 0) and :class:`Requant` carries the per-channel
  codes in ``fixed``.
- A zero-width output range (``[0, 0]``): ``out_step`` is taken over
  hexagon_nn's width floor ``1e-18 / 255`` (``RANGE_EPS``, include/quantize.h
  ``quantize_uint8``), the rule every other kernel follows (Requantize_32to8):
  a result <= 0 gives code 0 (the zero code of ``[0, 0]``) and a positive one
  saturates to 255; either decodes to 0. hexagon_nn's own supernode divides by
  the zero level size (``final_scaling = inf``), its ``recip`` saturating to
  the same effect. The integer part is the exact (unbounded-integer) value of the
formula; :func:`presat_codes` evaluates it in int64 and, where the exact
value would not fit, clamps it to a value with the same saturated result
(documented there). When a bound on the sums proves every intermediate
below 2**53, :class:`FloatStage` evaluates the same formula exactly in
float64 (fewer, cheaper passes). From sums to codes: :mod:`.codes`; the per-range constants of a node
are kept in its :class:`~.spec_stage.OutputPlan` (cached across runs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from hexnn_import.ops.quant import RANGE_EPS, round_away
from hexnn_import.ops.registry import KernelContext

#: Channel scales must lie in (K_LOW, 1] (project brief; the op text says (0, 1]).
K_LOW = 1.0 / 2048.0
_INT32_MAX = 2 ** 31 - 1
#: |acc * recip * 2**shamt| is kept below 2**62 (int64-safe, see presat_codes).
_PRODUCT_LIMIT = 2 ** 61
#: bb is clipped to +-2**62 before the int64 cast; far beyond any saturating value.
_BB_LIMIT = float(2 ** 62)
#: FloatStage is used only when its float64-evaluated bound is below this: half of 2**53, a margin far
#: wider than the three roundings of that evaluation.
_FLOAT_EXACT = 2.0 ** 52


@dataclass(frozen=True)
class Requant:
    """The per-node constants of the §5 output stage for one output range."""

    out_min: float
    out_max: float
    shamt: int
    recip: np.ndarray  # int64 [dout], 0 .. 2**31-1
    bb: np.ndarray     # int64 [dout]
    #: ``prod == 0`` only: the pre-saturation codes of the bias alone, integer-valued float64 [dout]
    #: (unbounded: over a zero-width output range they reach ~1e20 and an auto end widens from them).
    fixed: np.ndarray | None = None
    #: hexagon_nn's constants (:mod:`hexnn_import.ops.output_stage.nnlib_execute`): ``bb`` is ``biasbuf + gemsumb *
    #: in_zero`` and the codes follow the device's 32-bit arithmetic (:func:`presat_codes`).
    c32: bool = False

    @property
    def out_step(self) -> float:
        """``max(1e-18, out_max - out_min) / 255`` (the width floor only matters for ``[0, 0]``)."""
        return out_step_of(self.out_min, self.out_max)


def out_step_of(out_min: float, out_max: float) -> float:
    """``max(RANGE_EPS, out_max - out_min) / 255``: the output step, a zero-width range taken over
    hexagon_nn's 1e-18 width floor (include/quantize.h ``quantize_uint8``; module doc)."""
    return max(RANGE_EPS, out_max - out_min) / 255.0


def channel_scales(ctx: KernelContext, arr: np.ndarray | None, dout: int) -> np.ndarray:
    """float64 ``k[dout]`` from optional input 12 (all 1.0 when absent); each in (1/2048, 1]."""
    if arr is None:
        return np.ones(dout, dtype=np.float64)
    k = np.asarray(arr, dtype=np.float64).reshape(-1)
    if k.size != dout:
        raise ctx.fail(f"channel scales have {k.size} elements (shape {list(np.shape(arr))}), "
                       f"expected one per output channel ({dout})")
    bad = ~((k > K_LOW) & (k <= 1.0))
    if bad.any():
        c = int(np.argmax(bad))
        raise ctx.fail(f"channel scale {c} is {k[c]!r}, must be in (1/2048, 1]")
    return k


def bias_in_prod_units(b: np.ndarray, b_zero: int, b_step: float, prod: float) -> np.ndarray:
    """``bias32[c] = (b[c] - b_zero) * b_step / prod`` in float64 (SEMANTICS §5).

    With ``prod == 0`` (a zero-width input or weight range) the unit is 1.0
    instead: the real bias ``(b[c] - b_zero) * b_step``, as
    :func:`requant_params` reads it then (module doc).
    """
    real = (b.astype(np.float64) - float(b_zero)) * b_step
    return real if prod == 0.0 else real / prod


def requant_params(prod: float, out_min: float, out_max: float, bias32: np.ndarray,
                   k: np.ndarray, kmax: float | None = None) -> Requant:
    """``shamt``, ``recip[c]`` and ``bb[c]`` of SEMANTICS §5 for one output range.

    ``prod == 0``: ``bias32`` is the real bias and the result carries the
    bias-only codes in ``fixed`` (``recip = bb = 0``); a zero-width output
    range uses the floored step of :func:`out_step_of` (module doc).
    ``kmax`` replaces ``max(k)`` in ``final`` where the op says so (the depthwise
    supernode's ``max_k_factor`` is 1.0 whatever its channel scales: supernode_utils.h find_k_kinv).
    """
    out_step = out_step_of(out_min, out_max)
    if prod == 0.0:
        fixed = np.floor((np.asarray(bias32, dtype=np.float64) - out_min) / out_step + 0.5)
        zeros = np.zeros(fixed.shape, dtype=np.int64)
        return Requant(out_min, out_max, 0, zeros, zeros, fixed)
    final = (float(np.max(k)) if kmax is None else kmax) * prod / out_step
    shamt = 0 if final <= 1.0 else math.frexp(final)[1]
    recip = np.minimum(round_away(math.ldexp(prod / out_step, 31 - shamt) * k), float(_INT32_MAX))
    bb = np.rint((bias32 + (-out_min / prod)) / k)  # np.rint rounds half to even
    bb = np.clip(bb, -_BB_LIMIT, _BB_LIMIT)
    return Requant(out_min, out_max, shamt, recip.astype(np.int64), bb.astype(np.int64))


def presat_codes(sums: np.ndarray, rq: Requant) -> np.ndarray:
    """Pre-saturation codes ``((bb + sums) << shamt) * recip + 2**30) >> 31`` as int64.

    ``sums`` is the exact int64 product sum with the channel on the last axis.
    With ``m = recip * 2**shamt``: where ``|acc * m|`` would exceed 2**61
    (only with absurdly narrow fixed output ranges or huge biases), ``acc`` is
    clamped to ``+-(2**61 // m + 1)``. The clamped product still exceeds 2**61
    in magnitude, so the code is far outside 0..255 on the same side and the
    saturated result equals the exact one; below that bound the codes are
    exact. A channel with ``recip = 0`` gives code 0 everywhere, as the exact
    formula does. With ``rq.fixed`` (``prod == 0``) the codes are those (clipped to +-2**62),
    whatever ``sums`` holds.
    """
    if rq.fixed is not None:
        return np.broadcast_to(np.clip(rq.fixed, -_BB_LIMIT, _BB_LIMIT).astype(np.int64), sums.shape).copy()
    if rq.c32:
        return presat_codes_c32(sums, rq)
    acc = sums + rq.bb
    m_float = np.minimum(rq.recip.astype(np.float64) * math.ldexp(1.0, min(rq.shamt, 64)), float(_PRODUCT_LIMIT))
    m = m_float.astype(np.int64)                     # exact: a power-of-two multiple, or the cap
    bound = _PRODUCT_LIMIT // np.maximum(m, 1) + 1
    if np.any(np.abs(acc) > bound):
        acc = np.clip(acc, -bound, bound)
    return (acc * m + 2 ** 30) >> 31


def _wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values wrapped to int32 (two's complement), as 32-bit vector adds and shifts do."""
    v += 2 ** 31
    v &= 0xFFFFFFFF
    v -= 2 ** 31
    return v


def presat_codes_c32(sums: np.ndarray, rq: Requant) -> np.ndarray:
    """hexagon_nn's per-element arithmetic (asm_src gvconv2dbbb_d32_v60_h.S, dwconv2dbbb_*_h.S), int64:
    ``s = wrap32(bb + sums)`` (vadd.w / vrmpy accumulate in 32 bits), ``s = wrap32(s << shamt)``
    (vasl.w, shift amount mod 32), then the vmpye / vmpyo:<<1:rnd:sat pair, which is exactly
    ``(s * recip + 2**30) >> 31`` (|s * recip| < 2**62; its int32 saturation cannot bind)."""
    s = _wrap32(sums + rq.bb)
    if rq.shamt & 31:
        s <<= rq.shamt & 31
        s = _wrap32(s)
    s *= rq.recip
    s += 2 ** 30
    s >>= 31
    return s


def saturate(codes: np.ndarray) -> np.ndarray:
    """``sat_u8`` of pre-saturation codes."""
    return np.clip(codes, 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class FloatStage:
    """The §5 integer stage evaluated exactly in float64 for one output range.

    With ``m = recip * 2**shamt`` (as :func:`presat_codes` caps it),
    ``mm = m / 2**31`` and ``off = (bb * m + 2**30) / 2**31``, the
    pre-saturation code is ``floor(sums * mm + off)``. Built only when
    ``(bound + |bb|) * m + 2**30 < 2**52`` for every channel (``bound``: the
    largest ``|sums|``): then every product and sum is an integer multiple of
    2**-31 below 2**53 * 2**-31, so each float64 operation is exact and the
    floor is exactly the integer formula's ``>> 31``.
    """

    mm: np.ndarray   # float64 [dout]
    off: np.ndarray  # float64 [dout]
    _rows: dict = field(default_factory=dict, compare=False, repr=False)

    def row(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """``(mm, off)`` tiled ``width`` times (kept per width): with the sums viewed as rows of
        ``width * dout`` elements numpy runs one long inner loop per row instead of one per pixel."""
        got = self._rows.get(width)
        if got is None:
            got = self._rows[width] = (np.tile(self.mm, width), np.tile(self.off, width))
        return got


def float_stage(rq: Requant, bound: np.ndarray) -> FloatStage | None:
    """The :class:`FloatStage` of ``rq`` when the bound proves it exact, else None (always None for a
    bias-only ``rq``, whose int64 path is trivial)."""
    if rq.fixed is not None:
        return None
    m = np.minimum(rq.recip.astype(np.float64) * math.ldexp(1.0, min(rq.shamt, 64)), float(_PRODUCT_LIMIT))
    bb = rq.bb.astype(np.float64)
    if not np.all((bound + np.abs(bb)) * m + 2.0 ** 30 < _FLOAT_EXACT):
        return None
    if rq.c32 and not (rq.shamt < 31 and np.all((bound + np.abs(bb)) * 2.0 ** rq.shamt < 2.0 ** 31 - 1)):
        return None   # the device's 32-bit adds or shift could wrap: the int64 path models that
    scale = 2.0 ** -31
    return FloatStage(m * scale, (bb * m + 2.0 ** 30) * scale)
