"""Box_Decoder_f against hexagon_nn's device code (op_box_decoder.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_box_decoder`` (issue 36): op_box_decoder.c compiled
whole and unedited with nnlib's own ``nn_graph.h``; the registered ``box_decoder_execute_f`` (float32, nnlib's
``fast_exp``, the centres contracted into fused multiply-adds) on zero deltas, exp arguments from -90 to 90 and 200
random nodes.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_box_decoder  # noqa: E402
import op_common  # noqa: E402  (numpy only)
import op_node  # noqa: E402


def _load() -> dict[str, np.ndarray]:
    meta, g = op_common.load_golden("box_decoder")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_box_decoder.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 203 and not g["status"].any()
    return g


def test_box_decoder_equals_device_code() -> None:
    """All 203 nodes (3 edge, 200 random) equal the device bit for bit, NaN bits included."""
    g = _load()
    bad = [i for i in range(len(g["hdr"])) if not op_box_decoder.engine_case(g, i)[0]]
    assert bad == []


def test_device_sizes_are_exp_within_fast_exp_error() -> None:
    """Worked in float64 from the text: for the random nodes, the device's box height ``y1 - y0`` is
    ``exp(th / sh) * (ay1 - ay0)`` within fast_exp's relative error 8.34e-5 (include/float_mathops.h) and float32
    rounding of the corners."""
    g = _load()
    checked = 0
    for i in range(3, len(g["hdr"])):
        d, a, s = op_node.case_inputs(g, i)
        dev = op_node.run_outputs(g, i)[1][0][1].view(np.float32).reshape(d.shape).astype(np.float64)
        ha = a[..., 2].astype(np.float64) - a[..., 0]
        want = np.exp(d[..., 2].astype(np.float64) / float(s.ravel()[2])) * ha
        got = dev[..., 2] - dev[..., 0]
        ok = np.abs(got - want) <= 8.4e-5 * want + 4 * np.spacing(np.float32(np.abs(dev).max()))
        assert ok.all(), i
        checked += 1
    assert checked == 200
