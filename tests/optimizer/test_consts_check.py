"""Const nodes made during prepare (the scalar cache, do_prepend_const_node) and check_graph
(hexagon_nn_prepare_notes.txt, "Functions to add const nodes" and "check_graph")."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.errors import GraphError
from hexnn_import.graph import Graph, OutputDef
from hexnn_import.optimizer.check import (GRAPHCHECK_DEADNODES, GRAPHCHECK_HASH, GRAPHCHECK_NONCONST,
                                          check_graph)
from hexnn_import.optimizer.consts import (CACHE_DISCARD, SCALAR_CACHE_SIZE, create_const_float_op,
                                           create_const_int32_op, do_prepend_const_node, get_inf_node,
                                           get_ninf_node, get_zero_node, new_internal_node_id,
                                           purge_const_cache)
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.lookup import find_node
from hexnn_import.testing.prepare_graphs import QBuilder, q3


def editor() -> GraphEditor:
    b = QBuilder()
    x = b.input((1, 2, 2, 1))
    b.output(x)
    return GraphEditor(b.g)


def test_scalar_consts_are_cached_by_value_and_type() -> None:
    ed = editor()
    a = create_const_float_op(ed, 0.25)
    assert create_const_float_op(ed, 0.25) == a
    assert create_const_float_op(ed, 0.5) != a
    i = create_const_int32_op(ed, 3)
    assert create_const_int32_op(ed, 3) == i
    node = find_node(ed, i)
    assert node.data.dtype == np.int32 and node.data.shape == (1, 1, 1, 1) and node.data.item() == 3
    assert find_node(ed, a).data.dtype == np.float32 and find_node(ed, a).data.item() == 0.25
    # 0.0 (float) and 0 (int32) have the same bits but are different Consts here
    assert get_zero_node(ed) != create_const_int32_op(ed, 0)
    assert get_zero_node(ed) == create_const_float_op(ed, 0.0)
    assert find_node(ed, get_ninf_node(ed)).data.item() == -math.inf
    assert find_node(ed, get_inf_node(ed)).data.item() == math.inf
    ed.commit()
    ed.graph.verify()
    assert all(n.is_const for n in ed.graph.nodes[:6])  # prepended


def test_cache_evicts_oldest_and_keeps_fixed_slots() -> None:
    ed = editor()
    zero = get_zero_node(ed)
    first = [create_const_float_op(ed, float(v)) for v in range(1, SCALAR_CACHE_SIZE + 1)]
    # full: the next new value throws out the oldest CACHE_DISCARD entries
    create_const_float_op(ed, 1000.0)
    assert create_const_float_op(ed, 1.0) != first[0]                   # evicted -> a new node
    assert create_const_float_op(ed, float(CACHE_DISCARD + 1)) == first[CACHE_DISCARD]  # kept
    assert get_zero_node(ed) == zero                                    # fixed slots never evicted


def test_purge_and_removed_nodes_are_misses() -> None:
    ed = editor()
    a = create_const_float_op(ed, 2.0)
    purge_const_cache(ed, a)
    b = create_const_float_op(ed, 2.0)
    assert b != a
    ed.replace(None, [find_node(ed, b)])  # as dead-node removal would
    c = create_const_float_op(ed, 2.0)
    assert c not in (a, b)


def test_do_prepend_const_node() -> None:
    ed = editor()
    nid = new_internal_node_id(ed)
    node = do_prepend_const_node(ed, nid, 1, 1, 2, 3, np.arange(6), "int32")
    assert node.data.shape == (1, 1, 2, 3) and node.data.dtype == np.int32
    assert node.output_defs == [OutputDef((1, 1, 2, 3), "int32")]
    empty = do_prepend_const_node(ed, new_internal_node_id(ed), 1, 3, 3, 1)  # shape only, zero filled
    assert empty.data.dtype == np.uint8 and not empty.data.any()
    raw = do_prepend_const_node(ed, new_internal_node_id(ed), 1, 1, 1, 2, np.float32([1.5, -2]).tobytes(), "float")
    assert raw.data.reshape(-1).tolist() == [1.5, -2.0]
    with pytest.raises(GraphError, match="data elements"):
        do_prepend_const_node(ed, new_internal_node_id(ed), 1, 1, 1, 4, np.arange(3), "int32")
    with pytest.raises(GraphError, match="already in the graph"):
        do_prepend_const_node(ed, nid, 1, 1, 1, 1)
    ed.commit()
    ed.graph.verify()
    # each goes to the head of the list, before the earlier ones (nnlib graphops.c do_prepend_const_node:
    # node->next = nn->head; nn->head = node), as the prepare oracle's node lists show
    assert ed.graph.nodes[:3] == [raw, empty, node]


def test_check_graph_does_nothing_below_debug_level_1() -> None:
    g = Graph()
    g.nodes.append(g.add_const(np.zeros(1, np.float32)))  # listed twice: broken
    assert check_graph(g, GRAPHCHECK_HASH, debug_level=0) == []
    with pytest.raises(GraphError, match="appears twice"):
        check_graph(g, 0, debug_level=1)


def test_check_graph_flags() -> None:
    b = QBuilder()
    x = b.input((1, 2, 2, 1))
    dead = b.op("QuantizedRelu_8", x, (1, 2, 2, 1), name="unused")
    b.output(x)
    b.c(1.0)  # a Const after the OUTPUT node
    g = b.g
    assert check_graph(g, GRAPHCHECK_HASH, debug_level=3) == [f"hash ok; {len(g)} of {len(g)} nodes are in hash"]
    msgs = check_graph(g, GRAPHCHECK_DEADNODES, debug_level=1)
    assert any("unused" in m for m in msgs) and not any("OUTPUT" in m or "in (" in m for m in msgs)
    with pytest.raises(GraphError, match="comes after the non-Const node"):
        check_graph(g, GRAPHCHECK_NONCONST, debug_level=1)
    assert dead.name == "unused"
    q3(dead)
