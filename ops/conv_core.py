"""Exact 8x8-bit products shared by the convolution family (SEMANTICS.md §3).

Every kernel that convolves quint8 data with quint8 weights (the 8x8to32
convolution, the matrix multiply, the supernodes) needs the same thing: the
exact integer ``sum((x - x_zero) * (w - w_zero))`` per output element. It is
computed here once, in two steps:

1. **im2col without pixel loops**: the input minus its zero point is written
   into a zero-bordered float array (so padded taps hold ``x_zero`` and
   contribute exactly 0); a strided view of every window is copied into the
   ``[pixels, fh*fw*din]`` matrix one tap row (a contiguous run of
   ``fw*din`` values) at a time. A 1x1 filter needs no im2col: the (strided)
   input is the matrix.
2. **one BLAS matmul** against the ``[fh*fw*din, dout]`` weights. Every
   factor is an integer in -255..255, so every partial sum - in whatever
   order BLAS adds - is an integer no larger than the per-channel bound
   ``max|x - x_zero| * sum|w - w_zero|``. Below 2**24 float32 holds all of
   them exactly (the usual case: twice as fast as float64); otherwise
   float64 does, below 2**53 (:func:`check_exact` refuses reductions long
   enough to break that).

:class:`ConvPlan` keeps what depends only on the weights and zero points
(the centred weight matrix in its float type, the bound), built once per
node by the kernels (:mod:`hexnn_import.ops.node_cache`).

Measured on the 2-core development machine (1x112x112x32 input, 64 3x3
filters, SAME, stride 1, best of 7), before the float32 path and the
block-copy im2col: padding + im2col + one float64 matmul ~8-9 ms (im2col copy
~1.6 ms, matmul ~6.5 ms); a loop of nine per-tap matmuls was no faster
(~9 ms), so the loop-free form is kept.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from hexnn_import.ops.kernel_io import require_4d, shape4, u8_codes
from hexnn_import.ops.padding import out_and_pad
from hexnn_import.ops.registry import KernelContext

#: Largest |(x - x_zero) * (w - w_zero)| of one tap.
_MAX_TAP = 255 * 255
#: float64 represents every integer below this exactly.
_EXACT_LIMIT = 2 ** 53
#: float32 represents every integer below this exactly.
_F32_EXACT = 2.0 ** 24
#: Largest im2col matrix built at once (elements); bigger ones are built in bands of output rows.
_IM2COL_ELEMS = 1 << 22


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


def centered_padded(x: np.ndarray, x_zero: int, g: ConvGeometry, dtype: type = np.float64) -> np.ndarray:
    """``x - x_zero`` as ``dtype`` (float64 by default), surrounded by the padding of ``g`` filled with 0.

    A padded tap holds ``x_zero``, so after subtracting the zero point it is
    exactly 0 and adds nothing to the sum. Only the border is zeroed (the
    interior is written once).
    """
    b, h, w, d = x.shape
    top, left = g.pad_top, g.pad_left
    out = np.empty((b, top + h + g.pad_bottom, left + w + g.pad_right, d), dtype=dtype)
    if top or g.pad_bottom or left or g.pad_right:
        out[:, :top] = 0
        out[:, top + h:] = 0
        out[:, top:top + h, :left] = 0
        out[:, top:top + h, left + w:] = 0
    np.subtract(x, dtype(x_zero), out=out[:, top:top + h, left:left + w, :], dtype=dtype)
    return out


def im2col(xc: np.ndarray, fh: int, fw: int, g: ConvGeometry) -> np.ndarray:
    """``[b*out_h*out_w, fh*fw*d]`` matrix of the windows of the padded input ``xc``.

    The column order (tap row, tap column, input channel) matches an HWIO
    filter reshaped to ``[fh*fw*din, dout]``.
    """
    b, _, _, d = xc.shape
    sb, sy, sx, sc = xc.strides
    if sc == xc.itemsize and sx == d * sc and min(xc.shape) > 0:
        # one tap row of a window, (fw, d), is a contiguous run of the input: copy it as one void
        # block per (pixel, tap row) instead of element by element (~2x faster)
        win = as_strided(xc, shape=(b, g.out_h, g.out_w, fh, fw * d),
                         strides=(sb, g.stride_h * sy, g.stride_w * sx, sy, sc), writeable=False)
        blk = np.dtype(f"V{fw * d * xc.itemsize}")
        out = np.empty((b * g.out_h * g.out_w, fh * fw * d), dtype=xc.dtype)
        out.view(blk).reshape(b, g.out_h, g.out_w, fh)[...] = win.view(blk)[..., 0]
        return out
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


def check_filter(ctx: KernelContext, x_shape: tuple[int, ...], w_shape: tuple[int, ...]) -> None:
    """A 4-D HWIO filter with no empty dimension whose depth matches the input's."""
    if len(w_shape) != 4:
        raise ctx.fail(f"filter has shape {list(w_shape)}, expected 4-D [fh,fw,din,dout]")
    fh, fw, din, dout = w_shape
    if din != x_shape[3]:
        raise ctx.fail(f"filter depth {din} (filter shape {list(w_shape)}) does not match "
                       f"input depth {x_shape[3]} (input shape {list(x_shape)})")
    if min(fh, fw, din, dout) < 1:
        raise ctx.fail(f"filter shape {list(w_shape)} has an empty dimension")


