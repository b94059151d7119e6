"""remove_dead_nodes (to a fixed point in one pass) and gather_const_nodes (Consts first, stable)."""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.check import GRAPHCHECK_NONCONST, check_graph
from hexnn_import.optimizer.cleanup import GatherConstNodes, RemoveDeadNodes
from hexnn_import.testing.prepare_graphs import QBuilder, canonical, q3


def test_dead_chains_go_in_one_pass_and_retained_nodes_stay() -> None:
    b = QBuilder()
    x = b.input((1, 2, 2, 3))
    live = b.op("QuantizedRelu_8", x, (1, 2, 2, 3), name="live")
    d1 = b.op("QuantizedRelu_8", x, (1, 2, 2, 3), name="d1")
    d2 = b.op("QuantizedRelu_8", q3(d1), (1, 2, 2, 3), name="d2")
    b.op("QuantizedRelu_8", q3(d2), (1, 2, 2, 3), name="d3")  # nothing reads d3 -> d3, d2, d1 all dead
    b.c(np.zeros((1, 1, 1, 5), np.float32))                   # an unread Const
    b.g.append("Sink", [Ref(live.node_id, 0)], [])             # no outputs: retained
    b.output(q3(live))
    report = run_pipeline(b.g, [RemoveDeadNodes()])
    assert report.records[0].rewrites == 4
    assert [n[1] for n in canonical(b.g)] == ["in", "live", "", "out"]
    assert sum(n.is_const for n in b.g.nodes) == 2  # the INPUT's min/max
    again = run_pipeline(b.g, [RemoveDeadNodes()])
    assert again.records[0].rewrites == 0


def test_an_unread_input_is_kept() -> None:
    b = QBuilder()
    b.input((1, 2, 2, 3))
    b.output([b.c(1.0)])
    run_pipeline(b.g, [RemoveDeadNodes()])
    assert [n.op for n in b.g.nodes if not n.is_const] == ["INPUT", "OUTPUT"]


def test_gather_const_nodes_is_a_stable_partition() -> None:
    b = QBuilder()
    x = b.input((1, 2, 2, 3))                 # Consts: x min, x max
    r = b.op("QuantizedReluX_8", [*x, b.c(6.0)], (1, 2, 2, 3), name="r")
    b.output([*q3(r), b.c(7.0)])
    before = [n for n in b.g.nodes]
    report = run_pipeline(b.g, [GatherConstNodes()], debug_level=1)  # the NONCONST check runs after it
    consts = [n for n in before if n.is_const]
    assert b.g.nodes == consts + [n for n in before if not n.is_const]
    assert [float(c.data.item()) for c in consts] == [-1.0, 1.0, 6.0, 7.0]
    assert report.records[0].rewrites == 4  # every Const changed position (INPUT was first)
    assert check_graph(b.g, GRAPHCHECK_NONCONST) == []
