"""Every command the README shows runs, copy-pasted, and prints what the README says (issue 21).

The commands are read from README.md itself: each line of its shell code blocks (split on ``&&``, ``\\``
continuations joined) and each inline code span that is a command (``hexnn-import ...``, ``python ...``,
the command table's ``... --flag`` rows, flags given with a value such as ``--passes a,b,c``, and input
shapes such as ``x=1,3,160,160``). Every one must have an entry in ``CASES`` (the concrete commands it
stands for, its placeholders - MODEL, OUT, X, D.npz, F, DIR, N, ... - replaced by bundled models and data
files made in a temporary folder) or in ``SKIPPED`` (with the reason): a command added to the README
without a case fails ``test_readme_command`` until it gets one.

Each concrete command runs in a subprocess from a fresh temporary folder holding a copy of the models it
names under the README's relative paths (``models/...``), so the README's relative paths work unchanged
and nothing is written into the checkout; after every case the copied ``models/`` folder must be unchanged
(the README promises outputs never land beside the model).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# --------------------------------------------------------------------------- extraction from README.md

_SHELL_LANGS = {"", "sh", "bash", "shell", "console"}
_COMMAND_START = re.compile(r"(hexnn-import|python3?|pytest|\.\.\.)(\s|$)")
_FLAG_WITH_VALUE = re.compile(r"--[\w-]+\s+\S")      # `--passes a,b,c`, `--source [--json]`, `--repeat N`
_SHAPE_VALUE = re.compile(r"\w+=[\d,]+")              # `x=1,3,160,160` (the second of two --input-shape values)


def readme_commands(text: str | None = None) -> list[str]:
    """The README's shell commands, in order of appearance, each once."""
    text = README.read_text() if text is None else text
    found: list[str] = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang not in _SHELL_LANGS:
            continue
        for line in re.sub(r"\\\n\s*", " ", body).splitlines():
            found += [" ".join(part.split()) for part in line.split("&&") if part.strip()]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        span = " ".join(span.replace("\\|", "|").split())
        if _COMMAND_START.match(span) or _FLAG_WITH_VALUE.match(span) or _SHAPE_VALUE.fullmatch(span):
            found.append(span)
    return list(dict.fromkeys(found))


# --------------------------------------------------------------------------- what each command stands for

# files copied from the checkout into each case's temporary folder, under the same relative path
MODELS = [
    "models/small_int8.tflite", "models/small_float.tflite",
    "models/digits_int8.tflite", "models/digits_float.tflite", "models/digits_test.npz",
    "models/real/keras_cnn_int8.tflite", "models/real/torch_resnet18_float.onnx", "models/real/torch_resnet18_qdq.onnx",
    "models/real/rapidocr_ppocr_mobile_v2_cls.onnx", "models/real/rapidocr_ppocrv3_det.onnx",
]


def _make_data(folder: Path) -> None:
    """The user's own files the README's placeholders stand for."""
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (1, 24, 24, 3)).astype(np.int8)          # models/small_int8.tflite's input
    np.savez(folder / "x.npz", input=x)                                   # X = x.npz keyed by input name
    np.save(folder / "x.npy", x)                                          # X = x.npy (one input)
    np.savez(folder / "x4.npz", input=np.repeat(x, 4, axis=0))           # a batch other than the model's
    np.savez(folder / "cal.npz",                                          # DATA.npz: float samples, axis 0
             input=rng.uniform(-1, 1, (8, 24, 24, 3)).astype(np.float32))


@dataclass
class Run:
    """One concrete command line, what it must print (stdout) and the files it must write."""

    cmd: str
    prints: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    not_prints: list[str] = field(default_factory=list)
    rc: int = 0
    check: Callable[[str, Path], None] | None = None     # extra check on (stdout, cwd)
    needs: str | None = None                               # an executable it needs on PATH (else skipped)


def _same_json(a: Path, b: Path) -> None:
    assert json.loads(a.read_text()) == json.loads(b.read_text()), "the resumed run's report differs"


def _json_stdout(key: str) -> Callable[[str, Path], None]:
    def check(out: str, cwd: Path) -> None:
        data = json.loads(out)
        assert key in (data if isinstance(data, dict) else data[0]), (key, out[:500])
    return check


