"""A floored AutoQuantize (optimizer/bias_fit_floor.py, issue 36): ``Min_f / Max_f -> Minimum_f(min, 0) /
Maximum_f(max, W) -> Quantize`` in place of AutoQuantize, whose range the device keeps only 1e-18 wide
(op_quantize.c ``find_scaling_for_hvx_quant``). Wherever the data's max is at least ``W`` it must give
AutoQuantize's codes and range (``quantize_execute_opt`` scales with the same function), but for the sign of a
zero minimum; below that, the range ``[min(0, min x), W]``."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.optimizer.bias_fit_floor import floor_range, floored_width
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.testing.prepare_graphs import QBuilder, q3, run_outputs

W = 2.0 ** -10
SHAPE = (1, 3, 4, 5)


def _floored_graph():  # type: ignore[no-untyped-def]
    """INPUT float -> AutoQuantize -> OUTPUT, the AutoQuantize floored at ``W``; returns (graph, its node)."""
    b = QBuilder()
    x = b.input(SHAPE, dtype="float")
    aq = b.op("AutoQuantize", x, SHAPE, name="x/autoquantize")
    b.output(q3(aq))
    ed = GraphEditor(b.g)
    q = floor_range(ed, aq, W)
    ed.commit()
    return b.g, q


def test_the_rewrite() -> None:
    graph, q = _floored_graph()
    ops = [n.op for n in graph.nodes if not n.is_const]
    assert "AutoQuantize" not in ops and {"Min_f", "Max_f", "Minimum_f", "Maximum_f", "Quantize"} <= set(ops)
    assert q.op == "Quantize" and q.name == "x/autoquantize" and floored_width(GraphEditor(graph), q) == W
    by_id = {n.node_id: n for n in graph.nodes}
    assert by_id[q.inputs[1].src_id].op == "Minimum_f" and by_id[q.inputs[2].src_id].op == "Maximum_f"


@pytest.mark.parametrize("seed", range(6))
def test_same_codes_as_autoquantize_where_the_max_reaches_the_floor(seed: int) -> None:
    """Random data of one or both signs, widths 1e-3 .. 1e3, some with an exact 0.0: the floored graph's codes
    and max equal AutoQuantize's bit for bit; the min too, or both are zeros (AutoQuantize -0.0, Quantize +0.0)."""
    rng = np.random.default_rng(seed)
    graph, _ = _floored_graph()
    for _ in range(8):
        s = 10.0 ** rng.uniform(-3, 3)
        lo = -s * rng.uniform(0, 1) if rng.random() < 0.7 else 0.0
        x = rng.uniform(lo, lo + s * 1.5, SHAPE).astype(np.float32)
        x.flat[0] = max(float(x.max()), W)
        if rng.random() < 0.3:
            x.flat[1] = 0.0
        want = run_op("AutoQuantize", [x])
        got = run_outputs(graph, [x])
        assert np.array_equal(got[0], want[0])
        assert got[2].tobytes() == want[2].astype(np.float32).tobytes()
        gmin, wmin = float(got[1].item()), float(want[1].item())
        assert gmin == wmin and (gmin != 0.0 or np.signbit(wmin) == (x.min() >= 0))


def test_blank_and_faint_inputs_take_the_floor() -> None:
    """All zeros: AutoQuantize reports [-0.0, 1e-18]; the floored form [0, W] with every code 0. Data under
    ``W`` keeps its own codes on [min(0, min x), W]: a positive value v gets round(v / (W / 255))."""
    graph, _ = _floored_graph()
    blank = np.zeros(SHAPE, np.float32)
    aq = run_op("AutoQuantize", [blank])
    assert float(aq[2].item()) == np.float32(1e-18)
    q, mn, mx = run_outputs(graph, [blank])
    assert not q.any() and float(mn.item()) == 0.0 and float(mx.item()) == W
    faint = np.full(SHAPE, W / 255 * 10, np.float32)
    q, mn, mx = run_outputs(graph, [faint])
    assert float(mx.item()) == W and np.all(q == 10)
