"""The HVX / assembly path of the flat Supernode_8x8p32to8 / p8to8 (op_supernode.c ``supernode_execute_hvx``,
outputs of 4 rows and more; :mod:`.supernode_flat_device` has the rest).

What the device computes there (nnlib df7ad3c, compiled for Hexagon v66 with its assembly):

* the products: ``im2col_full`` (C; filter values not a multiple of 16, SAME_CAFFE), ``fast_im2col_co`` (C with
  ``vmemset_asm`` / ``vmemcpy_asm``) or the input itself (VALID, 1x1), then ``gvconvsum2dbbb_asm`` /
  ``gvconv2dbbb_asm`` (``vrmpy`` byte products, the data and weight sums of ``gvmsumb_asm`` folding the zero
  codes in): ``sum((x - in_zero) * (w - w_zero))`` in uint32 lanes, the windows placed as
  :func:`~.supernode_flat_device.ref_geometry` places them; ``maxsum`` is the largest sum (not below 0);
* per channel ``biasbuf = (int)(fmaf(bias - bias_zero, bias_level / out_level, -min / out_level) + 0.5f)``
  (clang contracts the product and the first sum into one ``sffma``), ``recip = 0x00ff0000 / (int)round((max -
  min) / out_level)``; a code is the high half of ``0x8000 + (sum + biasbuf) * (recip & 0xffff)`` (``vmpyie``
  takes the reciprocal's low unsigned half; words wrap), saturated to 0..255 (``vpack(...):sat``);
* an automatic max doubles (and an automatic min follows it, ``min = -max``) while ``(maxsum + bias_adder) *
  out_level`` exceeds ``max - min``, ``bias_adder = ceil((bias_max - min) / out_level)``; the node runs again.
  The quint8 bias is refused beyond ``2**30`` product levels ("bias magnitude too large").

Where the filter values are a multiple of 16, the assembly reads rows laid out by the input width and steps
them by the width's stride (:func:`row_sums`: a SAME window past a row's end reads the next row's first pixels,
a stride height other than the width reads other rows than the node's), as the engine does. Refused (bytes the
device reads are not the node's): windows reaching past the input or the last row ``fast_im2col_co`` writes, an
input depth not a multiple of 16 when the filter values are (rows read as if 16-padded), and the 299x299x3
``im2col33322_hvx`` stem.
"""
from __future__ import annotations

import math

import numpy as np
from hexnn_import.ops.conv_core import ConvGeometry
from hexnn_import.ops.kernels.supernode_flat_common import (
    MAX_DOUBLINGS,
    RECIP_NUM,
    bad_depth,
    conv_sums,
    level,
    quantize_uint,
    wrap32,
)
from hexnn_import.ops.nnlib_f32 import fmaf, trunc_i32
from hexnn_import.ops.registry import PAD_VALID, KernelContext

F = np.float32


def check_layout(ctx: KernelContext, x_shape: tuple[int, ...], w_shape: tuple[int, ...], g: ConvGeometry) -> None:
    """Refuse the layouts whose device reads the module doc names (one line naming the reason)."""
    _, h, wid, din = x_shape
    fh, fw = w_shape[0], w_shape[1]
    k = fh * fw * din
    if (k + 15) // 16 == 2 and g.stride_w == 2 and din == 3 and ctx.padding == PAD_VALID and (h, wid, fh, fw) == (299, 299, 3, 3):
        raise ctx.fail("the 299x299x3 3x3 stride-2 stem runs op_supernode.c's im2col33322_hvx, not followed here")
    if bad_depth(fh, fw, din, ctx.padding):
        return
    if din % 16:
        raise ctx.fail(f"input depth {din} is not a multiple of 16 while the {k} filter values are: "
                       "op_supernode.c reads the rows as if 16-padded")


def row_sums(ctx: KernelContext, x: np.ndarray, w: np.ndarray, zeros: tuple[int, int], g: ConvGeometry,
             im2col: bool) -> np.ndarray:
    """The sums over the rows the assembly reads (filter values and depth multiples of 16): the input itself
    (VALID, 1x1: ``im2col`` False) or ``fast_im2col_co``'s rows - each input row from ``-pad_top`` to ``height +
    pad_top`` (no further than ``stride_w`` rows per output row up to ``out_h + filt_h - 1``) as ``pad_left``
    pixels of the input zero then the row (all zero outside the input), one after another. Output row ``r``,
    column ``c`` reads, per tap row ``fy``, the ``filt_w * depth`` bytes from row ``r * stride_w + fy``, pixel ``c
    * stride_w``: a window past a row's end reads the next row's first pixels, and the rows are stepped by the
    width's stride whatever the height's (the output height is the height stride's). Refused when it reads past
    the last row there (bytes the device never set, or past the input)."""
    b, h, wid, din = x.shape
    fh, fw, _, dout = w.shape
    in_off, f_off = zeros
    s, left, top = g.stride_w, g.pad_left, g.pad_top
    rows = h + 2 * top + 1
    buf = np.zeros((b, rows, left + wid, din))
    np.subtract(x, float(in_off), out=buf[:, top:top + h, left:])
    wp = (left + wid) * din
    start = ((np.arange(g.out_h) * s)[:, None, None] + np.arange(fh)[None, None, :]) * wp \
        + (np.arange(g.out_w) * s * din)[None, :, None]
    idx = start[..., None] + np.arange(fw * din)
    written = min(rows, (g.out_h + fh) * s) if im2col else h   # stride rows per output row up to out_h + fh - 1
    if idx.size and int(idx.max()) >= written * wp:
        where = "the rows op_supernode.c's fast_im2col_co writes" if im2col else "the input"
        steps = "; the assembly steps rows by the width's stride" if g.stride_h != s else ""
        raise ctx.fail(f"{fh}x{fw} windows at stride {g.stride_h}x{s} read past {where} (bytes that are not the "
                       f"node's{steps})")
    cols = buf.reshape(b, rows * wp)[:, idx].reshape(b * g.out_h * g.out_w, fh * fw * din)
    wm = w.astype(np.float64).reshape(fh * fw * din, dout) - f_off
    return wrap32(np.matmul(cols, wm).astype(np.int64)).reshape(b, g.out_h, g.out_w, dout)


