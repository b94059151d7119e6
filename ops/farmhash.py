"""farmhash ``Fingerprint64`` (farmhashna ``Hash64``), vectorized over equal-length keys.

LSHProjection hashes every (seed, item) key with this function, as Android
NN and TFLite do. All keys of one call have the same length, so every key
takes the same branch and the arithmetic runs on numpy uint64 arrays (which
wrap modulo 2**64 as the C code does). Written from farmhash's public
algorithm: ``HashLen0to16``, ``HashLen17to32``, ``HashLen33to64`` and the
64-byte block loop with seed 81.
"""
from __future__ import annotations

import numpy as np

U64 = np.uint64
K0 = U64(0xC3A5C85C97CB3127)
K1 = U64(0xB492B66FBE98F273)
K2 = U64(0x9AE16A3B2F90404F)


def _fetch64(rows: np.ndarray, off: int) -> np.ndarray:
    return np.ascontiguousarray(rows[:, off:off + 8]).view("<u8").reshape(-1).astype(U64)


def _fetch32(rows: np.ndarray, off: int) -> np.ndarray:
    return np.ascontiguousarray(rows[:, off:off + 4]).view("<u4").reshape(-1).astype(U64)


def _rot(v: np.ndarray, s: int) -> np.ndarray:
    return v if s == 0 else (v >> U64(s)) | (v << U64(64 - s))


def _shift_mix(v: np.ndarray) -> np.ndarray:
    return v ^ (v >> U64(47))


def _len16(u: np.ndarray, v: np.ndarray, mul: np.ndarray) -> np.ndarray:
    a = (u ^ v) * mul
    a = a ^ (a >> U64(47))
    b = (v ^ a) * mul
    b = b ^ (b >> U64(47))
    return b * mul


def _len0to16(rows: np.ndarray, n: int) -> np.ndarray:
    mul = np.full(rows.shape[0], K2 + U64(2 * n), dtype=U64)
    if n >= 8:
        a = _fetch64(rows, 0) + K2
        b = _fetch64(rows, n - 8)
        c = _rot(b, 37) * mul + a
        d = (_rot(a, 25) + b) * mul
        return _len16(c, d, mul)
    if n >= 4:
        a = _fetch32(rows, 0)
        return _len16(U64(n) + (a << U64(3)), _fetch32(rows, n - 4), mul)
    if n > 0:
        y = rows[:, 0].astype(U64) + (rows[:, n >> 1].astype(U64) << U64(8))
        z = U64(n) + (rows[:, n - 1].astype(U64) << U64(2))
        return _shift_mix((y * K2) ^ (z * K0)) * K2
    return np.full(rows.shape[0], K2, dtype=U64)


def _len17to32(rows: np.ndarray, n: int) -> np.ndarray:
    mul = np.full(rows.shape[0], K2 + U64(2 * n), dtype=U64)
    a = _fetch64(rows, 0) * K1
    b = _fetch64(rows, 8)
    c = _fetch64(rows, n - 8) * mul
    d = _fetch64(rows, n - 16) * K2
    return _len16(_rot(a + b, 43) + _rot(c, 30) + d, a + _rot(b + K2, 18) + c, mul)


def _len33to64(rows: np.ndarray, n: int) -> np.ndarray:
    mul = np.full(rows.shape[0], K2 + U64(2 * n), dtype=U64)
    a = _fetch64(rows, 0) * K2
    b = _fetch64(rows, 8)
    c = _fetch64(rows, n - 8) * mul
    d = _fetch64(rows, n - 16) * K2
    y = _rot(a + b, 43) + _rot(c, 30) + d
    z = _len16(y, a + _rot(b + K2, 18) + c, mul)
    e = _fetch64(rows, 16) * mul
    f = _fetch64(rows, 24)
    g = (y + _fetch64(rows, n - 32)) * mul
    h = (z + _fetch64(rows, n - 24)) * mul
    return _len16(_rot(e + f, 43) + _rot(g, 30) + h, e + _rot(f + a, 18) + g, mul)


def _weak32(rows: np.ndarray, off: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, x, y, z = (_fetch64(rows, off + 8 * i) for i in range(4))
    a = a + w
    b = _rot(b + a + z, 21)
    c = a
    a = a + x + y
    b = b + _rot(a, 44)
    return a + z, b + c


def _long(rows: np.ndarray, n: int) -> np.ndarray:
    m = rows.shape[0]
    x = np.full(m, U64(81), dtype=U64)
    y = x * K1 + U64(113)
    z = _shift_mix(y * K2 + U64(113)) * K2
    v0 = v1 = w0 = w1 = np.zeros(m, dtype=U64)
    x = x * K2 + _fetch64(rows, 0)
    end = ((n - 1) // 64) * 64
    for s in range(0, end, 64):
        x = _rot(x + y + v0 + _fetch64(rows, s + 8), 37) * K1
        y = _rot(y + v1 + _fetch64(rows, s + 48), 42) * K1
        x = x ^ w1
        y = y + v0 + _fetch64(rows, s + 40)
        z = _rot(z + w0, 33) * K1
        v0, v1 = _weak32(rows, s, v1 * K1, x + w0)
        w0, w1 = _weak32(rows, s + 32, z + w1, y + _fetch64(rows, s + 16))
        x, z = z, x
    mul = K1 + ((z & U64(0xFF)) << U64(1))
    s = end + ((n - 1) & 63) - 63
    w0 = w0 + U64((n - 1) & 63)
    v0 = v0 + w0
    w0 = w0 + v0
    x = _rot(x + y + v0 + _fetch64(rows, s + 8), 37) * mul
    y = _rot(y + v1 + _fetch64(rows, s + 48), 42) * mul
    x = x ^ (w1 * U64(9))
    y = y + v0 * U64(9) + _fetch64(rows, s + 40)
    z = _rot(z + w0, 33) * mul
    v0, v1 = _weak32(rows, s, v1 * mul, x + w0)
    w0, w1 = _weak32(rows, s + 32, z + w1, y + _fetch64(rows, s + 16))
    x, z = z, x
    return _len16(_len16(v0, w0, mul) + _shift_mix(y) * K0 + z, _len16(v1, w1, mul) + x, mul)


def fingerprint64_rows(rows: np.ndarray) -> np.ndarray:
    """``Fingerprint64`` of each row of ``rows [m, n]`` (uint8 bytes) -> uint64 ``[m]``."""
    r = np.ascontiguousarray(rows, dtype=np.uint8).reshape(rows.shape[0], -1)
    n = r.shape[1]
    with np.errstate(over="ignore"):
        if n <= 16:
            return _len0to16(r, n)
        if n <= 32:
            return _len17to32(r, n)
        if n <= 64:
            return _len33to64(r, n)
        return _long(r, n)
