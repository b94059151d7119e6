"""Gather_8 and Table_8: table lookups in a quint8 table (op texts of Gather_f / Table_f; SEMANTICS.md §6).

The table's codes are copied, so the output min/max are the table's
("The output min/max are copied from the table min/max"); the table range
must be sane (§1). Out-of-range indices follow the node's padding, as the
Gather text says: NN_PAD_SAME is an error; NN_PAD_VALID clips to
``0..TABN-1``; NN_PAD_NA ("whatever is fastest while still safe") clips
too; the other paddings are reserved and rejected.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_param, int_values
from hexnn_import.ops.kernel_io import i32_codes, range_out, require_4d, u8_codes
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_VALID, Kernel, KernelContext, register

#: Most partitions a Table structure may name (hexagon_nn's limit).
MAX_TABLE_PARTITIONS = 65536


def apparent_rank(shape: tuple[int, ...]) -> int:
    """Rank after stripping leading 1s (``(1,1,1,1)`` has rank 0)."""
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return len(shape) - lead


def as_4d(y: np.ndarray) -> np.ndarray:
    """Left-pad a result of rank <= 4 with 1s to 4-D."""
    return np.ascontiguousarray(y).reshape((1,) * (4 - y.ndim) + y.shape)


def lookup_rows(ctx: KernelContext, idx: np.ndarray, size: np.ndarray | int) -> np.ndarray:
    """Indices checked (NN_PAD_SAME) or clipped (NA, VALID) against table sizes ``size`` (broadcast)."""
    if ctx.padding == PAD_SAME:
        bad = (idx < 0) | (idx >= size)
        if bad.any():
            pos = int(np.flatnonzero(bad.reshape(-1))[0])
            raise ctx.fail(f"index value {int(idx.reshape(-1)[pos])} at offset {pos} is out of range "
                           f"for table size {int(np.broadcast_to(size, idx.shape).reshape(-1)[pos])} "
                           "(padding SAME: out-of-range indices are errors)")
        return idx
    if ctx.padding not in (PAD_NA, PAD_VALID):
        raise ctx.fail(f"padding {ctx.padding} is reserved for table lookups (use NA, SAME or VALID)")
    return np.clip(idx, 0, np.asarray(size) - 1)


def optional_int(ctx: KernelContext, inputs: tuple[np.ndarray, ...], pos: int, what: str, hi: int) -> int:
    """Optional parameter input ``pos``: -1 (or absent) means "not given", else 0..hi."""
    if len(inputs) <= pos:
        return -1
    v = int_param(ctx, inputs[pos], what)
    if not -1 <= v <= hi:
        raise ctx.fail(f"{what} {v} must be -1 (ignore) or 0..{hi}")
    return v


def gather(ctx: KernelContext, index: np.ndarray, table: np.ndarray, index_dim: int, index_rank: int) -> np.ndarray:
    """Generalized lookup of the Gather_f text (``index_dim`` / ``index_rank`` -1 when not given).

    Index rank = rank after stripping leading 1s, raised (never lowered) by
    ``index_rank``. Table rank likewise (at least 1); the index dimension is
    the first dim > 1 unless ``index_dim`` names one, which raises the table
    rank to ``4 - index_dim`` when needed. The output is the table window
    with its index dimension replaced by the index shape, left-padded to 4-D;
    its rank ``index_rank + table_rank - 1`` must be <= 4.
    """
    ishape, tshape = tuple(index.shape), tuple(table.shape)
    irank = apparent_rank(ishape)
    if index_rank >= 0:
        if index_rank < irank:
            raise ctx.fail(f"index_rank {index_rank} is below the index tensor's apparent rank {irank} "
                           f"(shape {list(ishape)})")
        irank = index_rank
    trank = max(1, apparent_rank(tshape))
    dim = 4 - trank
    if index_dim >= 0:
        dim = index_dim
        trank = max(trank, 4 - dim)
    if irank + trank - 1 > 4:
        raise ctx.fail(f"index rank {irank} + table rank {trank} - 1 = {irank + trank - 1} exceeds 4 "
                       f"(index {list(ishape)}, table {list(tshape)})")
    if tshape[dim] < 1:
        raise ctx.fail(f"table shape {list(tshape)} has no entries on its index dimension {dim}")
    window = table.reshape(tshape[4 - trank:])
    idx = lookup_rows(ctx, index.reshape(ishape[4 - irank:]), tshape[dim])
    return as_4d(np.take(window, idx, axis=dim - (4 - trank)))


@register("Gather_8")
class Gather8(Kernel):
    """Generalized table lookup in a quint8 table (Gather_f's rules; see :func:`gather`).

    Inputs: index (int32), table (quint8), table min, table max, optional
    index_dim (0..3, -1 = ignore), optional index_rank (0..4, -1 = ignore).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        index_arr, table_arr, mn_arr, mx_arr = inputs[:4]
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "table")
        index = require_4d(ctx, i32_codes(ctx, index_arr, "index"), "index")
        table = require_4d(ctx, u8_codes(ctx, table_arr, "table"), "table")
        index_dim = optional_int(ctx, inputs, 4, "index_dim", 3)
        index_rank = optional_int(ctx, inputs, 5, "index_rank", 4)
        return (gather(ctx, index, table, index_dim, index_rank), *range_out(mn, mx))


