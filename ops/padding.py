"""Output sizes and padding amounts for windowed ops (SEMANTICS.md §3).

VALID: ``out = (in - f) // s + 1``; SAME: ``out = ceil(in / s)``,
``pad = max(0, (out - 1) * s + f - in)``, ``before = pad // 2`` (extra after);
SAME_CAFFE puts the extra before. NA is an error for windowed ops.
"""
from __future__ import annotations

from hexnn_import.ops.registry import PAD_SAME, PAD_SAME_CAFFE, PAD_VALID, KernelContext


def out_and_pad(ctx: KernelContext, size: int, window: int, stride: int, dilation: int = 1) -> tuple[int, int, int]:
    """``(out, pad_before, pad_after)`` along one spatial axis for ``ctx.padding``."""
    if stride < 1 or window < 1 or dilation < 1:
        raise ctx.fail(f"window {window}, stride {stride}, dilation {dilation} must all be >= 1")
    f = (window - 1) * dilation + 1
    if ctx.padding == PAD_VALID:
        if size < f:
            raise ctx.fail(f"VALID padding: input size {size} is smaller than the window {f}")
        return (size - f) // stride + 1, 0, 0
    if ctx.padding in (PAD_SAME, PAD_SAME_CAFFE):
        out = -(-size // stride)
        pad = max(0, (out - 1) * stride + f - size)
        small = pad // 2
        if ctx.padding == PAD_SAME:
            return out, small, pad - small
        return out, pad - small, small
    raise ctx.fail(f"padding {ctx.padding} is not SAME, VALID or SAME_CAFFE")
