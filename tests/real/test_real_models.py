"""Acceptance: every converter-made model of ``models/real/`` converts with no flags and runs,
and agrees with its own runtime (LiteRT / onnxruntime) on crops of real photographs.

Bars (issue [Real models]):

- quantized models (int8 / uint8 I/O, int8 with float I/O, ONNX QDQ and
  QOperator): >= 99% of output elements within 1 LSB of the reference, worst
  <= 2 LSB, top-1 agreement >= 99% on classifiers, over 24 inputs;
- float models, calibrated on other crops of the same photographs:
  SQNR >= 30 dB against the float reference;
- int8 TFLite models, layer by layer on LiteRT's own input of each layer
  (teacher forcing, ``hexnn_import.testing.layerwise``): every layer within
  1 LSB everywhere.

``python bench/real_models.py`` prints every figure, run-time ranges included.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from hexnn_import.cli import cli
from hexnn_import.testing.real_models import (REAL, evaluate, float_inputs, load_manifest, manifest_shape,
                                               to_model_dtype)

ENTRIES = load_manifest()
QUANTIZED = [e for e in ENTRIES if e["quant"] in ("int8-io", "float-io", "uint8", "qdq", "qoperator")
             or "static" in e["quant"]]
FLOAT = [e for e in ENTRIES if e["quant"] == "float" or "dynamic" in e["quant"] or "weight" in e["quant"]]
#: models the importer refuses with no flags, with the words of the reason (also in the README): their
#: height and width are dynamic (Paddle2ONNX writes -1) and have no default; with --input-shape they run
REFUSED: dict[str, str] = {"rapidocr_ppocr_mobile_v2_cls.onnx": "--input-shape x=",
                           "rapidocr_ppocrv3_det.onnx": "--input-shape x="}


def _ids(entries: list[dict]) -> list[str]:
    return [e["file"] for e in entries]


def test_the_folder_holds_the_models_of_the_issue() -> None:
    files = {e["file"] for e in ENTRIES}
    assert len(ENTRIES) >= 40, len(ENTRIES)
    for stem in ("keras_cnn", "keras_mobilenet_", "keras_mobilenet_v2", "keras_mobilenet_v3_small",
                 "keras_efficientnet_b0", "keras_ds_cnn", "keras_person_detect", "torch_resnet18",
                 "torch_mobilenet_v3_small", "torch_shufflenet_v2", "torch_squeezenet", "torch_efficientnet_b0",
                 "torch_yolo", "mediapipe_", "rapidocr_"):
        assert any(f.startswith(stem) for f in files), stem
    assert any("aeq" in f for f in files) and any("uint8" in f for f in files)
    size = sum(p.stat().st_size for p in REAL.iterdir() if p.is_file())
    assert size < 40e6, size


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids(ENTRIES))
def test_converts_with_no_flags(entry: dict, tmp_path: Path) -> None:
    out = tmp_path / "g.hexnn.json"
    result = CliRunner().invoke(cli, [str(REAL / entry["file"]), "-o", str(out)])
    if entry["file"] in REFUSED:
        assert result.exit_code == 2 and REFUSED[entry["file"]] in result.stderr, result.output
        assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()
        return
    assert result.exit_code == 0, result.output
    assert out.is_file() and "prepared" in result.output


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_models_run_with_input_shape(name: str, tmp_path: Path) -> None:
    entry = next(e for e in ENTRIES if e["file"] == name)
    shape = manifest_shape(entry)
    out = tmp_path / "g.hexnn.json"
    spec = "x=" + ",".join(map(str, shape))
    result = CliRunner().invoke(cli, [str(REAL / name), "--input-shape", spec, "-o", str(out)])
    assert result.exit_code == 0, result.output
    fig = evaluate(entry, n=4, calibrate=True, runtime_ranges=False, input_shapes={"x": shape})
    for o in fig.calibrated:
        assert o.sqnr_db >= 30.0, o


@pytest.mark.parametrize("entry", [e for e in QUANTIZED if e["file"] not in REFUSED],
                         ids=_ids([e for e in QUANTIZED if e["file"] not in REFUSED]))
def test_quantized_model_agrees_with_its_runtime(entry: dict) -> None:
    fig = evaluate(entry, n=24)
    for o in fig.outputs:
        assert o.within1 is not None, f"{o.name}: no LSB known"
        assert o.within1 >= 0.99 and o.worst_lsb <= 2, o
        if o.top1 is not None:
            assert o.top1 >= 0.99, o


@pytest.mark.parametrize("entry", [e for e in FLOAT if e["file"] not in REFUSED],
                         ids=_ids([e for e in FLOAT if e["file"] not in REFUSED]))
def test_float_model_calibrated_reaches_30_db(entry: dict) -> None:
    fig = evaluate(entry, n=6, calibrate=True, runtime_ranges=False)
    for o in fig.calibrated:
        assert o.sqnr_db >= 30.0, o


TFLITE_INT8 = [e for e in QUANTIZED if e["file"].endswith(".tflite") and e["quant"] in ("int8-io", "uint8")]


@pytest.mark.parametrize("entry", TFLITE_INT8, ids=_ids(TFLITE_INT8))
def test_every_layer_within_1_lsb_on_litert_input(entry: dict) -> None:
    import hexnn_import as hx
    from hexnn_import.testing.layerwise import forced_layers

    path = REAL / entry["file"]
    io = hx.import_model(path).inputs[0]
    x = to_model_dtype(float_inputs(entry, 1), io.dtype, io.scale, io.zero_point)
    layers = forced_layers(path.read_bytes(), {io.name: x.reshape(io.shape)})
    assert layers
    bad = [a for a in layers if a.worst > 1]
    assert not bad, bad


def test_batch_of_4_equals_4_single_runs() -> None:
    """A dynamic-batch model run at batch 4 gives the four batch-1 results (and LiteRT's)."""
    import hexnn_import as hx
    from hexnn_import.testing.litert import run_litert

    entry = next(e for e in ENTRIES if e["file"] == "keras_mobilenet_v2_int8.tflite")
    path = REAL / entry["file"]
    g1 = hx.prepare(hx.import_model(path))
    io = g1.inputs[0]
    g4 = hx.prepare(hx.import_model(path, input_shapes={io.name: (4,) + tuple(io.shape[1:])}))
    x = to_model_dtype(float_inputs(entry, 4), io.dtype, io.scale, io.zero_point)
    out4 = hx.Runner(g4).run({io.name: x})
    name = g1.outputs[0].name
    singles = np.concatenate([hx.Runner(g1).run({io.name: x[k:k + 1]})[name] for k in range(4)])
    np.testing.assert_array_equal(out4[name], singles)
    lite = run_litert(path.read_bytes(), {io.name: x}, as_dict=True)[name]
    assert lite.shape == out4[name].shape
