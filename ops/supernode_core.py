"""Supernode output stage: bias, channel scales and 32 -> 8 requantization (SEMANTICS.md §5).

Pure functions, shared by every supernode flavour (flat, d32, depthwise):

```
final    = max(k) * prod / out_step
shamt    = 0 if final <= 1 else frexp(final).exp
recip[c] = min(round_away(ldexp(prod / out_step, 31 - shamt) * k[c]), 2**31 - 1)
bb[c]    = round_half_even((bias32[c] + (-out_min / prod)) / k[c])
acc      = bb[c] + sum((x - in_zero) * (w - w_zero))
q        = sat_u8(((acc << shamt) * recip[c] + 2**30) >> 31)
```

Float expressions are evaluated in float64 in exactly the order written
above. The integer part is the exact (unbounded-integer) value of the
formula; :func:`presat_codes` evaluates it in int64 and, where the exact
value would not fit, clamps it to a value with the same saturated result
(documented there).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hexnn_import.ops import autorange
from hexnn_import.ops.quant import round_away
from hexnn_import.ops.registry import KernelContext

#: Channel scales must lie in (K_LOW, 1] (project brief; the op text says (0, 1]).
K_LOW = 1.0 / 2048.0
_INT32_MAX = 2 ** 31 - 1
#: |acc * recip * 2**shamt| is kept below 2**62 (int64-safe, see presat_codes).
_PRODUCT_LIMIT = 2 ** 61
#: bb is clipped to +-2**62 before the int64 cast; far beyond any saturating value.
_BB_LIMIT = float(2 ** 62)


@dataclass(frozen=True)
class Requant:
    """The per-node constants of the §5 output stage for one output range."""

    out_min: float
    out_max: float
    shamt: int
    recip: np.ndarray  # int64 [dout], 0 .. 2**31-1
    bb: np.ndarray     # int64 [dout]

    @property
    def out_step(self) -> float:
        """``(out_max - out_min) / 255``."""
        return (self.out_max - self.out_min) / 255.0


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
    """``bias32[c] = (b[c] - b_zero) * b_step / prod`` in float64 (SEMANTICS §5)."""
    return (b.astype(np.float64) - float(b_zero)) * b_step / prod


def requant_params(prod: float, out_min: float, out_max: float, bias32: np.ndarray,
                   k: np.ndarray) -> Requant:
    """``shamt``, ``recip[c]`` and ``bb[c]`` of SEMANTICS §5 for one output range."""
    out_step = (out_max - out_min) / 255.0
    final = float(np.max(k)) * prod / out_step
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
    formula does.
    """
    acc = sums + rq.bb
    m_float = np.minimum(rq.recip.astype(np.float64) * math.ldexp(1.0, min(rq.shamt, 64)), float(_PRODUCT_LIMIT))
    m = m_float.astype(np.int64)                     # exact: a power-of-two multiple, or the cap
    bound = _PRODUCT_LIMIT // np.maximum(m, 1) + 1
    if np.any(np.abs(acc) > bound):
        acc = np.clip(acc, -bound, bound)
    return (acc * m + 2 ** 30) >> 31


def saturate(codes: np.ndarray) -> np.ndarray:
    """``sat_u8`` of pre-saturation codes."""
    return np.clip(codes, 0, 255).astype(np.uint8)


def requantize_auto(ctx: KernelContext, sums: np.ndarray, prod: float, bias32: np.ndarray,
                    k: np.ndarray, rng: autorange.OutRange) -> tuple[np.ndarray, float, float]:
    """Output stage with fixed or auto ranges: ``(q, out_min_used, out_max_used)`` (SEMANTICS §5).

    ``sums`` is the exact int64 product sum, channel last; ``rng`` the range
    of the first computation (:func:`autorange.initial_range`). Recomputes at
    most :data:`autorange.MAX_RECOMPUTES` times while an auto end overflows,
    and remembers the range used in ``ctx.state``.
    """
    for attempt in range(autorange.MAX_RECOMPUTES + 1):
        codes = presat_codes(sums, requant_params(prod, rng.lo, rng.hi, bias32, k))
        if not rng.auto or attempt == autorange.MAX_RECOMPUTES or codes.size == 0:
            break
        wider = autorange.widened(rng, int(codes.min()), int(codes.max()))
        if wider is None:
            break
        rng = wider
    autorange.remember(ctx, rng)
    return saturate(codes), rng.lo, rng.hi