def _stdout_in(expected: Path) -> Callable[[str, Path], None]:
    def check(out: str, cwd: Path) -> None:
        assert out.strip() in expected.read_text(), f"`{expected.name}` does not hold this command's output"
    return check


def _stdout_is(expected: Path) -> Callable[[str, Path], None]:
    def check(out: str, cwd: Path) -> None:
        assert out.strip() == expected.read_text().strip(), f"`{expected.name}` is not this command's output"
    return check


def _digits_figures(out: str, cwd: Path) -> None:
    """The README: float and engine both 98.67%, logits 40.9 dB from float, <= 1 LSB from LiteRT's int8."""
    for runner in ("hexagon", "float"):           # the runners table: accuracy on the 450 labelled images
        row = next(r for r in out.splitlines() if re.match(rf"│\s*{runner}\s*│\s*(hexagon|litert)\s*│", r))
        assert [c.strip() for c in row.split("│")[1:-1]][3] == "98.67%", row
    float_row = next(r for r in out.splitlines() if re.match(r"│\s*float\s*│\s*logits", r))
    source_row = next(r for r in out.splitlines() if re.match(r"│\s*source\s*│\s*logits", r))
    cells = [c.strip() for c in float_row.split("│")[1:-1]]
    assert cells[2] == "40.9" and cells[7] == "100.00%", float_row       # SQNR dB, top-1 agreement
    assert float([c.strip() for c in source_row.split("│")[1:-1]][5]) <= 1.0, source_row   # max LSB


SMALL = "models/small_int8.tflite"
NEXT_SMALL = ["next:", f"hexnn-import run {SMALL} --input x.npz", "'input': int8 [1, 24, 24, 3]",
              f"hexnn-import compare {SMALL}", f"hexnn-import xs3-export {SMALL} -o small_int8_xs3"]

def _xs3_layers_figures(out: str, cwd: Path) -> None:
    """The README's XS3 sentence: 64 of 65 layers lower, each 99.4-100% exact and never more than 1 off."""
    assert "64 of 65 layers lowered" in out, out[:300]
    rows = [r for r in (line.split() for line in out.splitlines()) if len(r) == 9 and r[3].endswith("%")]
    exact = [float(r[3].rstrip("%")) for r in rows]
    assert len(exact) == 64 and min(exact) >= 99.38, exact
    assert all(r[5] in ("0", "1") for r in rows), rows