@dataclass(frozen=True)
class ConvPlan:
    """The per-node constants of one convolution's product sums (computed once, see :mod:`node_cache`).

    ``wmat`` is ``w - w_zero`` as a ``[fh*fw*din, dout]`` matrix in the
    narrowest float type that keeps every sum exact: ``bound[c]`` is the
    largest ``|sum|`` output channel ``c`` can reach (``max|x - x_zero| *
    sum|w - w_zero|``), which also bounds every partial sum of any order of
    summation. When all bounds are below 2**24 every partial sum is an
    integer float32 represents exactly, so a float32 BLAS product (any
    blocking, with or without FMA) gives the exact integers; otherwise
    float64 (exact below 2**53, :func:`check_exact`).
    """

    shape: tuple[int, int, int, int]
    x_zero: int
    wmat: np.ndarray
    bound: np.ndarray  # float64 [dout]
    #: the weights' zero point (``wmat + w_zero`` are the quint8 weights; the compiled path needs them)
    w_zero: int | None = None
    #: per-input-shape state of the compiled path (:mod:`hexnn_import.ops.compiled`)
    cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def dtype(self) -> type:
        """float32 or float64: the type of the product (and of the sums it returns)."""
        return self.wmat.dtype.type


def conv_plan(w: np.ndarray, w_zero: int, x_zero: int) -> ConvPlan:
    """Build the :class:`ConvPlan` of an HWIO quint8 filter for inputs with zero point ``x_zero``."""
    fh, fw, din, dout = w.shape
    wc = (w.astype(np.float64) - float(w_zero)).reshape(fh * fw * din, dout)
    bound = np.abs(wc).sum(axis=0) * float(max(x_zero, 255 - x_zero))
    dtype = np.float32 if bound.size == 0 or float(bound.max()) < _F32_EXACT else np.float64
    return ConvPlan((fh, fw, din, dout), int(x_zero), np.ascontiguousarray(wc, dtype=dtype), bound, int(w_zero))


def conv_sum_at(x: np.ndarray, plan: ConvPlan, g: ConvGeometry) -> np.ndarray:
    """Exact ``sum((x - x_zero) * (w - w_zero))`` as integer-valued floats ``[b,oh,ow,dout]`` (``plan.dtype``),
    the geometry already worked out (:func:`conv_geometry`; a node's replay, see node_cache).

    1x1 filters need no im2col (a strided view of the input is the matrix);
    larger filters build the im2col matrix in bands of output rows so that
    it never exceeds :data:`_IM2COL_ELEMS` elements.
    """
    fh, fw, din, dout = plan.shape
    stride_h, stride_w = g.stride_h, g.stride_w
    b = x.shape[0]
    dt = plan.dtype
    if fh == fw == 1 and not (g.pad_top or g.pad_bottom or g.pad_left or g.pad_right):
        xs = x if stride_h == stride_w == 1 else x[:, :(g.out_h - 1) * stride_h + 1:stride_h,
                                                   :(g.out_w - 1) * stride_w + 1:stride_w]
        cols = np.subtract(xs, dt(plan.x_zero), dtype=dt).reshape(-1, din)
        return np.matmul(cols, plan.wmat).reshape(b, g.out_h, g.out_w, dout)
    xc = centered_padded(x, plan.x_zero, g, dt)
    out = np.empty((b, g.out_h, g.out_w, dout), dtype=dt)
    band = max(1, min(g.out_h, _IM2COL_ELEMS // max(g.out_w * fh * fw * din, 1)))
    for bi in range(b):
        for r0 in range(0, g.out_h, band):
            r1 = min(g.out_h, r0 + band)
            rows = xc[bi:bi + 1, r0 * stride_h:(r1 - 1) * stride_h + fh]
            cols = im2col(rows, fh, fw, ConvGeometry(r1 - r0, g.out_w, 0, 0, 0, 0, stride_h, stride_w))
            np.matmul(cols, plan.wmat, out=out[bi, r0:r1].reshape(-1, dout))
    return out
