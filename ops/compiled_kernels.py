"""numba-compiled loops of the engine's hot arithmetic (imported only when numba is installed; see
:mod:`hexnn_import.ops.compiled`, which documents why each loop is exact and equal to the numpy path).

Every loop uses plain IEEE float64 multiply and add (numba compiles without fast-math, so LLVM does not
contract them into a fused multiply-add) or exact int32 integer arithmetic; ``prange`` splits the outer
rows over numba's threads in the ``_parallel`` variants (used for more than one thread; their number is
set by the caller).
"""
from __future__ import annotations

import types
from typing import Any, Callable

import numba as nb
import numpy as np

#: the loops that have a multi-threaded variant, ``<name>_parallel`` (``prange`` over the outer rows)
PARALLEL: list[str] = []


def _parallel_variant(fn: Callable[..., Any]) -> Any:
    """Compile ``fn`` single-threaded (``prange`` runs as ``range``: no threading layer is started, so a
    process that forks after using it leaves a working child) and, as ``<name>_parallel``, with
    ``parallel=True`` for more than one thread. Each variant has its own name, so its own cache file."""
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_parallel", fn.__defaults__,
                              fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + "_parallel"
    twin.__doc__ = fn.__doc__
    globals()[twin.__name__] = nb.njit(cache=True, nogil=True, parallel=True)(twin)
    PARALLEL.append(fn.__name__)
    return nb.njit(cache=True, nogil=True)(fn)


