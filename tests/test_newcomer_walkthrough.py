"""A newcomer's own model, end to end with no flag beyond file names (issue 21, "Done when").

A keras-exported int8 TFLite model and a torch-exported QDQ ONNX model (dynamic batch) go through
``hexnn-import MODEL``, ``hexnn-import run MODEL --input x.npz``, ``hexnn-import compare MODEL --random 4``
and, for the int8 TFLite one, ``hexnn-import xs3-export MODEL -o DIR``. The input file is built only from
what the summary's next commands print (``x.npz holds 'NAME': DTYPE [SHAPE]``), and the commands run are
the printed ones (compare with ``--random 4`` instead of the printed 10, for time). Every process runs in a
tmp folder, so nothing lands in the checkout.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "models" / "real"

KERAS_INT8 = REAL / "keras_mobilenet_int8.tflite"      # keras 3 -> TFLiteConverter, int8 in and out
TORCH_QDQ = REAL / "torch_resnet18_qdq.onnx"           # torch.onnx.export, dynamic batch, ORT QDQ


def hexnn(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    beside = Path(sys.executable).parent / "hexnn-import"
    exe = str(beside) if beside.exists() else shutil.which("hexnn-import")
    assert exe, "`hexnn-import` is not installed"
    env = {**os.environ, "COLUMNS": "200"}
    r = subprocess.run([exe, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"hexnn-import {' '.join(args)} (exit {r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert not r.stderr.strip() or "error" not in r.stderr.lower(), r.stderr
    return r


def next_commands(stdout: str) -> list[list[str]]:
    tail = stdout.split("\nnext:\n", 1)[1]
    return [shlex.split(line.strip())[1:] for line in tail.splitlines() if line.startswith("  hexnn-import ")]


def input_spec(stdout: str) -> tuple[str, np.dtype, list[int]]:
    """'x.npz holds 'NAME': DTYPE [D1, D2, ...]' from the printed hint under the run command."""
    m = re.search(r"x\.npz holds ('[^']*'): (\w+) (\[[\d, ]+\])", stdout)
    assert m, f"the run hint does not say what x.npz holds:\n{stdout}"
    return ast.literal_eval(m.group(1)), np.dtype(m.group(2)), ast.literal_eval(m.group(3))


def make_input(dtype: np.dtype, shape: list[int]) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max + 1, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def sqnr_of(stdout: str) -> float:
    """The SQNR (dB) of the engine vs the source model's own run, from compare's outputs table."""
    lines = stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "SQNR dB" in line and "vs" in line)
    col = [c.strip() for c in lines[at].split("┃")].index("SQNR dB")
    row = next(line for line in lines[at:] if re.match(r"│\s*source\s*│", line))
    return float(row.split("│")[col])


def source_inputs(model: Path) -> list[tuple[str, tuple[int, ...]]]:
    """The model's inputs as its own runtime reads them (LiteRT / onnx), a dynamic batch as 1."""
    if model.suffix == ".tflite":
        from hexnn_import.testing.litert import make_interpreter
        details = make_interpreter(model.read_bytes()).get_input_details()
        return [(d["name"], tuple(int(v) for v in d["shape"])) for d in details]
    import onnx
    inputs = onnx.load(str(model), load_external_data=False).graph.input
    return [(i.name, tuple(d.dim_value or 1 for d in i.type.tensor_type.shape.dim)) for i in inputs]


