"""Exact 8x8-bit products shared by the convolution family (SEMANTICS.md §3).

Every kernel that convolves quint8 data with quint8 weights (the 8x8to32
convolution, the matrix multiply, the supernodes) needs the same thing: the
exact integer ``sum((x - x_zero) * (w - w_zero))`` per output element. It is
computed here once, in two steps:

1. **im2col without pixel loops**: the input minus its zero point is written
   into a zero-bordered float64 array (so padded taps hold ``x_zero`` and
   contribute exactly 0), and ``sliding_window_view`` turns it into a strided
   view of every window; one reshape gives the ``[pixels, fh*fw*din]`` matrix.
2. **one float64 BLAS matmul** against the ``[fh*fw*din, dout]`` weights.
   Every factor is an integer in -255..255 and every partial sum stays far
   below 2**53, so the float64 result is the exact integer sum
   (:func:`check_exact` refuses reductions long enough to break this).

Measured on the 2-core development machine (1x112x112x32 input, 64 3x3
filters, SAME, stride 1, best of 7): padding + im2col + one matmul ~8-9 ms
(im2col copy ~1.6 ms, matmul ~6.5 ms); a loop of nine per-tap matmuls is no
faster (~9 ms), so the loop-free form is kept. A whole Supernode on that
layer takes ~12 ms (median), ~14 ms with a fresh auto range.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from hexnn_import.ops.kernel_io import require_4d, shape4, u8_codes
from hexnn_import.ops.padding import out_and_pad
from hexnn_import.ops.registry import KernelContext

#: Largest |(x - x_zero) * (w - w_zero)| of one tap.
_MAX_TAP = 255 * 255
#: float64 represents every integer below this exactly.
_EXACT_LIMIT = 2 ** 53


def u8_tensor(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """A 4-D quint8 tensor as uint8 codes (error naming node/op otherwise)."""
    return u8_codes(ctx, require_4d(ctx, arr, what), what)


def read_stride(ctx: KernelContext, stride: np.ndarray) -> tuple[int, int]:
    """``(stride_h, stride_w)`` from a stride *shape* tensor ``[1, sh, sw, 1]``.

    Only the shape is read (hexagon_nn convention); its data is ignored.
    """
    _, sh, sw, _ = shape4(ctx, stride, "stride")
    if sh < 1 or sw < 1:
        raise ctx.fail(f"stride {sh}x{sw} must be >= 1 in both dimensions")
    return sh, sw


def check_exact(ctx: KernelContext, k: int) -> None:
    """Refuse a reduction of ``k`` taps whose float64 sum could lose exactness."""
    if k * _MAX_TAP >= _EXACT_LIMIT:
        raise ctx.fail(f"reduction over {k} taps is too long to be summed exactly")


@dataclass(frozen=True)
class ConvGeometry:
    """Output size and padding of one 2-D convolution (SEMANTICS §3)."""

    out_h: int
    out_w: int
    pad_top: int
    pad_bottom: int
    pad_left: int
    pad_right: int
    stride_h: int
    stride_w: int


def conv_geometry(ctx: KernelContext, in_shape: tuple[int, ...], filt_shape: tuple[int, ...],
                  stride_h: int, stride_w: int) -> ConvGeometry:
    """Output size and padding for ``ctx.padding`` (SAME / VALID / SAME_CAFFE; NA is an error)."""
    _, h, w, _ = in_shape
    fh, fw = filt_shape[0], filt_shape[1]
    oh, top, bottom = out_and_pad(ctx, h, fh, stride_h)
    ow, left, right = out_and_pad(ctx, w, fw, stride_w)
    return ConvGeometry(oh, ow, top, bottom, left, right, stride_h, stride_w)


def centered_padded(x: np.ndarray, x_zero: int, g: ConvGeometry) -> np.ndarray:
    """``x - x_zero`` as float64, surrounded by the padding of ``g`` filled with 0.

    A padded tap holds ``x_zero``, so after subtracting the zero point it is
    exactly 0 and adds nothing to the sum.
    """
    b, h, w, d = x.shape
    out = np.zeros((b, g.pad_top + h + g.pad_bottom, g.pad_left + w + g.pad_right, d), dtype=np.float64)
    np.subtract(x, float(x_zero), out=out[:, g.pad_top:g.pad_top + h, g.pad_left:g.pad_left + w, :],
                dtype=np.float64)
    return out


def im2col(xc: np.ndarray, fh: int, fw: int, g: ConvGeometry) -> np.ndarray:
    """``[b*out_h*out_w, fh*fw*d]`` matrix of the windows of the padded input ``xc``.

    The column order (tap row, tap column, input channel) matches an HWIO
    filter reshaped to ``[fh*fw*din, dout]``.
    """
    b, _, _, d = xc.shape
    win = sliding_window_view(xc, (fh, fw), axis=(1, 2))          # [b, H', W', d, fh, fw]
    win = win[:, : (g.out_h - 1) * g.stride_h + 1: g.stride_h, : (g.out_w - 1) * g.stride_w + 1: g.stride_w]
    return win.transpose(0, 1, 2, 4, 5, 3).reshape(b * g.out_h * g.out_w, fh * fw * d)


def centered_weights(w: np.ndarray, w_zero: int) -> np.ndarray:
    """``w - w_zero`` of an HWIO filter as a float64 ``[fh*fw*din, dout]`` matrix."""
    fh, fw, din, dout = w.shape
    return (w.astype(np.float64) - float(w_zero)).reshape(fh * fw * din, dout)


def exact_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float64 matmul of integer-valued matrices, returned as int64 (exact, see module doc)."""
    return np.matmul(a, b).astype(np.int64)


def conv_sum(ctx: KernelContext, x: np.ndarray, x_zero: int, w: np.ndarray, w_zero: int,
             stride_h: int, stride_w: int) -> np.ndarray:
    """Exact ``sum((x - x_zero) * (w - w_zero))`` of a 2-D convolution, int64 ``[b,oh,ow,dout]``.

    ``x`` is quint8 ``[b,h,w,din]``, ``w`` quint8 HWIO ``[fh,fw,din,dout]``;
    padding follows ``ctx.padding`` (SEMANTICS §3).
    """
    if w.ndim != 4:
        raise ctx.fail(f"filter has shape {list(w.shape)}, expected 4-D [fh,fw,din,dout]")
    fh, fw, din, dout = w.shape
    if din != x.shape[3]:
        raise ctx.fail(f"filter depth {din} (filter shape {list(w.shape)}) does not match "
                       f"input depth {x.shape[3]} (input shape {list(x.shape)})")
    if min(fh, fw, din, dout) < 1:
        raise ctx.fail(f"filter shape {list(w.shape)} has an empty dimension")
    check_exact(ctx, fh * fw * din)
    g = conv_geometry(ctx, x.shape, w.shape, stride_h, stride_w)
    cols = im2col(centered_padded(x, x_zero, g), fh, fw, g)
    sums = exact_product(cols, centered_weights(w, w_zero))
    return sums.reshape(x.shape[0], g.out_h, g.out_w, dout)
