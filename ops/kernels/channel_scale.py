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
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Largest shift used: any |q * m| < 2**55 shifted by 62 rounds to 0, as it would by more.
_MAX_SHIFT = 62


def scale_codes(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``round_away(q * k)`` exactly, for int32 ``q`` and float32 ``k`` in (0, 1] (last-axis broadcast)."""
    mant, exp = np.frexp(k.astype(np.float64))              # k = mant * 2**exp, mant in [0.5, 1)
    m = np.ldexp(mant, 24).astype(np.int64)                  # exact: float32 has 24 significant bits
    s = np.minimum(24 - exp.astype(np.int64), _MAX_SHIFT)    # k = m * 2**-s, s >= 23
    v = q.astype(np.int64) * m                               # |v| < 2**31 * 2**24
    mag = (np.abs(v) + (np.int64(1) << (s - 1))) >> s        # half away from zero, on the magnitude
    return (np.sign(v) * mag).astype(np.int32)


@register("QuantizedChannelScale_32xf")
class QuantizedChannelScale32xf(Kernel):
    """``out[..., d] = round_away(q[..., d] * scale[d])``, range passed through (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(out, in_min, in_max)``."""
        data, scale, mn_arr, mx_arr = inputs
        q = i32_codes(ctx, require_4d(ctx, data, "input data"), "input data")
        in_min, in_max = ctx.sane_range(mn_arr, mx_arr, "input")
        k = float_data(ctx, scale, "scale").astype(np.float32).reshape(-1)
        depth = q.shape[3]
        if k.size not in (1, depth):
            raise ctx.fail(f"scale has {k.size} elements (shape {list(np.shape(scale))}), expected "
                           f"[1,1,1,{depth}] (one per channel of input shape {list(q.shape)}) or [1,1,1,1]")
        bad = ~((k > 0) & (k <= 1))
        if bad.any():
            c = int(np.argmax(bad))
            raise ctx.fail(f"scale {c} is {float(k[c])!r}, must be in (0, 1]")
        return (scale_codes(q, k), *range_out(in_min, in_max))
