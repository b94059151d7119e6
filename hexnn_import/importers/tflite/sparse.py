"""Densify sparse TFLite constant tensors (``Tensor.sparsity``).

TFLite stores a pruned weight as its non-zero values plus a
``SparsityParameters`` table (schema.fbs): ``traversal_order`` over the
tensor's dims followed by its block dims, ``block_map`` (which original dim
each block dim splits), and one ``DimensionMetadata`` per traversed dim,
DENSE (``dense_size``) or SPARSE_CSR (``array_segments`` /
``array_indices``). This follows TensorFlow's
``tensorflow/lite/kernels/internal/utils/sparsity_format_converter.cc``
(``FormatConverter::SparseToDense``), level by level with numpy instead of
its element recursion: a DENSE level repeats each parent position
``dense_size`` times (child position ``parent * size + i``); a CSR level
gives parent ``p`` the children ``array_indices[segments[p]:segments[p+1]]``
(child position ``j``, the index into the values).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

DENSE, SPARSE_CSR = 0, 1
#: SparseIndexVector union type -> the tflite class and numpy dtype
_INDEX_VECTORS = {1: ("Int32Vector", np.int32), 2: ("Uint16Vector", np.uint16), 3: ("Uint8Vector", np.uint8)}


@dataclass
class DimMeta:
    """One traversed dim: DENSE with ``dense_size``, or SPARSE_CSR with ``segments`` / ``indices``."""

    fmt: int
    dense_size: int
    segments: np.ndarray
    indices: np.ndarray


@dataclass
class Sparsity:
    """A tensor's sparsity table, read from the flatbuffer."""

    traversal_order: list[int]
    block_map: list[int]
    dims: list[DimMeta]


def _index_vector(meta: Any, which: str) -> np.ndarray:
    import tflite

    kind = int(getattr(meta, f"{which}Type")())
    table = getattr(meta, which)()
    if kind == 0 or table is None:
        return np.zeros(0, np.int64)
    if kind not in _INDEX_VECTORS:
        raise ValueError(f"sparse index vector of unknown type {kind}")
    cls_name, dt = _INDEX_VECTORS[kind]
    vec = getattr(tflite, cls_name)()
    vec.Init(table.Bytes, table.Pos)
    if vec.ValuesIsNone():
        return np.zeros(0, np.int64)
    return np.asarray(vec.ValuesAsNumpy(), dtype=dt).astype(np.int64)


def read_sparsity(t: Any) -> Sparsity | None:
    """The ``sparsity`` table of a flatbuffer Tensor, or None for a dense tensor."""
    sp = t.Sparsity()
    if sp is None:
        return None
    order = [] if sp.TraversalOrderIsNone() else [int(v) for v in sp.TraversalOrderAsNumpy()]
    bmap = [] if sp.BlockMapIsNone() else [int(v) for v in sp.BlockMapAsNumpy()]
    dims = []
    for k in range(sp.DimMetadataLength()):
        m = sp.DimMetadata(k)
        dims.append(DimMeta(int(m.Format()), int(m.DenseSize()), _index_vector(m, "ArraySegments"),
                            _index_vector(m, "ArrayIndices")))
    return Sparsity(order, bmap, dims)


def densify(values: np.ndarray, sp: Sparsity, shape: tuple[int, ...]) -> np.ndarray:
    """The dense tensor of ``shape`` that ``values`` (the stored non-zeros) and ``sp`` describe.

    Raises ValueError when the table does not describe ``shape`` (the reader
    turns it into a ModelFormatError naming the tensor).
    """
    n = len(shape)
    nb = len(sp.block_map)
    order = sp.traversal_order or list(range(n + nb))
    if sorted(order) != list(range(n + nb)) or len(sp.dims) != n + nb:
        raise ValueError(f"sparsity traversal order {order} / {len(sp.dims)} dim tables do not fit rank {n} "
                         f"with {nb} block dims")
    if any(not 0 <= b < n for b in sp.block_map):
        raise ValueError(f"sparsity block map {sp.block_map} names a dim outside rank {n}")
    # expanded index per traversed level, position into the next level (or the values)
    pos = np.zeros(1, np.int64)
    cols: list[np.ndarray] = []
    for level, meta in enumerate(sp.dims):
        if meta.fmt == DENSE:
            size = meta.dense_size
            if size < 0 or pos.size * max(size, 1) > 2 ** 31:
                raise ValueError(f"sparsity level {level}: dense size {size} is out of range")
            cols = [np.repeat(c, size) for c in cols]
            cols.append(np.tile(np.arange(size, dtype=np.int64), pos.size))
            pos = (np.repeat(pos, size) * size + cols[-1])
        elif meta.fmt == SPARSE_CSR:
            seg, idx = meta.segments, meta.indices
            if (pos.size and pos.max() + 1 >= seg.size) or np.any(np.diff(seg) < 0) \
                    or (seg.size and (seg[0] < 0 or seg[-1] > idx.size)):
                raise ValueError(f"sparsity level {level}: array segments do not fit the array indices")
            starts, ends = seg[pos], seg[pos + 1]
            counts = ends - starts
            total = int(counts.sum())
            child = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(total)
            cols = [np.repeat(c, counts) for c in cols]
            cols.append(idx[child])
            pos = child
        else:
            raise ValueError(f"sparsity level {level}: unknown dimension format {meta.fmt}")
    if values.size != pos.size:
        raise ValueError(f"sparse tensor stores {values.size} values, its sparsity table describes {pos.size}")
    # traversal level -> expanded dim; expanded dims n.. are the block dims
    expanded = [np.zeros(0, np.int64)] * (n + nb)
    for level, dim in enumerate(order):
        expanded[dim] = cols[level]
    block_size = {sp.block_map[b]: sp.dims[order.index(n + b)].dense_size for b in range(nb)}
    index = []
    for d in range(n):
        ix = expanded[d] * block_size[d] + expanded[n + sp.block_map.index(d)] if d in block_size else expanded[d]
        if ix.size and (ix.min() < 0 or ix.max() >= shape[d]):
            raise ValueError(f"sparse index out of range for dim {d} of shape {list(shape)}")
        index.append(ix)
    dense = np.zeros(math.prod(shape), dtype=values.dtype).reshape(shape)
    dense[tuple(index)] = values.reshape(-1)
    return dense


__all__ = ["Sparsity", "DimMeta", "read_sparsity", "densify"]
