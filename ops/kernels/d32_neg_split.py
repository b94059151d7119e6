"""QuantizedNeg_8_d32 and QuantizedSplit_8_d32: the _d32 forms prepare.c makes of QuantizedNeg_8 and
QuantizedSplit_8 (hexagon_nn 2.14.1 prepare.c depth32_replacement_op / do_convert_concat_depth32; the ops are
in nnlib's op table, not in the op documents: see their catalog notes).

Both follow the device code nnlib registers (XiaoMi/nnlib df7ad3c), checked under qemu-hexagon
(tests/ops/test_hvx_neg_split_d32.py):

- op_add_d32.c ``neg_d32_execute``: ``tensor_copy_scaled_d32`` with scale -32768, offset 32640 (the HVX
  ``scalemem_d32_hvx``), which maps each code to ``255 - x``; the output range is ``(-in_max, -in_min)``;
- op_chanshuffle_d32.c ``split_d32_execute``: a channel shuffle with k = 1 (a copy of each depth slice
  ``channelshuf_d32_k1_template``); depth only (input 0 a Const of 3, or -1 after ``handle_negative_axes``,
  or wired where input 1 is), the depth must divide by the number of parts; the output range is
  ``(fminf(0, in_min), in_max)`` for every part - the codes are not moved when ``in_min > 0``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.ops.d32 import D32Tensor
from hexnn_import.ops.d32_io import D32Twin, d32_output, logical_input
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.registry import Kernel, KernelContext, register

F = np.float32
#: the only dimension QuantizedSplit_8_d32 splits (op_chanshuffle_d32.c split_d32_execute)
DEPTH = 3


@register("QuantizedNeg_8_d32")
class QuantizedNeg8D32(D32Twin):
    """``-x`` on d32 quint8: each code ``255 - x``, range ``(-in_max, -in_min)`` (op_add_d32.c
    ``neg_d32_execute``), which is QuantizedNeg_8's arithmetic (op_neg.c) on the logical data."""

    FLAT_OP = "QuantizedNeg_8"


def split_dim(ctx: KernelContext, dim_arr: Any) -> int:
    """op_chanshuffle_d32.c split_d32_execute's dimension: 3 when input 0 is the data tensor itself (wired
    where input 1 is), else the int32 scalar after ``handle_negative_axes`` (-4..-1 count from the end),
    which must be 3."""
    if isinstance(dim_arr, D32Tensor):
        return DEPTH
    dim = ctx.int_scalar(np.asarray(dim_arr).reshape(-1)[:1], "dimension")
    if not -4 <= dim <= 3:
        raise ctx.fail(f"split dimension {dim} out of range: expected 0..3 or -4..-1")
    dim %= 4
    if dim != DEPTH:
        raise ctx.fail(f"split dimension is {dim}; the d32 split splits depth (3) only (op_chanshuffle_d32.c)")
    return dim


@register("QuantizedSplit_8_d32")
class QuantizedSplit8D32(Kernel):
    """Split d32 quint8 data into n equal parts along depth (op_chanshuffle_d32.c ``split_d32_execute``).

    Inputs: dimension (or the data tensor again), d32 data, min, max. Outputs: the n d32 parts (n is the
    node's output count less 2), then min and max: ``fminf(0, in_min)`` and ``in_max`` as the device sets
    them (float32, unchecked), the codes copied unchanged.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        dim_arr, data, mn_arr, mx_arr = inputs
        if ctx.n_outputs is None:
            raise ctx.fail("the node's output count is unknown, so the number of parts n cannot be known")
        n = ctx.n_outputs - 2
        if n < 1:
            raise ctx.fail(f"the node declares {ctx.n_outputs} outputs; the op gives n parts + min + max, n >= 1")
        split_dim(ctx, dim_arr)
        x = logical_input(ctx, data, "input data")
        if x.shape[DEPTH] % n:
            raise ctx.fail(f"uneven split: input data has shape {list(x.shape)}, its depth {x.shape[DEPTH]} "
                           f"cannot be split into {n} equal parts")
        in_min, in_max = F(ctx.scalar(mn_arr, "input min")), F(ctx.scalar(mx_arr, "input max"))
        parts = [d32_output(np.array(p, copy=True)) for p in np.split(x, n, axis=DEPTH)]
        return (*parts, *range_out(min(F(0.0), in_min), in_max))
