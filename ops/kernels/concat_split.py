"""QuantizedConcat_8 and QuantizedSplit_8 on flat quint8 tensors (SEMANTICS.md §6)."""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.movement_io import dim_param, u8_tensor
from hexnn_import.ops.quant import round_away, sat_u8, step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: The only concat dimension the op text of QuantizedConcat_8 supports (depth).
CONCAT_DIM = 3


def requantize_for_concat(x: np.ndarray, in_min: float, in_max: float, out_min: float, out_max: float) -> np.ndarray:
    """One input's codes moved onto the merged range, exactly as SEMANTICS §6 says.

    ``off = max(0, round_away((in_min - out_min) / in_step))``,
    ``g = min(32767, round_away(255 / out_range * in_step * 32768))``,
    ``q = sat_u8(((x + off) * g + 2**14) >> 15)``; the scalars are computed
    in float64, the per-element step in int64 (exact). When ``g`` is 0 every
    product is 0 whatever ``off`` is, so ``off`` is then not formed (it could
    exceed int64 for a tiny input range inside a huge merged one). A
    zero-width input range gives the merged range's zero code everywhere.
    """
    in_step = (in_max - in_min) / 255.0
    if in_step <= 0.0 or out_max - out_min <= 0.0:
        # a zero-width input (or merged) range holds only zeros: every code is the merged range's zero
        # code (SEMANTICS §1; op_concat.c would divide by the zero level size here)
        zero = step_zero(out_min, out_max)[1]
        return np.full(x.shape, zero, dtype=np.uint8)
    gain = min(32767, int(round_away(255.0 / (out_max - out_min) * in_step * 32768.0)))
    off = 0 if gain == 0 else max(0, int(round_away((in_min - out_min) / in_step)))
    acc = (x.astype(np.int64) + off) * gain + (1 << 14)
    return sat_u8(acc >> 15)


@register("QuantizedConcat_8")
class QuantizedConcat8(Kernel):
    """Concatenate n quint8 tensors along depth, requantizing each to the merged range.

    Inputs (3n+1): dimension, n data tensors, n mins, n maxes. Output range
    ``[min(0, min of mins), max of maxes]`` (SEMANTICS §6, not zero-fixed);
    every input is requantized with :func:`requantize_for_concat` (an input
    whose range equals the merged range comes out unchanged, since
    ``((x * 32767) + 2**14) >> 15 == x`` for every code). Rules taken from the
    op text: only dimension 3 (depth) is supported, any other value is an
    error; batches, height and width must match across the inputs. Every
    input range must be sane (SEMANTICS §1).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        if (len(inputs) - 1) % 3 or len(inputs) < 4:
            raise ctx.fail(f"got {len(inputs)} inputs, expected 3n+1 (dimension, n data, n mins, n maxes)")
        n = (len(inputs) - 1) // 3
        dim = dim_param(ctx, inputs[0], "dimension")
        if dim != CONCAT_DIM:
            raise ctx.fail(f"dimension is {dim}; the op supports only depth concatenation (3)")
        datas = [u8_tensor(ctx, inputs[1 + i], f"input data {i}") for i in range(n)]
        ranges = [ctx.sane_range(inputs[1 + n + i], inputs[1 + 2 * n + i], f"input {i}") for i in range(n)]
        outer = datas[0].shape[:3]
        for i, x in enumerate(datas):
            if x.shape[:3] != outer:
                raise ctx.fail(f"input data {i} has shape {list(x.shape)}, but input data 0 has "
                               f"{list(datas[0].shape)}: batches, height and width must match")
        out_min = min(0.0, min(r[0] for r in ranges))
        out_max = max(r[1] for r in ranges)
        if not math.isfinite(out_max - out_min):
            raise ctx.fail(f"merged range [{out_min}, {out_max}] is too wide to represent")
        parts = [requantize_for_concat(x, mn, mx, out_min, out_max) for x, (mn, mx) in zip(datas, ranges)]
        return (np.concatenate(parts, axis=CONCAT_DIM), *range_out(out_min, out_max))


@register("QuantizedSplit_8")
class QuantizedSplit8(Kernel):
    """Split quint8 data into n equal parts along a dimension; the range passes through.

    Inputs: dimension (0..3), data, min, max. Outputs: the n parts, then min
    and max copied from the input (op text). n is the node's declared output
    count less 2 (``ctx.n_outputs``); the engine always knows it, a call
    without it is an error (n cannot be guessed). The dimension's size must
    be divisible by n (op text). The input range must be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        dim_arr, data, mn_arr, mx_arr = inputs
        if ctx.n_outputs is None:
            raise ctx.fail("the node's output count is unknown, so the number of parts n cannot be known")
        n = ctx.n_outputs - 2
        if n < 1:
            raise ctx.fail(f"the node declares {ctx.n_outputs} outputs; the op gives n parts + min + max, n >= 1")
        dim = dim_param(ctx, dim_arr, "dimension")
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_tensor(ctx, data, "input data")
        if x.shape[dim] % n:
            raise ctx.fail(f"input data has shape {list(x.shape)}: dimension {dim} (size {x.shape[dim]}) "
                           f"cannot be split into {n} equal parts")
        parts = [np.array(p, copy=True) for p in np.split(x, n, axis=dim)]  # copies, never views
        return (*parts, *range_out(mn, mx))
