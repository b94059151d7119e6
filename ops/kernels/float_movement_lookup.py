"""Gather_f, Gather_int32, Table_f, Table_int32: table lookups in plain float / int32 tables (op texts).

The table's values are copied unchanged into the output (element type of
the table slot). The lookup rules are those of the quantized twins Gather_8
and Table_8 (``kernels/gather.py``), imported, not re-written: the index and
table ranks, ``index_dim`` / ``index_rank``, and out-of-range indices by the
node's padding (NN_PAD_SAME: error; NN_PAD_VALID and NN_PAD_NA: clipped to
``0..TABN-1``; other paddings are reserved and refused).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_param, int_values
from hexnn_import.ops.kernel_io import i32_codes, require_4d
from hexnn_import.ops.kernels.gather import gather, optional_int
from hexnn_import.ops.kernels.move_core import partitioned_lookup
from hexnn_import.ops.plain_io import plain_tensor, slot_dtype
from hexnn_import.ops.registry import Kernel, KernelContext, register


def index_and_table(ctx: KernelContext, kernel: Kernel,
                    inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The 4-D int32 index tensor (input 0) and the 4-D table (input 1) in the op's element type."""
    index = require_4d(ctx, i32_codes(ctx, inputs[0], "index"), "index")
    table = plain_tensor(ctx, inputs[1], "table", slot_dtype(kernel.spec.inputs[1]))
    return index, table


@register("Gather_f", "Gather_int32")
class Gather(Kernel):
    """Generalized table lookup (Gather_f text; :func:`~hexnn_import.ops.kernels.gather.gather`).

    Inputs: index (int32), table, optional index_dim (0..3, -1 = ignore),
    optional index_rank (0..4, -1 = ignore). The output is the table with
    its index dimension replaced by the index shape, left-padded to 4-D.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        index, table = index_and_table(ctx, self, inputs)
        index_dim = optional_int(ctx, inputs, 2, "index_dim", 3)
        index_rank = optional_int(ctx, inputs, 3, "index_rank", 4)
        return (gather(ctx, index, table, index_dim, index_rank),)


@register("Table_f", "Table_int32")
class Table(Kernel):
    """Partitioned table lookup (Table_f text); with only index and table it is Gather.

    Inputs: index (int32), table, optional table structure ``[dim, TPN,
    size...]``, optional partition strategy (0 = mod, the default; 1 = div).
    The op texts only name these inputs; the partition layout follows
    Table_8's reading of hexagon_nn's Table op
    (:func:`~hexnn_import.ops.kernels.move_core.partitioned_lookup`).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        index, table = index_and_table(ctx, self, inputs)
        if len(inputs) == 2:
            return (gather(ctx, index, table, -1, -1),)
        structure = int_values(ctx, inputs[2], "table structure")
        strategy = int_param(ctx, inputs[3], "partition strategy") if len(inputs) > 3 else 0
        return (partitioned_lookup(ctx, index, table, structure, strategy),)
