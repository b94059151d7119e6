"""Per-layer matching: the engine's tensors under the source model's tensor names, in real units.

The importer records, for every source tensor it maps, the graph ref that
holds its data (``graph.tensor_map``) and, for quantized tensors, the refs
of its min / max (``graph.tensor_ranges``; a Const when the range is fixed,
a node output when it is found at run time). A tensor that the importer
stored NHWC while the source model (ONNX) has it NCHW is listed in
``graph.meta["layouts"]`` with the ONNX importer's convention: graph axis
``i`` is axis ``perm[i]`` of the source tensor's shape left-padded with 1s
to rank 4 (``(0, 2, 3, 1)`` for NCHW stored as NHWC); the inverse
permutation takes the stored tensor back.
Element types follow SEMANTICS §1: quint8 ``real = (q - zero) * step``,
qint32 ``real = q * (max - min) / 2**32``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from hexnn_import.graph import Graph, Ref
from hexnn_import.ops.quant import dequantize_u8, qint32_one


@dataclass
class RealTensor:
    """A tensor in real units and the size of one quantization step (None for float tensors)."""

    value: np.ndarray
    step: float | None = None


def _lookup(graph: Graph, ref: Ref, values: Mapping[Ref, np.ndarray]) -> np.ndarray | None:
    if ref in values:
        return np.asarray(values[ref])
    node = graph.find_node(ref.src_id)
    if node is not None and node.is_const:
        return node.data
    return None


def _scalar(arr: np.ndarray) -> float:
    return float(np.asarray(arr).reshape(-1)[0])


def dequantize_tensor(graph: Graph, name: str, values: Mapping[Ref, np.ndarray]) -> RealTensor | None:
    """Source tensor ``name`` in real units from the engine's values, or None if it cannot be read."""
    ref = graph.tensor_map.get(name)
    arr = None if ref is None else _lookup(graph, ref, values)
    if arr is None:
        return None
    if arr.dtype == np.float32 or arr.dtype == np.float64:
        return RealTensor(arr.astype(np.float64))
    ranges = graph.tensor_ranges.get(name)
    if ranges is None:
        return None
    lo, hi = (_lookup(graph, r, values) for r in ranges)
    if lo is None or hi is None:
        return None
    mn, mx = _scalar(lo), _scalar(hi)
    if arr.dtype == np.uint8:
        step = (mx - mn) / 255.0
        return RealTensor(dequantize_u8(arr, mn, mx), step if step > 0 else None)
    if arr.dtype == np.int32:
        one = qint32_one(mn, mx)
        return RealTensor(arr.astype(np.float64) * one, one if one > 0 else None)
    return None


def to_source_layout(arr: np.ndarray, perm: "list[int] | tuple[int, ...] | None") -> np.ndarray:
    """A stored tensor in the source's axis order, given its ``graph.meta["layouts"]`` permutation.

    ``stored = source.transpose(perm)``, so ``source = stored.transpose(argsort(perm))``; the
    result has the source's shape left-padded to the permutation's rank (:func:`align` drops the padding).
    """
    if not perm:
        return arr
    if arr.ndim != len(perm):
        arr = arr.reshape((1,) * (len(perm) - arr.ndim) + arr.shape)
    return np.transpose(arr, tuple(int(p) for p in np.argsort(np.asarray(perm))))


def engine_tensors(graph: Graph, values: Mapping[Ref, np.ndarray]) -> dict[str, RealTensor]:
    """Every mapped source tensor that the run produced, in real units and source layout.

    ``values`` are the engine's marked tensors plus the INPUT node's outputs;
    Const data is read from the graph. Tensors with no readable value or
    range are left out. Order follows ``graph.tensor_map`` (import order).
    """
    layouts = graph.meta.get("layouts") or {}
    out: dict[str, RealTensor] = {}
    for name in graph.tensor_map:
        t = dequantize_tensor(graph, name, values)
        if t is None:
            continue
        perm = layouts.get(name) if isinstance(layouts, dict) else None
        out[name] = RealTensor(to_source_layout(t.value, perm), t.step)
    return out


def align(test: np.ndarray, ref: np.ndarray) -> np.ndarray | None:
    """``test`` in ``ref``'s shape: as is, reshaped when only the rank differs (4-D [1,1,1,C] vs [1,C]), else None."""
    if test.shape == ref.shape:
        return test
    if test.size == ref.size:
        return test.reshape(ref.shape)
    return None
