"""lib_nn's pooling kernels (``src/c/avgpool2d.c``, ``src/c/maxpool2d.c``; API ``api/nn_pooling.h``).

Images are NHWC int8, ``[H, W, C]`` or ``[1, H, W, C]``; outputs keep the
input's rank (``avgpool2d_global`` returns ``[C]``). Windows are
:class:`hexnn_import.xs3.window.Window` (``nn_window_params_t``: shape,
start, stride; lib_nn's pooling ignores dilation).

- :func:`avgpool2d`: ``avgpool2d`` -> ``avgpool2d_ext``. lib_nn picks the
  arithmetic from the window alone (``avgpool2d_calc_scale_shift``, here
  :func:`avgpool2d_scale_shift`): ``acc = scale * sum(x)`` in int32, then
  ``vlsat_single_s8(acc, shift)`` (round half up, clamp [-128, 127]). A 2x2
  window with stride 2 goes through ``avgpool2d_2x2_ref`` (plain sum, shift
  2); every other window through ``avgpool2d_gen_ref`` with (1, log2 P) for
  a power-of-two pixel count P, else (round(2**(c+6) / P), c + 6), c =
  ceil(log2 P). For a 2x2 window the generic path's (1, 2) is the 2x2 path's
  arithmetic, so both give the same integers. No bias and no zero points:
  the output is ``~round(mean(x))`` in the input's own codes, so TFLite's
  AVERAGE_POOL_2D maps onto it only with equal input and output
  quantization and a VALID window (:func:`check_tflite_avgpool`).
- :func:`avgpool2d_global`: ``avgpool2d_global_ext_ref``:
  ``acc = bias + scale * sum(x)`` (int32), ``vlsat_single_s8(acc, shift)``;
  :func:`global_avg_params` picks ``(bias, scale, shift)`` for TFLite MEAN
  over H, W.
- :func:`maxpool2d`: ``maxpool2d_ext_ref``, the plain window maximum.

lib_nn's C asserts (aborts) for channel counts that are not a multiple of 4
(avgpool2d, maxpool2d) and for windows starting before the image (no
padding); avgpool2d does not check that its windows end inside the image (it
reads past it). Each of those raises :class:`XS3Error` here.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions
from hexnn_import.xs3.window import Window

INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
#: shifts of ``vlsat_single_s8`` the C defines (``1 << (shift - 1)`` is an int)
MAX_VLSAT_SHIFT = 31


def as_hwc(x: np.ndarray, name: str = "x") -> tuple[np.ndarray, bool]:
    """``(x as [H, W, C] int8, whether it was [1, H, W, C])``; XS3Error for any other shape or dtype."""
    x = np.asarray(x)
    if x.dtype != np.int8:
        raise XS3Error(f"{name}: lib_nn's pooling kernels take int8, not {x.dtype}")
    if x.ndim == 4:
        if x.shape[0] != 1:
            raise XS3Error(f"{name}: batch {x.shape[0]}; lib_nn kernels take one image [1, H, W, C]")
        return x[0], True
    if x.ndim != 3:
        raise XS3Error(f"{name}: shape {x.shape} is not [H, W, C] or [1, H, W, C]")
    return x, False


def vlsat_s8(acc: np.ndarray, shift: int, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """``vlsat_single_s8(acc, shift, lo, hi)`` (nn_op_helper.h): ``clamp((acc + 2**(shift-1)) >> shift)``.

    Exact in int64 as the C is (it widens to int64 before the rounding add);
    ``shift`` 0 adds nothing. XS3Error for ``shift > 31`` (the C's ``1 << (shift - 1)`` overflows int).
    """
    if not 0 <= shift <= MAX_VLSAT_SHIFT:
        raise XS3Error(f"vlsat_single_s8: shift {shift} outside 0..{MAX_VLSAT_SHIFT} (the C's 1 << (shift - 1) "
                       f"is undefined beyond 31)")
    acc = np.asarray(acc, dtype=np.int64)
    if shift > 0:
        acc = np.right_shift(acc + (np.int64(1) << (shift - 1)), shift)
    lo, hi = options.output_bounds
    return np.clip(acc, lo, hi).astype(np.int8)


def _ceil_log2(a: int) -> int:
    return int(math.ceil(math.log2(a))) if a > 1 else 0


def avgpool2d_scale_shift(window: Window) -> tuple[int, int]:
    """``(scale, shift)`` of lib_nn's avgpool2d for ``window`` (``avgpool2d_calc_scale_shift``; 2x2/2: (1, 2))."""
    pix = window.k_h * window.k_w
    if pix <= 0:
        raise XS3Error(f"avgpool2d: empty window {window}")
    c = _ceil_log2(pix)
    if c > 24:
        raise XS3Error(f"avgpool2d: window of {pix} pixels is too large")
    if pix == 1 << c:
        return 1, c
    q = 31 - c - 6
    g = 0x80000000 // pix
    h = (g + (1 << (q - 1))) >> q
    return h, c + 6


def _check_windows(name: str, hwc: tuple[int, int, int], window: Window, out_hw: tuple[int, int]) -> None:
    h, w, c = hwc
    if c % 4:
        raise XS3Error(f"{name}: {c} channels; lib_nn asserts a multiple of 4")
    if window.start_row < 0 or window.start_col < 0:
        raise XS3Error(f"{name}: window {window} starts before the image; lib_nn's pooling has no padding")
    if window.k_h < 1 or window.k_w < 1 or window.stride_v < 1 or window.stride_h < 1:
        raise XS3Error(f"{name}: window {window} has an empty shape or a non-positive stride")
    oh, ow = out_hw
    if oh < 1 or ow < 1:
        raise XS3Error(f"{name}: output size {out_hw} is empty")
    last_r = window.start_row + window.stride_v * (oh - 1) + window.k_h - 1
    last_c = window.start_col + window.stride_h * (ow - 1) + window.k_w - 1
    if last_r >= h or last_c >= w:
        raise XS3Error(f"{name}: window {window} over {out_hw} outputs reaches row {last_r} / column {last_c} of a "
                       f"{h}x{w} image (lib_nn reads past the image)")


def _taps(x: np.ndarray, window: Window, out_hw: tuple[int, int]):
    """Each window tap's ``[Y_h, Y_w, C]`` slice of ``x`` ``[H, W, C]`` (a loop over the window's taps)."""
    oh, ow = out_hw
    for i in range(window.k_h):
        r0 = window.start_row + i
        rows = slice(r0, r0 + window.stride_v * (oh - 1) + 1, window.stride_v)
        for j in range(window.k_w):
            c0 = window.start_col + j
            yield x[rows, c0:c0 + window.stride_h * (ow - 1) + 1:window.stride_h]


def avgpool2d(x: np.ndarray, window: Window, out_hw: tuple[int, int],
              options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """lib_nn ``avgpool2d`` (avgpool2d.c: ``avgpool2d_gen_ref`` / ``avgpool2d_2x2_ref``) of ``x`` -> int8.

    ``x``: ``[H, W, C]`` or ``[1, H, W, C]`` int8, C a multiple of 4; the
    windows must lie inside the image. Output ``[Y_h, Y_w, C]`` (or
    ``[1, Y_h, Y_w, C]``): ``vlsat_s8(scale * sum(window), shift)`` with
    :func:`avgpool2d_scale_shift`.
    """
    xi, batched = as_hwc(x)
    _check_windows("avgpool2d", xi.shape, window, out_hw)
    scale, shift = avgpool2d_scale_shift(window)
    acc = np.zeros((*out_hw, xi.shape[2]), np.int64)
    for tap in _taps(xi, window, out_hw):
        acc += tap.astype(np.int64)
    y = vlsat_s8(acc * scale, shift, options)
    return y[None] if batched else y


def check_tflite_avgpool(s_in: float, z_in: int, s_out: float, z_out: int, window: Window,
                         x_hw: tuple[int, int], out_hw: tuple[int, int], channels: int) -> None:
    """XS3Error unless TFLite AVERAGE_POOL_2D with these parameters is lib_nn's avgpool2d.

    lib_nn's avgpool2d has no bias, no rescaling and no padding: input and
    output quantization must be equal (TFLite's int8 kernel requires it too),
    every window must lie inside the image (VALID, or SAME whose padding is
    zero) and the channel count must be a multiple of 4.
    """
    if not (math.isclose(s_in, s_out, rel_tol=1e-6) and int(z_in) == int(z_out)):
        raise XS3Error(f"avgpool2d: input quantization ({s_in}, {z_in}) differs from the output's "
                       f"({s_out}, {z_out}); lib_nn's avgpool2d cannot rescale")
    _check_windows("avgpool2d", (*x_hw, channels), window, out_hw)


def avgpool2d_global(x: np.ndarray, bias: int, scale: int, shift: int,
                     options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """lib_nn ``avgpool2d_global`` (avgpool2d.c ``avgpool2d_global_ext_ref``) -> int8 ``[C]``.

    ``acc = bias + scale * sum over H, W of x`` per channel in int32 (the C
    wraps; XS3Error if some input could take it out of int32, since the VPU
    would saturate instead), then ``vlsat_s8(acc, shift)``. ``x``:
    ``[H, W, C]`` or ``[1, H, W, C]`` int8; ``scale`` int8, ``shift`` 0..31.
    """
    xi, _ = as_hwc(x)
    if not -128 <= scale <= 127:
        raise XS3Error(f"avgpool2d_global: scale {scale} does not fit int8_t")
    if not INT32_MIN <= bias <= INT32_MAX:
        raise XS3Error(f"avgpool2d_global: bias {bias} does not fit int32_t")
    pix = xi.shape[0] * xi.shape[1]
    if abs(bias) + 128 * abs(scale) * pix > INT32_MAX:
        raise XS3Error(f"avgpool2d_global: bias {bias} + {scale} x {pix} pixels can leave int32")
    acc = np.int64(bias) + np.int64(scale) * xi.astype(np.int64).sum(axis=(0, 1))
    return vlsat_s8(acc, shift, options)


def global_avg_params(s_in: float, z_in: int, s_out: float, z_out: int, pixels: int) -> tuple[int, int, int]:
    """``(bias, scale, shift)`` of avgpool2d_global for TFLite MEAN over H, W (keepdims) / global average pooling.

    Target: ``y = z_out + round((mean(x) - z_in) * s_in / s_out)``. With
    ``M = s_in / (s_out * pixels)`` the kernel computes
    ``round((bias + scale * sum(x)) / 2**shift)``: ``shift`` is the largest in
    0..31 with ``scale = round(M 2**shift) <= 127``, so scale is 64..127 (7
    significant bits, all an int8 holds), and the bias holds the zero points
    exactly, with fractional precision::

        bias = round(2**shift (z_out - M pixels z_in) + (M 2**shift - scale) pixels c)

    where ``c`` is the centre of the input means whose exact output is not
    clamped (``[-128, 127]`` intersected with ``z_in + ([-128.5, 127.5] -
    z_out) s_out / s_in``): the scale's rounding error then vanishes there
    and is smallest at the ends of that range (:func:`global_avg_error_bound`).
    XMOS's converter (ai_tools ``ReplaceGlobalAveragePool2DPass``) uses the
    same scale and shift with ``c = z_in`` and adds 0.5 to the bias (for an
    older, truncating shift; lib_nn's ``vlsat`` rounds, so no 0.5 here).

    XS3Error when ``M > 127.5`` (no int8 scale holds it), when ``M`` is so
    small that even shift 31 leaves the scale below 64 (under 7 bits), or
    when the bias or ``|bias| + 128 scale pixels`` leaves int32.
    """
    if not (math.isfinite(s_in) and s_in > 0 and math.isfinite(s_out) and s_out > 0):
        raise XS3Error(f"global_avg_params: scales {s_in}, {s_out} must be positive and finite")
    for zp in (z_in, z_out):
        if int(zp) != zp or not -128 <= zp <= 127:
            raise XS3Error(f"global_avg_params: zero point {zp} is not an int8 value")
    if pixels < 1:
        raise XS3Error(f"global_avg_params: {pixels} pixels")
    m = float(s_in) / (float(s_out) * pixels)
    shift = next((s for s in range(MAX_VLSAT_SHIFT, -1, -1) if math.floor(m * 2.0 ** s + 0.5) <= 127), None)
    if shift is None:
        raise XS3Error(f"global_avg_params: multiplier s_in / (s_out pixels) = {m:.6g} is above 127.5: "
                       f"an int8 scale cannot hold it")
    scale = int(math.floor(m * 2.0 ** shift + 0.5))
    if scale < 64:
        raise XS3Error(f"global_avg_params: multiplier s_in / (s_out pixels) = {m:.6g} is too small: scale {scale} "
                       f"at the largest shift {shift} has under 7 significant bits")
    c, _ = _mean_range(s_in, z_in, s_out, z_out)
    bias = int(math.floor(2.0 ** shift * (z_out - m * pixels * z_in) + (m * 2.0 ** shift - scale) * pixels * c
                          + 0.5))
    if not INT32_MIN <= bias <= INT32_MAX or abs(bias) + 128 * scale * pixels > INT32_MAX:
        raise XS3Error(f"global_avg_params: bias {bias} with scale {scale} over {pixels} pixels leaves int32")
    return bias, scale, shift


def _mean_range(s_in: float, z_in: int, s_out: float, z_out: int) -> tuple[float, float]:
    """(centre, half width) of the input means whose exact output lies in [-128.5, 127.5]."""
    r = float(s_in) / float(s_out)
    lo = max(-128.0, z_in + (-128.5 - z_out) / r)
    hi = min(127.0, z_in + (127.5 - z_out) / r)
    if lo > hi:  # every mean clamps to one end: any centre will do
        lo = hi = min(max(z_in + (-0.5 - z_out) / r, -128.0), 127.0)
    return (lo + hi) / 2, (hi - lo) / 2


def global_avg_error_bound(bias: int, scale: int, shift: int, s_in: float, z_in: int, s_out: float, z_out: int,
                           pixels: int) -> float:
    """Largest distance (output codes, before rounding) between the kernel's ``(bias + scale sum) / 2**shift``
    and the exact ``z_out + (mean - z_in) s_in / s_out`` over the means whose exact output is not clamped."""
    m = float(s_in) / (float(s_out) * pixels)
    c, half = _mean_range(s_in, z_in, s_out, z_out)
    at_c = (bias + scale * pixels * c) / 2.0 ** shift - (z_out + (c - z_in) * m * pixels)
    return abs(at_c) + abs(scale / 2.0 ** shift - m) * pixels * half


def maxpool2d(x: np.ndarray, window: Window, out_hw: tuple[int, int]) -> np.ndarray:
    """lib_nn ``maxpool2d`` (maxpool2d.c ``maxpool2d_ext_ref``): each window's maximum -> int8.

    ``x``: ``[H, W, C]`` or ``[1, H, W, C]`` int8, C a multiple of 4, every
    window inside the image (lib_nn asserts both). Output ``[Y_h, Y_w, C]``
    (or ``[1, Y_h, Y_w, C]``).
    """
    xi, batched = as_hwc(x)
    _check_windows("maxpool2d", xi.shape, window, out_hw)
    y = np.full((*out_hw, xi.shape[2]), -128, np.int8)
    for tap in _taps(xi, window, out_hw):
        np.maximum(y, tap, out=y)
    return y[None] if batched else y