CASES: dict[str, list[Run]] = {
    "python bench/xs3_layers.py": [
        Run(f"{sys.executable} {ROOT / 'bench' / 'xs3_layers.py'}", check=_xs3_layers_figures),
    ],
    # Quick start: imports + prepares, prints op counts as imported / prepared, tensor bytes, inputs and
    # outputs, writes small_int8.hexnn.json in the current directory, ends with the next commands
    "hexnn-import models/small_int8.tflite": [
        Run(f"hexnn-import {SMALL}",
            prints=["imported", "prepared", "const bytes", "activation bytes", "input: input", "output: logits",
                    "wrote small_int8.hexnn.json", *NEXT_SMALL],
            writes=["small_int8.hexnn.json"]),
    ],
    # Example: what quantization costs, per layer (the figures the README quotes)
    "hexnn-import compare models/digits_int8.tflite --float-model models/digits_float.tflite "
    "--data models/digits_test.npz --per-layer --report report.html": [
        Run("hexnn-import compare models/digits_int8.tflite --float-model models/digits_float.tflite "
            "--data models/digits_test.npz --per-layer --report report.html",
            prints=["450 samples", "per layer", "wrote report.html"], writes=["report.html"], check=_digits_figures),
    ],
    # the command table
    "hexnn-import MODEL [-o OUT] [--json]": [
        Run(f"hexnn-import {SMALL}", prints=["wrote small_int8.hexnn.json", "next:"], writes=["small_int8.hexnn.json"]),
        Run(f"hexnn-import {SMALL} -o g.hexnn.json", prints=["wrote g.hexnn.json"], writes=["g.hexnn.json"],
            not_prints=["wrote small_int8"]),
        Run(f"hexnn-import {SMALL} -o g.hexnn.json --json", writes=["g.hexnn.json"], check=_json_stdout("op_counts")),
        Run("hexnn-import models/real/torch_resnet18_float.onnx", prints=["(onnx)"],
            writes=["torch_resnet18_float.hexnn.json"]),
    ],
    "... --calibration DATA.npz [--percentile P]": [
        Run("hexnn-import models/small_float.tflite", prints=["run-time ranges"]),   # "without it ... run-time"
        Run("hexnn-import models/small_float.tflite --calibration cal.npz", not_prints=["run-time ranges"],
            writes=["small_float.hexnn.json"]),
        Run("hexnn-import models/small_float.tflite --calibration cal.npz --percentile 99.99",
            not_prints=["run-time ranges"]),
    ],
    "... --input-shape NAME=4,3,224,224": [      # NAME and the size of the model at hand
        Run("hexnn-import models/real/torch_resnet18_float.onnx",      # "a dynamic batch is 1 ... (the summary says so)"
            prints=["[1, 3, 64, 64]", "dynamic batch set to 1", "--input-shape input=4,3,64,64"]),
        Run("hexnn-import models/real/torch_resnet18_float.onnx --input-shape input=4,3,64,64",
            prints=["[4, 3, 64, 64]"]),
        Run("hexnn-import models/real/torch_resnet18_float.onnx --input-shape input=4,3,65,64", rc=2),  # not the file's
    ],
    "... --no-optimize": [
        Run(f"hexnn-import {SMALL} --no-optimize", prints=["wrote small_int8.hexnn.json"], not_prints=["_d32"]),
    ],
    "--passes a,b,c": [          # --timing is the same table row
        Run(f"hexnn-import {SMALL} --passes make_supernodes,convert_to_depth32,remove_dead_nodes --timing",
            prints=["prepare passes", "make_supernodes", "Supernode_8x8p32to8_d32"]),
        Run(f"hexnn-import {SMALL} --passes no_such_pass", rc=2),
    ],
    "... --emit c|dot|svg|png|json": [
        Run(f"hexnn-import {SMALL} --emit c -o g.c", writes=["g.c", "g.h"]),
        Run(f"hexnn-import {SMALL} --emit dot -o g.dot", writes=["g.dot"]),
        Run(f"hexnn-import {SMALL} --emit json -o g.json", writes=["g.json"]),
        Run(f"hexnn-import {SMALL} --emit svg -o g.svg", writes=["g.svg"], needs="dot"),   # Graphviz's dot
        Run(f"hexnn-import {SMALL} --emit png -o g.png", writes=["g.png"], needs="dot"),
    ],
    "hexnn-import run MODEL --input X [-o OUT.npz] [--json] [--repeat N] [--xs3] [--input-shape ...]": [
        Run(f"hexnn-import run {SMALL} --input x.npz", prints=["logits: shape [1, 10] int8", "top-5"]),
        Run(f"hexnn-import run {SMALL} --input x.npy", prints=["logits: shape [1, 10] int8", "top-5"]),
        Run(f"hexnn-import run {SMALL} --input x4.npz", prints=["logits: shape [4, 10] int8"]),  # batch from X
        Run(f"hexnn-import run {SMALL} --input x.npz -o out.npz --json --repeat 3 --xs3 --input-shape input=1,24,24,3",
            writes=["out.npz"], check=_json_stdout("median_ms")),
    ],
    "hexnn-import compare MODEL --data D.npz [--float-model F] [--per-layer] [--targets hexagon,xs3] "
    "[--report r.html] [--json r.json] [--min-sqnr X]": [
        Run("hexnn-import compare models/small_int8.tflite --float-model models/small_float.tflite --random 3 "
            "--per-layer --targets hexagon,xs3 --report t.html",
            prints=["per layer, every target", "xs3 vs source", "source vs float", "xs3 v source max LSB"],
            writes=["t.html"]),
        Run("hexnn-import compare models/digits_int8.tflite --data models/digits_test.npz "
            "--float-model models/digits_float.tflite --per-layer --report r.html --json r.json --min-sqnr 30",
            prints=["SQNR dB", "per layer", "top-1 agree"], writes=["r.html", "r.json"]),
        # "`compare --min-sqnr` exits 1 below the bar"
        Run("hexnn-import compare models/digits_int8.tflite --data models/digits_test.npz "
            "--float-model models/digits_float.tflite --min-sqnr 60", rc=1),
    ],
    "hexnn-import compare MODEL --data DIR --preprocess PRESET [--limit N] [--jobs N] [--results DIR [--resume]]": [
        # two shards on two workers, checkpointed, then resumed: nothing left to run, the same report
        Run("hexnn-import compare models/small_int8.tflite --float-model models/small_float.tflite "
            "--data generated:40 --preprocess mobilenet --limit 40 --jobs 2 --results run1 --json r.json",
            prints=["per class", "most frequent confusions"],
            writes=["r.json", "run1/run.json", "run1/shard_000000.npz", "run1/shard_000001.npz"]),
        Run("hexnn-import compare models/small_int8.tflite --float-model models/small_float.tflite "
            "--data generated:40 --preprocess mobilenet --limit 40 --jobs 2 --results run1 --resume --json r2.json",
            writes=["r2.json"], check=lambda out, cwd: _same_json(cwd / "r.json", cwd / "r2.json")),
        Run("hexnn-import compare models/small_int8.tflite --data generated:4 --preprocess nosuch", rc=2),
    ],
    "--preprocess mobilenet|inception|torchvision|imagenet-caffe|raw": [
        Run("hexnn-import compare models/small_int8.tflite --data generated:3 --preprocess torchvision,layout=nhwc "
            "--jobs 1", prints=["3 samples from generated:3:0 (torchvision"]),
    ],
    "--jobs N": [Run("hexnn-import compare models/small_int8.tflite --random 3 --jobs 1", prints=["SQNR dB"])],
    "--scheduler ADDRESS": [  # nothing listens there: one line, exit 2
        Run("hexnn-import compare models/small_int8.tflite --random 40 --scheduler tcp://127.0.0.1:9", rc=2),
    ],
    "--results DIR": [
        Run("hexnn-import compare models/small_int8.tflite --random 3 --results r", writes=["r/shard_000000.npz"]),
    ],
    "--labels FILE": [
        Run("hexnn-import compare models/small_int8.tflite --random 3 --labels labels.txt", rc=2),
    ],
    "hexnn-import xs3-export MODEL -o DIR [--json] [--input-shape ...]": [
        Run(f"hexnn-import xs3-export {SMALL} -o xs3", prints=["wrote xs3", "network: 5 XS3 layers"],
            writes=["xs3/manifest.json", "xs3/small_int8_xs3.h", "xs3/small_int8_xs3_network.h"]),
        Run(f"hexnn-import xs3-export {SMALL} -o xs3j --json --input-shape input=1,24,24,3",
            writes=["xs3j/manifest.json"], check=_json_stdout("layers")),
    ],
    "hexnn-import ops [--json] [--markdown]": [
        Run("hexnn-import ops", prints=["Supernode_8x8p32to8", "nnlib-exact"]),
        Run("hexnn-import ops --json", check=_json_stdout("verified")),
        Run("hexnn-import ops --markdown", check=_stdout_in(README)),
    ],
    "--targets hexagon,xs3": [  # the compare row: the XS3 path of an ONNX QDQ model too, against onnxruntime
        Run("hexnn-import compare models/real/torch_resnet18_qdq.onnx --random 2 --per-layer --targets hexagon,xs3",
            prints=["per layer, every target", "xs3 vs source", "onnxruntime"]),
        Run("hexnn-import compare models/small_int8.tflite --random 1 --targets xs3,gpu", rc=2),
    ],
    "--source [--json]": [
        Run("hexnn-import ops --source", check=_stdout_is(ROOT / "docs" / "source_ops.md")),
        Run("hexnn-import ops --source --json", prints=["CONV_2D", "QLinearConv"]),
    ],
    # "What is supported": every real model converts with `hexnn-import MODEL` and no flags
    "hexnn-import MODEL": [
        Run("hexnn-import models/real/keras_cnn_int8.tflite", prints=["wrote keras_cnn_int8.hexnn.json", "next:"],
            writes=["keras_cnn_int8.hexnn.json"]),
    ],
    "hexnn-import ops --json": [Run("hexnn-import ops --json", check=_json_stdout("verified"))],
    "hexnn-import run MODEL --input X --repeat N [--xs3]": [
        Run(f"hexnn-import run {SMALL} --input x.npz --repeat 3", prints=["median", "ms over 3 runs"]),
        Run(f"hexnn-import run {SMALL} --input x.npz --repeat 3 --xs3", prints=["XS3", "median"]),
    ],
    "--repeat N": [Run(f"hexnn-import run {SMALL} --input x.npz --repeat 3 --json", check=_json_stdout("median_ms"))],
    "hexnn-import ops --source": [Run("hexnn-import ops --source", check=_stdout_is(ROOT / "docs" / "source_ops.md"))],
    "hexnn-import ops --markdown": [Run("hexnn-import ops --markdown", check=_stdout_in(README))],
    # Known limits: the RapidOCR models are refused with no flags and run with these shapes
    "--input-shape x=1,3,48,192": [
        Run("hexnn-import models/real/rapidocr_ppocr_mobile_v2_cls.onnx", rc=2),
        Run("hexnn-import models/real/rapidocr_ppocr_mobile_v2_cls.onnx --input-shape x=1,3,48,192",
            prints=["[1, 3, 48, 192]"], writes=["rapidocr_ppocr_mobile_v2_cls.hexnn.json"]),
    ],
    "x=1,3,160,160": [
        Run("hexnn-import models/real/rapidocr_ppocrv3_det.onnx", rc=2),
        Run("hexnn-import models/real/rapidocr_ppocrv3_det.onnx --input-shape x=1,3,160,160",
            prints=["[1, 3, 160, 160]"], writes=["rapidocr_ppocrv3_det.hexnn.json"]),
    ],
}

