"""Exact product sums of dilated, grouped and transposed convolutions (SEMANTICS.md §3).

Built on :mod:`hexnn_import.ops.conv_core` (zero-point-centred, zero-bordered
float64 input; exact float64 BLAS products of integer-valued matrices):

- **dilated / grouped**: im2col over a window of ``(f - 1) * d + 1`` rows
  and columns, keeping every ``d``-th tap; padding from ``ctx.padding``
  with the dilated window size (``padding.out_and_pad``). With ``groups``
  the filter is ``[fh, fw, din / groups, dout]`` and output channels
  ``[g * dout/groups, (g+1) * dout/groups)`` see only input channels
  ``[g * din/groups, (g+1) * din/groups)`` (one matmul per group).
- **transposed** (the scatter form of TF ``conv2d_transpose`` / TFLite
  ``TRANSPOSE_CONV``): weights ``[O, fh, fw, I]``, and input pixel
  ``(y, x)`` adds ``x[y, x, c] * w[o, i, j, c]`` to full-output pixel
  ``(y * sh + i, x * sw + j)``; the full output ``(h - 1) * sh + fh`` by
  ``(w - 1) * sw + fw`` is then cropped by the explicit pads
  ``[top, bottom, left, right]``. With ``groups`` the weights are
  ``[O / groups, fh, fw, I]``: input channel ``c`` of group
  ``g = c // (I / groups)`` feeds output channels ``g * O/groups + o``.
  One matmul per group gives every (pixel, tap, output channel) product;
  a loop over the taps adds them into the strided full output.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from hexnn_import.ops.conv_core import ConvGeometry, centered_padded, check_exact
from hexnn_import.ops.padding import out_and_pad
from hexnn_import.ops.registry import KernelContext


def read_groups(ctx: KernelContext, arr: np.ndarray | None, din: int, dout: int | None) -> int:
    """The group count (1 when absent); it must be >= 1 and divide the input depth and ``dout``.

    ``dout`` is None where the output depth is a multiple of the groups by
    construction (transposed convolution: ``O / groups`` filters per group).
    """
    if arr is None:
        return 1
    groups = ctx.int_scalar(arr, "groups")
    if groups < 1:
        raise ctx.fail(f"groups is {groups}, must be >= 1")
    if din % groups:
        raise ctx.fail(f"groups {groups} must divide the input depth {din}")
    if dout is not None and dout % groups:
        raise ctx.fail(f"groups {groups} must divide the output depth {dout}")
    return groups


def read_dilation(ctx: KernelContext, arr: np.ndarray) -> tuple[int, int]:
    """``(dilation_h, dilation_w)`` from the two values of the dilation tensor (each >= 1)."""
    d = np.asarray(arr).reshape(-1)
    if d.size != 2 or d.dtype.kind not in "iu":
        raise ctx.fail(f"dilation has shape {list(np.shape(arr))} and dtype {d.dtype}, "
                       "expected two integers [1,1,1,2] {h, w}")
    dh, dw = int(d[0]), int(d[1])
    if dh < 1 or dw < 1:
        raise ctx.fail(f"dilation {dh}x{dw} must be >= 1 in both dimensions")
    return dh, dw


def read_pads(ctx: KernelContext, arr: np.ndarray) -> tuple[int, int, int, int]:
    """``(top, bottom, left, right)`` from the explicit pad tensor (four integers, each >= 0)."""
    p = np.asarray(arr).reshape(-1)
    if p.size != 4 or p.dtype.kind not in "iu":
        raise ctx.fail(f"explicit pad has shape {list(np.shape(arr))} and dtype {p.dtype}, "
                       "expected four integers [pad_top, pad_bottom, pad_left, pad_right]")
    pads = tuple(int(v) for v in p)
    if min(pads) < 0:
        raise ctx.fail(f"explicit pad {list(pads)} has a negative entry")
    return pads  # type: ignore[return-value]


def dilated_grouped_sum(ctx: KernelContext, x: np.ndarray, x_zero: int, w: np.ndarray, w_zero: int,
                        stride: tuple[int, int], dilation: tuple[int, int], groups: int) -> np.ndarray:
    """Exact sums of a dilated and/or grouped convolution, int64 ``[b, oh, ow, dout]``.

    ``w`` is ``[fh, fw, din / groups, dout]``; padding per ``ctx.padding``.
    """
    if w.ndim != 4 or min(w.shape) < 1:
        raise ctx.fail(f"filter has shape {list(w.shape)}, expected 4-D [fh,fw,din/groups,dout] with no empty dim")
    fh, fw, dg, dout = w.shape
    din = x.shape[3]
    if dg * groups != din:
        raise ctx.fail(f"filter depth {dg} (filter shape {list(w.shape)}) times groups {groups} does not "
                       f"match input depth {din} (input shape {list(x.shape)})")
    if dout % groups:
        raise ctx.fail(f"output depth {dout} is not divisible by groups {groups}")
    check_exact(ctx, fh * fw * dg)
    (sh, sw), (dh, dw) = stride, dilation
    oh, top, bottom = out_and_pad(ctx, x.shape[1], fh, sh, dh)
    ow, left, right = out_and_pad(ctx, x.shape[2], fw, sw, dw)
    g = ConvGeometry(oh, ow, top, bottom, left, right, sh, sw)
    xc = centered_padded(x, x_zero, g)
    win = sliding_window_view(xc, ((fh - 1) * dh + 1, (fw - 1) * dw + 1), axis=(1, 2))
    win = win[:, :(oh - 1) * sh + 1:sh, :(ow - 1) * sw + 1:sw, :, ::dh, ::dw]   # [b, oh, ow, din, fh, fw]
    b = x.shape[0]
    og = dout // groups
    wc = w.astype(np.float64) - float(w_zero)
    out = np.empty((b * oh * ow, dout), dtype=np.float64)
    for gi in range(groups):
        cols = win[:, :, :, gi * dg:(gi + 1) * dg].transpose(0, 1, 2, 4, 5, 3).reshape(b * oh * ow, fh * fw * dg)
        out[:, gi * og:(gi + 1) * og] = cols @ wc[..., gi * og:(gi + 1) * og].reshape(fh * fw * dg, og)
    return out.reshape(b, oh, ow, dout).astype(np.int64)


def transpose_out_size(ctx: KernelContext, size: int, f: int, stride: int, before: int, after: int) -> int:
    """``(size - 1) * stride + f - before - after``; error when it is below 1."""
    out = (size - 1) * stride + f - before - after
    if out < 1:
        raise ctx.fail(f"transposed convolution output size {out} = ({size} - 1) * {stride} + {f} - {before} "
                       f"- {after} is not positive")
    return out


def transpose_sum(ctx: KernelContext, x: np.ndarray, x_zero: int, w: np.ndarray, w_zero: int,
                  pads: tuple[int, int, int, int], stride: tuple[int, int], groups: int) -> np.ndarray:
    """Exact sums of a transposed convolution, int64 ``[b, oh, ow, O]`` (module doc for the layout)."""
    if w.ndim != 4 or min(w.shape) < 1:
        raise ctx.fail(f"weights have shape {list(w.shape)}, expected 4-D [O,H,W,I] with no empty dim")
    og, fh, fw, wi = w.shape
    b, h, wd, din = x.shape
    if wi != din:
        raise ctx.fail(f"weights depth {wi} (weights shape {list(w.shape)}, [O,H,W,I]) does not match "
                       f"input depth {din} (input shape {list(x.shape)})")
    dg = din // groups
    check_exact(ctx, fh * fw * dg)
    (sh, sw), (top, bottom, left, right) = stride, pads
    oh = transpose_out_size(ctx, h, fh, sh, top, bottom)
    ow = transpose_out_size(ctx, wd, fw, sw, left, right)
    full = np.zeros((b, (h - 1) * sh + fh, (wd - 1) * sw + fw, og * groups), dtype=np.float64)
    xc = (x.astype(np.float64) - float(x_zero)).reshape(b * h * wd, din)
    wc = w.astype(np.float64) - float(w_zero)
    for gi in range(groups):
        wg = wc[..., gi * dg:(gi + 1) * dg].transpose(3, 1, 2, 0).reshape(dg, fh * fw * og)
        prods = (xc[:, gi * dg:(gi + 1) * dg] @ wg).reshape(b, h, wd, fh, fw, og)
        for i in range(fh):
            for j in range(fw):
                full[:, i:i + (h - 1) * sh + 1:sh, j:j + (wd - 1) * sw + 1:sw, gi * og:(gi + 1) * og] += \
                    prods[:, :, :, i, j, :]
    return full[:, top:top + oh, left:left + ow].astype(np.int64)
