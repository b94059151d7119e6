"""DepthToSpace_8_d32 (hexagon_nn 2.14.1 op table: ops/src/op_depthspace_d32.c ``nn_ops_for_DepthToSpace_8_d32``;
not in the op documents, see its catalog notes).

DepthToSpace_8 on the logical d32 data (:class:`~hexnn_import.ops.d32_io.D32Twin`), with the d32 op's own
rules from op_depthspace_d32.c (``depthspace_d32_check``, ``get_d2s_dims``): the optional crop input has
4 or 5 int32 entries ``[top, bottom, left, right, depth]``, each >= 0; a non-zero 5th entry is the output
depth kept (the first channels), at most the computed depth and at most 31 below it; the block width is
1-4 or 8 and the computed output depth a multiple of 32, or 16 with block width 2. nnlib's execute is
HVX (the x86 oracle cannot run it): the data movement here is the flat op's, which the d32 op's header
comment spells out step by step. prepare.c's create_transpose_conv_nodes makes the 5-entry form (the
flat DepthToSpace_8 refuses it: op_depthspace.c wants exactly 4 crops).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.ops.d32_io import D32Twin, d32_output, run_flat
from hexnn_import.ops.int_params import int_values, non_negative
from hexnn_import.ops.kernels.space_depth import block_hw
from hexnn_import.ops.registry import KernelContext, register

#: Block widths the d32 op takes (op_depthspace_d32.c).
D32_BLOCK_WIDTHS = frozenset({1, 2, 3, 4, 8})


@register("DepthToSpace_8_d32")
class DepthToSpace8D32(D32Twin):
    """DepthToSpace_8 on d32 data, crops ``[top, bottom, left, right(, depth)]``; the range passes through."""

    FLAT_OP = "DepthToSpace_8"

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        """``(d32 data, min, max)``."""
        flat = self.flat_inputs(ctx, inputs)
        bh, bw = block_hw(ctx, flat[1], single_is_square=True)
        din = np.shape(flat[0])[3]
        out_depth = din // (bh * bw)
        if out_depth < 1 or out_depth * bh * bw != din:
            raise ctx.fail(f"block {bh}x{bw} does not divide the input depth {din}")
        if bw not in D32_BLOCK_WIDTHS or (out_depth % 32 and not (out_depth == 16 and bw == 2)):
            raise ctx.fail(f"block width {bw} / output depth {out_depth}: the d32 op needs a block width of "
                           "1-4 or 8 and an output depth that is a multiple of 32 (or 16 with block width 2)")
        keep = 0
        if len(flat) > 4:
            crops = non_negative(ctx, int_values(ctx, flat[4], "crops", (4, 5)), "crops")
            keep = crops[4] if len(crops) == 5 else 0
            if keep and (keep > out_depth or keep + 31 < out_depth):
                raise ctx.fail(f"can't crop output depth {out_depth} to {keep}")
            flat[4] = np.asarray(crops[:4], dtype=np.int32)
        outs = run_flat(ctx, self.FLAT_OP, flat)
        data = outs[0][..., :keep] if keep else outs[0]
        return (d32_output(np.ascontiguousarray(data)), *outs[1:])
