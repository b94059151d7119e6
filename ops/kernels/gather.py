"""Gather_8 and Table_8: table lookups in a quint8 table (op_gather.c; op texts of Gather_f / Table_f).

Gather_8 and Table_8 follow nnlib's C (:func:`gather_c`, :class:`Table8`): the
table's codes are copied and its min/max are copied unchecked (ranges
excluding 0 pass through). Gather_8's out-of-range indices are an error under
NN_PAD_SAME and clipped to ``0..n-1`` under every other padding; Table_8 always
clips to the partition. :func:`gather`, :func:`lookup_rows` and
:func:`optional_int` keep the op text's rule (SAME error, NA/VALID clip, other
paddings reserved) for the float ops of ops/kernels/float_movement_lookup.py and move_core.py.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_param, int_values
from hexnn_import.ops.kernel_io import i32_codes, require_4d, u8_codes
from hexnn_import.ops.movement_io import copied_range
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


def gather_c(ctx: KernelContext, index: np.ndarray, table: np.ndarray, index_dim: int, index_rank: int,
             check: bool) -> np.ndarray:
    """op_gather.c ``analyze_gather_op`` + ``gather_execute``: lookup of ``index`` along one table dim.

    Index rank = apparent rank (leading 1s stripped), or ``index_rank`` when >= 0 (must be 0..4 and
    not below it). Table rank = apparent rank (>= 1); the lookup dim is its first, or ``index_dim``
    when >= 0 (must be <= 3; raises the table rank to ``4 - index_dim``). The output is ``[table dims
    before, index dims, table dims after]``, right-aligned in 4-D, rank <= 4. Out-of-range indices are
    an error when ``check`` (NN_PAD_SAME), else clipped to ``0..n-1`` (every other padding).
    """
    ishape, tshape = tuple(index.shape), tuple(table.shape)
    irank = apparent_rank(ishape)
    if index_rank >= 0:
        if index_rank > 4 or index_rank < irank:
            raise ctx.fail(f"improper rank {index_rank} given for apparent rank={irank}")
        irank = index_rank
    trank = max(1, apparent_rank(tshape))
    dim = 4 - trank
    if index_dim >= 0:
        if index_dim > 3:
            raise ctx.fail(f"dimension_index = {index_dim} : must be -1 ...3")
        dim = index_dim
        trank = max(trank, 4 - dim)
    if irank + trank - 1 > 4:
        raise ctx.fail(f"index rank {irank} + table rank {trank} - 1 = {irank + trank - 1} exceeds 4")
    n = tshape[dim]
    idx = index.reshape(-1)[: int(np.prod(ishape[4 - irank:], dtype=np.int64))].astype(np.int64)
    if check:
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ctx.fail(f"index value {int(idx[k])} at offset {k} is out of range; table size is {n} (padding SAME)")
    else:
        idx = np.clip(idx, 0, n - 1)
    outer = int(np.prod(tshape[:dim], dtype=np.int64))
    inner = int(np.prod(tshape[dim + 1:], dtype=np.int64))
    out = table.reshape(outer, n, inner)[:, idx, :]
    shape = tshape[4 - trank:dim] + ishape[4 - irank:] + tshape[dim + 1:]
    return out.reshape((1,) * (4 - len(shape)) + shape)


def scalar_param(ctx: KernelContext, inputs: tuple[np.ndarray, ...], pos: int, what: str) -> int:
    """Optional int32 parameter ``pos`` as the C reads it (element 0); -1 (ignore) when absent."""
    if len(inputs) <= pos:
        return -1
    return int(np.asarray(inputs[pos]).reshape(-1)[0])


@register("Gather_8")
class Gather8(Kernel):
    """Generalized table lookup in a quint8 table: op_gather.c ``gather_execute`` (:func:`gather_c`).

    Inputs: index (int32), table (quint8), table min, table max, optional index_dim, optional
    index_rank (negative = not given). NN_PAD_SAME checks the indices, any other padding clips them.
    The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        index_arr, table_arr, mn_arr, mx_arr = inputs[:4]
        index = require_4d(ctx, i32_codes(ctx, index_arr, "index"), "index")
        table = require_4d(ctx, u8_codes(ctx, table_arr, "table"), "table")
        out = gather_c(ctx, index, table, scalar_param(ctx, inputs, 4, "index_dim"),
                       scalar_param(ctx, inputs, 5, "index_rank"), ctx.padding == PAD_SAME)
        return (out, *copied_range(ctx, mn_arr, mx_arr))


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
    """Partitioned table lookup in a quint8 table: op_gather.c ``table_execute`` / ``analyze_table_op``.

    Inputs: index (int32), table (quint8), table min, table max, optional table structure ``[dim, TPN,
    size...]`` (a ``[1,1,1,n]`` tensor, :func:`table_partitions`), optional partition strategy (0 = mod,
    any other value = div; only matters when the index has more partitions than the table). Without a
    structure the op is Gather_8. Position ``p`` of the index's last dim looks up in partition
    :func:`partition_of`; indices are always clipped to the partition (the C ignores the padding here);
    the output is the index shape without its leading ``3 - dim`` dims followed by the table dims after
    ``dim``. The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        index_arr, table_arr, mn_arr, mx_arr = inputs[:4]
        index = require_4d(ctx, i32_codes(ctx, index_arr, "index"), "index")
        table = require_4d(ctx, u8_codes(ctx, table_arr, "table"), "table")
        rng = copied_range(ctx, mn_arr, mx_arr)
        if len(inputs) == 4:
            return (gather_c(ctx, index, table, -1, -1, ctx.padding == PAD_SAME), *rng)
        layout = np.asarray(inputs[4])
        if apparent_rank(tuple(layout.shape)) != 1 or not 3 <= layout.size <= MAX_TABLE_PARTITIONS + 2:
            raise ctx.fail(f"table structure has {layout.size} values (shape {list(layout.shape)}), expected [1,1,1,n], n >= 3")
        dim, sizes = table_partitions(ctx, int_values(ctx, layout, "table structure"), tuple(table.shape))
        strategy = int(np.asarray(inputs[5]).reshape(-1)[0]) if len(inputs) > 5 else 0
        append = 3 - dim
        if apparent_rank(tuple(index.shape)) + append > 4:
            raise ctx.fail(f"can't append {append} dims to index tensor of shape {list(index.shape)}")
        inner = tuple(table.shape[dim + 1:])
        flat = table.reshape(-1, int(np.prod(inner, dtype=np.int64)))
        ipn = index.shape[3]
        part = partition_of(ipn, len(sizes), 0 if strategy == 0 else 1)
        sizes_arr = np.asarray(sizes, np.int64)
        starts = np.concatenate(([0], np.cumsum(sizes_arr)[:-1]))
        idx = np.clip(index.reshape(-1, ipn).astype(np.int64), 0, sizes_arr[part] - 1)
        out = flat[starts[part] + idx]
        return (out.reshape(tuple(index.shape[append:]) + inner), *rng)