SKIPPED: dict[str, str] = {
    "python3 -m pip install .": "installs the toolkit (network); the suite runs against the installed one",
    'python3 -m pip install ".[test]"': "installs the test extra (network); the suite runs with it installed",
    "python3 -m pip install 'hexnn-import[reference]'": "installs the reference runtimes (network); the default "
                                                        "install has them here (tests/test_optional_deps.py)",
    "python bench/slow_tests.py": "the cases left out of the suite for their cost (minutes): the suite's own "
                                  "tests, run by pytest -m slow",
    "pytest -q": "the whole suite, of which this test is part (CI runs it: tests/test_readme.py)",
    "python bench/engine_speed.py": "benchmark: timing runs against LiteRT / onnxruntime, not a functional check",
    "python bench/compare_scale.py speed": "benchmark (minutes): --jobs 1 against --jobs 2; the same reports are "
                                           "checked by tests/compare/test_parallel.py and the compare row above",
    "python bench/compare_scale.py memory": "benchmark (a 10,000-image run); the streaming is the shards' "
                                            "(tests/compare/test_parallel.py)",
}


def _debug_setting(cwd: Path) -> None:
    """`HEXNN_DEBUG=1` shows the traceback of an internal error (exit 3 says one line without it). No model
    triggers a bug on purpose, so the child process breaks the importer (``import_model`` raises) first."""
    code = ("import sys, hexnn_import.api as api\n"
            "def broken(*a, **k): raise RuntimeError('planted bug')\n"
            "api.import_model = broken\n"
            "from hexnn_import.cli import main\n"
            "sys.argv = ['hexnn-import', 'models/small_int8.tflite']\n"
            "main()\n")
    env = {k: v for k, v in os.environ.items() if k != "HEXNN_DEBUG"}
    plain = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert plain.returncode == 3 and plain.stderr.strip().splitlines() == [
        "internal error (please report; HEXNN_DEBUG=1 shows the traceback): RuntimeError: planted bug"], plain.stderr
    debug = subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**env, "HEXNN_DEBUG": "1"},
                           capture_output=True, text=True, timeout=120)
    assert debug.returncode != 0 and "Traceback (most recent call last)" in debug.stderr, debug.stderr
    assert debug.stderr.strip().endswith("RuntimeError: planted bug"), debug.stderr


