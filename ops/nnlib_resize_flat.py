"""hexagon_nn's device arithmetic of the flat QuantizedResizeBilinear_8, step for step in numpy (issue 36).

``resizebilinear_qu8_execute`` (ops/src/op_resizebilinear.c) dispatches, in this order (:func:`device_path`):

- ``"2x"``: an exact 2x without align corners, power-of-2 depth (below 128 a power-of-2 width): HVX
  ``resizebilinear_2x``, rounded averages ``vavg:rnd`` and ``(a + b + c + d + 2) >> 2``: the general path's
  float arithmetic gives the same codes (its fractions are 0 and 0.5, every value exact);
- ``"4x"``: an exact 4x without align corners, depth 1-16 a power of 2: HVX ``resizebilinear_4x``
  (:func:`x4_codes`), ``(sum of the weights (4-r)(4-c), (4-r)c, r(4-c), rc times the four codes + 8) >> 4``, the
  general path's codes (fractions 0, 1/4, 1/2, 3/4, every value exact) except where ``(w_in - 1) * depth`` is a
  multiple of 128: there ``Q1 = q6op_Q_vsetq2_R(wxd - d_in)`` is meant to keep the last input pixel as its own
  right neighbour, but ``vsetq2`` of a multiple of 128 sets every lane, so its neighbour is the next ``depth``
  bytes in memory: the next row's first pixel (the next batch's on a batch's last row), followed here, and past
  the input tensor on its very last row, not deterministic: the engine keeps the pixel itself there;
- ``"copy"``: the same size;
- ``"hvx"``: align corners, ``w_out == 4 * w_in``, ``(w_in - 1) % 3 == 0`` and ``w_in * depth < 384``:
  ``resizebilinear_hvx`` on ``weight_generation``'s plan (:func:`hvx_align_codes`); ``weight_generation`` takes
  depth 1-2 only (above: "didn't get scaling plan"), and one output row from several input rows leaves the second
  thread no row, which then ``memcpy``s to a NULL ``pOut`` (:func:`hvx_refusal`);
- ``"general"``: ``resizebilinear_general`` (:func:`general_codes`): float32 with clang's contraction of
  ``linear_interpolate``'s ``s + (e - s) * t`` into one fused multiply-add (float_mathops.h); with align corners
  and an output side of 1 its scale ``(in - 1) / 0`` is inf or NaN, position 0 times it NaN, so every output is
  ``(uint8)(NaN + 0.5f)``: Hexagon's float-to-integer conversion of NaN is all ones, code 255.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.nnlib_f32 import F, fmaf

I64 = np.int64


def _pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def device_path(shape: tuple[int, ...], h_out: int, w_out: int, align: bool) -> str:
    """The path ``resizebilinear_qu8_execute`` takes, in its order of tests (op_resizebilinear.c)."""
    _, h, w, d = shape
    if not align and (h_out, w_out) == (2 * h, 2 * w) and _pow2(d) and (d >= 128 or _pow2(w)):
        return "2x"
    if not align and (h_out, w_out) == (4 * h, 4 * w) and d < 32 and _pow2(d):
        return "4x"
    if (h_out, w_out) == (h, w):
        return "copy"
    if align and w_out == 4 * w and (w - 1) % 3 == 0 and w * d < 128 * 3:
        return "hvx"
    return "general"


def hvx_refusal(shape: tuple[int, ...], h_out: int) -> str | None:
    """Why the device fails on the align-corners ``"hvx"`` path, or None (``weight_generation``,
    ``resizebilinear_hvx``)."""
    _, h, _, d = shape
    if d > 2:
        return f"depth {d}: nnlib's weight_generation takes depth 1-2 (\"didn't get scaling plan\")"
    if h >= 2 and h_out == 1:
        return ("one output row from several input rows: resizebilinear_hvx's second thread gets no row and "
                "memcpy()s to a NULL output pointer")
    return None


def _axis(n_in: int, n_out: int, align: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(i0, i1, frac)`` per output index as ``resizebilinear_general``: ``scale = (float)n_in / n_out`` (with
    align corners ``(float)(n_in - 1) / (n_out - 1)``), ``f = y * scale``, ``frac = f - floorf(f)``, ``i = f -
    frac``, ``i0 = min(n_in - 1, (int)i)``, ``i1 = min(n_in - 1, (int)(i + 1))``."""
    with np.errstate(divide="ignore", invalid="ignore"):      # an output side of 0: no position is taken
        scale = F(F(n_in - 1) / F(n_out - 1)) if align else F(F(n_in) / F(n_out))
    pos = np.arange(n_out, dtype=np.float32) * scale
    frac = pos - np.floor(pos)
    whole = pos - frac
    i0 = np.minimum(n_in - 1, whole.astype(I64))
    i1 = np.minimum(n_in - 1, (whole + F(1.0)).astype(I64))
    return i0, i1, frac


