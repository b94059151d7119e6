"""QuantizedChannelScale_32xf: scale each channel of qint32 data by a float (op text; SEMANTICS.md §1).

SEMANTICS.md is silent on this op; the choices made here:

- The range passes through (output min/max = input min/max), so a code
  keeps its unit ``(max - min) / 2**32`` and the result is simply
  ``out = round_away(q * k[d])`` - the exact real product rounded half away
  from zero onto the same qint32 grid.
- The scales are float32 (the op's type; a wider input is rounded to
  float32 first) and must lie in (0, 1], as every channel-scale input of
  the op texts does; the result then never exceeds ``|q|`` and cannot
  overflow. ``k`` has one value per channel (``[1,1,1,d]``); a single value
  applies to every channel.
- The product is exact: a float32 ``k`` is ``m * 2**-s`` with a 24-bit
  integer ``m`` and ``s >= 23``, so ``q * m`` fits int64 and the rounding
  is an integer shift. (hexagon_nn's device code rounds ``k`` to 28
  fractional bits first; results can differ from this by one code where
  ``q * k`` lies within ``|q| * 2**-29`` of a half.)
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import float_data, i32_codes, range_out, require_4d
from hexnn_import.ops.node_cache import node_cached, replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Largest shift used: any |q * m| < 2**55 shifted by 62 rounds to 0, as it would by more.
_MAX_SHIFT = 62
#: Channels whose shifts differ by at most this share one shift (their multipliers scaled up to it).
_SPREAD = 7


class ScaleTerms:
    """``(m, h, s)`` int64 with ``k = m * 2**-s`` exactly and ``h = 2**(s-1)``, for float32 ``k`` in (0, 1];
    :meth:`row` keeps them tiled along a row of the data (built once per node, issue 11)."""

    def __init__(self, k: np.ndarray):
        mant, exp = np.frexp(k.astype(np.float64))              # k = mant * 2**exp, mant in [0.5, 1)
        m = np.ldexp(mant, 24).astype(np.int64)                  # exact: float32 has 24 significant bits
        s = np.minimum(24 - exp.astype(np.int64), _MAX_SHIFT)    # k = m * 2**-s, s >= 23
        if s.size and int(s.max()) - int(s.min()) <= _SPREAD and int(s.max()) < _MAX_SHIFT:
            # one shift for every channel: m * 2**(S - s) / 2**S is the same k, and
            # |q * m'| < 2**31 * 2**24 * 2**7 = 2**62 still fits int64 with the rounding term
            top = int(s.max())
            m, s = m << (top - s), np.int64(top)
        self.m, self.s = m, s
        self.h = np.int64(1) << (s - 1)
        # v = q * m is a tie (v = 2**(s-1) mod 2**s) only if q has exactly s - 1 - v2(m) trailing zero
        # bits: never when that is negative (q * k is then an integer), and only for |q| >= 2**(s-1-v2(m))
        # otherwise, so |q| < 2**tie_bits (the smallest such bound over the channels) rules ties out
        low = m & -m                                             # lowest set bit of each m (m >= 2**23)
        v2m = np.log2(low.astype(np.float64)).astype(np.int64)   # exact: a power of two
        need = np.broadcast_to(s, m.shape) - 1 - v2m
        need = need[need >= 0]
        self.tie_bits = int(need.min()) if need.size else 63
        self._rows: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def row(self, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(m, h, s)`` tiled ``width`` times (a row of ``width`` pixels, channel last)."""
        got = self._rows.get(width)
        if got is None:
            got = self._rows[width] = tuple(np.tile(a, width) if np.ndim(a) else a  # type: ignore[assignment]
                                            for a in (self.m, self.h, self.s))
        return got


def scale_codes(q: np.ndarray, k: np.ndarray, terms: ScaleTerms | None = None) -> np.ndarray:
    """``round_away(q * k)`` exactly, for int32 ``q`` and float32 ``k`` in (0, 1] (last-axis broadcast).

    With ``v = q * m`` (``|v| < 2**31 * 2**24``): ``round_away(v / 2**s)`` is
    ``(v + 2**(s-1)) >> s`` for ``v >= 0`` and ``(v + 2**(s-1) - 1) >> s``
    for ``v < 0`` (the floor of ``(v - 2**(s-1)) / 2**s`` rounded up), so one
    arithmetic shift serves both signs; the two differ only on a negative tie,
    which the magnitude of ``q`` can rule out (:attr:`ScaleTerms.tie_bits`),
    and then the sign correction is skipped. ``terms``: the :class:`ScaleTerms` of
    ``k``, when the caller keeps them. Per-channel terms are applied a row at
    a time (one long inner loop per row, in place on one int64 array).
    """
    t = ScaleTerms(k) if terms is None else terms
    if q.ndim >= 2 and t.m.size > 1 and q.flags.c_contiguous:
        m, h, s = t.row(q.shape[-2])
        rows = q.reshape(-1, m.size)
    else:
        m, h, s = t.m, t.h, t.s
        rows = q
    v = np.multiply(rows, m)   # int32 x int64 -> int64 (one pass; numpy's int64 multiply is the slow part)
    v += h
    if q.size and max(-int(q.min()), int(q.max())) >= 1 << t.tie_bits:
        v -= rows < 0   # a negative tie may occur: round it away from zero (module doc)
    # else no tie can occur and floor(v / 2**s + 1/2) is round_away for either sign
    v >>= s
    return v.astype(np.int32).reshape(q.shape)


@register("QuantizedChannelScale_32xf")
class QuantizedChannelScale32xf(Kernel):
    """``out[..., d] = round_away(q[..., d] * scale[d])``, range passed through (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(out, in_min, in_max)``."""
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, scale, mn_arr, mx_arr = inputs
        q = i32_codes(ctx, require_4d(ctx, data, "input data"), "input data")
        in_min, in_max = ctx.sane_range(mn_arr, mx_arr, "input")
        depth = q.shape[3]

        def build() -> tuple[np.ndarray, ScaleTerms]:
            k = float_data(ctx, scale, "scale").astype(np.float32).reshape(-1)
            if k.size not in (1, depth):
                raise ctx.fail(f"scale has {k.size} elements (shape {list(np.shape(scale))}), expected "
                               f"[1,1,1,{depth}] (one per channel of input shape {list(q.shape)}) or [1,1,1,1]")
            bad = ~((k > 0) & (k <= 1))
            if bad.any():
                c = int(np.argmax(bad))
                raise ctx.fail(f"scale {c} is {float(k[c])!r}, must be in (0, 1]")
            return k, ScaleTerms(k)

        # the scales' checks and exact terms are kept per scale array and input depth (speed, issue 11)
        k, terms = node_cached(ctx.state, "channel_scale", (scale,), (depth,), build)
        mn, mx = range_out(in_min, in_max)
        if q is data:  # int32 data: later runs with the same other inputs redo only the arithmetic (node_cache)
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda q_new: (scale_codes(q_new, k, terms), mn, mx))
        return (scale_codes(q, k, terms), mn, mx)
