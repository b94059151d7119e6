"""Const nodes made during prepare (hexagon_nn_prepare_notes.txt, "Functions to add const nodes").

- :func:`do_prepend_const_node` makes a Const of any shape at the *front* of
  the list, so any node may read it.
- :func:`create_const_float_op` / :func:`create_const_int32_op` make (or
  reuse) a scalar ``[1,1,1,1]`` Const. 0.0, -inf and +inf always have their
  own cache slot; other values share a least-recently-used cache of
  :data:`SCALAR_CACHE_SIZE` entries that throws out its oldest
  :data:`CACHE_DISCARD` when full ("best effort").
- Change a Const's data only when no other node reads it, then call
  :func:`purge_const_cache` with its id.

A cached id whose node has gone (dead-node removal) is a miss. Unlike the C
code, float and int32 scalars with the same bits are different entries: a
Const here carries its element type.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.errors import GraphError
from hexnn_import.graph import ELEMENT_DTYPES, Node, OutputDef, element_type_of
from hexnn_import.optimizer.editor import ConstKey, GraphEditor

SCALAR_CACHE_SIZE = 32
CACHE_DISCARD = 4


def _key(dtype: str, value: np.ndarray) -> ConstKey:
    return dtype, int(value.view(np.int32).reshape(-1)[0])


_FIXED = {_key("float", np.float32(v).reshape(1)) for v in (0.0, -math.inf, math.inf)}


def new_internal_node_id(nn: GraphEditor) -> int:
    """A fresh node id (nn_graph_new_internal_node_id)."""
    return nn.new_internal_node_id()


def do_prepend_const_node(nn: GraphEditor, node_id: int, batches: int, height: int, width: int, depth: int,
                          data: np.ndarray | bytes | None = None, dtype: str = "uint8", name: str = "") -> Node:
    """Make a Const ``[batches, height, width, depth]`` at the front of the list and in the hash.

    ``data`` (any shape with that many elements, converted to ``dtype``, or
    raw bytes of ``dtype``) is copied; ``None`` makes a zero-filled node of ``dtype`` (the notes'
    'shape only' or 'fill it in afterwards' node: find it with find_node).
    Returns the node; GraphError if the id is taken or the sizes disagree.
    """
    shape = (int(batches), int(height), int(width), int(depth))
    if data is None:
        arr = np.zeros(shape, dtype=ELEMENT_DTYPES[dtype])
    else:
        want = ELEMENT_DTYPES[dtype]
        arr = np.frombuffer(data, dtype=want) if isinstance(data, bytes) else np.asarray(data).astype(want)
        if arr.size != math.prod(shape):
            raise GraphError(f"Const {node_id}: {arr.size} data elements for shape {list(shape)}")
        arr = np.ascontiguousarray(arr).reshape(shape).copy()
    node = Node(int(node_id), "Const", [], [OutputDef(shape, element_type_of(arr))], name=name, data=arr)
    nn.place([node], None, None, False)
    return node


def _cached(nn: GraphEditor, key: ConstKey) -> int | None:
    cache = nn.const_cache
    nid = cache.fixed.get(key) if key in _FIXED else cache.lru.get(key)
    if nid is None:
        return None
    if nn.graph.find_node(nid) is None:  # removed as dead since
        (cache.fixed if key in _FIXED else cache.lru).pop(key, None)
        return None
    if key not in _FIXED:
        cache.lru.move_to_end(key)
    return nid


def _remember(nn: GraphEditor, key: ConstKey, nid: int) -> None:
    cache = nn.const_cache
    if key in _FIXED:
        cache.fixed[key] = nid
        return
    if len(cache.lru) >= SCALAR_CACHE_SIZE:
        for _ in range(CACHE_DISCARD):
            cache.lru.popitem(last=False)
    cache.lru[key] = nid


def _scalar(nn: GraphEditor, value: np.ndarray) -> int:
    dtype = element_type_of(value)
    key = _key(dtype, value)
    nid = _cached(nn, key)
    if nid is None:
        nid = new_internal_node_id(nn)
        do_prepend_const_node(nn, nid, 1, 1, 1, 1, value, dtype)
        _remember(nn, key, nid)
    return nid


def create_const_float_op(nn: GraphEditor, value: float) -> int:
    """Id of a float32 scalar Const holding ``value`` (made, or reused from the cache)."""
    return _scalar(nn, np.asarray([value], dtype=np.float32))


def create_const_int32_op(nn: GraphEditor, value: int) -> int:
    """Id of an int32 scalar Const holding ``value`` (made, or reused from the cache)."""
    return _scalar(nn, np.asarray([value], dtype=np.int32))


def purge_const_cache(nn: GraphEditor, node_id: int) -> None:
    """Forget ``node_id`` in the scalar cache (call after changing that Const's data)."""
    cache = nn.const_cache
    for table in (cache.fixed, cache.lru):
        for key, nid in list(table.items()):
            if nid == node_id:
                del table[key]
                return


def get_zero_node(nn: GraphEditor) -> int:
    """create_const_float_op(nn, 0.0)."""
    return create_const_float_op(nn, 0.0)


def get_ninf_node(nn: GraphEditor) -> int:
    """create_const_float_op(nn, -inf)."""
    return create_const_float_op(nn, -math.inf)


def get_inf_node(nn: GraphEditor) -> int:
    """create_const_float_op(nn, +inf)."""
    return create_const_float_op(nn, math.inf)
