"""The ranges the XS3 lowering takes as fixed at convert time (:mod:`hexnn_import.xs3.convert_ranges`) are the
ranges the Hexagon nodes report when the graph runs (issue 39): on every XS3 layer input a Hexagon node writes
(a concat, a max pool, a PReLU with its output range, a pad), the claim equals the engine's reported min / max,
and no Requantize_8to8 is left in front of an XS3 layer."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hexnn_import.ops.op_groups import is_xs3
from hexnn_import.optimizer.ranges import static_range
from hexnn_import.xs3.c_runner_replay import seeded_inputs
from hexnn_import.xs3.convert_ranges import convert_time_range
from hexnn_import.xs3.run import XS3Runner

from hexnn_import.api import import_model

REAL = Path(__file__).resolve().parents[2] / "models" / "real"


@pytest.mark.parametrize("name, beyond", [("torch_squeezenet_qop.onnx", 8),
                                          ("mediapipe_face_landmark_aeq_int8.tflite", 47)])
def test_convert_time_ranges_are_the_reported_ones(name: str, beyond: int) -> None:
    runner = XS3Runner(import_model(REAL / name))
    g = runner.graph
    assert not [n for n in g.nodes if n.op == "Requantize_8to8" and n.name.endswith("/xs3_in")]
    _, vals = runner.run_all(seeded_inputs(g, 0))
    checked, new = 0, 0
    for node in g.nodes:
        if not is_xs3(node.op):
            continue
        for k in range(0, min(6, len(node.inputs) - 6), 3):  # the activation triples before the trailing consts
            data, lo, hi = node.inputs[k:k + 3]
            src = g.node(data.src_id)
            if src.op in ("Const", "INPUT") or is_xs3(src.op):
                continue
            got = convert_time_range(g, lo, hi)
            assert got is not None, node.name
            reported = (float(vals[lo].reshape(-1)[0]), float(vals[hi].reshape(-1)[0]))
            assert np.allclose(got, reported, rtol=1e-6), (node.name, got, reported)
            checked += 1
            new += static_range(g, lo, hi) is None
    assert new == beyond and checked >= new  # the inputs prepare's own static_range does not follow
