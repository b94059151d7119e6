"""A layer whose input range the Hexagon graph only knows at run time (after a PRELU that stays on Hexagon)
lowers with the range of the source file's quantization (issue 39): the XS3 node reads a Requantize_8to8
onto that range. On the MTCNN-style digits net (``models/real/families/keras_mtcnn_digits_int8.tflite``:
10 / 16 / 32 channels, per-channel PReLU, max pools) every conv, pool and fully-connected layer lowers and
agrees with LiteRT on the layer's own LiteRT input (>= 99% exact, never more than 1 off)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hexnn_import.xs3.graph_pass import tensor_range
from hexnn_import.xs3.layer_agreement import layer_agreement
from hexnn_import.xs3.lower import lower_model
from hexnn_import.xs3.run import XS3Runner

from hexnn_import.api import import_model
from hexnn_import.graph import Ref
from hexnn_import.model_source import ModelSource

pytest.importorskip("ai_edge_litert", reason="LiteRT (ai-edge-litert, a test dependency) is needed as the reference")

FAMILIES = Path(__file__).resolve().parents[2] / "models" / "real" / "families"
MTCNN = FAMILIES / "keras_mtcnn_digits_int8.tflite"
N = 8


def _digits(n: int) -> np.ndarray:
    """The first ``n`` held-out digits on the model's int8 input (scale 1/127.5, zero point -1)."""
    d = np.load(FAMILIES / "digits_img24_test.npz")
    return np.clip(np.round(d["serving_default_image:0"][:n] * 127.5) - 1, -128, 127).astype(np.int8)


def test_layers_after_a_prelu_lower_through_a_requantize_to_the_file_range() -> None:
    runner = XS3Runner(import_model(MTCNN))
    where = {p.name: p for p in runner.placements}
    lowered = {p.op for p in runner.placements if p.target == "xs3"}
    assert lowered == {"CONV_2D", "MAX_POOL_2D", "FULLY_CONNECTED"}
    assert all(p.target == "xs3" for p in where.values() if p.op in lowered), where
    g = runner.graph
    reqs = [n for n in g.nodes if n.op == "Requantize_8to8" and n.name.endswith("/xs3_in")]
    assert len(reqs) == 4  # after three PReLUs and the flatten of the third one's output
    layers = {r.layer.name: r.layer for r in runner.plan.lowered}
    _, vals = runner.run_all({"serving_default_image:0": _digits(1)})  # one run: a second builds replay tables
    for n in reqs:
        reader = next(m for m in g.nodes if Ref(n.node_id, 0) in m.inputs)
        layer = layers[reader.name.rsplit("/", 1)[0]]
        want = tensor_range(layer.x)  # the source file's quantization of the layer's input
        got = (float(vals[Ref(n.node_id, 1)].reshape(-1)[0]), float(vals[Ref(n.node_id, 2)].reshape(-1)[0]))
        assert np.allclose(got, want, rtol=1e-6)
        # PRelu_V2 writes on the output tensor's range already: the requantize changes no code
        assert np.array_equal(vals[n.inputs[0]], vals[Ref(n.node_id, 0)])


def test_every_lowered_layer_agrees_with_litert_on_digits() -> None:
    plan = lower_model(import_model(MTCNN))
    x = _digits(N)
    res = layer_agreement(plan, ModelSource.open(MTCNN), [{"serving_default_image:0": x[i:i + 1]} for i in range(N)])
    assert len(res) == 7
    for name, r in res.items():
        assert r.exact_fraction >= 0.99 and r.max_abs_diff <= 1, (name, r.as_dict())
