"""16-bit quantized tensors: the code conventions every ``*_16`` / ``*_u16`` kernel shares.

SEMANTICS.md §4 (last item) only says the 16-bit variants "use symmetric
ranges (``min = -max``) and codes in -32768..32767, as their op texts say".
The step is fixed here as hexagon_nn fixes it (its op texts of Convert_8_u16
and QuantizeDownAndShrinkRange_32to16 only work out this way): a 16-bit
range ``[min, max]`` is cut into **65536** steps, so ``max`` is the value
*one step above* the top code.

- **qint16** (int16 codes -32768..32767): ``step = (max - min) / 65536``,
  zero code 0, ``real = q * step``. The range must be sane (§1) and
  symmetric: ``|min + max|`` at most one step (a TFLite-style
  ``[-32768, 32767] * scale`` range is accepted); only its width is used.
- **quint16** (uint16 codes 0..65535): ``step = (max - min) / 65536``,
  ``zero = clip(round_away(-min / step), 0, 65535)``,
  ``real = (q - zero) * step``. The range must be sane.
- **quint8** (where an op also takes 8-bit data): SEMANTICS §1 as is.

:func:`adjust_range_u16` is §1's ``adjust_range`` with 65536 steps.
Nothing here registers a kernel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hexnn_import.ops.kernel_io import require_4d
from hexnn_import.ops.quant import RANGE_EPS, round_away, step_zero
from hexnn_import.ops.registry import KernelContext

#: Steps of a 16-bit range (hexagon_nn: the range is 65536 steps wide).
STEPS16 = 65536.0
#: Code bounds.
I16_LO, I16_HI = -32768, 32767
U16_LO, U16_HI = 0, 65535

_DTYPE_KIND = {np.dtype(np.int16): "qint16", np.dtype(np.uint16): "quint16", np.dtype(np.uint8): "quint8"}


@dataclass(frozen=True)
class Q16Range:
    """A quantized range read for a kernel: ``kind`` (qint16/quint16/quint8), ends, step, zero code."""

    kind: str
    mn: float
    mx: float
    step: float
    zero: int

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        """``real = (q - zero) * step`` in float64."""
        return (q.astype(np.float64) - self.zero) * self.step


def _codes(ctx: KernelContext, arr: np.ndarray, what: str, dtype: type[np.integer]) -> np.ndarray:
    """Integer codes of ``dtype``; other integral arrays are accepted when every value fits."""
    a = np.asarray(arr)
    want = np.dtype(dtype)
    if a.dtype == want:
        return a
    info = np.iinfo(want)
    if a.dtype.kind not in "biuf":
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected {want.name} codes")
    if a.size:
        if a.dtype.kind == "f" and not (np.all(np.isfinite(a)) and np.all(a == np.trunc(a))):
            raise ctx.fail(f"{what} holds non-integer values, expected {want.name} codes")
        if a.min() < info.min or a.max() > info.max:
            raise ctx.fail(f"{what} holds values in [{a.min()}, {a.max()}], outside the {want.name} "
                           f"code range [{info.min}, {info.max}]")
    return a.astype(want)


def i16_codes(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """qint16 codes as int16 (other integral arrays accepted when every value fits)."""
    return _codes(ctx, arr, what, np.int16)


def u16_codes(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """quint16 codes as uint16 (other integral arrays accepted when every value fits)."""
    return _codes(ctx, arr, what, np.uint16)


def data16(ctx: KernelContext, arr: np.ndarray, what: str, kinds: tuple[str, ...]) -> np.ndarray:
    """A 4-D data tensor whose numpy dtype names one of ``kinds`` (uint8 / uint16 / int16)."""
    a = require_4d(ctx, np.asarray(arr), what)
    kind = _DTYPE_KIND.get(a.dtype)
    if kind not in kinds:
        allowed = ", ".join(kinds)
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected one of {allowed} "
                       "(uint8 = quint8, uint16 = quint16, int16 = qint16)")
    return a


def s16_range(ctx: KernelContext, mn_arr: np.ndarray, mx_arr: np.ndarray, what: str) -> Q16Range:
    """A sane, symmetric qint16 range (module doc)."""
    mn, mx = ctx.sane_range(mn_arr, mx_arr, what)
    step = (mx - mn) / STEPS16
    if abs(mn + mx) > step * (1 + 1e-6):
        raise ctx.fail(f"{what} range [{mn}, {mx}] is not symmetric (qint16 needs min = -max, "
                       f"within one step {step})")
    return Q16Range("qint16", mn, mx, step, 0)


def u16_zero(mn: float, step: float) -> int:
    """``clip(round_away(-min / step), 0, 65535)``: the quint16 code of 0.0 (0 for a zero-width range)."""
    if step <= 0.0:
        return 0
    return int(min(U16_HI, max(U16_LO, round_away(-mn / step))))


def u16_range(ctx: KernelContext, mn_arr: np.ndarray, mx_arr: np.ndarray, what: str) -> Q16Range:
    """A sane quint16 range with its step and zero code (module doc)."""
    mn, mx = ctx.sane_range(mn_arr, mx_arr, what)
    step = (mx - mn) / STEPS16
    return Q16Range("quint16", mn, mx, step, u16_zero(mn, step))


def u8_range(ctx: KernelContext, mn_arr: np.ndarray, mx_arr: np.ndarray, what: str) -> Q16Range:
    """A sane quint8 range, step and zero per SEMANTICS §1."""
    mn, mx = ctx.sane_range(mn_arr, mx_arr, what)
    step, zero = step_zero(mn, mx)
    return Q16Range("quint8", mn, mx, step, zero)


def range_for(ctx: KernelContext, kind: str, mn_arr: np.ndarray, mx_arr: np.ndarray, what: str) -> Q16Range:
    """The range reader of a data kind."""
    reader = {"qint16": s16_range, "quint16": u16_range, "quint8": u8_range}[kind]
    return reader(ctx, mn_arr, mx_arr, what)


def kind_of(arr: np.ndarray) -> str:
    """qint16 / quint16 / quint8 from an array's dtype (after :func:`data16`)."""
    return _DTYPE_KIND[np.asarray(arr).dtype]


