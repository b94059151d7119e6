"""QuantizedSoftmax_8 / _d32 as hexagon_nn's device code computes them (op_softmax_d32.c, issue 36), lane for lane.

nnlib registers both ops with op_softmax_d32.c: ``softmax_flat_execute`` (flat) and ``softmax_d32_execute`` (d32).
Depth 1 gives 255 everywhere; depth 2 (flat) is ``softmax_d2_flat_exec``'s table of the code difference
(:func:`d2_codes`); other depths run the HVX loops ``softmax_operate_hvx_flat_function`` / ``_notx4_function`` /
``softmax_operate_hvx_function``, which compute, per element and row, exactly :func:`hvx_codes`:

* ``set_scaling_parms``: ``scalep2 = range * beta / (255 ln 2)`` as ``betamul * 2**-(beta_rsh + 8)`` (16 bits),
  ``accshift = ceil(log2(depth))`` (at least 2); ``scalep2 >= 256`` is the C's "beta too large".
* ``hvx_pow2_func``: ``(max - x) * 256 * betamul >> beta_rsh`` split into an integer and a 16-bit fraction,
  ``pow2_v65_poly`` of the fraction (``vlut4`` + two ``vmpa``: a 4-segment quadratic, 15 fractional bits), shifted
  to a 32-bit term (``31 - accshift`` fractional bits, summed per row) and rounded back to a 16-bit one.
* the reciprocal of the row sum: ``vnormamt``, the upper halfword, ``hvx_recip16_inline(.., 10)`` (hvx_mathops.h,
  the v65 4-segment quadratic with one Newton step), times ``255 << 7``.
* ``final_scaling_op``: ``term * recip >> (accshift + 3 - normsh)``, ``>> 12`` saturated to 16 bits, ``>> 6``
  rounded and saturated to 8 bits.

The flat op's large-depth path (depth >= 1408 and >= 5632 bytes, ``softmax_larged_flat_exec``) is
:func:`larged_codes` with :func:`larged_table`: a row histogram's dot product with a table of ``exp`` built from
libm's ``expf`` / ``expm1f``, which the engine takes correctly rounded (:func:`expf_cr`; the Hexagon libm's own
last bits are not known here).

Each intrinsic is modelled as qemu-hexagon runs it (the HVX manual's semantics, checked instruction by
instruction); the golden rows ``tests/data/golden/hvx/softmax*.npz`` hold the device's own results.
"""
from __future__ import annotations

import functools

import numpy as np

from hexnn_import.ops.nnlib_f32 import flt_div_255, fmaf

F = np.float32
#: op_softmax_d32.c MIN_DEPTH_FOR_LARGED / MIN_SIZE_FOR_LARGED: where the flat op takes its large-depth path.
LARGE_DEPTH, LARGE_SIZE = 1408, 1408 * 4
#: ``(float)(1.0 / (255.0 * 0.69314718055994))``
_SCALEP2 = F(1.0 / (255.0 * 0.69314718055994))
#: pow2_v65_poly's ``vlut4`` / ``vmpa`` / ``vmpa`` tables (4 halfwords each, segment = top 2 bits).
_POW2 = (0x1C3E17C713FF10CC, 0x40144D915538587C, 0x8773825B806C8001)
#: hvx_recip16_inline's v65 2nd-order tables (prec < 13): ``vlut4``, ``vmps``, ``vmpa``.
_RECIP = (0x09E20F69199B2E12, 0x472E57516AB67D56, 0x736C794E7DE88001)


def _halves(t: int, signed: bool) -> np.ndarray:
    h = np.array([(t >> (16 * i)) & 0xFFFF for i in range(4)], np.int64)
    return np.where(h >= 32768, h - 65536, h) if signed else h


def _sat16(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -32768, 32767)


def _mpa(p: np.ndarray, u: np.ndarray, table: int, sign: int) -> np.ndarray:
    """``vmpa`` (sign +1) / ``vmps`` (sign -1) ``(Vx.h, Vu.uh, Rtt.uh):sat``:
    ``sat16((x * u +/- (Rtt.uh[u >> 14] << 15)) >> 16)``."""
    return _sat16((p * u + sign * (_halves(table, False)[u >> 14] << 15)) >> 16)


