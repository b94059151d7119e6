"""QuantizedSum_8to32 against hexagon_nn's device code (op_reducing_sum.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_sum`` (issue 36): op_reducing_sum.c compiled whole and
unedited with nnlib's own ``nn_graph.h`` and src/quantize.c; the registered ``reducing_sum_execute`` (the output
shape read from its definition, include/nn_reduce_utils.h's HVX sums one listed axis at a time or all at once,
HVX ``adjust_output_range``) on every axis set, ranges holding 0 or not, repeated axes.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_node  # noqa: E402
import op_sum  # noqa: E402
from hexnn_import.ops.nnlib_reduce_passes import needs_replay  # noqa: E402


def _load() -> dict[str, np.ndarray]:
    meta, g = op_common.load_golden("sum")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_reducing_sum.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 362 and not g["status"].any()
    return g


def test_sum_equals_device_code() -> None:
    """All 362 nodes (62 edge, 300 random) equal the device bit for bit: the int32 sums, their shape, the float32
    range (among them the nodes whose later passes misplace sums and those with a repeated axis)."""
    g = _load()
    bad = [i for i in range(len(g["hdr"])) if not op_sum.engine_case(g, i)[0]]
    assert bad == []


def test_device_sums_are_code_sums_where_no_pass_misplaces() -> None:
    """What the golden set must show, worked in numpy: where no later pass has several reduction batches and no
    axis repeats, the device's output is the sum of ``code - zero`` with ``zero`` the code of 0.0 of the (zero-fixed)
    range, and one qint32 code of the output range is one input step within a float32 rounding; elsewhere some
    sums are not."""
    g = _load()
    exact = misplaced = 0
    for i in range(len(g["hdr"])):
        x, lo, hi, axes = op_node.case_inputs(g, i)
        order = axes.reshape(-1).tolist()
        dev = op_node.run_outputs(g, i)[1]
        got = dev[0][1].view(np.int32)
        out_max = float(dev[2][1].view(np.float32)[0])
        truth = x.astype(np.int64).sum(axis=tuple(set(order)), keepdims=True).reshape(-1)
        step = out_max / 2 ** 31
        if len(set(order)) == len(order) and not (len(order) < 4 and truth.size > 1 and needs_replay(x.shape, order)):
            n = int(np.prod([x.shape[a] for a in order]))
            zeros = (truth - got) / n
            assert np.all(zeros == zeros[0]) and 0 <= zeros[0] <= 255 and zeros[0] == int(zeros[0]), i
            z = int(zeros[0])
            if lo.item() <= 0.0 <= hi.item():
                assert abs(lo.item() + z * step) <= 2 * step, i     # the code of 0.0 (the min moves by under a step)
            assert abs(step * 255 - (hi.item() - lo.item())) <= 0.02 * (hi.item() - lo.item()) + 1e-6, i
            exact += 1
        elif needs_replay(x.shape, order) and len(set(order)) == len(order):
            misplaced += bool(np.unique(got - truth).size > 1)
    assert exact >= 250 and misplaced >= 5


def test_repeated_axis_takes_the_zero_code_again() -> None:
    """The device's ``elems`` multiplies the size of each listed axis: a node listing axis 1 twice subtracts the
    zero code ``h * h`` times per output (the first vector of the node's output; the size-1 second pass misplaces
    later batches' sums over the end of batch 0)."""
    g = _load()
    seen = 0
    for i in range(len(g["hdr"])):
        x, lo, hi, axes = op_node.case_inputs(g, i)
        order = axes.reshape(-1).tolist()
        if order != [1, 1]:
            continue
        got = op_node.run_outputs(g, i)[1][0][1].view(np.int32).astype(np.int64)[:32]
        truth = x[0].astype(np.int64).sum(axis=0).reshape(-1)[:32]   # the first vector: batch 1 lands after it
        h = x.shape[1]
        zero = (truth - got) / (h * h)
        assert h > 1 and np.all(zero == zero[0]) and zero[0] > 0
        seen += 1
    assert seen == 1
