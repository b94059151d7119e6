"""hexagon_nn's 16-bit pseudo-float "qf16" (value ``m / 2**(e + 15)``, int16 mantissa and exponent) as its HVX code
computes it: include/vqf16.h (``vaddqf``, ``vsubqf``, ``vsmpyqf``, ``vmpyqf``, ``vcmpgtqf``, ``vminrqf``,
``vmaxrqf``), src/qf16.c (``i2q``, ``f2q``, ``q2f``) and the asm ``visqrt64_asm`` (asm_src/visqrt64_h.S with
include/qftables.h ``lut_isqrt_asm``), on numpy arrays of lanes (XiaoMi/nnlib df7ad3c).

The HVX halfword operations are modelled in int64 and wrapped where the instruction wraps: ``vnormamt`` (the
redundant sign bits), ``vmpy(...):<<1:rnd:sat``, ``vavg:rnd`` / ``vnavg``, ``vasr`` / ``vasl`` by a
vector of amounts. Checked through QuantizedInstanceNorm_8_d32 against the device code under qemu-hexagon.
"""
from __future__ import annotations

import numpy as np

I64 = np.int64
#: include/qftables.h lut_isqrt_asm: the three 16-entry coefficient tables visqrt64_asm reads with vlut16
ISQRT_C0 = np.array([23170, 22479, 21845, 21263, 20724, 20225, 19760, 19325, 18919, 18536, 18176, 17837, 17515,
                     17211, 16921, 16646], I64)
ISQRT_C1 = np.array([-11570, -10565, -9698, -8944, -8282, -7698, -7180, -6717, -6302, -5927, -5589, -5282, -5001,
                     -4745, -4510, -4293], I64)
ISQRT_C2 = np.array([8052, 6950, 6048, 5302, 4679, 4153, 3707, 3325, 2996, 2711, 2462, 2244, 2052, 1883, 1732,
                     1598], I64)
#: 1/sqrt(2) in Q15 (visqrt64_asm's sqrt0p5)
ISQRT_HALF = 0x5A83


def s16(x: np.ndarray) -> np.ndarray:
    """Wrap to int16 (the HVX halfword lanes)."""
    return ((np.asarray(x, I64) + 0x8000) & 0xFFFF) - 0x8000


def sat16(x: np.ndarray) -> np.ndarray:
    """Saturate to int16."""
    return np.clip(np.asarray(x, I64), -0x8000, 0x7FFF)


def bitlen(x: np.ndarray) -> np.ndarray:
    """Bits needed for each non-negative value below 2**53 (0 for 0): ``frexp``'s exponent, exact there."""
    return np.frexp(np.asarray(x, np.float64))[1].astype(I64)


def normamt(x: np.ndarray, bits: int, zero: int | None = None) -> np.ndarray:
    """``vnormamt`` on ``bits``-bit lanes: the redundant sign bits (``bits - 1`` for 0, as qemu-hexagon's HVX
    gives it); the scalar ``normamt`` gives ``zero`` = 0 for 0."""
    x = np.asarray(x, I64)
    mag = np.where(x < 0, ~x, x)
    n = bits - 1 - bitlen(mag)
    return n if zero is None else np.where(x == 0, zero, n)


def asr16(x: np.ndarray, amt: np.ndarray) -> np.ndarray:
    """``vasr(Vu.h, Vv.h)``: the amount's low 5 bits sign-extended, a negative one shifts left (wrapping)."""
    a = ((np.asarray(amt, I64) & 31) ^ 16) - 16
    return s16((np.asarray(x, I64) << np.maximum(-a, 0)) >> np.maximum(a, 0))


def asl16(x: np.ndarray, amt: np.ndarray) -> np.ndarray:
    """``vasl(Vu.h, Vv.h)``: the opposite of :func:`asr16`."""
    return asr16(x, -np.asarray(amt, I64))


