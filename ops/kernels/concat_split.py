"""QuantizedConcat_8 (op_concat.c) and QuantizedSplit_8 on flat quint8 tensors.

:func:`requantize_for_concat` (op_concat.c's float32 per-input requantization) is also used by
QuantizedConcat_8_d32 (``d32_spatial.py``).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.movement_io import copied_range, dim_param, u8_tensor
from hexnn_import.ops.nnlib_f32 import flt_div_255
from hexnn_import.ops.nnlib_f32_nonlin import read_any_range, roundf_i32
from hexnn_import.ops.registry import Kernel, KernelContext, register

F = np.float32
#: The only concat dimension the op text of QuantizedConcat_8 supports (depth).
CONCAT_DIM = 3


def requantize_for_concat(x: np.ndarray, in_min: float, in_max: float, out_min: float, out_max: float) -> np.ndarray:
    """One input's codes moved onto the merged range ``[out_min, out_max]`` as op_concat.c does it
    (:func:`concat_scaling` then :func:`concat_requant_c`); also used by QuantizedConcat_8_d32."""
    return concat_requant_c(x, *concat_scaling(F(in_min), F(in_max), F(out_min), F(out_max)))


def concat_scaling(in_min: F, in_max: F, out_min: F, out_max: F) -> tuple[int, int]:
    """``(offset, gain)`` of one input, op_concat.c ``concat_execute_slice_ref`` in float32.

    ``in_min`` above 0 counts as 0; ``in_level = flt_div_255(in_max - in_min)``;
    ``offset = max(0, roundf_i32((in_min - out_min) / in_level))``;
    ``gain = roundf_i32(255 / (out_max - out_min) * in_level * 32768)``, capped at 32767 and cast to
    ``short``. Non-finite quotients (a zero-width range) convert as on x86 (``INT_MIN``).
    """
    in_min = min(in_min, F(0.0))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        recip = F(255.0) / F(out_max - out_min)
        level = flt_div_255(F(in_max - in_min))
        offset = max(0, int(roundf_i32(F(in_min - out_min) / level)))
        gain = int(roundf_i32(recip * level * F(32768.0)))
    gain = 32767 if gain > 32767 else (gain + 2 ** 15) % 2 ** 16 - 2 ** 15
    return offset, gain


def concat_requant_c(x: np.ndarray, offset: int, gain: int) -> np.ndarray:
    """``saturate(((x + offset) * gain + 2**14) >> 15)`` in C ``int`` (32-bit, wrapping) arithmetic."""
    acc = (x.astype(np.int64) + offset) * gain + (1 << 14)
    acc = (acc + 2 ** 31) % 2 ** 32 - 2 ** 31
    return np.clip(acc >> 15, 0, 255).astype(np.uint8)


#: The largest offset for which ``x + offset`` (x <= 255) fits memconvert_hvx's signed 16-bit lanes.
LANE_MAX_OFFSET = 32767 - 255


def concat_requant_device(x: np.ndarray, offset: int, gain: int) -> np.ndarray:
    """One input as op_concat.c ``concat_execute_asm`` requantizes it on the device (asm ``memconvert_hvx``,
    issue 36): :func:`concat_requant_c`'s codes where ``offset <= 32512``; above, the asm adds the offset in signed
    16-bit lanes (``combine(offset.L, offset.L)``, ``vadd(.h)``), so ``x + offset`` wraps, and the codes are
    ``usat8(sat16((wrap16(x + offset) * gain * 2 + 0x8000) >> 16))``."""
    if offset <= LANE_MAX_OFFSET:
        return concat_requant_c(x, offset, gain)
    z = ((x.astype(np.int64) + (offset & 0xFFFF) + 0x8000) & 0xFFFF) - 0x8000
    acc = np.clip((z * min(gain, 32767) * 2 + 0x8000) >> 16, -32768, 32767)
    return np.clip(acc, 0, 255).astype(np.uint8)


@register("QuantizedConcat_8")
class QuantizedConcat8(Kernel):
    """Concatenate n quint8 tensors along depth onto a merged range: op_concat.c ``concat_execute`` with the
    scaling of ``concat_execute_slice_ref`` and the device's requantization (``concat_execute_asm``,
    :func:`concat_requant_device`: an offset above 32512 wraps, issue 36).

    Inputs (3n+1): dimension, n data tensors, n mins, n maxes. Output range: ``out_min = min(min of
    mins, 0)``, ``out_max = max of maxes`` (float32, not zero-fixed and not forced to hold 0); each
    input is requantized with :func:`requantize_for_concat`. As the C: only
    dimension 3 (depth); batches, height and width must match input 0's; the ranges are not checked
    (only finite ends are required here).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        if (len(inputs) - 1) % 3 or len(inputs) < 4:
            raise ctx.fail(f"got {len(inputs)} inputs, expected 3n+1 (dimension, n data, n mins, n maxes)")
        n = (len(inputs) - 1) // 3
        dim = dim_param(ctx, inputs[0], "dimension")
        if dim != CONCAT_DIM:
            raise ctx.fail(f"dimension is {dim}; the op supports only depth concatenation (3)")
        datas = [u8_tensor(ctx, inputs[1 + i], f"input data {i}") for i in range(n)]
        ranges = [read_any_range(ctx, inputs[1 + n + i], inputs[1 + 2 * n + i], f"input {i}") for i in range(n)]
        outer = datas[0].shape[:3]
        for i, x in enumerate(datas):
            if x.shape[:3] != outer:
                raise ctx.fail(f"input data {i} has shape {list(x.shape)}, but input data 0 has "
                               f"{list(datas[0].shape)}: batches, height and width must match")
        out_min = min(F(0.0), min(r[0] for r in ranges))
        out_max = max(r[1] for r in ranges)
        parts = [concat_requant_device(x, *concat_scaling(F(mn), F(mx), F(out_min), F(out_max)))
                 for x, (mn, mx) in zip(datas, ranges)]
        return (np.concatenate(parts, axis=CONCAT_DIM), *range_out(out_min, out_max))


@register("QuantizedSplit_8")
class QuantizedSplit8(Kernel):
    """Split quint8 data into n equal parts along a dimension: op_split.c ``qsplit_execute_8`` / ``split_impl``.

    Inputs: dimension, data, min, max. Outputs: the n parts, then min and max (copied unchecked). n is
    the node's declared output count less 2 (``ctx.n_outputs``; a call without it is an error). As the
    C: the dimension is -4..3 (negative counts from the end, ``handle_negative_axes``); n = 1 copies the
    input whole; otherwise the dimension's size must divide by n.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        dim_arr, data, mn_arr, mx_arr = inputs
        if ctx.n_outputs is None:
            raise ctx.fail("the node's output count is unknown, so the number of parts n cannot be known")
        n = ctx.n_outputs - 2
        if n < 1:
            raise ctx.fail(f"the node declares {ctx.n_outputs} outputs; the op gives n parts + min + max, n >= 1")
        dim = ctx.int_scalar(np.asarray(dim_arr).reshape(-1)[:1], "dimension")
        if not -4 <= dim <= 3:
            raise ctx.fail(f"split dimension {dim} out of range: expected 0..3 or -4..-1")
        dim %= 4
        x = u8_tensor(ctx, data, "input data")
        if x.shape[dim] % n:
            raise ctx.fail(f"uneven split: input data has shape {list(x.shape)}, dimension {dim} "
                           f"(size {x.shape[dim]}) cannot be split into {n} equal parts")
        parts = [np.array(p, copy=True) for p in np.split(x, n, axis=dim)]  # copies, never views
        return (*parts, *copied_range(ctx, mn_arr, mx_arr))
