"""quint8 range arithmetic shared by every quantized kernel (SEMANTICS.md §1).

All functions are pure; they take Python floats / numpy arrays and never
touch a graph.
"""
from __future__ import annotations

import math

import numpy as np

#: hexagon_nn's floor on a range's width wherever it divides by it (``fmaxf(1e-18f, max - min)`` in
#: include/quantize.h ``quantize_uint8`` / ``quantize_adjust_range``, src/quantize.c, op_quantize.c).
#: Narrow and zero-width ranges are legal (SEMANTICS §1): they never raise.
RANGE_EPS = 1e-18


def round_away(x):
    """``trunc(x + copysign(0.5, x))``: round half away from zero (SEMANTICS notation)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.trunc(x + np.copysign(0.5, x))
    if not math.isfinite(x):
        return float(x)
    return float(math.trunc(x + math.copysign(0.5, x)))


def _ufunc_clip():  # type: ignore[no-untyped-def]
    """numpy's ``clip`` ufunc itself (``np.clip`` wraps it in Python checks costing ~3 us a call), or np.clip."""
    for mod in ("_core", "core"):
        clip = getattr(getattr(getattr(np, mod, None), "umath", None), "clip", None)
        if isinstance(clip, np.ufunc):
            return clip
    return np.clip


#: ``clip(x, lo, hi, out=..., casting=...)`` with np.clip's results, minus its per-call overhead (hot paths).
fast_clip = _ufunc_clip()


def sat_u8(x: np.ndarray) -> np.ndarray:
    """Clip to 0..255 and return uint8."""
    return np.clip(x, 0, 255).astype(np.uint8)


def sat16(x: np.ndarray) -> np.ndarray:
    """Clip to the int16 range (kept in the input's integer dtype)."""
    return np.clip(x, -32768, 32767)


def range_problem(mn: float, mx: float) -> str | None:
    """Why a range is not *sane* (SEMANTICS §1), or None if it is.

    Sane: both ends finite, ``min <= max`` and ``min <= 0 <= max``. Narrow and
    zero-width ranges are sane (an all-zero bias, a pruned channel, a constant
    tensor): kernels compute with them, treating a zero-width tensor as all
    zeros, as hexagon_nn does (issue 18). hexagon_nn's own
    ``check_range_is_sane`` (include/quantize.h, used only by the reference
    Quantize path) also rejects widths under 1e-8; the corrected SEMANTICS §1
    overrules that for the engine.
    """
    if not (math.isfinite(mn) and math.isfinite(mx)):
        return f"range [{mn}, {mx}] is not finite"
    if mn > mx:
        return f"range min {mn} > max {mx}"
    if mn > 0 or mx < 0:
        return f"range [{mn}, {mx}] does not contain 0"
    return None


def adjust_range(in_min: float, in_max: float) -> tuple[float, float]:
    """Widen ``[in_min, in_max]`` minimally so 0.0 is a code exactly (SEMANTICS §1)."""
    mn = min(0.0, float(in_min))
    mx = max(0.0, float(in_max))
    rng = max(1e-18, mx - mn)
    if mn < 0:
        z = -mn * 255.0 / rng
        zi = math.floor(z)
        zf = z - zi
        if 2.0 ** -14 < zf < 1.0 - 2.0 ** -14:
            if zi > 0 and (zi > 253 or (zf - 1.0) * mn >= zf * mx):
                rng = -255.0 * mn / zi
                mx = mn + rng
            else:
                mn = mx * (zi + 1) / (zi - 254)
    return mn, mx


def step_zero(mn: float, mx: float) -> tuple[float, int]:
    """``(step, zero)`` of a quint8 range: ``step = (max-min)/255``,
    ``zero = sat_u8(round_away(-min/step))`` (SEMANTICS §1)."""
    step = (float(mx) - float(mn)) / 255.0
    if step <= 0:
        return step, 0
    zero = int(min(255.0, max(0.0, round_away(-float(mn) / step))))
    return step, zero


def dequantize_u8(q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    """``real = (q - zero) * step`` in float64."""
    step, zero = step_zero(mn, mx)
    return (q.astype(np.float64) - zero) * step


def quantize_u8(x: np.ndarray, mn: float, mx: float) -> np.ndarray:
    """``q = sat_u8(round_away((x - min) / step))`` for a range already zero-fixed.

    The width is floored at 1e-18 as hexagon_nn's ``quantize_uint8`` does
    (include/quantize.h: ``range = fmaxf(1e-18f, maxval-minval)``), so a
    zero-width range gives code 0 for values <= min and 255 above.
    """
    step = max(RANGE_EPS, float(mx) - float(mn)) / 255.0
    return sat_u8(round_away((np.asarray(x, dtype=np.float64) - float(mn)) / step))


def scale_zp_to_range(scale: float, zero_point: int, signed: bool) -> tuple[float, float]:
    """TFLite/ONNX ``(scale, zero_point)`` to ``(min, max)`` (SEMANTICS §1)."""
    qmin, qmax = (-128, 127) if signed else (0, 255)
    return float(scale) * (qmin - zero_point), float(scale) * (qmax - zero_point)


def qint32_one(mn: float, mx: float) -> float:
    """Value of one qint32 code: ``(max - min) / 2**32`` (SEMANTICS §1)."""
    return (float(mx) - float(mn)) / 2.0 ** 32
