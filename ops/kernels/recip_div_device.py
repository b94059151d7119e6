"""QuantizedRecip_8 and QuantizedDiv_8 as nnlib's device code computes them (op_recip.c, op_div.c, issue 36).

Both files are float32 C (clang for Hexagon contracts ``min + (float)q * step`` into one fused multiply-add,
``ops/nnlib_f32.fmaf``; ``/`` is correctly rounded) with HVX only for moving bytes (min / max scans, a 256-entry
table lookup ``map_values``, a ``255 - x`` flip): the functions here repeat the float32 steps with numpy and are
checked against the device under qemu-hexagon (tests/ops/test_hvx_recip.py, test_hvx_div.py).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.nnlib_f32 import EPS18, F, fmaf, roundf, trunc_i32

#: ``2147483648.0f``: where op_recip.c / op_div.c start their min / max searches.
BIG = F(2147483648.0)
#: Every code, as float32.
CODES = np.arange(256, dtype=np.float32)


def code_values(codes: np.ndarray, lo: np.float32, step: np.float32) -> np.ndarray:
    """``lo + (float)q * step`` as the device rounds it: ``fmaf(q, step, lo)``, float32."""
    q = np.asarray(codes, dtype=np.float32)
    return fmaf(q, np.full(q.shape, step, F), np.full(q.shape, lo, F))


def step_255(lo: np.float32, hi: np.float32) -> np.float32:
    """``(max - min) / 255.f`` (a correctly rounded float32 division)."""
    return F(F(hi - lo) / F(255.0))


def round_to_byte(v: np.ndarray) -> np.ndarray:
    """``(uint8_t)round(v)`` of float32 ``v`` on Hexagon: ``round`` halves away from 0 (exact in double), then
    ``convert_df2uw:chop`` (negative -> 0, NaN or past 2**32 -> 0xFFFFFFFF), keeping the low byte."""
    with np.errstate(invalid="ignore"):
        r = roundf(np.asarray(v, dtype=np.float32)).astype(np.float64)
        u = np.where(np.isnan(r) | (r >= 2.0 ** 32), 2.0 ** 32 - 1, np.where(r < 0, 0.0, r))
    return (u.astype(np.int64) & 0xFF).astype(np.uint8)


def quantize_uint8_device(val: np.ndarray, lo: np.float32, hi: np.float32) -> np.ndarray:
    """``quantize_uint8`` (include/quantize.h) on the device: ``(int32_t)roundf((val - min) * (255f / fmaxf(1e-18f,
    max - min)))`` (Hexagon's saturating ``convert_sf2w:chop``, NaN -> -1), then ``saturate_u8``."""
    rng = max(EPS18, F(F(hi) - F(lo)))
    resize = F(F(255.0) / rng)
    with np.errstate(over="ignore", invalid="ignore"):
        v = (np.asarray(val, dtype=np.float32) - F(lo)) * resize
        return np.clip(trunc_i32(roundf(v)), 0, 255).astype(np.uint8)


def reciprocals(v: np.ndarray) -> np.ndarray:
    """``1 / v`` in float32 (``1 / +0`` is +Inf, as on the device)."""
    with np.errstate(divide="ignore"):
        return (F(1.0) / np.asarray(v, dtype=np.float32)).astype(np.float32)


def extent_with_zero(vals: np.ndarray) -> tuple[np.float32, np.float32]:
    """op_recip.c's output range: the largest and smallest of ``vals`` (starting from -/+2**31), then 0 put in:
    ``if (min < 0 && max < 0) max = 0; if (min > 0 && max > 0) min = 0``."""
    mx = max(-BIG, F(vals.max())) if vals.size else -BIG
    mn = min(BIG, F(vals.min())) if vals.size else BIG
    if mn < 0 and mx < 0:
        mx = F(0.0)
    if mn > 0 and mx > 0:
        mn = F(0.0)
    return F(mn), F(mx)


def recip_float_path(x: np.ndarray, lo: np.float32, hi: np.float32) -> tuple[np.ndarray, np.float32, np.float32]:
    """recip_execute under 256 elements: per element ``1 / fmaf(q, step, min)`` (an exact 0 gives +Inf, the
    range's max then Inf and that element's code 255 from ``round(NaN)``), the range of the reciprocals with 0
    put in, codes ``(uint8_t)round((r - min) / out_step)``."""
    inv = reciprocals(code_values(x, lo, step_255(lo, hi)))
    mn, mx = extent_with_zero(inv)
    out_step = step_255(mn, mx)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return round_to_byte((inv - mn) / out_step), mn, mx


def recip_table(x: np.ndarray, lo: np.float32, hi: np.float32) -> tuple[np.ndarray, np.ndarray, np.float32, np.float32] | None:
    """recip_execute from 256 elements: (the 256-entry code table, which entries it writes, out_min, out_max), or
    None when the input range is none of ``min < 0 < max``, ``min == 0 < max``, ``min < 0 == max``: then the C
    writes neither the table nor the output range.

    Entries computed: ``min < 0 < max``: codes up to the largest code present below ``round(-min / step)`` (0 if
    none) and from the smallest present above it (255 if none), ``get_reciprocals_split_range``; ``min == 0``:
    from the smallest code present, ``min < 0 == max``: up to the largest, ``get_reciprocals_continuous_range``.
    An entry whose value is exactly 0 is skipped (``inverses[i]`` never set), as is every code between the split's
    two ends: the C still converts those unset floats (op_recip.c ``output_data[i] = round((inverses[i] -
    *output_min) / out_step)`` over ``real_min .. real_max``), so a code present there reads memory nothing set.
    """
    step = step_255(lo, hi)
    codes = np.arange(256)
    if lo < 0 < hi:
        qz = int(round_to_byte(F(F(-lo) / step)))
        below, above = x[x < qz], x[x > qz]
        s0 = int(below.max()) if below.size else 0
        s1 = int(above.min()) if above.size else 255
        computed = (codes <= s0) | (codes >= s1)
    elif lo == 0 and hi > 0:
        computed = codes >= int(x.min())
    elif lo < 0 and hi == 0:
        computed = codes <= int(x.max())
    else:
        return None
    v = code_values(CODES, lo, step)
    inv = reciprocals(v)
    written = computed & (v != 0)
    mn, mx = extent_with_zero(inv[written])
    out_step = step_255(mn, mx)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        q = (inv - mn) / out_step
        table = np.where(written, round_to_byte(q), np.clip(np.nan_to_num(roundf(q), nan=255.0), 0, 255).astype(np.uint8))
    return table, written, mn, mx


def div_auto_range(den: np.ndarray, a_lo: np.float32, a_hi: np.float32) -> tuple[np.float32, np.float32]:
    """div_depthwise_execute's output range (op_div.c, 6 inputs): per divisor ``d`` the quotients of A's range ends
    (``a_max / d``, ``a_min / d`` swapped for a negative ``d``), their extremes from -/+2**31, a zero end made +0,
    then 0 put in (no divisor is 0: the caller refuses that first)."""
    pos = den > 0
    with np.errstate(over="ignore"):
        tops = np.where(pos, F(a_hi) / den, F(a_lo) / den).astype(np.float32)
        bots = np.where(pos, F(a_lo) / den, F(a_hi) / den).astype(np.float32)
    mx, mn = max(-BIG, F(tops.max())), min(BIG, F(bots.min()))
    mn, mx = (F(0.0) if mn == 0 else mn), (F(0.0) if mx == 0 else mx)
    if mn < 0 and mx < 0:
        mx = F(0.0)
    if mn > 0 and mx > 0:
        mn = F(0.0)
    return F(mn), F(mx)


def div_tables(den: np.ndarray, a_lo: np.float32, a_hi: np.float32, out_lo: np.float32,
               out_hi: np.float32) -> np.ndarray:
    """op_div.c's code maps, one row per divisor: ``quantize_uint8((a_min + (float)i * a_step) / d, out_min,
    out_max)`` for i = 0..255 (``map`` / ``div_lookup``), uint8 ``(len(den), 256)``."""
    num = code_values(CODES, a_lo, step_255(a_lo, a_hi))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        quot = (num[None, :] / np.asarray(den, dtype=np.float32)[:, None]).astype(np.float32)
    return quantize_uint8_device(quot, out_lo, out_hi)