def _mpy_rnd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``vmpy(Vu.h, Vv.h):<<1:rnd:sat``."""
    return _sat16((a * b * 2 + 0x8000) >> 16)


def pow2_poly(frac: np.ndarray) -> np.ndarray:
    """pow2_v65_poly: ``2**-(frac / 65536)`` with 15 fractional bits (32767 at 0), for 16-bit ``frac``."""
    vx = ~np.asarray(frac, np.int64) & 0xFFFF
    p = _halves(_POW2[0], True)[vx >> 14]
    return _mpa(_mpa(p, vx, _POW2[1], 1), vx, _POW2[2], 1)


def recip16(d: np.ndarray) -> np.ndarray:
    """hvx_mathops.h ``hvx_recip16_inline(d, 10)`` on v65+: ``2**29 / d`` for ``d`` in 0x4000..0x7fff."""
    d = np.asarray(d, np.int64)
    d4 = (d << 2) & 0xFFFF
    p = _halves(_RECIP[0], True)[d4 >> 14]
    x0 = _sat16(2 * _mpa(_mpa(p, d4, _RECIP[1], -1), d4, _RECIP[2], 1))
    pd15 = _sat16(2 * _sat16(_mpy_rnd(d, x0) - (1 << 14)))
    return _sat16(x0 - _mpy_rnd(pd15, x0))


def scaling_parms(in_min: F, in_max: F, beta: F, depth: int) -> tuple[int, int, int] | None:
    """op_softmax_d32.c ``set_scaling_parms``: (betamul, beta_rsh, accshift), or None where the C fails
    ("beta too large": ``scalep2 >= 256``; or depth above 65536)."""
    scalep2 = F(F(F(in_max - in_min) * F(beta)) * _SCALEP2)
    scexp = int((np.array(scalep2, F).view(np.int32) >> 23) & 0xFF) - 126
    rsh = min(31, 7 - scexp)
    acc = max(2, int(depth - 1).bit_length())
    if rsh < 0 or acc > 16:
        return None
    scaled = F(scalep2 * F(2.0 ** (rsh + 8)))
    betamul = int(np.trunc(scaled + np.copysign(F(0.5), scaled)))  # roundf_i32
    return int(np.clip(betamul, -32768, 32767)), rsh, acc


def pow2_terms(betamul: int, rsh: int, acc: int) -> tuple[np.ndarray, np.ndarray]:
    """hvx_pow2_func for every difference ``max - x`` in 0..255: (32-bit terms, 16-bit terms), int64."""
    d = np.arange(256, dtype=np.int64)
    xs = ((d << 8) * (betamul & 0xFFFF)).astype(np.uint32).view(np.int32).astype(np.int64) >> rsh
    frac, integer = xs & 0xFFFF, ((xs >> 16) + 32768) % 65536 - 32768
    m32 = (pow2_poly(frac) & 0xFFFF) << (16 - acc)
    sh = ((np.minimum(integer, 31) & 63) ^ 32) - 32  # vasr(Vw, Vw): the count's low 6 bits, signed
    e32 = np.where(sh >= 0, m32 >> np.clip(sh, 0, 31), (m32 << np.clip(-sh, 0, 31)) % 2 ** 32)
    e32 = (e32 + 2 ** 31) % 2 ** 32 - 2 ** 31
    s = 16 - acc
    return e32, _sat16((e32 + ((1 << s) >> 1)) >> s)


@functools.lru_cache(maxsize=64)
def _terms32(betamul: int, rsh: int, acc: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pow2_terms` as int32 (both fit: the 32-bit terms are words, the 16-bit ones halfwords), kept per
    scaling (a node's range and beta rarely change between runs)."""
    e32, e16 = (t.astype(np.int32) for t in pow2_terms(betamul, rsh, acc))
    e32.flags.writeable = e16.flags.writeable = False
    return e32, e16


