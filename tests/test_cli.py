"""The command line: summary, graph file, run, ops, and one-line errors with exit code 2."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.ops.catalog import CATALOG
from hexnn_import.testing.litert import run_litert

MODEL = Path(__file__).resolve().parent.parent / "models" / "small_int8.tflite"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the CLI in a real process (cwd away from the source tree)."""
    return subprocess.run([sys.executable, "-m", "hexnn_import.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_convert_prints_summary_and_writes_graph(tmp_path: Path) -> None:
    out = tmp_path / "g.hexnn.json"
    r = cli(str(MODEL), "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Supernode_8x8p32to8" in r.stdout and "input" in r.stdout and "wrote" in r.stdout
    g = hx.load_graph(out)
    assert g.op_counts()["Supernode_8x8p32to8_d32"] == 3  # prepared: supernodes in the d32 layout
    r = cli(str(MODEL), "-o", str(out), "--json", cwd=tmp_path)
    summary = json.loads(r.stdout)
    assert summary["nodes"] == len(g) and summary["op_counts"] == g.op_counts()
    assert summary["inputs"][0]["dtype"] == "int8"


def test_run_writes_outputs_keyed_by_tensor_name(tmp_path: Path) -> None:
    g = hx.import_model(MODEL)
    x = np.random.default_rng(0).integers(-128, 128, size=g.inputs[0].shape, dtype=np.int8)
    np.savez(tmp_path / "x.npz", **{g.inputs[0].name: x})
    np.save(tmp_path / "x.npy", x)
    r = cli("run", str(MODEL), "--input", str(tmp_path / "x.npz"), "-o", str(tmp_path / "o.npz"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "o.npz") as out:
        assert list(out.files) == [g.outputs[0].name]
        y = out[g.outputs[0].name]
    ref = run_litert(MODEL.read_bytes(), [x])[0]
    assert y.dtype == np.int8 and np.abs(y.astype(int) - ref.astype(int)).max() <= 2
    r = cli("run", str(MODEL), "--input", str(tmp_path / "x.npy"), "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert doc["outputs"][g.outputs[0].name]["values"] == y.reshape(-1).tolist()
    r = cli("run", str(MODEL), "--input", str(tmp_path / "x.npy"), cwd=tmp_path)  # the plain view: top-5 classes
    top = np.argsort(-y[0].astype(int), kind="stable")[:5]
    assert f"top-5: {', '.join(f'{j} ({y[0, j]})' for j in top)}" in r.stdout, r.stdout


def test_ops_json_lists_every_documented_op(tmp_path: Path) -> None:
    r = cli("ops", "--json", cwd=tmp_path)
    rows = json.loads(r.stdout)
    assert {row["name"] for row in rows if row["source"] != "lib_nn"} == set(CATALOG)
    assert {row["verified"] for row in rows if row["kernel"]} <= {"nnlib-exact", "nnlib-partial", "libnn-exact",
                                                                  "hand-worked", "reference-tolerance",
                                                                  "device-exact", "device-partial"}
    device = [row for row in rows if "device" in row]  # nnlib's own device code under emulation (issue 36)
    assert len(device) >= 30 and all(0 <= row["device"]["exact"] <= row["device"]["cases"] for row in device)
    by = {row["name"]: row for row in rows}
    assert by["Supernode_8x8p32to8"]["kernel"] is True
    assert "tflite" in by["Supernode_8x8p32to8"]["emitted_by"]
    assert all(isinstance(row["kernel"], bool) and isinstance(row["emitted_by"], list) for row in rows)


def _bad_inputs(tmp: Path) -> dict[str, tuple[Path, str]]:
    raw = MODEL.read_bytes()
    cases = {
        "missing": (tmp / "nope.tflite", "no such file"),
        "empty": (tmp / "empty.tflite", "empty"),
        "not_a_model": (tmp / "notes.tflite", "not a TFLite model"),
        "text": (tmp / "readme.txt", "not a model file"),
        "truncated_half": (tmp / "half.tflite", "truncated or corrupt"),
        "truncated_tail": (tmp / "tail.tflite", "truncated or corrupt"),
    }
    (tmp / "empty.tflite").write_bytes(b"")
    (tmp / "notes.tflite").write_text("this is not a flatbuffer\n" * 10)
    (tmp / "readme.txt").write_text("hello")
    (tmp / "half.tflite").write_bytes(raw[: len(raw) // 2])
    (tmp / "tail.tflite").write_bytes(raw[:-200])
    return cases


@pytest.mark.parametrize("case", ["missing", "empty", "not_a_model", "text", "truncated_half", "truncated_tail"])
def test_bad_model_files_give_one_line_and_exit_2(case: str, tmp_path: Path) -> None:
    path, words = _bad_inputs(tmp_path)[case]
    out = tmp_path / "out.hexnn.json"
    r = cli(str(path), "-o", str(out), cwd=tmp_path)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert words in lines[0] and str(path.name) in lines[0]
    assert not out.exists()
    assert not list(tmp_path.glob(".out.hexnn.json*"))


def test_unwritable_output_leaves_nothing(tmp_path: Path) -> None:
    r = cli(str(MODEL), "-o", str(tmp_path / "no_dir" / "g.hexnn.json"), cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "does not exist" in r.stderr


def test_run_with_wrong_input_names_is_one_line(tmp_path: Path) -> None:
    np.savez(tmp_path / "x.npz", a=np.zeros((1, 24, 24, 3), np.int8), b=np.zeros(3, np.int8))
    r = cli("run", str(MODEL), "--input", str(tmp_path / "x.npz"), cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "missing" in r.stderr and "input" in r.stderr


@pytest.mark.parametrize("args", [("ops", "--json", "--markdown"), ("compare", str(MODEL), "--random", "0")])
def test_contradictory_or_empty_requests_are_refused(args: tuple[str, ...], tmp_path: Path) -> None:
    """``ops --json --markdown`` and ``compare --random 0`` are usage errors (exit 2), not silently reinterpreted."""
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and not r.stdout
    assert len(r.stderr.strip().splitlines()) == 1  # one line, like every other error (issue 21)


def test_top_level_help_lists_every_command(tmp_path: Path) -> None:
    r = cli("--help", cwd=tmp_path)
    for cmd in ("compare", "convert", "ops", "run", "xs3-export"):
        assert f"hexnn-import {cmd}" in r.stdout or (cmd == "convert" and "hexnn-import MODEL" in r.stdout), cmd
