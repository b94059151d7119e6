"""QuantizedMean_8 against hexagon_nn's device code (op_reducing_mean.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_mean`` (issue 36): op_reducing_mean.c compiled whole and
unedited with nnlib's own ``nn_graph.h`` and src/quantize.c; the registered ``reducing_mean_execute`` (the output
shape read from its definition, include/nn_reduce_utils.h's HVX sums one axis at a time, HVX
``set_output_scaling_for_mean``) on every axis set, ranges holding 0 or not, given output ranges.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_mean  # noqa: E402
import op_node  # noqa: E402
from hexnn_import.ops.nnlib_reduce_passes import needs_replay  # noqa: E402


def test_mean_equals_device_code() -> None:
    """All 358 nodes (58 edge, 300 random) equal the device bit for bit (codes, shape, range), among them the 35
    whose later 32-bit pass misplaces sums on the device (more than one reduction batch; replayed by
    ``nnlib_reduce_passes.device_sums``) and one with a given output min above the max, which the device runs
    (every code its output offset) and the engine follows (issue 36)."""
    meta, g = op_common.load_golden("mean")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_reducing_mean.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 358 and not g["status"].any()
    bad = [i for i in range(len(g["hdr"])) if not op_mean.engine_case(g, i)[0]]
    assert bad == []
    above = [i for i in range(len(g["hdr"])) if len(op_node.case_inputs(g, i)) == 5
             and op_node.case_inputs(g, i)[4].item() > op_node.case_inputs(g, i)[2].item()]
    assert len(above) == 1
    replayed = [i for i in range(len(g["hdr"]))
                if needs_replay(op_node.case_inputs(g, i)[0].shape,
                                list(dict.fromkeys(int(a) % 4 for a in op_node.case_inputs(g, i)[3].reshape(-1))))]
    assert len(replayed) >= 35


def test_device_misplaced_sums_are_not_the_mean() -> None:
    """What the golden set must show: on some nodes with more than one reduction batch in a later pass the device's
    codes are not the rounded mean of the codes (worked in numpy on a zero-based range, no given output range),
    while every node without such a pass is within one code of it."""
    _, g = op_common.load_golden("mean")
    far = near = 0
    for i in range(len(g["hdr"])):
        x, lo, hi, axes = op_node.case_inputs(g, i)[:4]
        if len(op_node.case_inputs(g, i)) != 4 or lo.item() != 0.0:
            continue
        order = list(dict.fromkeys(int(a) % 4 for a in axes.reshape(-1)))
        mean = np.floor(x.mean(axis=tuple(order), keepdims=True, dtype=np.float64) + 0.5).reshape(-1)
        dev = op_node.run_outputs(g, i)[1][0][1].astype(np.float64)
        if needs_replay(x.shape, order):
            far += bool(np.abs(dev - mean).max() > 1)
        else:
            assert np.abs(dev - mean).max() <= 1, i
            near += 1
    assert far >= 1 and near >= 20


def test_device_mean_of_constant_data_is_the_constant() -> None:
    """A property the golden set must show: all-0 or all-255 data over a zero-exact range with no given output
    range comes back as the same code."""
    _, g = op_common.load_golden("mean")
    seen = 0
    for i in range(len(g["hdr"])):
        x = op_node.case_inputs(g, i)
        if len(x) == 4 and x[0].size > 1 and x[0].min() == x[0].max() and x[1].item() <= 0 <= x[2].item():
            codes = op_node.run_outputs(g, i)[1][0][1]
            assert (codes == x[0].reshape(-1)[0]).all(), i
            seen += 1
    assert seen >= 2


def test_followed_misplaced_sums_warn_once() -> None:
    """Where the engine follows the device's misplaced sums and they differ from the true sums, it says so: one
    DeviceDefectWarning naming the node (a user learns the DSP's mean is not the mean there)."""
    import warnings

    from hexnn_import.errors import DeviceDefectWarning
    from hexnn_import.ops.nnlib_reduce_passes import device_sums
    from hexnn_import.ops import run_op

    _, g = op_common.load_golden("mean")
    for i in range(len(g["hdr"])):
        inputs = op_node.case_inputs(g, i)
        x, axes = inputs[0], inputs[3]
        order = list(dict.fromkeys(int(a) % 4 for a in axes.reshape(-1)))
        if len(order) < 4 and needs_replay(x.shape, order) and not np.array_equal(
                device_sums(x, order), x.sum(axis=tuple(order), keepdims=True, dtype=np.int64)):
            break
    else:
        raise AssertionError("no golden case with misplaced sums")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run_op("QuantizedMean_8", list(inputs[:4]), node="m1")
    told = [w for w in seen if issubclass(w.category, DeviceDefectWarning)]
    assert len(told) == 1 and "m1" in str(told[0].message) and "misplaced" in str(told[0].message)