def hvx_codes(q: np.ndarray, parms: tuple[int, int, int]) -> np.ndarray:
    """The HVX loops' codes for uint8 ``q`` (softmax along the last axis): per row the 32-bit terms of
    ``max - x`` summed (a word: below 2**31 as ``accshift`` bounds them), its reciprocal, then each 16-bit term
    times it (below 2**30) shifted down to a code."""
    acc = parms[2]
    e32, e16 = _terms32(*parms)
    diff = q.max(axis=-1, keepdims=True) - q
    msum = e32[diff].sum(axis=-1, keepdims=True, dtype=np.int64)
    msum = (msum + 2 ** 31) % 2 ** 32 - 2 ** 31
    normsh = _normamt(msum)
    hi = ((msum << normsh) % 2 ** 32).astype(np.uint32).view(np.int32).astype(np.int64) >> 16
    recip = _sat16((recip16(hi) * (255 << 7) * 2 + 0x8000) >> 16).astype(np.int32)
    s = np.clip(acc + 3 - normsh, 0, 65535).astype(np.int32)
    y = np.clip((e16[diff] * recip) >> (s + 12), -32768, 32767)
    return np.clip((y + 32) >> 6, 0, 255).astype(np.uint8)


def _normamt(x: np.ndarray) -> np.ndarray:
    """``vnormamt(Vu.w)``: the redundant sign bits of each word (31 for 0 and -1)."""
    y = np.where(x < 0, ~x, x)
    bits = np.zeros_like(y)
    for k in (16, 8, 4, 2, 1):  # bit length of y, five steps over the whole array
        big = (y >> (bits + k)) > 0
        bits = bits + np.where(big, k, 0)
    return np.where(y == 0, 31, 30 - bits)


def _expf_approx(x: np.ndarray) -> np.ndarray:
    """op_softmax_d32.c ``expf_approx`` as clang builds it for Hexagon: the cubic in three fused multiply-adds
    (``sfmpy`` accumulate; exact in float64 here, one float32 rounding each)."""
    xs = F(16384.0 / 0.69314718056) * x
    xfrac = np.trunc(xs + np.copysign(F(0.5), xs)).astype(np.int64)  # roundf_i32
    xf = (xfrac & 0x3FFF).astype(F) * F(1.0 / 16384.0)
    xd = xf.astype(np.float64)
    p = (xd * np.float64(F(0.07154756)) + np.float64(F(0.23793659))).astype(F)
    p = (xd * p.astype(np.float64) + np.float64(F(0.69051585))).astype(F)
    exp0 = (xd * p.astype(np.float64) + 1.0).astype(F)
    e = np.clip((xfrac >> 14) + 127, 0, 255).astype(np.int32) << 23
    return e.view(F) * exp0


def d2_table(fullscale: F) -> np.ndarray:
    """``fill_d2_lookup_table``: output 0's code for each |x0 - x1| (128 at 0; 255 from the first 255 on)."""
    k = flt_div_255(F(fullscale))
    i = np.arange(1, 256, dtype=F)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        val = F(255.0) / (F(1.0) + _expf_approx(-k * i))
        vali = np.trunc(val + np.copysign(F(0.5), val)).astype(np.int64)
    done = np.maximum.accumulate(vali >= 255)
    vali = np.where(np.concatenate([[False], done[:-1]]), 255, vali)
    return np.concatenate([[128], vali & 0xFF]).astype(np.uint8)


def d2_codes(q: np.ndarray, fullscale: F) -> np.ndarray:
    """``softmax_d2_flat_exec`` on uint8 ``q`` of depth 2: output 0 is the table at ``|x0 - x1|`` (``255 - `` it
    when x0 < x1), output 1 is ``255 -`` output 0."""
    d = q[..., 0].astype(np.int64) - q[..., 1]
    t = d2_table(fullscale)[np.abs(d)]
    out0 = np.where(d < 0, 255 - t, t)
    return np.stack([out0, 255 - out0], axis=-1).astype(np.uint8)