def fmaf32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 ``fmaf(a, b, c)`` for float32 arrays (broadcast), as :func:`hexnn_import.ops.nnlib_f32.fmaf` but
    cheaper: ``a * b`` is exact in float64 and the float64 sum ``s`` rounds to the float32 of the exact sum unless
    ``s`` is itself a float32 midpoint (its 29 bits below float32's precision exactly ``1 << 28``); only those
    elements take the exact two-sum."""
    s = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    out = s.astype(np.float32)
    tie = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        a, b, c = np.broadcast_arrays(a, b, c)
        out[tie] = fmaf(a[tie], b[tie], c[tie])
    return out


def general_codes(x: np.ndarray, h_out: int, w_out: int, align: bool) -> np.ndarray:
    """``resizebilinear_general`` on ``[b, h, w, d]`` codes: ``out = (uint8)(v + 0.5f)`` with ``v =
    bilinear_interpolate(...)``, each ``linear_interpolate`` one ``fmaf(e - s, t, s)``."""
    b, h, w, d = x.shape
    if align and min(h_out, w_out) == 1:
        return np.full((b, h_out, w_out, d), 255, np.uint8)
    y0, y1, fy = _axis(h, h_out, align)
    x0, x1, fx = _axis(w, w_out, align)
    q = x.astype(np.float32)
    r0, r1 = q[:, y0], q[:, y1]
    fx4 = fx[None, None, :, None]
    top = fmaf32(r0[:, :, x1] - r0[:, :, x0], fx4, r0[:, :, x0])
    bottom = fmaf32(r1[:, :, x1] - r1[:, :, x0], fx4, r1[:, :, x0])
    v = fmaf32(bottom - top, fy[None, :, None, None], top)
    return (v + F(0.5)).astype(np.uint8)


def _hvx_columns(w_in: int, w_out: int, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(left pixel, right pixel, 7-bit fraction) per output column of ``resizebilinear_hvx``.

    The row buffers: three segments ``x = 0..2`` of 128 input bytes from pixel ``x * m`` (``m = (w_in - 1) / 3``;
    the right buffer from pixel ``x * m + 1``), each pixel repeated 4 times (``vshuff`` by ``-d``, ``-2d``),
    written from pixel position ``1 + x * (4m + 1)``, later segments over earlier ones; then positions ``(4m + 1) * i``
    take position ``+ 1``'s pixel. The fraction: ``weight_generation``'s ``acc = (1 << 16) + c * add_per`` (32
    fraction bits, ``add_per = (((w_in - 1) << 32) + (w_out - 1) / 2) / (w_out - 1)``), ``(uint32)acc >> 25``,
    0 from the last input pixel on. A right pixel past the row meets fraction 0 only; it is clamped here."""
    m = (w_in - 1) // 3
    pos = np.arange(w_out, dtype=I64)
    left = np.zeros(w_out, I64)
    for x in range(3):
        start = 1 + x * (4 * m + 1)
        inside = (pos >= start) & (pos < start + 512 // depth)
        left = np.where(inside, x * m + (pos - start) // 4, left)
    for i in range(3):
        p = (4 * m + 1) * i
        if p + 1 < w_out:
            left[p] = left[p + 1]
    add_per = (((w_in - 1) << 32) + ((w_out - 1) >> 1)) // (w_out - 1)
    acc = I64(1 << 16) + pos * I64(add_per)
    frac = np.where((acc >> 32) >= w_in - 1, 0, (acc & 0xFFFFFFFF) >> 25)
    return np.minimum(left, w_in - 1), np.minimum(left + 1, w_in - 1), frac


def _hvx_rows(h_in: int, h_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(top row, bottom row, 15-bit fraction) per output row of ``resizebilinear_hvx``: ``vacc = r * vscale +
    (1 << 16)`` (``vscale = ((h_in - 1) << 32) + (h_out - 1) / 2) / (h_out - 1)``, the sizes themselves for one
    output row), the row ``vacc >> 32``, the fraction ``(uint32)(vacc + (1 << 16)) >> 17``; at ``h_in - 1`` and
    beyond both rows are the last, fraction 0."""
    hi, ho = (h_in - 1, h_out - 1) if h_out > 1 else (h_in, h_out)
    vscale = ((hi << 32) + (ho >> 1)) // ho
    vacc = np.arange(h_out, dtype=I64) * I64(vscale) + I64(1 << 16)
    top = vacc >> 32
    frac = ((vacc + (1 << 16)) & 0xFFFFFFFF) >> 17
    last = top >= h_in - 1
    top = np.where(last, h_in - 1, top)
    return top, np.where(last, h_in - 1, top + 1), np.where(last, 0, frac)


def hvx_align_codes(x: np.ndarray, h_out: int, w_out: int) -> np.ndarray:
    """``resizebilinear_hvx`` on ``[b, h, w, d]`` codes (depth 1-2): per byte lane, ``top = L * (128 - f) + R * f``
    (``vzxt`` + ``vmpa`` by ``127 - f`` and ``f``), the same for the bottom row, ``top + vmpy:<<1:rnd:sat(bottom -
    top, yfrac)``, then ``vasr:rnd:sat`` by 7 to uint8."""
    v = x.astype(I64)
    cl, cr, f = _hvx_columns(v.shape[2], w_out, v.shape[3])
    rt, rb, yf = _hvx_rows(v.shape[1], h_out)
    f4 = f[None, None, :, None]
    top = v[:, rt][:, :, cl] * (128 - f4) + v[:, rt][:, :, cr] * f4
    bot = v[:, rb][:, :, cl] * (128 - f4) + v[:, rb][:, :, cr] * f4
    inter = np.clip((2 * (bot - top) * yf[None, :, None, None] + 0x8000) >> 16, -2 ** 15, 2 ** 15 - 1)
    return np.clip((top + inter + 64) >> 7, 0, 255).astype(np.uint8)


def x4_past_row(shape: tuple[int, ...]) -> bool:
    """Whether ``resizebilinear_4x`` takes the last pixel's right neighbour from the bytes after the row."""
    return (shape[2] - 1) * shape[3] % 128 == 0


def x4_codes(x: np.ndarray) -> np.ndarray:
    """``resizebilinear_4x`` on ``[b, h, w, d]`` codes: output ``(4y + r, 4c + k)`` from pixels ``(y, c)``,
    ``(y, c + 1)`` and the row below (the last row its own), weights ``(4 - r)(4 - k)`` ... ``rk``, ``+ 8 >> 4``
    (``vmpa`` / ``vmpyiacc``, ``vasr:rnd:sat``). With :func:`x4_past_row` the last pixel's right neighbour is
    the next pixel in memory (the first of the next row, or of the next batch), the pixel itself on the tensor's
    last row."""
    v = x.astype(I64)
    b, h, w, d = v.shape
    last = v[:, :, -1:]
    if x4_past_row(v.shape):
        flat = v.reshape(-1, d)
        after = np.concatenate([flat[w::w], flat[-1:]]).reshape(b, h, 1, d)   # pixel after each row's last
        last = after
    right = np.concatenate([v[:, :, 1:], last], axis=2)
    below, below_right = (np.concatenate([a[:, 1:], a[:, -1:]], axis=1) for a in (v, right))
    r = np.arange(4, dtype=I64)[None, None, :, None, None, None]
    k = np.arange(4, dtype=I64)[None, None, None, None, :, None]
    e = lambda a: a[:, :, None, :, None, :]
    acc = ((4 - r) * (4 - k) * e(v) + (4 - r) * k * e(right) + r * (4 - k) * e(below) + r * k * e(below_right) + 8)
    return (acc >> 4).reshape(b, 4 * h, 4 * w, d).astype(np.uint8)
