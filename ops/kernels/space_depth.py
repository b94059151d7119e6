"""SpaceToDepth_8, DepthToSpace_8, SpaceToBatchND_8, BatchToSpaceND_8 (op_depthspace.c, op_batchspace.c).

Pure data movement on flat quint8 tensors, with the C's parameter rules; the range is copied unchecked.
:func:`block_hw`, :func:`crop_hw`, :func:`hw_pairs` keep the op texts' rules for the float variants
(``float_movement_space``) and the d32 ones.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_values, non_negative
from hexnn_import.ops.kernel_io import require_4d, u8_codes
from hexnn_import.ops.movement_io import copied_range, int32_words, param_depth
from hexnn_import.ops.nnlib_f32 import quantize_uint8
from hexnn_import.ops.registry import Kernel, KernelContext, register


def block_hw(ctx: KernelContext, arr: np.ndarray, single_is_square: bool) -> tuple[int, int]:
    """``(blocksizeH, blocksizeW)`` from a block-size input of 1 or 2 values, each >= 1.

    One value means a square block for Space/DepthToSpace (``scalar int32,
    block size``) but ``blocksizeW = 1`` for Space/BatchToSpaceND ("If the
    block size has only one entry BlocksizeH, then BlockSizeW is taken as 1").
    """
    vals = int_values(ctx, arr, "block size", (1, 2))
    if min(vals) < 1:
        raise ctx.fail(f"block size {vals} must be >= 1")
    if len(vals) == 2:
        return vals[0], vals[1]
    return vals[0], (vals[0] if single_is_square else 1)


def crop_hw(ctx: KernelContext, y: np.ndarray, top: int, bottom: int, left: int, right: int) -> np.ndarray:
    """Crop rows/columns off a 4-D tensor; the crops must leave a non-empty result."""
    _, h, w, _ = y.shape
    if top + bottom >= h or left + right >= w:
        raise ctx.fail(f"crops top={top} bottom={bottom} left={left} right={right} leave no output "
                       f"of the {h}x{w} result")
    return y[:, top:h - bottom, left:w - right, :]


def hw_pairs(ctx: KernelContext, arr: np.ndarray, n_block: int, what: str) -> tuple[int, int, int, int]:
    """``(top, bottom, left, right)`` from a pads/crops input of ``2 * n_block`` values, each >= 0.

    With one block size the input is ``[top, bottom]`` (left = right = 0);
    with two it is ``[[top, bottom], [left, right]]`` (op texts of
    SpaceToBatchND_f / BatchToSpaceND_f).
    """
    vals = non_negative(ctx, int_values(ctx, arr, what, (2 * n_block,)), what)
    if n_block == 1:
        return vals[0], vals[1], 0, 0
    return vals[0], vals[1], vals[2], vals[3]


def block_c(ctx: KernelContext, arr: np.ndarray) -> tuple[int, int]:
    """op_depthspace.c ``get_blksiz_from_tensor``: ``[1,1,1,nd]``, nd = 1 or 2 values, bh = v[0], bw = v[nd-1]."""
    a = np.asarray(arr)
    nd = param_depth(a)
    vals = int32_words(ctx, a, "block size")
    if not 1 <= nd <= 2 or vals.size != nd or min(int(vals[0]), int(vals[-1])) < 1:
        raise ctx.fail(f"bad block size: block size {vals.tolist()} must be >= 1, 1 or 2 values (shape {list(a.shape)})")
    return int(vals[0]), int(vals[-1])


def batch_params(ctx: KernelContext, block: np.ndarray, pads: np.ndarray, what: str) -> tuple[int, int, list[int]]:
    """op_batchspace.c: ``(bh, bw, [top, bottom, left, right])`` from a ``[1,1,1,k]`` block (k = 1: bw = 1;
    k = 2) and a ``[1,1,k,2]`` pads/crops tensor. Block sizes below 1 are refused (the C divides by them)."""
    b, p = np.asarray(block), np.asarray(pads)
    k = param_depth(b)
    bv, pv = int32_words(ctx, b, "block size"), int32_words(ctx, p, what)
    if k >= 3:
        raise ctx.fail(f"don't support that many space dimensions ({k})")
    psh = (1,) * (4 - p.ndim) + tuple(p.shape) if p.ndim <= 4 else (0, 0, 0, 0)
    bsh = (1,) * (4 - b.ndim) + tuple(b.shape) if b.ndim <= 4 else (0, 0, 0, 0)
    if k < 1 or bsh[:3] != (1, 1, 1) or psh != (1, 1, k, 2):
        raise ctx.fail(f"bad stride / {what} shape: block {list(b.shape)}, {what} {list(p.shape)}")
    bh, bw = int(bv[0]), (int(bv[1]) if k == 2 else 1)
    if bh < 1 or bw < 1:
        raise ctx.fail(f"block size {bv.tolist()} must be >= 1")
    four = [int(v) for v in pv[:2]] + ([int(v) for v in pv[2:4]] if k == 2 else [0, 0])
    return bh, bw, four


@register("SpaceToDepth_8")
class SpaceToDepth8(Kernel):
    """Move ``bh x bw`` spatial blocks into depth: op_depthspace.c ``depthspace_s2d_execute``.

    ``[b,h,w,d] -> [b,h/bh,w/bw,bh*bw*d]``; output channel ``(dy*bw + dx)*d + c`` of pixel ``(y, x)`` is
    input pixel ``(y*bh + dy, x*bw + dx)`` channel ``c`` (the C's transpose ``[b*ho, bh, wo, bw*d] ->
    [b*ho, wo, bh, bw*d]``). Block: :func:`block_c`; h and w must be multiples of it. The range is copied
    unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, mn_arr, mx_arr = inputs
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        bh, bw = block_c(ctx, block)
        b, h, w, d = x.shape
        if h % bh or w % bw:
            raise ctx.fail(f"input height {h} and width {w} must be multiples of block {bh}x{bw}")
        y = x.reshape(b, h // bh, bh, w // bw, bw * d).transpose(0, 1, 3, 2, 4)
        return (np.ascontiguousarray(y.reshape(b, h // bh, w // bw, bh * bw * d)), *copied_range(ctx, mn_arr, mx_arr))


@register("DepthToSpace_8")
class DepthToSpace8(Kernel):
    """Move depth into ``bh x bw`` spatial blocks, then crop: op_depthspace.c ``depthspace_d2s_execute``.

    ``[b,h,w,bh*bw*d] -> [b,h*bh,w*bw,d]``. Block: :func:`block_c`; the depth must be a multiple of
    bh*bw. Optional input 4: a ``[1,1,1,4]`` tensor of crops ``[top, bottom, left, right]``, each >= 0,
    leaving a non-empty output. The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, mn_arr, mx_arr = inputs[:4]
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        bh, bw = block_c(ctx, block)
        b, h, w, d = x.shape
        if bh * bw > d or d % (bh * bw):
            raise ctx.fail(f"depth {d} must be a multiple of block {bh}x{bw} = {bh * bw}")
        do = d // (bh * bw)
        y = x.reshape(b, h, w, bh, bw * do).transpose(0, 1, 3, 2, 4).reshape(b, h * bh, w * bw, do)
        if len(inputs) > 4:
            c = np.asarray(inputs[4])
            crops = int32_words(ctx, c, "crops")
            if param_depth(c) != 4 or crops.size != 4:
                raise ctx.fail(f"bad crop_tensor shape {list(c.shape)}, expected [1,1,1,4]")
            if crops.min() < 0:
                raise ctx.fail(f"bad crop tensor {crops.tolist()}: negative")
            top, bottom, left, right = (int(v) for v in crops)
            if h * bh - top - bottom <= 0 or w * bw - left - right <= 0:
                raise ctx.fail(f"cropping {crops.tolist()} leaves no output of {h * bh}x{w * bw}")
            y = y[:, top:h * bh - bottom, left:w * bw - right, :]
        return (np.ascontiguousarray(y), *copied_range(ctx, mn_arr, mx_arr))


@register("SpaceToBatchND_8")
class SpaceToBatchND8(Kernel):
    """Pad h and w, then move ``bh x bw`` spatial phases into batches: op_batchspace.c ``batchspace_s2b_execute``.

    ``out[(dy*bw + dx)*b + n, y, x, c] = padded[n, y*bh + dy, x*bw + dx, c]``. Inputs: data, block
    (``[1,1,1,k]``, k = 1: bw = 1, or 2), paddings (``[1,1,k,2]``), min, max (:func:`batch_params`). The
    pad byte is ``quantize_uint8(0, min, max)`` (0 or 255 when the range excludes 0); negative pads crop,
    as the C's loops do. The padded h and w must be multiples of the block, and positive here (the C
    makes an empty tensor or fails). The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, pads, mn_arr, mx_arr = inputs
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        bh, bw, (top, bottom, left, right) = batch_params(ctx, block, pads, "paddings")
        b, h, w, d = x.shape
        hp, wp = h + top + bottom, w + left + right
        if hp % bh or wp % bw:
            raise ctx.fail(f"padded height {hp} and width {wp} must be divisible by block {bh}x{bw}")
        if hp <= 0 or wp <= 0:
            raise ctx.fail(f"padded height {hp} and width {wp} leave no output")
        mn, mx = copied_range(ctx, mn_arr, mx_arr)
        zero = int(quantize_uint8(0.0, mn.item(), mx.item()))
        rows, cols = np.arange(hp) - top, np.arange(wp) - left
        xp = np.full((b, hp, wp, d), zero, np.uint8)
        rk, ck = (rows >= 0) & (rows < h), (cols >= 0) & (cols < w)
        xp[:, np.flatnonzero(rk)[:, None], np.flatnonzero(ck)[None, :], :] = x[:, rows[rk][:, None], cols[ck][None, :], :]
        y = xp.reshape(b, hp // bh, bh, wp // bw, bw, d).transpose(2, 4, 0, 1, 3, 5)
        return (np.ascontiguousarray(y.reshape(bh * bw * b, hp // bh, wp // bw, d)), mn, mx)


@register("BatchToSpaceND_8")
class BatchToSpaceND8(Kernel):
    """Move batch phases back into ``bh x bw`` blocks, then crop: op_batchspace.c ``batchspace_b2s_execute``.

    ``out[n, y, x] = in[(((y+top) % bh)*bw + (x+left) % bw)*b_out + n, (y+top)//bh, (x+left)//bw]``.
    Inputs as SpaceToBatchND_8 with crops in place of pads (:func:`batch_params`). Batches must be a
    multiple of bh*bw. Negative crops (the C reads outside its input) and crops larger than the result are
    refused; crops leaving exactly nothing give an empty tensor, as in the C. The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, crops, mn_arr, mx_arr = inputs
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        bh, bw, (top, bottom, left, right) = batch_params(ctx, block, crops, "crops")
        b, h, w, d = x.shape
        if b % (bh * bw):
            raise ctx.fail(f"batches {b} not evenly divisible by block {bh}x{bw}")
        if min(top, bottom, left, right) < 0:
            raise ctx.fail(f"crops {[top, bottom, left, right]} are negative (nnlib reads outside its input)")
        ho, wo = bh * h - top - bottom, bw * w - left - right
        if ho < 0 or wo < 0:
            raise ctx.fail(f"crops {[top, bottom, left, right]} are larger than the {bh * h}x{bw * w} result")
        bo = b // (bh * bw)
        y = x.reshape(bh, bw, bo, h, w, d).transpose(2, 3, 0, 4, 1, 5).reshape(bo, h * bh, w * bw, d)
        return (np.ascontiguousarray(y[:, top:top + ho, left:left + wo, :]), *copied_range(ctx, mn_arr, mx_arr))