def larged_table(fullscale: F, expf, expm1f) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """``fill_largedepth_lookup``: (16-bit terms ``round(y * 255 * 128)``, 32-bit terms ``y * 2**32``) of
    ``y[i] = exp(step * (i - 255))``, ``step = fullscale / 255``: ``expf`` at every fourth ``i``, the three after it
    by fused multiply-adds with ``expm1f(step)`` / ``expm1f(2 step)``; entry 255 is 0x7f80 / 0xffffffff.
    ``expf`` / ``expm1f`` (float32 -> float32) are libm's."""
    step = flt_div_255(F(fullscale))
    e1, e2 = (np.asarray(expm1f(np.array([v], F)), F) for v in (step, F(step * F(2))))
    ipos = np.arange(0, 256, 4)
    v0 = np.asarray(expf(step * (ipos - 255).astype(F)), F)
    v1 = fmaf(v0, np.broadcast_to(e1, v0.shape), v0)
    v2 = fmaf(v0, np.broadcast_to(e2, v0.shape), v0)
    v3 = fmaf(v1, np.broadcast_to(e2, v0.shape), v1)
    y = np.stack([v0, v1, v2, v3], axis=1).reshape(-1)
    s16 = y * F(255 * 128)
    y16 = np.trunc(s16 + np.copysign(F(0.5), s16)).astype(np.int64) & 0xFFFF  # roundf_i32, stored as uint16
    with np.errstate(over="ignore", invalid="ignore"):
        u = np.trunc(F(0.5) + y * F(4294967296.0)).astype(np.float64)
    y32 = np.where(y >= 1, 2 ** 32 - 1, np.clip(np.nan_to_num(u), 0, 2 ** 32 - 1)).astype(np.int64)
    y16[255], y32[255] = 0x7F80, 2 ** 32 - 1
    return y16, y32


def larged_codes(q: np.ndarray, y16: np.ndarray, y32: np.ndarray) -> np.ndarray:
    """``softmax_larged_batchchunk`` on uint8 rows ``q`` (depth >= 1408): per row the histogram's dot product
    with the 32-bit terms (aligned so the row maximum meets entry 255; its middle 32 bits), the reciprocal
    (``vcl0``, ``hvx_recip16_inline`` of the top 15 bits, shifted back, rounded to 16 bits), a 192-entry
    code table from the 16-bit terms 64..255, looked up at ``x - max + 191`` (0 below)."""
    rows = q.reshape(-1, q.shape[-1])
    mx = rows.max(axis=-1).astype(np.int64)
    n = rows.shape[0]
    hist = np.bincount((rows + (np.arange(n) * 256)[:, None].astype(np.int64)).reshape(-1), minlength=256 * n)
    hist = hist.reshape(n, 256).astype(np.int64)
    idx = np.arange(256)[None, :] - mx[:, None] + 255
    t32 = np.where(idx >= 0, y32[np.clip(idx, 0, 255)], 0)
    dot = (hist * (t32 >> 16)).sum(axis=1) + ((hist * (t32 & 0xFFFF)).sum(axis=1) >> 16)
    dot &= 0xFFFFFFFF
    sh = 32 - np.frexp(dot.astype(np.float64))[1]  # vcl0: leading zeros of the word (dot > 0)
    d = ((dot << sh) & 0xFFFFFFFF) >> 17
    scale = _sat16(((recip16(d) << sh) + 0x4000) >> 15)
    sc = _sat16((y16[None, 64:] * scale[:, None] * 2 + 0x8000) >> 16)
    table = np.clip((sc + 64) >> 7, 0, 255)
    j = rows.astype(np.int64) - mx[:, None] + 191
    out = np.where(j >= 0, np.take_along_axis(table, np.clip(j, 0, 191), axis=1), 0)
    return out.astype(np.uint8).reshape(q.shape)


def expf_cr(x: np.ndarray) -> np.ndarray:
    """``expf`` correctly rounded (float64 ``exp``, then float32): what the engine takes for libm's."""
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(np.asarray(x, F).astype(np.float64)).astype(F)


def expm1f_cr(x: np.ndarray) -> np.ndarray:
    """``expm1f`` correctly rounded (float64 ``expm1``, then float32)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.expm1(np.asarray(x, F).astype(np.float64)).astype(F)
