"""SpaceToDepth_8, DepthToSpace_8, SpaceToBatchND_8, BatchToSpaceND_8 (op texts; SEMANTICS.md §6).

Pure data movement on flat quint8 tensors: every kernel is the reshape /
transpose / reshape that its op text's "Equiv to" lines spell out, plus the
pads or crops the text names. The input range must be sane (§1) and passes
through unchanged.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_values, non_negative
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.quant import step_zero
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


def quint8_input(ctx: KernelContext, data: np.ndarray, mn_arr: np.ndarray,
                 mx_arr: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The 4-D quint8 data and its sane range."""
    mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
    x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
    return x, mn, mx


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


@register("SpaceToDepth_8")
class SpaceToDepth8(Kernel):
    """Move ``bh x bw`` spatial blocks into depth: ``[b,h,w,d] -> [b,h/bh,w/bw,bh*bw*d]``.

    Output channel ``(dy*bw + dx)*d + c`` of pixel ``(y, x)`` is input pixel
    ``(y*bh + dy, x*bw + dx)`` channel ``c``. Inputs: data, block size (one
    value: square block, or ``[bh, bw]``), min, max. Height and width must
    be multiples of the block.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, mn_arr, mx_arr = inputs
        x, mn, mx = quint8_input(ctx, data, mn_arr, mx_arr)
        bh, bw = block_hw(ctx, block, single_is_square=True)
        b, h, w, d = x.shape
        if h % bh or w % bw:
            raise ctx.fail(f"input height {h} and width {w} must be multiples of block {bh}x{bw}")
        y = x.reshape(b, h // bh, bh, w // bw, bw * d).transpose(0, 1, 3, 2, 4)
        return (np.ascontiguousarray(y.reshape(b, h // bh, w // bw, bh * bw * d)), *range_out(mn, mx))


@register("DepthToSpace_8")
class DepthToSpace8(Kernel):
    """Move depth into ``bh x bw`` spatial blocks, then crop: the inverse of SpaceToDepth_8.

    ``[b,h,w,bh*bw*d] -> [b,h*bh,w*bw,d]`` (the op text's "Equiv to" lines
    repeat SpaceToDepth's by mistake; DepthToSpace_f's steps are followed).
    Optional input 4 is ``[top, bottom, left, right]`` crops, each >= 0 and
    leaving a non-empty result.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, mn_arr, mx_arr = inputs[:4]
        x, mn, mx = quint8_input(ctx, data, mn_arr, mx_arr)
        bh, bw = block_hw(ctx, block, single_is_square=True)
        b, h, w, d = x.shape
        if d % (bh * bw):
            raise ctx.fail(f"input depth {d} must be a multiple of block {bh}x{bw} = {bh * bw}")
        do = d // (bh * bw)
        y = x.reshape(b, h, w, bh, bw * do).transpose(0, 1, 3, 2, 4).reshape(b, h * bh, w * bw, do)
        if len(inputs) > 4:
            crops = non_negative(ctx, int_values(ctx, inputs[4], "crops", (4,)), "crops")
            y = crop_hw(ctx, y, *crops)
        return (np.ascontiguousarray(y), *range_out(mn, mx))


@register("SpaceToBatchND_8")
class SpaceToBatchND8(Kernel):
    """Pad h and w with the zero code, then move ``bh x bw`` spatial phases into the batch axis.

    ``out[(dy*bw + dx)*b_in + n, y, x, c] = padded[n, y*bh + dy, x*bw + dx, c]``
    (the op text's reshape / transpose to ``[bh, bw, b, ...]``). Inputs: data,
    block size (one value: ``bw = 1``), paddings (``[top, bottom]`` or
    ``[[top, bottom], [left, right]]``, as many pairs as block sizes, each
    >= 0), min, max. The padding bytes are the input range's zero code; the
    padded height and width must be multiples of the block.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, pads, mn_arr, mx_arr = inputs
        x, mn, mx = quint8_input(ctx, data, mn_arr, mx_arr)
        bh, bw = block_hw(ctx, block, single_is_square=False)
        top, bottom, left, right = hw_pairs(ctx, pads, len(int_values(ctx, block, "block size")), "paddings")
        b, h, w, d = x.shape
        hp, wp = top + h + bottom, left + w + right
        if hp % bh or wp % bw:
            raise ctx.fail(f"padded height {hp} and width {wp} must be multiples of block {bh}x{bw}")
        _, zero = step_zero(mn, mx)
        xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=zero)
        y = xp.reshape(b, hp // bh, bh, wp // bw, bw, d).transpose(2, 4, 0, 1, 3, 5)
        return (np.ascontiguousarray(y.reshape(bh * bw * b, hp // bh, wp // bw, d)), *range_out(mn, mx))


@register("BatchToSpaceND_8")
class BatchToSpaceND8(Kernel):
    """Move batch phases back into ``bh x bw`` spatial blocks, then crop: the inverse of SpaceToBatchND_8.

    ``y[n, hy*bh + dy, wx*bw + dx, c] = in[(dy*bw + dx)*b_out + n, hy, wx, c]``,
    then ``[top, bottom]`` / ``[[top, bottom], [left, right]]`` crops (input 2,
    labelled "Padding" in the text), each >= 0 and leaving a non-empty
    result. Input batches must be a multiple of ``bh * bw``.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, crops, mn_arr, mx_arr = inputs
        x, mn, mx = quint8_input(ctx, data, mn_arr, mx_arr)
        bh, bw = block_hw(ctx, block, single_is_square=False)
        top, bottom, left, right = hw_pairs(ctx, crops, len(int_values(ctx, block, "block size")), "crops")
        b, h, w, d = x.shape
        if b % (bh * bw):
            raise ctx.fail(f"input batches {b} must be a multiple of block {bh}x{bw} = {bh * bw}")
        bo = b // (bh * bw)
        y = x.reshape(bh, bw, bo, h, w, d).transpose(2, 3, 0, 4, 1, 5).reshape(bo, h * bh, w * bw, d)
        y = crop_hw(ctx, y, top, bottom, left, right)
        return (np.ascontiguousarray(y), *range_out(mn, mx))