@_parallel_variant
def stage_rows(sums: np.ndarray, mm: np.ndarray, off: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """``out[r, c] = sat_u8(floor(float64(sums[r, c]) * mm[c] + off[c]))`` (FloatStage, then saturated)."""
    rows, cols = sums.shape
    for r in nb.prange(rows):
        for c in range(cols):
            # branch-free clamp (vectorizes); the truncating cast is the floor on [0, 255]
            y = min(max(np.float64(sums[r, c]) * mm[c] + off[c], 0.0), 255.0)
            out[r, c] = np.uint8(y)


@nb.njit(cache=True, nogil=True, inline="always")
def _depthwise_pixel(xp: np.ndarray, w: np.ndarray, x_zero: int, n: int, y0: int, x0: int,
                     acc: np.ndarray) -> None:  # pragma: no cover
    """``acc[c] = sum over taps (i, j) of (xp[n, y0 + i, x0 + j, c // dmul] - x_zero) * w[i, j, c]`` in int32."""
    fh, fw, cout = w.shape
    dmul = cout // xp.shape[3]
    acc[:] = 0
    for i in range(fh):
        for j in range(fw):
            px = xp[n, y0 + i, x0 + j]
            wt = w[i, j]
            if dmul == 1:
                for c in range(cout):
                    acc[c] += (np.int32(px[c]) - x_zero) * wt[c]
            else:
                for c in range(cout):
                    acc[c] += (np.int32(px[c // dmul]) - x_zero) * wt[c]


@_parallel_variant
def depthwise_stage(xp: np.ndarray, w: np.ndarray, x_zero: int, sh: int, sw: int, mm: np.ndarray, off: np.ndarray,
                    out: np.ndarray) -> None:  # pragma: no cover
    """Depthwise sums of the zero-bordered uint8 input ``xp`` (border codes ``x_zero``) with the centred
    int32 weights ``w[fh, fw, din * dmul]`` (channel ``c * dmul + m`` reads input channel ``c``), in
    int32, then the stage of :func:`stage_rows`, into ``out[b, oh, ow, din * dmul]``."""
    b, oh, ow, cout = out.shape
    for row in nb.prange(b * oh):
        n = row // oh
        oy = row % oh
        acc = np.empty(cout, np.int32)
        for ox in range(ow):
            _depthwise_pixel(xp, w, x_zero, n, oy * sh, ox * sw, acc)
            for c in range(cout):
                y = min(max(np.float64(acc[c]) * mm[c] + off[c], 0.0), 255.0)
                out[n, oy, ox, c] = np.uint8(y)


@_parallel_variant
def depthwise_sums(xp: np.ndarray, w: np.ndarray, x_zero: int, sh: int, sw: int, out: np.ndarray) -> None:  # pragma: no cover
    """The int32 sums of :func:`depthwise_stage` (no output stage), into ``out[b, oh, ow, din * dmul]``."""
    b, oh, ow, _ = out.shape
    for row in nb.prange(b * oh):
        n = row // oh
        oy = row % oh
        for ox in range(ow):
            _depthwise_pixel(xp, w, x_zero, n, oy * sh, ox * sw, out[n, oy, ox])


@_parallel_variant
def depthwise_rows(xp: np.ndarray, wt: np.ndarray, x_zero: int, sh: int, out: np.ndarray) -> None:  # pragma: no cover
    """:func:`depthwise_sums` for a column stride of 1 and one output channel per input channel, an output row
    at a time: with ``wt[i, j]`` the centred int32 weights of tap ``(i, j)`` tiled along the row (``ow * cout``
    values), a tap adds one contiguous run of the input row to the whole output row (one long vectorized loop
    instead of ``cout`` values per pixel: ~2.5x faster for 16 channels)."""
    b, oh, _, cout = out.shape
    fh, fw, m = wt.shape
    xz = np.int32(x_zero)
    for row in nb.prange(b * oh):
        n = row // oh
        oy = row % oh
        o = out[n, oy].reshape(m)
        for k in range(m):
            o[k] = 0
        for i in range(fh):
            xs = xp[n, oy * sh + i].reshape(-1)
            for j in range(fw):
                wv = wt[i, j]
                xj = xs[j * cout:j * cout + m]
                for k in range(m):
                    o[k] += (np.int32(xj[k]) - xz) * wv[k]


@nb.njit(cache=True, nogil=True)
def channel_extremes(rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:  # pragma: no cover
    """Per-column minimum and maximum of ``rows[r, c]`` as float64 (``rows`` has at least one row)."""
    n, cols = rows.shape
    for c in range(cols):
        lo[c] = rows[0, c]
        hi[c] = rows[0, c]
    for r in range(1, n):
        for c in range(cols):
            v = np.float64(rows[r, c])
            if v < lo[c]:
                lo[c] = v
            elif v > hi[c]:
                hi[c] = v


@nb.njit(cache=True, nogil=True)
def channel_extremes_i32(rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:  # pragma: no cover
    """:func:`channel_extremes` of int32 rows, or of float32 rows holding integers below 2**24 in magnitude
    (exact product sums): each value read as int32 (exact there), so the minimum and maximum vectorize (the
    float compare-and-branch form does not; ~4-7x faster)."""
    n, cols = rows.shape
    a = np.empty(cols, np.int32)
    b = np.empty(cols, np.int32)
    for c in range(cols):
        a[c] = np.int32(rows[0, c])
        b[c] = a[c]
    for r in range(1, n):
        for c in range(cols):
            v = np.int32(rows[r, c])
            a[c] = min(a[c], v)
            b[c] = max(b[c], v)
    for c in range(cols):
        lo[c] = a[c]
        hi[c] = b[c]


@nb.njit(cache=True, nogil=True)
def stage_extremes(rows: np.ndarray, mm: np.ndarray, off: np.ndarray, out: np.ndarray, lo: np.ndarray,
                   hi: np.ndarray, codes: np.ndarray) -> None:  # pragma: no cover
    """:func:`stage_rows` and :func:`channel_extremes_i32` in one pass over int32 rows or float32 rows of
    integers below 2**24 (each value read as int32, exact there; its float64 is the value itself): the codes
    of one output range and the per-channel extremes that tell whether that range holds; ``codes`` gets the
    smallest ``lo[c] * mm[c] + off[c]`` and the largest ``hi[c] * mm[c] + off[c]`` (float64, whose floors are
    the extreme pre-saturation codes: ``nnlib_execute._code_extremes``, the same two roundings)."""
    n, cols = rows.shape
    a = np.empty(cols, np.int32)
    b = np.empty(cols, np.int32)
    for c in range(cols):
        a[c] = np.int32(rows[0, c])
        b[c] = a[c]
    for r in range(n):
        for c in range(cols):
            v = np.int32(rows[r, c])
            a[c] = min(a[c], v)
            b[c] = max(b[c], v)
            y = min(max(np.float64(v) * mm[c] + off[c], 0.0), 255.0)
            out[r, c] = np.uint8(y)
    cmin = np.inf
    cmax = -np.inf
    for c in range(cols):
        lo[c] = a[c]
        hi[c] = b[c]
        cmin = min(cmin, lo[c] * mm[c] + off[c])
        cmax = max(cmax, hi[c] * mm[c] + off[c])
    codes[0] = cmin
    codes[1] = cmax


@nb.njit(cache=True, nogil=True)
def requant_q31(x: np.ndarray, offseti: int, gaini: int, out: np.ndarray) -> None:  # pragma: no cover
    """``quantize_asm``'s codes of flat int32 ``x`` (:func:`hexnn_import.ops.nnlib_requant.requantize_i32_to_qu8`,
    its device path): ``u = sat32(x - offseti)``, ``sat_u8((u * gaini + 2**30) >> 31)``, i.e. ``floor(u * q +
    1/2)`` with ``q = gaini * 2**-31``, evaluated in float64 (it vectorizes; AVX2 has no 64-bit multiply). Exact:
    ``u`` and ``q`` are exact doubles; where the code is not saturated ``|u * q| < 256``, so the product and the
    sum each round by at most 2**-45, while the exact value ``u * q + 1/2`` is a multiple of 2**-31 - an integer
    stays exact (it is representable) and any other value is at least 2**-31 from the next integer, so the floor
    is the integer formula's; beyond 0..255 the value only has to stay beyond it, which a relative error of
    2**-52 cannot change."""
    off = np.float64(offseti)
    q = np.float64(gaini) * 2.0 ** -31
    for i in range(x.size):
        u = min(max(np.float64(x[i]) - off, -2147483648.0), 2147483647.0)
        out[i] = np.uint8(min(max(np.floor(u * q + 0.5), 0.0), 255.0))


@nb.njit(cache=True, nogil=True)
def scale_q28(q: np.ndarray, m: np.ndarray, clip: bool, out: np.ndarray) -> None:  # pragma: no cover
    """QuantizedChannelScale_32xf's ``(q * m + 2**27) >> 28`` per element of int32 rows ``q[r, c]`` with the int64
    Q28 scale ``m[c]`` (``m[0]`` for every channel when it has one element), in int64 (``|q * m| <= 2**62``),
    clipped to int32 when ``clip`` (a scale above 1), then cast to int32 (:func:`hexnn_import.ops.kernels.
    channel_scale.scale_codes`)."""
    n, cols = q.shape
    one = m.size == 1
    for r in range(n):
        for c in range(cols):
            v = (np.int64(q[r, c]) * m[0 if one else c] + np.int64(134217728)) >> np.int64(28)
            if clip:
                v = min(max(v, np.int64(-2147483648)), np.int64(2147483647))
            out[r, c] = np.int32(v)


@nb.njit(cache=True, nogil=True)
def tile_max(x: np.ndarray, fh: int, fw: int, out: np.ndarray) -> None:  # pragma: no cover
    """``out[n, oy, ox, c]`` = the largest ``x[n, oy * fh + i, ox * fw + j, c]`` over the ``fh x fw`` tile: a max
    pool whose windows tile the input (:func:`hexnn_import.ops.kernels.pool.tiles`), one pass."""
    b, oh, ow, d = out.shape
    for n in range(b):
        for oy in range(oh):
            o = out[n, oy]
            for i in range(fh):
                xr = x[n, oy * fh + i]
                for ox in range(ow):
                    oo = o[ox]
                    for j in range(fw):
                        px = xr[ox * fw + j]
                        if i == 0 and j == 0:
                            for c in range(d):
                                oo[c] = px[c]
                        else:
                            for c in range(d):
                                oo[c] = max(oo[c], px[c])


@nb.njit(cache=True, nogil=True)
def pair_lookup(a: np.ndarray, b: np.ndarray, codes: np.ndarray, inter: np.ndarray, out: np.ndarray,
                ext: np.ndarray) -> None:  # pragma: no cover
    """``out = codes[a * 256 + b]`` over flat uint8 operands; with a non-empty ``inter`` table, also the
    smallest and largest ``inter[a * 256 + b]`` into ``ext[0]``, ``ext[1]`` (left as given when empty)."""
    track = inter.size > 0
    lo = ext[0]
    hi = ext[1]
    for i in range(a.size):
        k = np.int32(a[i]) * 256 + np.int32(b[i])
        out[i] = codes[k]
        if track:
            v = np.int32(inter[k])
            if v < lo:
                lo = v
            if v > hi:
                hi = v
    ext[0] = lo
    ext[1] = hi


@nb.njit(cache=True, nogil=True)
def channel_pair_lookup(rows: np.ndarray, second: np.ndarray, codes: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """``out[r, c] = codes[rows[r, c] * 256 + second[c]]`` over uint8 rows (a per-channel second code, e.g.
    PReLU's alphas): numpy's shift, or and take in one pass."""
    n, cols = rows.shape
    for r in range(n):
        for c in range(cols):
            out[r, c] = codes[np.int32(rows[r, c]) * 256 + np.int32(second[c])]


@nb.njit(cache=True, nogil=True)
def channel_table_lookup(rows: np.ndarray, tables: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """``out[r, c] = tables[c, rows[r, c]]``: :func:`channel_pair_lookup` with each channel's 256 codes gathered
    into a small table first (``tables[c, v] = codes[v * 256 + second[c]]``; in L1 instead of the 64 KB one)."""
    n, cols = rows.shape
    for r in range(n):
        for c in range(cols):
            out[r, c] = tables[c, rows[r, c]]


@_parallel_variant
def bso_stage(sums: np.ndarray, c1: np.ndarray, s1: np.ndarray, scale: np.ndarray, c2: np.ndarray, s2: np.ndarray,
              lo: int, hi: int, clamp16: bool, out: np.ndarray) -> None:  # pragma: no cover
    """The XS3 fused output stage (hexnn_import.xs3.fused_stage.FusedStage._block) per element in int64:
    ``t = (s + c1) >> s1``, optionally clamped to +-32767, ``t = (t * scale + c2) >> s2``, clipped to
    ``[lo, hi]`` (arithmetic shifts, as numpy's on signed integers)."""
    rows, cols = sums.shape
    for r in nb.prange(rows):
        for c in range(cols):
            t = (np.int64(sums[r, c]) + c1[c]) >> s1[c]
            if clamp16:
                if t > 32767:
                    t = 32767
                elif t < -32767:
                    t = -32767
            t = (t * scale[c] + c2[c]) >> s2[c]
            if t < lo:
                t = lo
            elif t > hi:
                t = hi
            out[r, c] = t



@_parallel_variant
def bso_stage_f64(sums: np.ndarray, c1: np.ndarray, inv1: np.ndarray, scale: np.ndarray, c2: np.ndarray,
                  inv2: np.ndarray, lo: float, hi: float, clamp16: bool, out: np.ndarray) -> None:  # pragma: no cover
    """:func:`bso_stage` in float64, for stages whose every intermediate fits int32 (the caller checks):
    ``a >> s`` is ``floor(a * 2**-s)`` for an integer ``a``, and every product and sum is an integer (or an
    integer times a power of two) below 2**53, so each operation is exact; the clamps and the int32 cast
    vectorize where the int64 shifts of :func:`bso_stage` do not (~1.6x faster)."""
    rows, cols = sums.shape
    for r in nb.prange(rows):
        for c in range(cols):
            t = np.floor((np.float64(sums[r, c]) + c1[c]) * inv1[c])
            if clamp16:
                t = min(max(t, -32767.0), 32767.0)
            t = np.floor((t * scale[c] + c2[c]) * inv2[c])
            out[r, c] = np.int32(min(max(t, lo), hi))
