"""hexagon_nn 2.14.1's supernode output stage for a FIXED output range, written for the tests from the C
alone (include/quantize.h, include/supernode_utils.h ``fill_info_minmax_basics`` / ``fill_bias_buf``,
op_supernode_new.c ``supernode_check``, op_dwise_snode_8bit.c ``dwise_supernode_check``), independently of
``ops/`` (no import from it): float32 scalars step by step, then the device's per-element arithmetic
(32-bit wrapping adds and shift, ``(s * recip + 2**30) >> 31``) with Python integers, element by element.

Only fixed output ranges whose zero is already exact are modelled (``setup_initial_output_range``'s
``adjust_minmax_for_zero_with_constraints`` must leave them as given; :func:`c_supernode_codes` checks
this), so no first guess and no retry is involved.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

F = np.float32
_D255_A = F(float.fromhex("0x8.08081p-11"))
_D255_B = F(float.fromhex("-0xF.EFEFFp-36"))


def div255(x: float) -> np.float32:
    """``flt_div_255`` (non-Hexagon branch): two float32 products and their float32 sum."""
    x = F(x)
    return F(F(_D255_A * x) + F(_D255_B * x))


def roundf_i32(v: np.float32) -> int:
    """``(int)(val + copysignf(0.5f, val))``: the addition in float32, then truncation."""
    return int(F(F(v) + F(math.copysign(0.5, float(v)))))


def sat_u8(v: int) -> int:
    """``saturate_u8``."""
    return max(0, min(255, v))


def qu8_level_size_zero(mn: float, mx: float) -> tuple[np.float32, int]:
    """``get_qu8_level_size_zero``: ``(flt_div_255(max - min), saturate_u8(roundf_i32(-min / level)))``."""
    lev = div255(F(F(mx) - F(mn)))
    return lev, sat_u8(roundf_i32(F(F(-F(mn)) / lev)))


def quantize_u(val: float, mn: float, mx: float, saturate: bool) -> int:
    """``quantize_uint8`` (saturate) / ``quantize_uint`` (clip below at 0): roundf of ``(val - min) *
    (255 / max(1e-18, max - min))`` in float32."""
    rng = max(F(1e-18), F(F(mx) - F(mn)))
    v = F(F(F(val) - F(mn)) * F(F(255.0) / rng))
    r = int(math.copysign(math.floor(abs(float(v)) + 0.5), float(v)))   # roundf: half away from zero
    return sat_u8(r) if saturate else max(0, r)


def getexp(x: np.float32) -> int:
    """``flt_getexp``: the exponent field minus 126."""
    return ((int(F(x).view(np.uint32)) >> 23) & 0xFF) - 126


def ldexp_f(x: np.float32, e: int) -> np.float32:
    """``flt_ldexp``: ``x * flt_power2(e)``, the power built from the saturated exponent field."""
    p = np.uint32(sat_u8(e + 127) << 23).view(np.float32)
    return F(F(x) * p)


def roundf_u32(v: np.float32) -> int:
    """``roundf_u32`` (device: ``convert_sf2uw_chop(val + 0.5f)``, saturating)."""
    v = F(v)
    if not v >= F(0.5):
        return 0
    return min(int(F(v + F(0.5))), 2 ** 32 - 1)


def zero_is_exact(lo: float, hi: float) -> bool:
    """True when ``adjust_minmax_for_zero_with_constraints`` leaves ``[lo, hi]`` unchanged."""
    mn, mx = F(lo), F(hi)
    dif = F(mx - mn)
    if not dif > 0 or mn == 0:
        return True
    z = F(F(F(-255.0) * mn) / dif)
    zf = F(z - F(math.floor(z)))
    return bool(zf <= F(6.1035156e-05) or zf >= F(0.999938965))


def c_supernode_codes(x: np.ndarray, w: np.ndarray, sums_fn, in_rng: Sequence[float], w_rng: Sequence[float],
                      bias: np.ndarray, b_rng: Sequence[float], bias32: bool, out_rng: Sequence[float],
                      k: Sequence[float] | None = None, dwise: bool = False) -> np.ndarray:
    """quint8 codes of a Supernode (``dwise``: DepthwiseSupernode) on a fixed, zero-exact output range.

    ``sums_fn(in_zero, w_zero)`` gives the exact sums ``sum((x - in_zero) * (w - w_zero))`` (channel
    last; pads add 0), e.g. :func:`hexnn_import.testing.opcheck.reference_conv`. ``w`` is
    ``[fh, fw, din, dout]`` (depthwise: ``[fh, fw, din, 1]``); ``k`` the channel scales (None: absent).
    """
    lo, hi = F(out_rng[0]), F(out_rng[1])
    assert lo <= 0 <= hi and lo < hi and zero_is_exact(lo, hi), "the model covers zero-exact fixed ranges"
    in_min = F(in_rng[0])
    in_max = max(F(in_rng[1]), F(in_min + F(1e-18)))
    in_level, in_zero = qu8_level_size_zero(in_min, in_max)
    if dwise:
        w_level = F(F(F(w_rng[1]) - F(w_rng[0])) / F(255.0))
        w_zero = quantize_u(0.0, w_rng[0], w_rng[1], saturate=True)
    else:
        w_level, w_zero = qu8_level_size_zero(w_rng[0], w_rng[1])
    prod = F(in_level * w_level)
    fh, fw, din, dout = w.shape if not dwise else (*w.shape[:3], w.shape[2] * w.shape[3])
    wi = w.astype(np.int64)
    if dwise:    # dwise_sumb: sum of (w - w_zero) per channel
        gemsumb = [int(v) for v in (wi - w_zero).sum(axis=(0, 1)).reshape(-1)]
    else:        # V60 gemsumb: the u8 weights over fh * fw * roundup32(din), the depth padding = w_zero
        pad = ((din + 31) // 32 * 32 - din) * fh * fw * w_zero
        gemsumb = [int(v) + pad for v in wi.sum(axis=(0, 1, 2))]
    # fill_info_minmax_basics (no first guess: the range is fixed)
    ols, _ = qu8_level_size_zero(lo, hi)
    final = F(prod / ols)                           # max_k_factor = 1.0
    shamt = 0 if final <= F(1.0) else getexp(final)
    if k is None:
        recip = [min(roundf_u32(ldexp_f(final, 31 - shamt)), 0x7FFFFFFF)] * dout
        kinv = [F(1.0)] * dout
    else:
        common = ldexp_f(F(prod / ols), 31 - shamt)
        recip = [min(roundf_u32(F(common * F(kc))), 0x7FFFFFFF) for kc in k]
        kinv = [F(1.0) if F(kc) == F(1.0) else F(F(1.0) / F(kc)) for kc in k]
    # fill_bias_buf
    bmn, bmx = F(b_rng[0]), F(b_rng[1])
    b_off = 0 if bias32 else quantize_u(0.0, bmn, bmx, saturate=False)
    ratio = F(F(F(bmx - bmn) / (F(2.0 ** 32) if bias32 else F(255.0))) / prod)
    min_out = F(F(-lo) / prod)
    bb = []
    for c in range(dout):
        fval = F(F(int(np.asarray(bias).reshape(-1)[c]) - b_off) * ratio)
        v = F(F(fval + min_out) * kinv[c]) if k is not None else F(fval + min_out)
        gx = gemsumb[c] * in_zero
        final_c = round(float(F(v - F(gx))))      # fast_i64_roundf: round half even (convert_sf2d)
        assert -2 ** 31 <= final_c < 2 ** 31, "Final too big"
        bb.append(final_c + gx)                   # the device adds gemsumb * in_zero back (suma)
    sums = sums_fn(in_zero, w_zero)
    out = np.empty(sums.shape, np.uint8)

    def wrap32(v: int) -> int:
        return (v + 2 ** 31) % 2 ** 32 - 2 ** 31

    for idx in np.ndindex(sums.shape):
        c = idx[-1]
        s = wrap32(wrap32(bb[c] + int(sums[idx])) << (shamt & 31))
        out[idx] = sat_u8((s * recip[c] + 2 ** 30) >> 31)
    return out