def table_partitions(ctx: KernelContext, structure: list[int], tshape: tuple[int, ...]) -> tuple[int, list[int]]:
    """``(lookup dim, partition sizes)`` from a table structure ``[dim, TPN, size...]``.

    ``dim`` must be the table's first dimension > 1; ``TPN`` in 2..65536; the
    sizes are one value (all partitions equal) or TPN values, each >= 2. The
    table's ``dim`` holds all partitions end to end (sum of sizes), or - with
    a single size - exactly TPN with the next dimension equal to that size
    (table ``[.., TPN, size, ..]``; the lookup dimension is then ``dim + 1``).
    """
    if not 3 <= len(structure) <= MAX_TABLE_PARTITIONS + 2:
        raise ctx.fail(f"table structure has {len(structure)} values, expected [dim, partitions, size...]")
    dim, tpn, sizes = structure[0], structure[1], structure[2:]
    if not 0 <= dim <= 3 or dim + apparent_rank(tshape) != 4:
        raise ctx.fail(f"table structure dim {dim} is not the first dimension > 1 of table {list(tshape)}")
    if not 2 <= tpn <= MAX_TABLE_PARTITIONS or len(sizes) not in (1, tpn):
        raise ctx.fail(f"table structure {structure[:8]}: partitions must be 2..{MAX_TABLE_PARTITIONS} "
                       "followed by one size or one size per partition")
    if min(sizes) < 2:
        raise ctx.fail(f"table structure partition sizes {sizes[:8]} must all be >= 2")
    if len(sizes) == 1:
        sizes = sizes * tpn
        if tshape[dim] == tpn and dim < 3 and tshape[dim + 1] == sizes[0]:
            return dim + 1, sizes
    if sum(sizes) != tshape[dim]:
        raise ctx.fail(f"table structure partition sizes add up to {sum(sizes)}, "
                       f"table {list(tshape)} has {tshape[dim]} on dimension {dim}")
    return dim, sizes


def partition_of(n_index_parts: int, n_table_parts: int, strategy: int) -> np.ndarray:
    """Table partition used by each position of the index's last dimension.

    ``mod``: ``p % TPN``. ``div`` (only differs when IPN > TPN): contiguous
    runs, the first ``IPN % TPN`` partitions taking ``ceil(IPN/TPN)``
    positions and the rest ``floor(IPN/TPN)``.
    """
    p = np.arange(n_index_parts)
    if strategy == 0 or n_index_parts <= n_table_parts:
        return p % n_table_parts
    q, rem = divmod(n_index_parts, n_table_parts)
    if rem == 0:
        return p // q
    brk = (q + 1) * rem
    return np.where(p < brk, p // (q + 1), (p - brk) // q + rem)


@register("Table_8")
class Table8(Kernel):
    """Partitioned table lookup in a quint8 table (Table_f text: with no structure, as Gather).

    Inputs: index (int32), table (quint8), table min, table max, optional
    table structure ``[dim, TPN, size...]`` (see :func:`table_partitions`),
    optional partition strategy (0 = mod, default; 1 = div). The op texts
    only name these inputs; the layout rules follow hexagon_nn's published
    description of its Table op: the table holds TPN partitions end to end
    on ``dim``; position ``p`` of the index's last dimension looks up its
    values in partition :func:`partition_of`; the output shape is the index
    shape without its leading ``3 - dim`` dims (which must be 1) followed by
    the table dims after ``dim``. Out-of-range indices follow the padding as
    in Gather (hexagon_nn itself always clips here).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        index_arr, table_arr, mn_arr, mx_arr = inputs[:4]
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "table")
        index = require_4d(ctx, i32_codes(ctx, index_arr, "index"), "index")
        table = require_4d(ctx, u8_codes(ctx, table_arr, "table"), "table")
        if len(inputs) == 4:
            return (gather(ctx, index, table, -1, -1), *range_out(mn, mx))
        dim, sizes = table_partitions(ctx, int_values(ctx, inputs[4], "table structure"), tuple(table.shape))
        strategy = int_param(ctx, inputs[5], "partition strategy") if len(inputs) > 5 else 0
        if strategy not in (0, 1):
            raise ctx.fail(f"partition strategy {strategy} must be 0 (mod) or 1 (div)")
        append = 3 - dim
        if apparent_rank(tuple(index.shape)) + append > 4:
            raise ctx.fail(f"cannot append {append} table dims to index of shape {list(index.shape)}")
        inner = tuple(table.shape[dim + 1:])
        flat = table.reshape(-1, int(np.prod(inner, dtype=np.int64)))
        ipn = index.shape[3]
        part = partition_of(ipn, len(sizes), strategy)
        sizes_arr = np.asarray(sizes, np.int64)
        starts = np.concatenate(([0], np.cumsum(sizes_arr)[:-1]))
        idx = lookup_rows(ctx, index.reshape(-1, ipn).astype(np.int64), sizes_arr[part])
        out = flat[starts[part] + idx]
        return (out.reshape(tuple(index.shape[append:]) + inner), *range_out(mn, mx))
