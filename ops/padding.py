"""Output sizes and padding amounts for windowed ops (SEMANTICS.md §3).

VALID: ``out = (in - f) // s + 1``; SAME: ``out = ceil(in / s)``,
``pad = max(0, (out - 1) * s + f - in)``, ``before = pad // 2`` (extra after);
SAME_CAFFE puts the extra before. NA is an error for windowed ops (:func:`out_and_pad`).

:func:`nn_outsize_padding` is hexagon_nn's own ``nn_pad_compute_outsize_padding``
(include/nn_graph_padding.h), used by the ops that follow the C reference paths
(8x8->32 convolutions, quint8 pools): no errors, empty outputs where the C gives size 0.
"""
from __future__ import annotations

from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID, KernelContext


def out_and_pad(ctx: KernelContext, size: int, window: int, stride: int, dilation: int = 1) -> tuple[int, int, int]:
    """``(out, pad_before, pad_after)`` along one spatial axis for ``ctx.padding``."""
    if stride < 1 or window < 1 or dilation < 1:
        raise ctx.fail(f"window {window}, stride {stride}, dilation {dilation} must all be >= 1")
    f = (window - 1) * dilation + 1
    if size == 0 and ctx.padding in (PAD_VALID, PAD_SAME, PAD_SAME_CAFFE):
        return 0, 0, 0  # an empty axis (a batch of 0 samples) has no windows: an empty output
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


def nn_outsize_padding(size: int, window: int, stride: int, padding: int) -> tuple[int, int, int]:
    """``(out, pad_before, pad_after)`` exactly as ``nn_pad_compute_outsize_padding`` (include/nn_graph_padding.h).

    Unlike :func:`out_and_pad` nothing is an error: a VALID window larger than
    the input gives 0 outputs, NA is SAME with a floor division (``in // stride``
    outputs, padded as SAME where the windows overrun), and any other padding
    value gives 0 outputs. The reference 8-bit convolutions and pools use it.
    ``stride`` must be >= 1 (the C divides by it).
    """
    delt = size - window
    if padding == PAD_VALID:
        return (delt // stride + 1 if delt >= 0 else 0), 0, 0
    if padding in (PAD_NA, PAD_SAME, PAD_SAME_CAFFE):
        n = size if padding == PAD_NA else size + stride - 1
        if n < stride:
            return 0, 0, 0
        out = n // stride
        pad = (out - 1) * stride - delt
        if pad <= 0:
            return out, 0, 0
        before = (pad + (padding == PAD_SAME_CAFFE)) >> 1
        return out, before, pad - before
    return 0, 0, 0
