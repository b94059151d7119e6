"""Real models whose per-channel depthwise layers would reach hexagon_nn's dwconv2dbbb slice defect (issue 36):
the importer splits those layers into groups of <= 32 channels (optimizer/dwise_split.py), so the converted
model reaches no device defect and computes the per-channel answer.

The reference for the codes is the unsplit import, prepared, run with the engine's defect-following switched off
(``scales_slice_defect`` False: each channel requantized with its own scale): every source tensor must be equal,
bit for bit. (tests/real/test_real_models.py holds these models to the accuracy bars against the runtimes.)
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hexnn_import.ops.kernels import dwise_scaled
from hexnn_import.optimizer import dwise_split

import hexnn_import as hx
from hexnn_import.testing.real_models import REAL

#: the models that reached the defect before the split (each has 5x5 stride-2 depthwise layers with channel scales)
AFFECTED = ("keras_efficientnet_b0_int8.tflite", "keras_mobilenet_v3_small_int8.tflite",
            "keras_mobilenet_v3_small_int8_floatio.tflite", "mediapipe_selfie_segmentation_aeq_int8.tflite",
            "torch_efficientnet_b0_qdq.onnx", "torch_efficientnet_b0_qop.onnx", "torch_mobilenet_v3_small_qdq.onnx",
            "torch_mobilenet_v3_small_qop.onnx", "families/keras_mobilenet_v3_small_digits_int8.tflite",
            "families/keras_mobilenet_v3_small_digits_int8_floatio.tflite")


def _prepared(name: str) -> hx.Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a DeviceDefectWarning fails the test
        return hx.prepare(hx.import_model(REAL / name))


@pytest.mark.parametrize("name", AFFECTED)
def test_split_models_reach_no_device_defect(name: str) -> None:
    graph = _prepared(name)
    notes = graph.meta.get("notes", [])
    assert not [n for n in notes if "device defect" in n]
    assert any("split into groups of <= 32 channels" in n for n in notes)
    assert graph.op_counts()["QuantizedSplit_8_d32"] >= 1


def test_split_model_equals_the_per_channel_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """keras MobileNetV3-small int8 (the digits family's, 2 split layers): every source tensor of the split model
    equals the unsplit model's run with the defect switched off."""
    name = "families/keras_mobilenet_v3_small_digits_int8.tflite"
    split = _prepared(name)
    with monkeypatch.context() as m:
        m.setattr(dwise_split, "split_defect_dwise", lambda graph: 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = hx.prepare(hx.import_model(REAL / name))
    assert plain.op_counts().get("QuantizedSplit_8_d32") is None
    io = split.inputs[0]
    feed = {io.name: np.random.default_rng(36).integers(-128, 128, io.shape).astype(io.dtype)}
    got, every = hx.Runner(split).run_all(feed)
    with monkeypatch.context() as m:
        m.setattr(dwise_scaled, "scales_slice_defect", lambda *a: False)
        want, every_plain = hx.Runner(plain).run_all(feed)
    assert want.keys() == got.keys() and all(np.array_equal(got[k], want[k]) for k in want)
    names = [k for k in plain.tensor_map if k in split.tensor_map and plain.tensor_map[k] in every_plain]
    assert len(names) > 100
    for k in names:
        assert np.array_equal(np.asarray(every_plain[plain.tensor_map[k]]), np.asarray(every[split.tensor_map[k]])), k