def device_sums(ctx: KernelContext, x: np.ndarray, w: np.ndarray, zeros: tuple[int, int], g: ConvGeometry
                ) -> np.ndarray:
    """The product sums the device's path computes (module doc)."""
    check_layout(ctx, x.shape, w.shape, g)
    fh, fw, din, _ = w.shape
    if bad_depth(fh, fw, din, ctx.padding):
        return conv_sums(x, w, *zeros, g)
    return row_sums(ctx, x, w, zeros, g, not (ctx.padding == PAD_VALID or (fh == 1 and fw == 1)))


def chop(v: float) -> int:
    """C ``(int)`` of a double on Hexagon (``convert_df2w:chop``): toward 0, saturated to int32; NaN as -1."""
    if math.isnan(v):
        return -1
    return int(min(max(math.trunc(v) if math.isfinite(v) else v, -2 ** 31), 2 ** 31 - 1))


def _constants(ctx: KernelContext, bias: np.ndarray, bias32: bool, e: list, lvl: F, r: list
               ) -> tuple[np.ndarray, int, int]:
    """``(biasbuf, recip, bias_adder)`` for the node's current range ``r``."""
    bmn, bmx = e[4], e[5]
    amt = F(level(ctx, bmn, bmx, F(2.0 ** 32) if bias32 else F(255), "bias") / lvl)
    off = F(F(-r[0]) / lvl)
    adder = chop(math.ceil(v) if math.isfinite(v := float(F(F(bmx - r[0]) / lvl))) else v)
    b = bias.astype(np.int64)
    if not bias32:
        if bmx > F(F(2.0 ** 30) * lvl) or bmn < F(F(-2.0 ** 30) * lvl):
            raise ctx.fail(f"bias range [{bmn}, {bmx}] exceeds 2**30 product levels of {lvl}: op_supernode.c "
                           "refuses it (\"bias magnitude too large\")")
        b = b - quantize_uint(0.0, bmn, bmx)
    biasbuf = trunc_i32(fmaf(b.astype(F), np.full(b.shape, amt, F), np.full(b.shape, off, F)) + F(0.5))
    span = float(F(F(r[1] - r[0]) / lvl))   # round(): half away from zero
    maxsum = chop(math.copysign(math.floor(abs(span) + 0.5), span) if math.isfinite(span) else span)
    if maxsum == 0:
        raise ctx.fail(f"output range [{r[0]}, {r[1]}] is below one product level {lvl}: the device divides by 0")
    return biasbuf, (RECIP_NUM // (maxsum % 2 ** 32)) % 2 ** 32, adder


def execute_hvx(ctx: KernelContext, x: np.ndarray, w: np.ndarray, bias: np.ndarray, bias32: bool, e: list, lvl: F,
                zeros: tuple[int, int], g: ConvGeometry, r: list) -> np.ndarray:
    """The codes of ``supernode_execute_hvx``'s own path (module doc); the node's range ``r`` settles in place."""
    sums = device_sums(ctx, x, w, zeros, g)
    maxsum = max(0, int(sums.max(initial=0)))
    for _ in range(MAX_DOUBLINGS):
        biasbuf, recip, adder = _constants(ctx, bias, bias32, e, lvl, r)
        need = F(F(int(wrap32(maxsum + adder))) * lvl)
        if r[3] or not need > F(r[1] - r[0]):
            y = wrap32((wrap32(sums + biasbuf) * (recip & 0xFFFF) + 0x8000) % 2 ** 32) >> 16
            return np.clip(y, 0, 255).astype(np.uint8)
        for _ in range(MAX_DOUBLINGS):
            if not F(r[1] - r[0]) < need:
                break
            r[1] = F(r[1] * F(2))
            if not r[2]:
                r[0] = F(-r[1])
        else:
            break
    raise ctx.fail(f"output range [{r[0]}, {r[1]}] never settles: the device's retries would not end")
