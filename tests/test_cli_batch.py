"""Batches through the CLI: a dynamic-batch model takes the batch of the input file, or --input-shape."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from hexnn_import.cli import cli
from hexnn_import.testing.litert import run_litert
from hexnn_import.testing.real_models import REAL, float_inputs, load_manifest, to_model_dtype

MODEL = REAL / "keras_cnn_int8.tflite"


def _feed(n: int) -> tuple[str, np.ndarray]:
    import hexnn_import as hx

    entry = next(e for e in load_manifest() if e["file"] == MODEL.name)
    io = hx.import_model(MODEL).inputs[0]
    return io.name, to_model_dtype(float_inputs(entry, n), io.dtype, io.scale, io.zero_point)


def test_run_takes_the_batch_of_the_input_file(tmp_path: Path) -> None:
    name, x = _feed(3)
    np.save(tmp_path / "x.npy", x)
    result = CliRunner().invoke(cli, ["run", str(MODEL), "--input", str(tmp_path / "x.npy"),
                                      "-o", str(tmp_path / "y.npz")])
    assert result.exit_code == 0, result.output
    assert "batch 3 taken from" in result.stderr
    with np.load(tmp_path / "y.npz") as z:
        ours = z[next(iter(z.files))]
    lite = run_litert(MODEL.read_bytes(), {name: x})[0]
    assert ours.shape == lite.shape == (3, 10)
    assert np.max(np.abs(ours.astype(int) - lite.astype(int))) <= 1


def test_run_and_convert_take_input_shape(tmp_path: Path) -> None:
    name, x = _feed(2)
    np.save(tmp_path / "x.npy", x)
    spec = f"{name}=2,32,32,3"
    r = CliRunner().invoke(cli, ["run", str(MODEL), "--input", str(tmp_path / "x.npy"), "--input-shape", spec])
    assert r.exit_code == 0 and "shape [2, 10]" in r.output, r.output
    r = CliRunner().invoke(cli, [str(MODEL), "--input-shape", spec, "-o", str(tmp_path / "g.hexnn.json"), "--json"])
    assert r.exit_code == 0, r.output
    assert "dynamic batch set to 1" not in r.output
    r = CliRunner().invoke(cli, [str(MODEL), "-o", str(tmp_path / "h.hexnn.json")])
    assert r.exit_code == 0 and "dynamic batch set to 1" in r.output


def test_xs3_export_takes_input_shape(tmp_path: Path) -> None:
    name, _ = _feed(1)
    r = CliRunner().invoke(cli, ["xs3-export", str(MODEL), "-o", str(tmp_path / "out"),
                                 "--input-shape", f"{name}=1,32,32,3"])
    assert r.exit_code == 0, r.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    lowered = [e for e in manifest["layers"] if e.get("arrays")]
    assert lowered  # conv and dense layers, each measured against LiteRT on the same input
    with np.load(tmp_path / "out" / manifest["arrays"]) as z:
        for e in lowered:
            assert str(z[e["arrays"] + "name"]) == e["name"]
            assert e["max_abs_diff"] is not None and e["max_abs_diff"] <= 1, e
