"""SpaceToDepth_f, DepthToSpace_f, SpaceToBatchND_f, BatchToSpaceND_f on plain float tensors (op texts).

Each kernel is the restate / transpose / restate that its op text's "Equiv
to" lines spell out, written once here for any dtype as the pairs
``space_to_depth`` / ``depth_to_space`` and ``space_to_batch`` /
``batch_to_space`` (each of a pair undoes the other). Block sizes, pads and
crops are read by the quantized twins' helpers in ``kernels/space_depth.py``.
Values are copied unchanged; SpaceToBatchND_f pads with 0.0.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_values, non_negative
from hexnn_import.ops.kernels.space_depth import block_hw, crop_hw, hw_pairs
from hexnn_import.ops.plain_io import plain_tensor, slot_dtype
from hexnn_import.ops.registry import Kernel, KernelContext, register


def _blocks(x: np.ndarray, bh: int, bw: int) -> np.ndarray:
    """``[b,h,w,d]`` restated as ``[b, h/bh, bh, w/bw, bw, d]`` (h, w multiples of the block)."""
    b, h, w, d = x.shape
    return x.reshape(b, h // bh, bh, w // bw, bw, d)


def space_to_depth(x: np.ndarray, bh: int, bw: int) -> np.ndarray:
    """``[b,h,w,d] -> [b,h/bh,w/bw,bh*bw*d]``: output channel ``(dy*bw + dx)*d + c`` is pixel ``(y*bh+dy, x*bw+dx)``."""
    b, h, w, _ = x.shape
    return np.ascontiguousarray(_blocks(x, bh, bw).transpose(0, 1, 3, 2, 4, 5)).reshape(b, h // bh, w // bw, -1)


def depth_to_space(x: np.ndarray, bh: int, bw: int) -> np.ndarray:
    """``[b,h,w,bh*bw*d] -> [b,h*bh,w*bw,d]``, the inverse of :func:`space_to_depth`."""
    b, h, w, d = x.shape
    y = x.reshape(b, h, w, bh, bw, d // (bh * bw)).transpose(0, 1, 3, 2, 4, 5)
    return np.ascontiguousarray(y).reshape(b, h * bh, w * bw, -1)


def space_to_batch(x: np.ndarray, bh: int, bw: int) -> np.ndarray:
    """``[b,h,w,d] -> [bh*bw*b, h/bh, w/bw, d]``: batch ``(dy*bw + dx)*b + n`` holds phase ``(dy, dx)`` of image n."""
    _, h, w, d = x.shape
    return np.ascontiguousarray(_blocks(x, bh, bw).transpose(2, 4, 0, 1, 3, 5)).reshape(-1, h // bh, w // bw, d)


def batch_to_space(x: np.ndarray, bh: int, bw: int) -> np.ndarray:
    """``[bh*bw*b, h, w, d] -> [b, h*bh, w*bw, d]``, the inverse of :func:`space_to_batch`."""
    b, h, w, d = x.shape
    y = x.reshape(bh, bw, b // (bh * bw), h, w, d).transpose(2, 3, 0, 4, 1, 5)
    return np.ascontiguousarray(y).reshape(-1, h * bh, w * bw, d)


def _data(ctx: KernelContext, kernel: Kernel, data: np.ndarray) -> np.ndarray:
    return plain_tensor(ctx, data, "input data", slot_dtype(kernel.spec.inputs[0]))


@register("SpaceToDepth_f")
class SpaceToDepthF(Kernel):
    """Move ``bh x bw`` spatial blocks into depth; inputs data, block size (one value: square; or [bh, bw]).

    Height and width must be multiples of the block (op text).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = _data(ctx, self, inputs[0])
        bh, bw = block_hw(ctx, inputs[1], single_is_square=True)
        if x.shape[1] % bh or x.shape[2] % bw:
            raise ctx.fail(f"input height {x.shape[1]} and width {x.shape[2]} must be multiples of block {bh}x{bw}")
        return (space_to_depth(x, bh, bw),)


@register("DepthToSpace_f")
class DepthToSpaceF(Kernel):
    """Move depth into ``bh x bw`` spatial blocks, then crop; inputs data, block size, optional crops.

    Depth must be a multiple of ``bh * bw``. Crops (input 2) are ``[top,
    bottom, left, right]``, each >= 0 and leaving a non-empty result.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = _data(ctx, self, inputs[0])
        bh, bw = block_hw(ctx, inputs[1], single_is_square=True)
        if x.shape[3] % (bh * bw):
            raise ctx.fail(f"input depth {x.shape[3]} must be a multiple of block {bh}x{bw} = {bh * bw}")
        y = depth_to_space(x, bh, bw)
        if len(inputs) > 2:
            crops = non_negative(ctx, int_values(ctx, inputs[2], "crops", (4,)), "crops")
            y = np.ascontiguousarray(crop_hw(ctx, y, *crops))
        return (y,)


@register("SpaceToBatchND_f")
class SpaceToBatchNDF(Kernel):
    """Zero-pad h and w, then move ``bh x bw`` spatial phases into the batch axis.

    Inputs: data, block size (one value: ``bw = 1``), paddings ``[top,
    bottom]`` or ``[[top, bottom], [left, right]]`` (one pair per block
    size, each >= 0; the text calls them "crop" but they pad). The padded
    height and width must be multiples of the block.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, pads = inputs
        x = _data(ctx, self, data)
        bh, bw = block_hw(ctx, block, single_is_square=False)
        top, bottom, left, right = hw_pairs(ctx, pads, len(int_values(ctx, block, "block size")), "paddings")
        hp, wp = top + x.shape[1] + bottom, left + x.shape[2] + right
        if hp % bh or wp % bw:
            raise ctx.fail(f"padded height {hp} and width {wp} must be multiples of block {bh}x{bw}")
        xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), mode="constant", constant_values=0)
        return (space_to_batch(xp, bh, bw),)


@register("BatchToSpaceND_f")
class BatchToSpaceNDF(Kernel):
    """Move batch phases back into ``bh x bw`` spatial blocks, then crop.

    Inputs: data, block size (one value: ``bw = 1``), crops ``[top, bottom]``
    or ``[[top, bottom], [left, right]]`` (each >= 0, leaving a non-empty
    result). Input batches must be a multiple of ``bh * bw``.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, block, crops = inputs
        x = _data(ctx, self, data)
        bh, bw = block_hw(ctx, block, single_is_square=False)
        top, bottom, left, right = hw_pairs(ctx, crops, len(int_values(ctx, block, "block size")), "crops")
        if x.shape[0] % (bh * bw):
            raise ctx.fail(f"input batches {x.shape[0]} must be a multiple of block {bh}x{bw} = {bh * bw}")
        y = crop_hw(ctx, batch_to_space(x, bh, bw), top, bottom, left, right)
        return (np.ascontiguousarray(y),)
