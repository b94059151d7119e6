"""Element-type-independent cores of the data-movement ops (op texts of hexagon_nn_ops.txt; SEMANTICS.md §6).

The quantized kernels (``slice.py``, ``pad.py``, ``gather.py``) and the plain
float / int32 / uint8 kernels (``float_movement_*.py``) move data the same way; the
index arithmetic lives here once, as functions of a numpy array of any
dtype (the quantized modules' own helpers are imported, not copied).
Parameter checks raise the project's ``OpError`` through ``ctx.fail``. This
module sits inside the kernels package (it registers nothing) so that its
imports of sibling kernel modules can never form an import cycle.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernels.gather import lookup_rows, partition_of, table_partitions
from hexnn_import.ops.kernels.slice import AXES, gather, left_fill, resolve_axis
from hexnn_import.ops.movement_io import int_list
from hexnn_import.ops.registry import KernelContext


def block_slice(ctx: KernelContext, x: np.ndarray, starts: list[int], sizes: list[int]) -> np.ndarray:
    """The block ``[start, start + size)`` of ``x`` (Slice_f text), as a fresh array.

    ``starts`` / ``sizes`` hold k = 1..4 values for the last k dims (the
    others are taken whole); a size of -1 runs to the end of the dim. Every
    start must lie inside its dim and every block must fit, non-empty.
    """
    if len(starts) != len(sizes):
        raise ctx.fail(f"start has {len(starts)} values and size {len(sizes)}; they must match")
    lo = np.array(left_fill(starts, 0), dtype=np.int64)
    n = np.array(x.shape, dtype=np.int64)
    size = np.array(left_fill(sizes, -1), dtype=np.int64)
    size = np.where(size == -1, n - lo, size)
    bad = (lo < 0) | (lo >= n) | (size < 1) | (lo + size > n)
    if bad.any():
        axis = int(np.argmax(bad))
        raise ctx.fail(f"start {int(lo[axis])} / size {left_fill(sizes, -1)[axis]} on {AXES[axis]} do not fit "
                       f"the input's {int(n[axis])} (input shape {list(x.shape)}); starts are 0..n-1, "
                       "sizes -1 or 1..n-start")
    return np.array(x[tuple(slice(int(a), int(a + s)) for a, s in zip(lo, size))], copy=True)


#: The optional mask inputs of StridedSlice, in input order.
MASK_NAMES = ("begin_mask", "end_mask", "shrink_mask")


def slice_masks(ctx: KernelContext, arrs: tuple[np.ndarray, ...]) -> tuple[int, int, int]:
    """``(begin_mask, end_mask, shrink_mask)``: all three given, or none (all 0); each 0..15 (bits B,H,W,D)."""
    if not arrs:
        return 0, 0, 0
    if len(arrs) != 3:
        raise ctx.fail(f"got {len(arrs)} mask inputs; begin_mask, end_mask and shrink_mask come all three "
                       "or not at all")
    begin_mask, end_mask, shrink_mask = (int_param(ctx, a, w) for a, w in zip(arrs, MASK_NAMES))
    for what, value in zip(MASK_NAMES, (begin_mask, end_mask, shrink_mask)):
        if value < 0 or value > 15:
            raise ctx.fail(f"{what} {value} is outside 0..15: only mask bits 0..3 (B,H,W,D) have a meaning")
    return begin_mask, end_mask, shrink_mask


def strided_slice(ctx: KernelContext, x: np.ndarray, begin_arr: np.ndarray, end_arr: np.ndarray,
                  step_arr: np.ndarray, mask_arrs: tuple[np.ndarray, ...]) -> np.ndarray:
    """StridedSlice of ``x`` (StridedSlice_f text), per dim by :func:`~kernels.slice.resolve_axis`.

    begin/end/step hold k = 1..4 values for the last k dims (the others:
    begin 0, end = size, step 1); mask bits 0..3 mean B,H,W,D whatever k is.
    Shrunk dims are squeezed out and the shape left-padded with 1s.
    """
    named = ((begin_arr, "begin"), (end_arr, "end"), (step_arr, "step"))
    begins, ends, steps = (int_list(ctx, arr, what) for arr, what in named)
    if len({len(begins), len(ends), len(steps)}) > 1:
        raise ctx.fail(f"begin, end and step must hold equally many values, not {len(begins)}, {len(ends)}, "
                       f"{len(steps)}")
    masks = slice_masks(ctx, mask_arrs)
    full_b, full_s = left_fill(begins, 0), left_fill(steps, 1)
    full_e = list(x.shape[:4 - len(ends)]) + ends
    axes = [resolve_axis(ctx, i, x.shape[i], full_b[i], full_e[i], full_s[i], *masks) for i in range(4)]
    out = gather(x, [a.index() for a in axes])
    return out.reshape(tuple(left_fill([a.size for a in axes if not a.shrink], 1)))


def partitioned_lookup(ctx: KernelContext, index: np.ndarray, table: np.ndarray, structure: list[int],
                       strategy: int) -> np.ndarray:
    """Table lookup with a partition structure (Table_f text; layout rules of ``kernels.gather.Table8``).

    The table holds TPN partitions end to end on ``dim``
    (:func:`~kernels.gather.table_partitions`); position ``p`` of the
    index's last dim looks up in partition :func:`~kernels.gather.partition_of`
    (strategy 0 = mod, 1 = div); the result is the index shape without its
    leading ``3 - dim`` dims followed by the table dims after ``dim``.
    """
    if strategy not in (0, 1):
        raise ctx.fail(f"partition strategy {strategy} must be 0 (mod) or 1 (div)")
    dim, sizes = table_partitions(ctx, structure, tuple(table.shape))
    dropped = 3 - dim
    if any(n != 1 for n in index.shape[:dropped]):
        raise ctx.fail(f"index of shape {list(index.shape)} leaves no room for the {dropped} table dims "
                       "after the lookup dimension")
    row_shape = tuple(table.shape[dim + 1:])
    rows = table.reshape((-1,) + (int(np.prod(row_shape, dtype=np.int64)),))
    n_parts = index.shape[3]
    part = partition_of(n_parts, len(sizes), strategy)
    part_size = np.asarray(sizes, dtype=np.int64)
    first_row = np.cumsum(part_size) - part_size
    local = lookup_rows(ctx, index.reshape(-1, n_parts).astype(np.int64), part_size[part])
    return rows[first_row[part] + local].reshape(tuple(index.shape[dropped:]) + row_shape)