def mpy_rnd_sat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``vmpy(Vu.h, Vv.h):<<1:rnd:sat`` (and qf16.c mpyrsat): ``sat16((2ab + 0x8000) >> 16)``."""
    return sat16((2 * np.asarray(a, I64) * np.asarray(b, I64) + 0x8000) >> 16)


def _normalize(m: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    delta = normamt(m, 16)
    return asl16(m, delta), s16(e + delta)


def _aligned(am, ae, bm, be) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """vaddqf / vsubqf's alignment: the operand with the larger exponent shifted right by the difference (at most
    15); the common exponent less one."""
    q0 = ae > be
    diff = np.minimum(np.abs(ae - be), 15)
    a = asr16(am, np.where(q0, diff, 0))
    b = asr16(bm, np.where(q0, 0, diff))
    return a, b, s16(np.where(q0, be, ae) - 1)


def addqf(am, ae, bm, be) -> tuple[np.ndarray, np.ndarray]:
    """vqf16.h ``vaddqf``: aligned, ``vavg:rnd``, renormalized."""
    a, b, big = _aligned(am, ae, bm, be)
    return _normalize((a + b + 1) >> 1, big)


def subqf(am, ae, bm, be) -> tuple[np.ndarray, np.ndarray]:
    """vqf16.h ``vsubqf``: aligned, ``vnavg``, renormalized."""
    a, b, big = _aligned(am, ae, bm, be)
    return _normalize((a - b) >> 1, big)


def mpyqf(am, ae, bm, be) -> tuple[np.ndarray, np.ndarray]:
    """vqf16.h ``vmpyqf`` / ``vsmpyqf``: rounded saturating Q15 product of the mantissas, exponents added."""
    return _normalize(mpy_rnd_sat(am, bm), s16(np.asarray(ae, I64) + be))


def _compare_shifted(am, ae, bm, be) -> tuple[np.ndarray, np.ndarray]:
    """vcmpgtqf / vmaxqf's alignment, zero mantissas flushed to exponent 15 first: (x, y) to compare."""
    ae = np.where(am == 0, 15, ae)
    be = np.where(bm == 0, 15, be)
    q0 = be > ae
    diff = np.minimum(np.abs(ae - be), 15)
    return asr16(am, np.where(q0, 0, diff)), asr16(bm, np.where(q0, diff, 0))


def gtqf(am, ae, bm, be) -> np.ndarray:
    """vqf16.h ``vcmpgtqf``: a > b on the aligned mantissas."""
    x, y = _compare_shifted(am, ae, bm, be)
    return x > y


def reduce_qf(m: np.ndarray, e: np.ndarray, want_max: bool) -> tuple[np.ndarray, np.ndarray]:
    """vqf16.h ``vminrqf`` / ``vmaxrqf`` over the last axis of 32 lanes (the 64 halfword lanes hold each twice, and
    the first step pairs the copies): zero mantissas flushed to exponent 15, then five halving steps pairing lane k
    with k + n/2; a tie on the aligned mantissas keeps the upper lane (``vmux`` takes the odd operand)."""
    m, e = np.asarray(m, I64), np.where(np.asarray(m) == 0, 15, np.asarray(e, I64))
    while m.shape[-1] > 1:
        h = m.shape[-1] // 2
        me, mo, ee, eo = m[..., :h], m[..., h:], e[..., :h], e[..., h:]
        q0 = eo > ee
        diff = np.minimum(np.abs(eo - ee), 15)
        x = asr16(me, np.where(q0, 0, diff))
        y = asr16(mo, np.where(q0, diff, 0))
        keep_e = x > y if want_max else y > x
        m, e = np.where(keep_e, me, mo), np.where(keep_e, ee, eo)
    return m[..., 0], e[..., 0]


def isqrt_qf(m: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """asm ``visqrt64_asm``: 1/sqrt of a normalized qf16 by a 16-segment quadratic (``lut_isqrt_asm``); a mantissa
    <= 0 is taken as 0x4000 with exponent 29; an odd exponent takes the result times 1/sqrt(2)."""
    pos = np.asarray(m, I64) > 0
    m = np.where(pos, m, 0x4000)
    e = np.where(pos, e, 29)
    rng = (np.right_shift(m, 10)) & 0xF
    x = s16(m + m) & 0x7FF
    y = s16(mpy_rnd_sat(x, ISQRT_C2[rng]) + ISQRT_C1[rng])
    y = s16(mpy_rnd_sat(x, y) + ISQRT_C0[rng])
    y = np.where((e & 1) == 0, y, mpy_rnd_sat(y, ISQRT_HALF))
    return y, s16((s16(-e) >> 1) - 1)


def i2q(x: int) -> tuple[int, int]:
    """src/qf16.c ``i2q`` (the scalar ``normamt``; 0 gives exponent 0)."""
    n = int(normamt(np.array([x]), 32, zero=0)[0])
    u = (x << n) & 0xFFFFFFFF
    u = u - (1 << 32) if u & 0x80000000 else u
    if u == 0:
        n = 31
    return int(s16(np.array([u >> 16]))[0]), n - 31


def f2q(x: np.float32) -> tuple[int, int]:
    """src/qf16.c ``f2q``: the float's exponent and top mantissa bits, rounded, wrapping as the C's int does."""
    bits = int(np.float32(x).view(np.uint32))
    exp = 126 - ((bits >> 23) & 0xFF)
    mant = ((bits << 7) | 0x40000000) & 0x7FFFFF80
    if bits & 0x80000000:
        mant = -mant
    mant = (mant + (1 << 15)) & 0xFFFFFFFF
    mant = mant - (1 << 32) if mant & 0x80000000 else mant
    return int(s16(np.array([mant >> 16]))[0]), int(s16(np.array([exp]))[0])


def q2f(m: np.ndarray, e: np.ndarray) -> np.ndarray:
    """src/qf16.c ``q2f``: ``ldexpf((float)m, -(e + 15))`` in float32."""
    return np.ldexp(np.asarray(m, np.float32), -(np.asarray(e, I64) + 15)).astype(np.float32)
