"""Variable and Assign in the engine: prepare-time initialisation (zero-length Const), values that
persist across runs, in-run reference semantics, muted Assign outputs, host read/write between runs
(op texts "Variable", "Assign"; ops/kernels/graph_variable.py)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.engine import Engine
from hexnn_import.errors import GraphError, OpError
from hexnn_import.graph import Graph, OutputDef, Ref

Q2 = OutputDef((1, 1, 1, 2), "quint8")


def accumulator_graph() -> tuple[Graph, int, int]:
    """var += x each run, with quint8 on [0, 255] (step 1, zero 0: the add is a plain code sum).

    INPUT x -> QuantizedAdd_8p8to8(var, x) -> Assign(var, sum) (muted output) -> Nop(var) -> OUTPUT(sum, nop)
    """
    g = Graph()
    x = g.append("INPUT", [], [Q2], name="x")
    # zero-length Const: element size 0, shape [1,1,1,2]; the Variable's output def gives quint8
    z = g.append("Const", [], [OutputDef((1, 1, 1, 2), "void")], name="zeros")
    z.data = np.zeros((1, 1, 1, 2), np.dtype("V0"))
    var = g.append("Variable", [Ref(z.node_id, 0)], [Q2], name="var")
    lo, hi = g.const_ref(0.0), g.const_ref(255.0)
    add = g.append("QuantizedAdd_8p8to8", [Ref(var.node_id, 0), Ref(x.node_id, 0), lo, hi, lo, hi, lo, hi],
                   [Q2, OutputDef.scalar(), OutputDef.scalar()], name="add")
    asg = g.append("Assign", [Ref(var.node_id, 0), Ref(add.node_id, 0)], [OutputDef((1, 1, 1, 2), "void")],
                   name="assign")
    nop = g.append("Nop", [Ref(var.node_id, 0)], [Q2], name="after")
    g.append("OUTPUT", [Ref(add.node_id, 0), Ref(nop.node_id, 0)], [])
    g.verify()
    return g, var.node_id, asg.node_id


def feed(a: int, b: int) -> list[np.ndarray]:
    return [np.array([a, b], np.uint8).reshape(1, 1, 1, 2)]


def test_variable_accumulates_over_runs():
    g, var_id, asg_id = accumulator_graph()
    eng = Engine(g)
    # prepared: zero-length Const -> all "zero" quint8 of the Const's shape
    before = eng.read_variable(var_id)
    assert before.dtype == np.uint8 and before.tolist() == [[[[0, 0]]]]
    out1, marks = eng.run(feed(1, 2), mark_all=True)
    # sum = 0 + x; Assign writes it; the Nop after the Assign sees the new value (reference semantics)
    assert out1[0].tolist() == [[[[1, 2]]]] and out1[1].tolist() == [[[[1, 2]]]]
    assert marks[Ref(asg_id, 0)].dtype.itemsize == 0                 # muted Assign output: no copy
    out2, _ = eng.run(feed(10, 20))
    assert out2[0].tolist() == [[[[11, 22]]]]
    assert eng.read_variable(var_id).tolist() == [[[[11, 22]]]]
    # results handed out by run 1 are not written by run 2
    assert out1[0].tolist() == [[[[1, 2]]]] and out1[1].tolist() == [[[[1, 2]]]]
    # host write between runs, then run 3 starts from it
    eng.write_variable(var_id, np.array([100, 0], np.uint8))
    out3, _ = eng.run(feed(1, 1))
    assert out3[0].tolist() == [[[[101, 1]]]]
    # a fresh engine starts from the prepared value again
    assert Engine(g).read_variable(var_id).tolist() == [[[[0, 0]]]]


def test_variable_from_const_and_without_inputs():
    g = Graph()
    init = g.const_ref(np.array([1.5, 2.5], np.float32).reshape(1, 1, 1, 2))
    v1 = g.append("Variable", [init], [OutputDef((1, 1, 1, 2), "float")], name="v1")
    v2 = g.append("Variable", [], [OutputDef((1, 1, 2, 1), "int32"), OutputDef((1, 1, 1, 1), "float")], name="v2")
    g.append("OUTPUT", [Ref(v1.node_id, 0), Ref(v2.node_id, 1)], [])
    eng = Engine(g)
    value = eng.read_variable(v1.node_id)
    assert value.tolist() == [[[[1.5, 2.5]]]]
    value[...] = 0                                              # a copy: the variable is unchanged
    assert eng.read_variable(v1.node_id).tolist() == [[[[1.5, 2.5]]]]
    assert eng.read_variable(v2.node_id, 0).tolist() == [[[[0], [0]]]]
    outs, _ = eng.run([])
    assert outs[0].tolist() == [[[[1.5, 2.5]]]] and outs[1].tolist() == [[[[0.0]]]]
    # the init Const is copied, never written
    assert g.node(init.src_id).data.tolist() == [[[[1.5, 2.5]]]]


def test_variable_errors():
    g, var_id, asg_id = accumulator_graph()
    eng = Engine(g)
    with pytest.raises(GraphError, match="not a Variable"):
        eng.read_variable(asg_id)
    with pytest.raises(OpError, match="var.*dtype float32"):
        eng.write_variable(var_id, np.zeros((1, 1, 1, 2), np.float32))
    with pytest.raises(OpError, match="at most 2"):
        eng.write_variable(var_id, np.zeros((1, 1, 1, 3), np.uint8))
    with pytest.raises(OpError, match="no output 1"):
        eng.read_variable(var_id, 1)
    # Assign must write into a Variable: checked when the engine is built
    g2 = Graph()
    c = g2.const_ref(np.zeros((1, 1, 1, 2), np.float32))
    g2.append("Assign", [c, c], [], name="bad_assign")
    with pytest.raises(OpError, match="bad_assign.*must be connected to a Variable"):
        Engine(g2)
