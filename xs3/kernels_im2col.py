"""lib_nn's conv2d_im2col (``src/c/conv2d_im2col.c``, ``nn_conv2d_int8.h``): a dense convolution of any X_c.

For each output pixel the C copies the window into a scratch column ``COL``
(``K_h * K_w * X_c`` bytes in the natural tap order: window rows top to
bottom, each row's taps left to right, each tap's ``X_c`` channels; padding
taps hold the zero point, in place), zeroed up to a multiple of 32 bytes, and
multiplies it with each output channel's kernel row:

- accumulation: from the bias, one ``VLMACCR`` step per 32-byte chunk of the
  whole column (``ceil(K_h * K_w * X_c / 32)`` steps, the last one shorter),
  saturating after each step; the chunks run across tap and row boundaries
  and padded taps are not reordered (unlike conv2d_deep, :mod:`.order`);
- kernel layout (:func:`im2col_weights`): ``K[Y_c, R]``, each output
  channel's ``K_h * K_w * X_c`` weights in the column's order, zero-padded to
  ``R = ceil(K_h * K_w * X_c / 4) * 4`` (``kernel_row_elements``, the row
  stride of K in the C; not to a multiple of 32). The last step of a channel
  reads the bytes after its row (the next channel's weights, or up to 28
  bytes past the tensor for the last one); the zeroed tail of ``COL``
  multiplies them, so neither they nor the padding bytes of a row count;
- output stage: the BSO stage of conv2d_deep up to ``VLSAT(shift2)``. The
  default build's clamp then differs from conv2d_deep's: the C computes the
  ``VDEPTH1`` "below -127" mask but never uses it (``mask`` is commented
  out) and stores the ``VLASHR(-8)`` + ``VDEPTH8`` result, whose symmetric
  8-bit saturation turns every value below -127 into -127. Both builds
  (``CONFIG_SYMMETRIC_SATURATION_conv2d_im2col`` 0 or 1) therefore clamp to
  ``[-127, 127]``, and ``options.symmetric_output`` changes nothing.

Constraints (what the C asserts, or needs to be right):

- any ``X_c >= 1`` (``memcpy`` of whole taps, no alignment needed);
- ``Y_c`` a multiple of 4: ``VSTRPV`` asserts a word-aligned output address,
  and pixel ``p`` is stored at ``p * Y_c``; with a single output pixel any
  ``Y_c`` works (a tail group of ``Y_c % 16`` channels is fine either way);
- no window wholly in padding (the project's rule for lib_nn's convolutions,
  :meth:`Window.check_overlap`): the C pads such a window correctly on the
  top and left, but beyond the bottom / right edge its unsigned
  ``K_h - pad_b <= h`` test wraps and it reads memory outside the image.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_conv import _bias, _check_image, _finish
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions, chunked_steps, vlmaccr
from hexnn_import.xs3.window import Window, patches


def kernel_row_elements(k_h: int, k_w: int, x_c: int) -> int:
    """The C's ``kernel_row_elements``: ``K_h * K_w * X_c`` rounded up to a multiple of 4 (K's row stride)."""
    return -(-(k_h * k_w * x_c) // 4) * 4


def im2col_weights(ohwi: np.ndarray) -> np.ndarray:
    """conv2d_im2col layout: ``[Y_c, R]``, each channel's ``[K_h, K_w, X_c]`` weights flattened, zero-padded to
    ``R = kernel_row_elements`` (a multiple of 4)."""
    if ohwi.ndim != 4:
        raise XS3Error(f"conv2d_im2col: weights must be [O, H, W, I], got {list(ohwi.shape)}")
    o, kh, kw, c = ohwi.shape
    n = kh * kw * c
    out = np.zeros((o, kernel_row_elements(kh, kw, c)), dtype=np.int8)
    out[:, :n] = np.asarray(ohwi, dtype=np.int8).reshape(o, n)
    return out


def conv2d_im2col(x: np.ndarray, k: np.ndarray, bso: np.ndarray, zero_point: int, win: Window,
                  out_hw: tuple[int, int], options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """conv2d_im2col: ``Y[B, Y_h, Y_w, Y_c]`` int8 from ``X[B, X_h, X_w, X_c]`` and ``K[Y_c, R]`` (module doc).

    Each image of the batch is one call of the C. ``options`` is accepted as
    for the other kernels; the C clamps to ``[-127, 127]`` in either build.
    """
    if x.ndim != 4:
        raise XS3Error(f"conv2d_im2col: input must be int8 [B, H, W, C], got {x.dtype} {list(x.shape)}")
    x_c = x.shape[3]
    _check_image("conv2d_im2col", x, x_c)
    if k.dtype != np.int8 or k.ndim != 2:
        raise XS3Error(f"conv2d_im2col: kernel must be int8 [Y_c, R], got {k.dtype} {list(k.shape)}")
    y_c, row = k.shape
    n = win.k_h * win.k_w * x_c
    if x_c < 1 or y_c < 1 or n < 1:
        raise XS3Error(f"conv2d_im2col: empty kernel (X_c = {x_c}, Y_c = {y_c}, window {win.k_h}x{win.k_w})")
    if row != kernel_row_elements(win.k_h, win.k_w, x_c):
        raise XS3Error(f"conv2d_im2col: kernel rows hold {row} bytes; a {win.k_h}x{win.k_w} window of {x_c} "
                       f"channels needs {kernel_row_elements(win.k_h, win.k_w, x_c)} (K_h*K_w*X_c rounded up to 4)")
    if y_c % 4 and out_hw[0] * out_hw[1] > 1:
        raise XS3Error(f"conv2d_im2col: Y_c = {y_c} must be a multiple of 4 (word-aligned output pixels) "
                       f"unless the output is a single pixel")
    win.check_overlap(x.shape[1:3], out_hw)
    cols = patches(x, win, out_hw, zero_point).reshape(-1, n)  # COL: the window in natural order
    acc = vlmaccr(_bias(bso, y_c), cols, k[:, :n].T, chunked_steps([n]))
    sym = dataclasses.replace(options, symmetric_output=True)  # the C's clamp in both builds (module doc)
    return _finish(acc, bso, (x.shape[0], *out_hw, y_c), sym)
