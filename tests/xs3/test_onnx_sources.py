"""ONNX models lower to XS3 as TFLite ones do: QDQ and QOperator, int8 and uint8 activations, torch's explicit
padding; each lowered layer against onnxruntime on onnxruntime's own input for that layer."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexnn_import.xs3.layer_agreement import layer_agreement, random_inputs
from hexnn_import.xs3.lower import lower_model
from hexnn_import.api import import_model
from hexnn_import.model_source import ModelSource
from hexnn_import.xs3.run import XS3Runner

REAL = Path(__file__).resolve().parents[2] / "models" / "real"


@pytest.mark.parametrize("name", ["torch_resnet18_qdq.onnx", "torch_resnet18_qop.onnx"])
def test_resnet18_lowers_every_layer_but_the_padded_max_pool(name: str) -> None:
    path = REAL / name
    plan = lower_model(import_model(path))
    assert len(plan.results) == 31 and len(plan.lowered) == 30
    (left,) = plan.not_lowered
    assert left.layer.opname == "MAX_POOL_2D" and left.layer.source_op == "MaxPool"
    kinds = {r.layer.opname for r in plan.lowered}
    assert kinds == {"CONV_2D", "ADD", "MEAN", "FULLY_CONNECTED"}
    # torch's symmetric pads: explicit window starts, not TFLite's SAME
    stem = plan.lowered[0].lowered
    assert stem is not None and stem.op.window is not None and (stem.op.window.start_row, stem.op.window.k_h) == (-3, 7)
    agree = layer_agreement(plan, ModelSource.open(path), random_inputs(plan, 2, seed=3))
    assert len(agree) == 30
    # >= 99% exact wherever a layer has enough outputs to say so (the 10 logits of 2 samples: one off is 95%)
    bad = {n: (a.exact_fraction, a.max_abs_diff) for n, a in agree.items()
           if (a.exact_fraction < 0.99 and a.total >= 1000) or a.max_abs_diff > 1}
    assert not bad, bad


def test_mobilenet_v3_qdq_lowers_whole_and_runs_near_onnxruntime() -> None:
    path = REAL / "torch_mobilenet_v3_small_qdq.onnx"
    runner = XS3Runner(import_model(path))
    # hard-swish clamps, SE blocks and the 28 HardSigmoids (lookup8) included
    assert len(runner.xs3_layers) == len(runner.placements) == 99
    agree = layer_agreement(runner.plan, ModelSource.open(path), random_inputs(runner.plan, 1, seed=4))
    ops = {r.name: r.layer.opname for r in runner.plan.lowered}
    gates = [a for n, a in agree.items() if ops[n] == "HARD_SIGMOID"]
    assert len(gates) == 28 and all(a.exact == a.total and a.reference == "onnxruntime" for a in gates)
    assert max(a.max_abs_diff for a in agree.values()) <= 1
    assert sum(a.exact for a in agree.values()) >= 0.99 * sum(a.total for a in agree.values())
    import onnxruntime as ort

    from hexnn_import.compare.onnx_reference import ort_reference_session

    spec = runner.graph.inputs[0]
    x = np.random.default_rng(4).uniform(-1, 1, spec.shape).astype(np.float32)
    got = next(iter(runner.run({spec.name: x}).values())).reshape(-1)
    sess = ort_reference_session(ort, str(path), optimize=False)
    want = sess.run(None, {spec.name: x})[0].reshape(-1)
    assert np.argmax(got) == np.argmax(want) and np.corrcoef(got, want)[0, 1] > 0.99


@pytest.mark.parametrize("name, kind, count", [("torch_efficientnet_b0_qop.onnx", "LOGISTIC", 65),
                                               ("rapidocr_ppocr_mobile_v2_cls_qdq.onnx", "HARD_SIGMOID", 9),
                                               ("rapidocr_ppocr_mobile_v2_cls_qdq.onnx", "DIV", 17)])
def test_onnx_activations_lower_to_lookup8_exact_against_onnxruntime(name: str, kind: str, count: int) -> None:
    """QOperator QLinearSigmoid, QDQ HardSigmoid and a QDQ Div by a constant (a hard-swish's ``/ 6``; its one
    input quantized) are recorded as source layers and lower to lookup8 tables of onnxruntime's float32
    arithmetic: every output code equal to onnxruntime's on its own input."""
    path = REAL / name
    shapes = {"x": (1, 3, 48, 192)} if name.startswith("rapidocr") else None
    plan = lower_model(import_model(path, input_shapes=shapes))
    acts = [r for r in plan.results if r.layer.opname == kind and r.lowered is not None]
    assert len(acts) == count and all(r.lowered.kernel == "lookup8" for r in acts), [r.reason for r in acts]
    # the one left (PP-OCR's last Div, read by a MaxPool in float) says why
    assert all("not a quantized tensor" in str(r.reason) for r in plan.results if r.layer.opname == kind
               and r.lowered is None)
    agree = layer_agreement(plan, ModelSource.open(path), random_inputs(plan, 1, seed=6))
    for r in acts:
        a = agree[r.name]
        assert a.exact == a.total > 0 and a.max_abs_diff == 0, (r.name, a.as_dict())