def _real_models_bench(cwd: Path) -> None:
    """`python bench/real_models.py` (every model, minutes) on one model and two inputs: the row it prints
    for the keras CNN agrees with LiteRT within 1 LSB everywhere and shows LiteRT's own spread beside it."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "real_models.py"), "--only", "keras_cnn_int8.tflite",
                           "--n", "2"], cwd=cwd, capture_output=True, text=True, timeout=300)
    row = [ln for ln in proc.stdout.splitlines() if ln.startswith("keras_cnn_int8.tflite")]
    assert proc.returncode == 0 and len(row) == 1, proc.stdout + proc.stderr
    assert "w1 100.00%" in row[0] and "runtime vs itself" in row[0], row[0]


def _families_bench(cwd: Path) -> None:
    """`python bench/families.py` (every family model on 450 digits, minutes) on the int16x8 CNN and 24 digits:
    its row says the engine classifies them as LiteRT does, every top-1 equal, the logits within 7 LSB (hexagon_nn's
    16-bit device arithmetic, issue 36: 5 on these 24), all classes informative."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "families.py"), "--only", "keras_cnn_digits_int16x8",
                           "--n", "24"], cwd=cwd, capture_output=True, text=True, timeout=300)
    row = [ln for ln in proc.stdout.splitlines() if ln.startswith("keras_cnn_digits_int16x8.tflite")]
    assert proc.returncode == 0 and len(row) == 1, proc.stdout + proc.stderr
    acc = re.findall(r"engine ([\d.]+)% runtime ([\d.]+)%", row[0])
    worst = re.findall(r"worst ([\d.]+)", row[0])
    assert acc and acc[0][0] == acc[0][1] and "top-1 agree 100.0%" in row[0] and worst and float(worst[0]) <= 7, row[0]
    assert "UNINFORMATIVE" not in row[0], row[0]


