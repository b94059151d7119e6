"""``hexnn-import run``: ``--repeat N`` times the run alone, ``--xs3`` runs the XS3 path (issue 11)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import hexnn_import as hx
from hexnn_import.testing.litert import run_litert
from hexnn_import.xs3.run import XS3Runner
from hexnn_import.api import import_model

MODELS = Path(__file__).resolve().parent.parent / "models"
MODEL = MODELS / "small_int8.tflite"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hexnn_import.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def feed(tmp_path: Path) -> tuple[str, np.ndarray]:
    g = hx.import_model(MODEL)
    x = np.random.default_rng(3).integers(-128, 128, size=g.inputs[0].shape, dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    return g.outputs[0].name, x


def test_repeat_reports_the_median_of_the_runs(tmp_path: Path) -> None:
    out_name, x = feed(tmp_path)
    r = cli("run", str(MODEL), "--input", str(tmp_path / "x.npy"), "--repeat", "5", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["runs"] == 5 and 0 < doc["min_ms"] <= doc["median_ms"]
    assert doc["median_ms"] < 1000  # the run alone: a 24x24 model, load and prepare excluded
    y = np.array(doc["outputs"][out_name]["values"], np.int8)
    assert np.array_equal(y, hx.Runner(hx.prepare(hx.import_model(MODEL))).run({"input": x})[out_name].reshape(-1))
    text = cli("run", str(MODEL), "--input", str(tmp_path / "x.npy"), "--repeat", "3", cwd=tmp_path)
    assert "engine run: median" in text.stdout and "over 3 runs" in text.stdout


def test_xs3_runs_the_lowered_layers_on_the_simulated_kernels(tmp_path: Path) -> None:
    out_name, x = feed(tmp_path)
    r = cli("run", str(MODEL), "--input", str(tmp_path / "x.npy"), "--xs3", "--repeat", "5", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["xs3_layers"] == ["conv1/relu", "pool1", "conv2/relu6", "pool2", "logits"] and doc["runs"] == 5
    y = np.array(doc["outputs"][out_name]["values"], np.int8)
    assert np.array_equal(y, XS3Runner(import_model(MODEL)).run({"input": x})[out_name].reshape(-1))
    ref = run_litert(MODEL.read_bytes(), [x])[0].reshape(-1)
    assert np.abs(y.astype(int) - ref).max() <= 2
    text = cli("run", str(MODEL), "--input", str(tmp_path / "x.npy"), "--xs3", cwd=tmp_path)
    assert "5 of 6 layers on XS3 kernels" in text.stdout, text.stdout


def test_xs3_on_a_prepared_graph_file_without_its_imported_form_says_so(tmp_path: Path) -> None:
    """A prepared graph file with source layers but no ``imported`` section (stripped by hand): XS3 lowers the
    graph as imported, which the file no longer holds, so ``run --xs3`` says so in one line (the files the
    converter writes keep it: tests/test_saved_graph_targets.py)."""
    from hexnn_import.serialize import graph_to_dict

    doc = graph_to_dict(hx.prepare(hx.import_model(MODEL)))
    assert doc["prepared"] and doc["source_layers"] and doc.pop("imported")
    graph = tmp_path / "g.hexnn.json"
    graph.write_text(json.dumps(doc))
    np.save(tmp_path / "x.npy", np.zeros((1, 24, 24, 3), np.int8))
    r = cli("run", str(graph), "--input", str(tmp_path / "x.npy"), "--xs3", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "a prepared graph without the imported graph the XS3 lowering works on" in lines[0]
