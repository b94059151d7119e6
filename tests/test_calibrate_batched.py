"""Calibration observes samples in batches: the same ranges as one run per sample (min / max of a batch
are the min / max of its samples), up to the rounding of the run-time ranges."""
from __future__ import annotations

import numpy as np

import hexnn_import as hx
from hexnn_import.api import _batched_observation, import_model
from hexnn_import.calibrate import load_samples, observe_ranges
from hexnn_import.testing.real_models import REAL, float_inputs, load_manifest

MODEL = REAL / "keras_mobilenet_v2_float.tflite"


def test_batched_ranges_match_per_sample_ranges() -> None:
    entry = next(e for e in load_manifest() if e["file"] == MODEL.name)
    graph = import_model(MODEL)
    name = graph.inputs[0].name
    x = float_inputs(entry, 20, "calib")[:, None]            # [N, 1, H, W, C]: 20 samples, batch 16 + 4
    samples = load_samples({name: x}, graph)
    single = observe_ranges(graph, samples)

    def importer(p, ranges, in_shapes=None):  # type: ignore[no-untyped-def]
        return import_model(p, input_shapes=in_shapes)

    batched = _batched_observation(importer, MODEL, graph, samples)
    assert batched is not None and batched[0].inputs[0].shape[0] == 16 and len(batched[1]) == 2
    many = observe_ranges(*batched)
    assert set(many) == set(single)
    dev = []
    for k, (lo, hi) in single.items():
        width = max(hi - lo, 1e-6)
        dev.append(max(abs(many[k][0] - lo), abs(many[k][1] - hi)) / width)
    # deep layers see run-time ranges taken over the batch, not per sample: their 8-bit noise, and so
    # the extremes, move a little; most ranges agree to 2% of their width, none is off by 10%
    assert max(dev) <= 0.10 and float(np.median(dev)) <= 0.02, (max(dev), float(np.median(dev)))


def test_a_model_that_fixes_its_batch_calibrates_one_sample_at_a_time(tmp_path) -> None:
    """The ONNX float CNN's Flatten is a Reshape to [1, 64]: no batched graph, one run per sample."""
    from hexnn_import.testing.fuzz_seeds import float_cnn

    path = tmp_path / "m.onnx"
    path.write_bytes(float_cnn())
    g = import_model(path)
    name = g.inputs[0].name
    x = np.random.default_rng(0).uniform(-1, 1, size=(5, *g.inputs[0].shape)).astype(np.float32)

    def importer(p, ranges, in_shapes=None):  # type: ignore[no-untyped-def]
        return import_model(p, input_shapes=in_shapes)

    assert _batched_observation(importer, path, g, load_samples({name: x}, g)) is None
    cal = hx.import_model(path, calibration={name: x})
    assert cal.meta["calibration"]["method"] == "minmax" and cal.meta["calibration"]["ranges"]