#: README spans checked by a function of their own: a setting, and a benchmark run reduced to one model
def _speed_bench(cwd: Path) -> None:
    """`python bench/speed_real.py` (minutes) on its XS3 section only, three rounds: it times the XS3 path
    against the engine on the full-size MobileNetV2 and prints the ratio and its target in the summary."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "speed_real.py"), "--only", "xs3", "--quick"],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    xs3 = [r for r in lines if r.get("measure") == "xs3"]
    assert xs3 and xs3[0]["model"] == "keras_mobilenet_v2_1.0_224_int8.tflite" and xs3[0]["macs"] == 300774272
    ratio = xs3[0]["xs3_ms"] / xs3[0]["engine_ms"]
    assert abs(xs3[0]["ratio_xs3_vs_engine"] - ratio) < 1e-3 * ratio, xs3
    # the XS3 path's outputs against LiteRT on the same input: an independent reference
    agree = [r for r in lines if r.get("measure") == "xs3_agreement_vs_litert"]
    assert agree and agree[0]["exact_share"] >= 0.99 and agree[0]["max_abs_diff"] <= 1, agree
    summary = lines[-1]
    assert summary["measure"] == "summary", summary
    assert summary["target_ratio_xs3_vs_engine_ok"] == (summary["ratio_xs3_vs_engine"] <= 1.2), summary


def _xs3_report(cwd: Path) -> None:
    """`python bench/xs3_report.py`: the README's three-target table and memory plan of the bundled MobileNetV2
    (50 digits: the accuracies and SQNRs it quotes; the arena figures are exact)."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "xs3_report.py")], cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "per layer, every target" in out and "50 samples" in out, out[:500]
    for runner in ("hexagon", "xs3", "source"):
        row = next(line for line in out.splitlines() if re.match(rf"[│|]\s*{runner}\s*[│|]", line))
        assert "94.00%" in row, row
    pattern = r"[│|] (hexagon|xs3|source) vs float\s*[│|] logits\s*[│|]\s*([\d.]+)"
    rows = {m[1]: float(m[2]) for m in re.finditer(pattern, out)}
    assert rows == {"hexagon": 38.8, "xs3": 37.9, "source": 38.4}, rows
    assert "arena 138240 B, largest live set 138240 B, weights and BSO 525296 B, 64 XS3 layers" in out, out[-800:]


