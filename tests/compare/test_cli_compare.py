"""``hexnn-import compare``: table, --json, --report, --min-sqnr, errors; the digits model's accuracy."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from hexnn_import.cli import cli

MODELS = Path(__file__).resolve().parents[2] / "models"
INT8, FLOAT, TEST = (str(MODELS / n) for n in ("digits_int8.tflite", "digits_float.tflite", "digits_test.npz"))


def invoke(*args: str) -> tuple[int, str, str]:
    """``compare`` as piped: without COLUMNS (pytest-xdist's workers set 80), tables 150 wide."""
    r = CliRunner().invoke(cli, ["compare", *args], env={"COLUMNS": None})
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout, r.stderr


def test_table_for_a_quantized_model_and_its_float_twin() -> None:
    code, out, _ = invoke(INT8, "--float-model", FLOAT, "--random", "3", "--per-layer")
    assert code == 0
    for text in ("outputs of hexagon", "float", "source", "SQNR dB vs float", "conv2", "3 samples"):
        assert text in out, out
    assert "accuracy" not in out  # no labels, no accuracy column


def test_digits_accuracy_of_float_reference_and_engine(tmp_path: Path) -> None:
    """The issue's bar: dataset accuracy of the float reference and the Hexagon engine within 1 point."""
    out_json, report = tmp_path / "r.json", tmp_path / "r.html"
    code, out, _ = invoke(INT8, "--float-model", FLOAT, "--data", TEST, "--per-layer", "--json", str(out_json),
                          "--report", str(report))
    assert code == 0 and "accuracy" in out
    doc = json.loads(out_json.read_text())
    assert set(doc) >= {"model", "samples", "runners", "comparisons", "passed", "min_sqnr", "classifier"}
    assert set(doc["runners"]) == {"hexagon", "float", "source"} and doc["samples"] == 450
    acc = {k: v["accuracy"] for k, v in doc["runners"].items()}
    assert acc["float"] > 0.95 and abs(acc["float"] - acc["hexagon"]) <= 0.01, acc
    first = doc["comparisons"][0]
    assert (first["candidate"], first["reference"]) == ("hexagon", "float")
    assert [layer["name"] for layer in first["layers"]] == ["input", "conv1", "pool1", "conv2", "pool2",
                                                            "flatten", "logits"]
    assert set(first["outputs"][0]) >= {"sqnr_db", "cosine", "max_abs_diff", "max_diff_lsb", "frac_off_gt_1lsb"}
    assert first["outputs"][0]["sqnr_db"] > 30 and first["top1_agreement"] > 0.98
    bitwise = doc["comparisons"][1]["outputs"][0]
    assert bitwise["max_diff_lsb"] <= 1.01 and bitwise["frac_off_gt_1lsb"] == 0.0
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<polyline" in page and "conv2" in page
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporary files


def test_float_model_is_its_own_reference_with_calibration(tmp_path: Path) -> None:
    code, out, _ = invoke(FLOAT, "--data", TEST, "--calibration", str(MODELS / "digits_calibration.npz"),
                          "--json", "-")
    assert code == 0
    doc = json.loads(out)
    assert set(doc["runners"]) == {"hexagon", "float"}
    assert abs(doc["runners"]["hexagon"]["accuracy"] - doc["runners"]["float"]["accuracy"]) <= 0.01


def test_min_sqnr_exit_code_is_one_with_one_line(tmp_path: Path) -> None:
    code, _, err = invoke(INT8, "--float-model", FLOAT, "--random", "2", "--min-sqnr", "200")
    assert code == 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "below --min-sqnr 200" in lines[0] and "logits" in lines[0]
    code, _, _ = invoke(INT8, "--float-model", FLOAT, "--random", "2", "--min-sqnr", "10")
    assert code == 0


def test_user_errors_are_one_line_exit_two(tmp_path: Path) -> None:
    for args, text in [((INT8, "--data", str(tmp_path / "none.npz")), "no such file"),
                       ((INT8, "--reference", "onnxruntime"), "--reference onnxruntime cannot run"),
                       ((INT8, "--float-model", INT8), "not a float model"),
                       ((INT8, "--random", "2", "--json", str(tmp_path / "no" / "r.json")), "does not exist")]:
        code, _, err = invoke(*args)
        assert code == 2 and err.count("\n") == 1 and text in err, (args, err)


def test_console_script_runs_in_a_fresh_process(tmp_path: Path) -> None:
    np.savez(tmp_path / "x.npz", np.zeros((2, 8, 8, 1), np.float32))
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", "compare", FLOAT, "--data",
                        str(tmp_path / "x.npz"), "--min-sqnr", "1000"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 1 and "outputs of hexagon" in r.stdout and r.stderr.count("\n") == 1, r.stderr
