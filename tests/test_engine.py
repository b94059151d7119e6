"""The engine: list-order execution, "mark all" intermediates, node state across runs (SEMANTICS §5)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.engine import Engine
from hexnn_import.errors import InputDataError, OpError
from hexnn_import.graph import Graph, NNPad, OutputDef, Ref
from hexnn_import.ops import run_op
from hexnn_import.ops.output_stage.nnlib_execute import STATE_KEY


def auto_supernode_graph() -> tuple[Graph, int, int]:
    """INPUT(float) -> AutoQuantize -> Supernode (auto output range) -> Dequantize -> OUTPUT."""
    g = Graph()
    inp = g.append("INPUT", [], [OutputDef((1, 4, 4, 2), "float")], name="x")
    aq = g.append("AutoQuantize", [Ref(inp.node_id, 0)],
                  [OutputDef((1, 4, 4, 2), "quint8"), OutputDef.scalar(), OutputDef.scalar()], name="aq")
    w = g.const_ref(np.array([[[[200, 56], [128, 255]]]], dtype=np.uint8).reshape(1, 1, 2, 2), "w")
    refs = [Ref(aq.node_id, 0), w, Ref(aq.node_id, 1), Ref(aq.node_id, 2), g.const_ref(-1.0), g.const_ref(1.0),
            g.shape_ref((1, 1, 1, 1)), g.const_ref(np.zeros((1, 1, 1, 2), np.int32)), g.const_ref(-1.0),
            g.const_ref(1.0), g.const_ref(float("-inf")), g.const_ref(float("inf"))]
    sn = g.append("Supernode_8x8p32to8", refs,
                  [OutputDef((1, 4, 4, 2), "quint8"), OutputDef.scalar(), OutputDef.scalar()], NNPad.SAME, "sn")
    dq = g.append("Dequantize", [Ref(sn.node_id, 0), Ref(sn.node_id, 1), Ref(sn.node_id, 2)],
                  [OutputDef((1, 4, 4, 2), "float")], name="dq")
    g.append("OUTPUT", [Ref(dq.node_id, 0), Ref(sn.node_id, 1), Ref(sn.node_id, 2)], [])
    g.verify()
    return g, aq.node_id, sn.node_id


def test_mark_all_matches_ops_run_one_by_one() -> None:
    g, aq_id, sn_id = auto_supernode_graph()
    x = np.random.default_rng(0).uniform(-1, 1, size=(1, 4, 4, 2)).astype(np.float32)
    outs, every = Engine(g).run([x], mark_all=True)
    # the same chain evaluated op by op, outside the engine
    q, mn, mx = run_op("AutoQuantize", [x])
    sn_node = g.node(sn_id)
    ins = [q, g.node(sn_node.inputs[1].src_id).data, mn, mx] + [g.node(r.src_id).data for r in sn_node.inputs[4:]]
    y, ymn, ymx = run_op("Supernode_8x8p32to8", ins, padding=NNPad.SAME)
    assert np.array_equal(every[Ref(aq_id, 0)], q)
    assert np.array_equal(every[Ref(sn_id, 0)], y)
    (deq,) = run_op("Dequantize", [y, ymn, ymx])
    assert np.array_equal(outs[0], deq)
    assert {r.src_id for r in every} == {n.node_id for n in g.nodes if not n.is_const and n.op not in ("INPUT", "OUTPUT")}


def test_auto_range_state_persists_and_only_grows() -> None:
    """The supernode's output range lives in the node's state, as nnlib keeps it in the node info
    (op_supernode_new.c): ``check_for_retry`` only ever widens it, and a later run starts from it."""
    g, _, sn_id = auto_supernode_graph()
    eng = Engine(g)
    small = np.full((1, 4, 4, 2), 0.1, np.float32)
    small[0, 0, 0, 0] = -0.1
    big = small * 40

    def run(x: np.ndarray) -> tuple[float, float]:
        _, mn, mx = eng.run([x])[0]
        kept = eng.state[sn_id][STATE_KEY]   # the range the node reports is the range it keeps
        assert (kept.spec_lo, kept.spec_hi) == (-np.inf, np.inf) and kept.auto
        assert (float(kept.lo), float(kept.hi)) == (mn.item(), mx.item())
        return mn.item(), mx.item()

    mn1, mx1 = run(small)
    mn2, mx2 = run(big)
    mn3, mx3 = run(small)
    assert mn1 < 0.0 < mx1
    assert mx2 > mx1 and mn2 <= mn1
    # the widened range is kept for the later small input: ranges only grow
    assert (mn3, mx3) == (mn2, mx2)
    # a fresh engine starts again from the initial range
    _, mn4, mx4 = Engine(g).run([small])[0]
    assert (mn4.item(), mx4.item()) == (mn1, mx1)


def test_feed_checks_and_op_errors_name_the_node() -> None:
    g, _, _ = auto_supernode_graph()
    eng = Engine(g)
    with pytest.raises(InputDataError, match="dtype"):
        eng.run([np.zeros((1, 4, 4, 2), np.float64)])
    with pytest.raises(InputDataError, match="shape"):
        eng.run([np.zeros((1, 4, 4, 3), np.float32)])
    bad = np.zeros((1, 4, 4, 2), np.float32)
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(OpError, match="aq"):
        eng.run([bad])