def floored_step16(step: float) -> float:
    """``step`` floored at hexagon_nn's width floor: include/quantize.h ``quantize_uint16`` uses
    ``range = fmaxf(1e-18f, maxval - minval)``, so a zero-width range never divides by 0."""
    return max(float(step), RANGE_EPS / STEPS16)


def quantize_s16(x: np.ndarray, step: float) -> np.ndarray:
    """``clip(round_away(x / step), -32768, 32767)`` as int16 (step floored, :func:`floored_step16`)."""
    step = floored_step16(step)
    return np.clip(round_away(np.asarray(x, dtype=np.float64) / step), I16_LO, I16_HI).astype(np.int16)


def quantize_u16(x: np.ndarray, step: float, zero: int) -> np.ndarray:
    """``clip(zero + round_away(x / step), 0, 65535)`` as uint16 (0.0 lands on the zero code exactly;
    step floored, :func:`floored_step16`)."""
    step = floored_step16(step)
    q = zero + round_away(np.asarray(x, dtype=np.float64) / step)
    return np.clip(q, U16_LO, U16_HI).astype(np.uint16)


def adjust_range_u16(in_min: float, in_max: float) -> tuple[float, float]:
    """SEMANTICS §1's ``adjust_range`` for 65536 steps: widen minimally so 0.0 is a quint16 code.

    ``z = -mn * 65536 / range``; when its fraction is not within 2**-14 of
    an integer, either max grows (zero code ``floor(z)``, capped at 65535)
    or min grows (zero code ``floor(z) + 1``), choosing as §1 does. Unlike
    quint8, ``max`` itself is not a code (65536 steps), so ``max = 0`` with
    ``min < 0`` also grows max, putting 0.0 on code 65535.
    """
    mn = min(0.0, float(in_min))
    mx = max(0.0, float(in_max))
    rng = max(1e-18, mx - mn)
    if mn < 0:
        z = -mn * STEPS16 / rng
        zi = math.floor(z)
        zf = z - zi
        # z > 65535: 0.0 sits above the top code (e.g. max = 0), so max must grow
        if 2.0 ** -14 < zf < 1.0 - 2.0 ** -14 or z > U16_HI:
            if zi > 0 and (zi > U16_HI - 1 or (zf - 1.0) * mn >= zf * mx):
                zi = min(zi, U16_HI)
                mx = mn - STEPS16 * mn / zi
            else:
                mn = mx * (zi + 1) / (zi + 1 - STEPS16)
    return mn, mx