def _xs3_real(cwd: Path) -> None:
    """`python bench/xs3_real.py` on one photo: the full-size MobileNetV2 and its onnxruntime QDQ twin lower the
    same 64 layers; none is below 99% exact against LiteRT (XNNPACK, its default: the mean too) or onnxruntime."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "xs3_real.py"), "--photos", "1"], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "64 of 65 layers on XS3" in out and "64 of 64 layers on XS3" in out, out
    below = re.findall(r"layers below 99% exact or off by more than 1: (\d+) of 64", out)
    assert below == ["0", "0"], out
    assert re.search(r"MEAN\s+1 layers: exact\s+99\.\d\d%", out.split("ONNX QDQ")[0]), out


CHECKED: dict[str, Callable[[Path], None]] = {"HEXNN_DEBUG=1": _debug_setting,
                                              "python bench/real_models.py": _real_models_bench,
                                              "python bench/families.py": _families_bench,
                                              "python bench/speed_real.py": _speed_bench,
                                              "python bench/xs3_report.py": _xs3_report,
                                              "python bench/xs3_real.py": _xs3_real}


# --------------------------------------------------------------------------- running

def _executable(name: str) -> str:
    """`hexnn-import` / `python` as the README's reader has them: beside this interpreter, else on PATH."""
    if name in ("python", "python3"):
        return sys.executable
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"`{name}` is not installed"
    return found


def _snapshot(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def _run(case: Run, cwd: Path) -> None:
    if case.needs and not shutil.which(case.needs):
        return                                   # reported by the skip below when nothing else ran
    argv = shlex.split(case.cmd)
    argv[0] = _executable(argv[0])
    env = {**os.environ, "COLUMNS": "200"}       # rich tables wide enough to read cells
    env.pop("HEXNN_DEBUG", None)
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    where = f"`{case.cmd}` (exit {proc.returncode})\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == case.rc, where
    if case.rc == 2:                             # "every error prints one line on stderr"
        assert len(proc.stderr.strip().splitlines()) == 1, where
    for text in case.prints:
        assert text in proc.stdout, f"missing {text!r} in {where}"
    for text in case.not_prints:
        assert text not in proc.stdout, f"unexpected {text!r} in {where}"
    for path in case.writes:
        assert (cwd / path).exists(), f"{path} not written by {where}"
    if case.check is not None:
        case.check(proc.stdout, cwd)


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    for rel in MODELS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    _make_data(tmp_path)
    return tmp_path


COMMANDS = readme_commands()


def test_readme_shows_commands() -> None:
    """The extraction finds the README's commands (a guard against a parser that silently finds none)."""
    assert "hexnn-import models/small_int8.tflite" in COMMANDS
    assert len(COMMANDS) >= 15, COMMANDS
    assert not (set(CASES) | set(CHECKED)) - set(COMMANDS) - set(SKIPPED), \
        f"cases for commands the README no longer shows: {sorted(set(CASES) - set(COMMANDS))}"


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command(command: str, workdir: Path) -> None:
    if command in SKIPPED:
        pytest.skip(f"`{command}`: {SKIPPED[command]}")
    if command in CHECKED:
        CHECKED[command](workdir)
        return
    assert command in CASES, f"the README shows `{command}`: add what it stands for to CASES (or SKIPPED, why)"
    before = _snapshot(workdir / "models")
    ran = 0
    for case in CASES[command]:
        _run(case, workdir)
        ran += not (case.needs and not shutil.which(case.needs))
    assert _snapshot(workdir / "models") == before, "a command wrote into models/ (beside the model)"
    if ran < len(CASES[command]):
        pytest.skip(f"{len(CASES[command]) - ran} form(s) of `{command}` need an executable not installed "
                    "(Graphviz's dot for svg / png)")


def test_readme_flags_exist() -> None:
    """Every --flag the README names is one some command accepts (its --help lists it)."""
    helps = "".join(subprocess.run([_executable("hexnn-import"), *sub, "--help"], capture_output=True,
                                   text=True, timeout=60).stdout
                    for sub in ([], ["convert"], ["run"], ["compare"], ["xs3-export"], ["ops"]))
    prose = README.read_text().split("## Op coverage")[0]
    flags = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", prose))
    missing = sorted(f for f in flags if f not in helps)
    assert not missing, f"the README names flags no command takes: {missing}"
