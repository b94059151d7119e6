"""The command line on every broken input of tests/data/bad/: exit code 2, one line naming the problem, no traceback.

The files are made by tests/data/bad/make_bad.py and listed in its
README.md. Most cases run in-process through click's CliRunner (fast); a
few run ``hexnn-import`` in a real process to show the same holds there.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hexnn_import.cli import cli

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
MODELS = ROOT / "models"
INT8 = str(MODELS / "small_int8.tflite")
FLOAT = str(MODELS / "small_float.tflite")

#: (file in tests/data/bad, command line with {f} for it, words the one-line message must hold)
CASES: list[tuple[str, str, tuple[str, ...]]] = [
    ("empty.tflite", "{f}", ("file is empty",)),
    ("not_a_model.tflite", "{f}", ("not a TFLite model",)),
    ("truncated.tflite", "{f}", ("truncated or corrupt TFLite file",)),
    ("root_offset_past_end.tflite", "{f}", ("truncated or corrupt TFLite file",)),
    ("zero_scale.tflite", "{f}", ("tensor input", "scale 0.0", "positive finite")),
    ("negative_scale.tflite", "{f}", ("tensor input", "scale -0.05", "positive finite")),
    ("nan_scale.tflite", "{f}", ("tensor input", "scale nan", "positive finite")),
    ("zero_point_out_of_range.tflite", "{f}", ("tensor input", "zero point 300", "int8 range")),
    ("options_of_another_op.tflite", "{f}", ("operator 0 (ADD)", "MulOptions", "AddOptions")),
    ("unsupported_ops.tflite", "{f}", ("unsupported TFLite op", "CUMSUM", "CUSTOM:MyVendorOp")),
    ("dynamic_batch.tflite", "{f} --input-shape input=2,8", ("--input-shape input=2,8", "only the batch")),
    ("rank5.tflite", "{f}", ("unsupported TFLite op", "rank 5 > 4")),
    ("dynamic_batch.tflite", "{f} --input-shape input=a,b", ("--input-shape", "positive integers")),
    ("empty.onnx", "{f}", ("file is empty",)),
    ("not_a_model.onnx", "{f}", ("not a readable ONNX model",)),
    ("truncated.onnx", "{f}", ("not a readable ONNX model",)),
    ("symbolic_batch.onnx", "{f} --input-shape x=1,3,9,9", ("--input-shape", "x")),
    ("zero_scale_qdq.onnx", "{f}", ("unsupported ONNX op", "not a positive scale")),
    ("unsupported_op.onnx", "{f}", ("unsupported ONNX op", "Einsum")),
    ("rank5.onnx", "{f}", ("unsupported ONNX op", "rank 5 > 4")),
    ("truncated.hexnn.json", "{f}", ("not a hexnn graph file", "invalid JSON")),
    ("not_json.hexnn.json", "{f}", ("not a hexnn graph file", "invalid JSON")),
    ("wrong_version.hexnn.json", "{f}", ("version 99", "not supported")),
    ("dangling_ref.hexnn.json", "{f}", ("inconsistent", "names no earlier node")),
    ("bad_const_dtype.hexnn.json", "{f}", ("graph file is malformed", "OBJECT")),
    ("unknown_op.hexnn.json", "{f}", ("inconsistent", "QuantizedTeleport_8", "not in the op catalog")),
    ("deep_nesting.hexnn.json", "{f}", ("not a hexnn graph file", "nested too deeply")),
    ("input_not_npz.npz", f"run {INT8} --input {{f}}", ("input_not_npz.npz", "not a .npy/.npz file")),
    ("input_wrong_names.npz", f"run {INT8} --input {{f}}", ("missing", "'image', 'mask'", "unknown")),
    ("input_wrong_shape.npz", f"run {INT8} --input {{f}}", ("has shape [1, 4, 24, 3]", "input 'input'", "[1, 24, 24, 3]")),
    ("input_wrong_dtype.npz", f"run {INT8} --input {{f}}", ("input 'input' has dtype float32", "int8")),
    ("input_nan.npz", f"run {FLOAT} --input {{f}}", ("autoquantize", "NaN")),
    ("input_object_array.npz", f"run {INT8} --input {{f}}", ("input_object_array.npz",)),
    ("calibration_strings.npz", f"{FLOAT} --calibration {{f}}", ("calibration array 'input'", "dtype <U1")),
    ("calibration_wrong_names.npz", f"{FLOAT} --calibration {{f}}", ("calibration data", "'image', 'mask'")),
    ("calibration_wrong_shape.npz", f"{FLOAT} --calibration {{f}}", ("calibration sample", "shape [3, 3]")),
]
#: cases that still fail, with where the fix belongs (reported with issue 12)


def _check(code: int, stderr: str, stdout: str, words: tuple[str, ...]) -> None:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert code == 2, f"exit code {code}: {stderr}"
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr + stdout
    for w in words:
        assert w in lines[0], f"{w!r} not in {lines[0]!r}"


@pytest.mark.parametrize("name,command,words", CASES, ids=[f"{c[0]}:{c[1].split()[0]}" for c in CASES])
def test_cli_says_one_line_and_exits_2(name: str, command: str, words: tuple[str, ...], tmp_path: Path) -> None:
    path = BAD / name
    assert path.is_file(), f"{path} is missing: run python tests/data/bad/make_bad.py"
    args = command.format(f=path).split()
    if args[0] != "run":
        args += ["-o", str(tmp_path / "out.hexnn.json")]
    result = CliRunner().invoke(cli, args)
    _check(result.exit_code, result.stderr, result.stdout, words)
    assert not (tmp_path / "out.hexnn.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == []


def test_every_file_of_the_folder_is_covered_and_described() -> None:
    files = {p.name for p in BAD.iterdir() if p.is_file() and p.name not in ("README.md", "make_bad.py")}
    assert files == {c[0] for c in CASES}
    readme = (BAD / "README.md").read_text()
    assert all(f"`{name}`" in readme for name in files)


def test_a_model_path_that_is_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "model.tflite"
    folder.mkdir()
    result = CliRunner().invoke(cli, [str(folder)])
    _check(result.exit_code, result.stderr, result.stdout, ("is a directory",))


@pytest.mark.parametrize("name", ["truncated.tflite", "deep_nesting.hexnn.json"])
def test_in_a_real_process(name: str, tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", str(BAD / name), "-o", str(tmp_path / "g.json")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    _check(r.returncode, r.stderr, r.stdout, ())
