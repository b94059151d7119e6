"""A layer whose input range the Hexagon graph only knows at run time (after a PRELU that stays on Hexagon)
lowers with the range of the source file's quantization (issue 39). Where the graph fixes that range at convert
time (a PRelu_V2 with its output range, a pad, a concat: :mod:`hexnn_import.xs3.convert_ranges`) and it is the
file's, the XS3 node reads the value directly; another fixed range goes through a lookup8 requantize, a range
only known at run time through a Requantize_8to8 on the Hexagon side. On the MTCNN-style digits net
(``models/real/families/keras_mtcnn_digits_int8.tflite``: 10 / 16 / 32 channels, per-channel PReLU, max pools)
every conv, pool and fully-connected layer lowers and agrees with LiteRT on the layer's own LiteRT input
(>= 99% exact, never more than 1 off)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hexnn_import.ops.op_groups import is_xs3
from hexnn_import.xs3.convert_ranges import convert_time_range, requantize_table
from hexnn_import.xs3.graph_pass import tensor_range
from hexnn_import.xs3.layer_agreement import layer_agreement
from hexnn_import.xs3.lower import lower_model
from hexnn_import.xs3.run import XS3Runner

from hexnn_import.api import import_model
from hexnn_import.model_source import ModelSource

pytest.importorskip("ai_edge_litert", reason="LiteRT (ai-edge-litert, a test dependency) is needed as the reference")

FAMILIES = Path(__file__).resolve().parents[2] / "models" / "real" / "families"
MTCNN = FAMILIES / "keras_mtcnn_digits_int8.tflite"
N = 8


def _digits(n: int) -> np.ndarray:
    """The first ``n`` held-out digits on the model's int8 input (scale 1/127.5, zero point -1)."""
    d = np.load(FAMILIES / "digits_img24_test.npz")
    return np.clip(np.round(d["serving_default_image:0"][:n] * 127.5) - 1, -128, 127).astype(np.int8)


def test_layers_after_a_prelu_read_it_on_the_file_range_fixed_at_convert_time() -> None:
    runner = XS3Runner(import_model(MTCNN))
    where = {p.name: p for p in runner.placements}
    lowered = {p.op for p in runner.placements if p.target == "xs3"}
    assert lowered == {"CONV_2D", "MAX_POOL_2D", "FULLY_CONNECTED"}
    assert all(p.target == "xs3" for p in where.values() if p.op in lowered), where
    g = runner.graph
    # the PRelu_V2 output ranges are fixed at convert time and are the file's: no requantize in between
    assert not [n for n in g.nodes if n.name.endswith("/xs3_in")]
    layers = {r.layer.name: r.layer for r in runner.plan.lowered}
    _, vals = runner.run_all({"serving_default_image:0": _digits(1)})  # one run: a second builds replay tables
    fed = 0
    for node in g.nodes:
        src = g.node(node.inputs[0].src_id) if is_xs3(node.op) else None
        if src is None or src.op in ("Const", "INPUT") or is_xs3(src.op):
            continue
        want = tensor_range(layers[node.name.rsplit("/", 1)[0]].x)  # the file's quantization of the input
        lo, hi = node.inputs[1:3]
        got = (float(vals[lo].reshape(-1)[0]), float(vals[hi].reshape(-1)[0]))  # what Hexagon reports
        assert np.allclose(got, want, rtol=1e-6) and np.allclose(convert_time_range(g, lo, hi), want, rtol=1e-6)
        fed += 1
    assert fed == 4  # after three PReLUs and the flatten of the third one's output


def test_a_requantize_table_is_the_hand_worked_rescale() -> None:
    """From the range [-2, 2 * 127/128] onto [-1, 127/128] every value doubles in codes: int8 ``c`` -> ``sat(2c)``."""
    codes = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64)
    table = requantize_table((-2.0, 2 * 127 / 128), (-1.0, 127 / 128))
    assert np.array_equal(table, np.clip(2 * codes, -128, 127))
    assert np.array_equal(requantize_table((-1.0, 127 / 128), (-1.0, 127 / 128)), codes)


def test_every_lowered_layer_agrees_with_litert_on_digits() -> None:
    plan = lower_model(import_model(MTCNN))
    x = _digits(N)
    res = layer_agreement(plan, ModelSource.open(MTCNN), [{"serving_default_image:0": x[i:i + 1]} for i in range(N)])
    assert len(res) == 7
    for name, r in res.items():
        assert r.exact_fraction >= 0.99 and r.max_abs_diff <= 1, (name, r.as_dict())
