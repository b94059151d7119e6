"""The graph-editing utilities of hexagon_nn_prepare_notes.txt ("Functions"): lookup, consumers,
reconnecting inputs, replacing parts of the graph; the indexes stay consistent (verify())."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.errors import GraphError
from hexnn_import.graph import Graph, OutputDef, Ref
from hexnn_import.optimizer.consts import create_const_float_op
from hexnn_import.optimizer.edits import (change_multi_output_refs, change_multi_output_refs_table,
                                          change_output_refs, insert_nodes, node_rehash_inputrefs,
                                          replace_node_with, replace_nodes)
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.lookup import (CONSUMER_NOINCHECK, check_all_outputs, check_single_consumer_all,
                                           find_node, find_node_must_be, find_node_must_be_Const,
                                           find_node_must_be_Const_from_ref, find_unique_consumer,
                                           find_unique_consumer_anytype, find_unique_consumer_mustbe)
from hexnn_import.testing.prepare_graphs import QBuilder, q3


def relu_chain() -> tuple[QBuilder, list]:
    """INPUT -> Relu -> Relu -> OUTPUT (quint8 [1,2,2,4])."""
    b = QBuilder()
    x = b.input((1, 2, 2, 4))
    r1 = b.op("QuantizedRelu_8", x, (1, 2, 2, 4), name="r1")
    r2 = b.op("QuantizedRelu_8", q3(r1), (1, 2, 2, 4), name="r2")
    out = b.output(q3(r2))
    return b, [x, r1, r2, out]


def test_find_node_variants() -> None:
    b, (x, r1, r2, out) = relu_chain()
    g = b.g
    assert find_node(g, r1.node_id) is r1
    assert find_node(g, 99999) is None
    assert find_node_must_be(g, r1.node_id, "QuantizedRelu_8") is r1
    assert find_node_must_be(g, r1.node_id, "QuantizedReluX_8") is None
    mn = g.node(x[1].src_id)
    assert find_node_must_be_Const(g, mn.node_id) is mn
    assert find_node_must_be_Const(g, r1.node_id) is None
    assert find_node_must_be_Const_from_ref(g, x[1]) is mn
    assert find_node_must_be_Const_from_ref(g, Ref(mn.node_id, 1)) is None  # output_idx must be 0
    assert find_node_must_be_Const_from_ref(g, Ref(r1.node_id, 0)) is None


def test_find_unique_consumer_and_noincheck() -> None:
    b = QBuilder()
    x = b.input((1, 2, 2, 4))
    y = b.input((1, 2, 2, 4))
    r = b.op("QuantizedRelu_8", x, (1, 2, 2, 4))
    # Add reads r (data/min/max) and y: y is neither r nor a Const
    add = b.op("QuantizedAdd_8p8to32", [Ref(r.node_id, 0), y[0], Ref(r.node_id, 1), Ref(r.node_id, 2), y[1], y[2]],
               (1, 2, 2, 4), "qint32")
    b.output(q3(add))
    g = b.g
    assert find_unique_consumer_anytype(g, r) is None
    assert find_unique_consumer_anytype(g, r, CONSUMER_NOINCHECK) is add
    assert find_unique_consumer_mustbe(g, r, "QuantizedAdd_8p8to32", CONSUMER_NOINCHECK) is add
    assert find_unique_consumer_mustbe(g, r, "QuantizedRelu_8", CONSUMER_NOINCHECK) is None
    assert find_unique_consumer(g, r, ["QuantizedRelu_8", "QuantizedAdd_8p8to32"], CONSUMER_NOINCHECK) is add
    assert find_unique_consumer(g, r, ["QuantizedRelu_8"], CONSUMER_NOINCHECK) is None
    # the Add's inputs 0, 2, 3 come from r and the rest from Consts or y: with a Const y it passes
    b2, (x2, r1, r2, _) = relu_chain()
    assert find_unique_consumer_anytype(b2.g, r1) is r2
    # two consumers: none is unique
    b2.g.append("QuantizedRelu_8", q3(r1), [OutputDef((1, 2, 2, 4), "quint8"), OutputDef.scalar(), OutputDef.scalar()])
    assert find_unique_consumer_anytype(b2.g, r1, CONSUMER_NOINCHECK) is None


def test_check_single_consumer_all() -> None:
    b, (x, r1, r2, out) = relu_chain()
    assert check_single_consumer_all(b.g, r1, r2) == 0
    assert check_all_outputs(b.g, r1, r2) == 0
    assert check_single_consumer_all(b.g, r1, out) == -1  # out does not read r1
    b.g.append("QuantizedRelu_8", q3(r1), [OutputDef((1, 2, 2, 4), "quint8"), OutputDef.scalar(), OutputDef.scalar()])
    assert check_single_consumer_all(b.g, r1, r2) == -1


def test_change_output_refs_nybble_pattern() -> None:
    """0xF321 style: nybble n != 0, 0xF -> (new, n-1); 0xF keeps; 0 is an error and changes nothing."""
    b, (x, r1, r2, out) = relu_chain()
    g = b.g
    ed = GraphEditor(g)
    # r2 reads r1:0,1,2; a new Relu on x (placed before r1) takes over some of them
    new = ed.make_node("QuantizedRelu_8", x, r1.output_defs, name="new")
    insert_nodes(ed, r1, new)
    # output 0 -> new:0 (nybble 1), output 1 kept (F), output 2 -> new:2 (nybble 3)
    assert change_output_refs(ed, None, r1.node_id, new.node_id, 0x3F1) == 2
    assert r2.inputs == [Ref(new.node_id, 0), Ref(r1.node_id, 1), Ref(new.node_id, 2)]
    with pytest.raises(GraphError, match="reads output 1"):
        change_output_refs(ed, None, r1.node_id, new.node_id, 0x301)  # nybble 0 for output 1
    assert r2.inputs == [Ref(new.node_id, 0), Ref(r1.node_id, 1), Ref(new.node_id, 2)]  # unchanged
    ed.commit()
    g.verify()
    assert [n.name for n in g.nodes if not n.is_const][:3] == ["in", "new", "r1"]


def test_change_multi_output_refs_and_table() -> None:
    b, (x, r1, r2, out) = relu_chain()
    ed = GraphEditor(b.g)
    # table: 0 -> x data, 1 unchanged (None), 2 unchanged (src_id 0)
    n = change_multi_output_refs_table(ed, None, r2.node_id, 3, [x[0], None, (0, 0)])
    assert n == 1 and out.inputs == [x[0], Ref(r2.node_id, 1), Ref(r2.node_id, 2)]
    # node table: refs become (node, 0)
    assert change_multi_output_refs(ed, None, r2.node_id, 3, [None, r1, None]) == 1
    assert out.inputs == [x[0], Ref(r1.node_id, 0), Ref(r2.node_id, 2)]
    b.g.verify()
    assert b.g.is_referenced(r1.node_id) and {c.node_id for c in b.g.consumers(r1.node_id)} == {r2.node_id, out.node_id}


def test_replace_nodes_new_node_inherits_id_and_consumers() -> None:
    b, (x, r1, r2, out) = relu_chain()
    g = b.g
    ed = GraphEditor(g)
    six = Ref(create_const_float_op(ed, 6.0), 0)  # prepended: readable from anywhere
    fused = ed.make_node("QuantizedReluX_8", [*x, six], r2.output_defs, name="fused", node_id=r2.node_id)
    replace_nodes(ed, None, fused, r2, r1)  # new node takes r2's place (r2's readers keep their refs)
    assert find_node(ed, r2.node_id) is fused and find_node(ed, r1.node_id) is None
    assert g.consumers(r2.node_id) == [out]
    ed.commit()
    g.verify()
    assert [n.name for n in g.nodes if not n.is_const] == ["in", "fused", "out"]
    with pytest.raises(GraphError, match="not in the graph"):
        replace_nodes(ed, None, None, r1)


def test_replace_node_with_and_insert_nodes_keep_order() -> None:
    b, (x, r1, r2, out) = relu_chain()
    g = b.g
    ed = GraphEditor(g)
    a1 = ed.make_node("QuantizedRelu_8", x, r1.output_defs, name="a1")
    a2 = ed.make_node("QuantizedRelu_8", q3(a1), r1.output_defs, name="a2", node_id=r1.node_id)
    assert replace_node_with(ed, None, r1, a1, None, a2) == 2  # None entries are skipped
    tail = ed.make_node("QuantizedRelu_8", q3(r2), r2.output_defs, name="after_r2")
    head = ed.make_node("QuantizedRelu_8", x, r1.output_defs, name="before_r2")
    assert insert_nodes(ed, r2, tail, after=True) == 1
    assert insert_nodes(ed, r2, head) == 1
    ed.commit()
    g.verify()
    assert [n.name for n in g.nodes if not n.is_const] == ["in", "a1", "a2", "before_r2", "r2", "after_r2", "out"]


def test_node_rehash_inputrefs_keeps_the_consumer_index() -> None:
    b, (x, r1, r2, out) = relu_chain()
    ed = GraphEditor(b.g)
    node_rehash_inputrefs(ed, out, x)
    assert b.g.consumers(r2.node_id) == [] and out in b.g.consumers(x[0].src_id)
    b.g.verify()


def test_edits_refuse_bad_requests() -> None:
    b, (x, r1, r2, out) = relu_chain()
    ed = GraphEditor(b.g)
    with pytest.raises(GraphError, match="not in the op catalog"):
        ed.make_node("NoSuchOp", [], [])
    bad = ed.make_node("QuantizedRelu_8", [Ref(424242, 0), x[1], x[2]], r1.output_defs)
    with pytest.raises(GraphError, match="names no output"):
        insert_nodes(ed, None, bad)
    with pytest.raises(GraphError, match="twice"):
        replace_nodes(ed, None, None, r1, r1)
    dup = ed.make_node("QuantizedRelu_8", x, r1.output_defs, node_id=r2.node_id)
    with pytest.raises(GraphError, match="already in the graph"):
        insert_nodes(ed, None, dup)


def test_new_ids_are_fresh_even_for_ids_still_referenced() -> None:
    g = Graph()
    c = g.add_const(np.zeros((1, 1, 1, 1), np.float32))
    ed = GraphEditor(g)
    g._next_id = c.node_id  # force new_id to walk past taken ids
    ids = {ed.new_internal_node_id() for _ in range(5)}
    assert len(ids) == 5 and c.node_id not in ids


_NODES_OF_BY_SEED = """
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.testing.prepare_graphs import QBuilder, q3
b = QBuilder()
x = b.input((1, 2, 2, 4))
ops = ["QuantizedRelu_8", "QuantizedReluX_8", "QuantizedSigmoid_8", "QuantizedTanh_8", "QuantizedNeg_8",
       "QuantizedAbs_8", "QuantizedClamp_8", "QuantizedSqrt_8"]
for i, op in enumerate(ops):
    x = q3(b.op(op, x, (1, 2, 2, 4), name=f"n{i}"))
b.output(x)
print(" ".join(n.name for n in GraphEditor(b.g).nodes_of(frozenset(ops), ordered=False)))
"""


def test_nodes_of_does_not_depend_on_the_string_hash_seed() -> None:
    """A pass visits its roots (``nodes_of(..., ordered=False)``) in the same order in every process: prepare's new
    node ids, and with them the graph file, do not change with PYTHONHASHSEED (they did: a frozenset of op names
    was walked in hash order; the float OCR classifier's file differed between processes)."""
    import os
    import subprocess
    import sys

    orders = {subprocess.run([sys.executable, "-c", _NODES_OF_BY_SEED], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3, 4)}
    assert len(orders) == 1, orders
    assert orders.pop().split() == ["n5", "n6", "n4", "n1", "n0", "n2", "n7", "n3"]   # by op name