@pytest.mark.parametrize("model, fmt, reference", [
    (KERAS_INT8, "tflite", "litert"),
    (TORCH_QDQ, "onnx", "onnxruntime"),
], ids=["keras_int8_tflite", "torch_qdq_onnx"])
def test_own_model_with_no_flags(model: Path, fmt: str, reference: str, tmp_path: Path) -> None:
    # 1. convert: summary, graph file in the cwd, next commands naming the model and its real input
    r = hexnn(str(model), cwd=tmp_path)
    assert f"({fmt})" in r.stdout
    # the graph file in the cwd holds this model: its input as the source file declares it (read with LiteRT /
    # onnx, not with the importer; a dynamic batch becomes 1)
    g = hx.load_graph(tmp_path / f"{model.stem}.hexnn.json")
    assert [(i.name, tuple(i.shape)) for i in g.inputs] == source_inputs(model), g.inputs
    nexts = next_commands(r.stdout)
    subcommands = [c[0] for c in nexts]
    assert "run" in subcommands and "compare" in subcommands, nexts
    assert "xs3-export" in subcommands, nexts                            # both quantized models lower to XS3
    assert all(c[1] == str(model) for c in nexts), nexts

    # 2. run, on an x.npz made from the printed name / dtype / shape only
    name, dtype, shape = input_spec(r.stdout)
    np.savez(tmp_path / "x.npz", **{name: make_input(dtype, shape)})
    run_cmd = next(c for c in nexts if c[0] == "run")
    assert run_cmd == ["run", str(model), "--input", "x.npz"], run_cmd
    r = hexnn(*run_cmd, cwd=tmp_path)
    outputs = [line for line in r.stdout.splitlines() if ": shape [" in line]
    assert outputs, r.stdout                                              # each output printed
    for line in outputs:
        assert re.search(r"shape \[1, \d+\] (int8|uint8|float32)", line), line
        top5 = re.search(r"top-5: (.*)$", line)
        assert top5 and len(re.findall(r"\d+ \(", top5.group(1))) == 5, line   # a 10-class classifier

    # 3. compare against the source model in its own runtime, 4 seeded random inputs
    compare_cmd = next(c for c in nexts if c[0] == "compare" and "--random" in c)
    assert compare_cmd[:2] == ["compare", str(model)] and compare_cmd[2:] == ["--random", "10"], compare_cmd
    r = hexnn("compare", str(model), "--random", "4", cwd=tmp_path)
    assert "4 samples" in r.stdout and reference in r.stdout, r.stdout
    sqnr = sqnr_of(r.stdout)
    assert 15.0 < sqnr < 200.0, r.stdout                                  # close to the source model's run

    # 4. xs3-export: BSO / weight files, C headers, manifest with each layer's agreement with the source runtime
    xs3_cmd = next(c for c in nexts if c[0] == "xs3-export")
    assert xs3_cmd == ["xs3-export", str(model), "-o", f"{model.stem}_xs3"], xs3_cmd
    r = hexnn(*xs3_cmd, cwd=tmp_path)
    out = tmp_path / f"{model.stem}_xs3"
    manifest = json.loads((out / "manifest.json").read_text())
    header = (out / manifest["header"]).read_text()
    kernels = re.findall(r'#define \w+_KERNEL "(\w+)"', header)  # one block per lowered layer with weights
    assert kernels == [e["kernel"] for e in manifest["layers"] if e["lowered"] and e["weights_shape"]], kernels
    lowered = [layer for layer in manifest["layers"] if layer["lowered"]]
    assert manifest["summary"]["lowered"] == len(lowered) > 0.8 * manifest["summary"]["layers"], manifest["summary"]
    with np.load(out / manifest["arrays"]) as z:                       # every lowered layer's arrays, one archive
        assert sorted({f.split("/")[0] + "/" for f in z.files}) == sorted(layer["arrays"] for layer in lowered)
    for layer in lowered:                                             # each layer's agreement with its runtime
        assert layer["max_abs_diff"] <= 1, layer["name"]
        if layer["op"] != "MEAN":  # LiteRT's int8 MEAN rounds up from about .42 (tests/xs3/test_mean.py)
            assert layer["exact_fraction"] >= 0.99, layer["name"]
    assert manifest["network"]["layers"] == len(lowered) and manifest["network"]["arena_bytes"] > 0
    assert f"{len(lowered)} of {manifest['summary']['layers']} layers lowered" in r.stdout
