"""The first hour with a model (issue 21, [Newcomer]), CLI side: the next commands after the summary,
the run-time-ranges note, outputs in the current directory, one-line usage errors, distinct layer names
in xs3-export's table. Every command runs in a real process with its cwd in a tmp folder."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx

from hexnn_import.xs3.export import display_names

MODELS = Path(__file__).resolve().parent.parent / "models"
INT8 = MODELS / "small_int8.tflite"
FLOAT = MODELS / "small_float.tflite"
KERAS_MV2 = MODELS / "real" / "keras_mobilenet_v2_int8.tflite"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hexnn_import.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def next_commands(stdout: str) -> list[str]:
    """The commands listed under ``next:`` (one per line, indented by two spaces)."""
    tail = stdout.split("\nnext:\n", 1)[1]
    return [line.strip() for line in tail.splitlines() if line.startswith("  hexnn-import ")]


# ---- 1. the next commands ------------------------------------------------------------------------------

def test_summary_ends_with_the_next_commands_and_they_work(tmp_path: Path) -> None:
    r = cli(str(INT8), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.index("wrote small_int8.hexnn.json") < r.stdout.index("\nnext:\n")
    cmds = next_commands(r.stdout)
    assert [shlex.split(c)[1] for c in cmds] == ["run", "compare", "compare", "xs3-export"]
    assert "'input': int8 [1, 24, 24, 3]" in r.stdout  # key = the real input name, shape, dtype
    assert "--random 10" in cmds[1] and "--data D.npz" in cmds[2] and "'input': int8 [N, 24, 24, 3]" in r.stdout
    # the printed commands, copied as a user would (hexnn-import is this interpreter's module)
    np.savez(tmp_path / "x.npz", input=np.zeros((1, 24, 24, 3), np.int8))
    np.savez(tmp_path / "D.npz", input=np.zeros((3, 24, 24, 3), np.int8), labels=np.zeros(3, np.int64))
    for cmd in cmds:
        out = cli(*shlex.split(cmd)[1:], cwd=tmp_path)
        assert out.returncode == 0, (cmd, out.stderr)
    # the hint's "3 of 6 layers lower" (next_steps.py) agrees with what the exporter then lowered
    hint = re.search(r"(\d+) of (\d+) layers lower", r.stdout)
    manifest = json.loads((tmp_path / "small_int8_xs3" / "manifest.json").read_text())
    assert hint and (int(hint[1]), int(hint[2])) == (manifest["summary"]["lowered"], manifest["summary"]["layers"])
    assert (manifest["summary"]["lowered"], manifest["summary"]["layers"]) == (5, 6)  # all but the RESHAPE


def test_next_commands_carry_the_input_shape_given(tmp_path: Path) -> None:
    r = cli(str(INT8), "--input-shape", "input=2,24,24,3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert all("--input-shape input=2,24,24,3" in c for c in next_commands(r.stdout))
    assert "'input': int8 [2, 24, 24, 3]" in r.stdout


def test_float_model_gets_no_xs3_export_and_a_float_reference(tmp_path: Path) -> None:
    r = cli(str(FLOAT), cwd=tmp_path)
    cmds = next_commands(r.stdout)
    assert [shlex.split(c)[1] for c in cmds] == ["run", "compare", "compare"]
    assert "'input': float32 [1, 24, 24, 3]" in r.stdout and "the float model itself in LiteRT" in r.stdout


def test_json_stays_clean_and_carries_next(tmp_path: Path) -> None:
    r = cli(str(INT8), "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)  # the whole stdout is the JSON document
    assert [shlex.split(s["command"])[1] for s in doc["next"]] == ["run", "compare", "compare", "xs3-export"]
    assert all(s["about"] for s in doc["next"]) and "next:" not in r.stdout


# ---- 2. a float model without calibration says so ------------------------------------------------------

def test_float_model_without_calibration_says_run_time_ranges(tmp_path: Path) -> None:
    r = cli(str(FLOAT), cwd=tmp_path)
    note = next(line for line in r.stdout.splitlines() if "run-time ranges" in line)
    assert "AutoQuantize" in note and "QuantizeDownAndShrinkRange_32to8" in note
    assert "--calibration DATA.npz" in note and "'input'" in note
    assert json.loads(cli(str(FLOAT), "--json", cwd=tmp_path).stdout)["ranges"]["mode"] == "run-time"


def test_calibrated_and_quantized_models_have_no_run_time_note(tmp_path: Path) -> None:
    samples = np.random.default_rng(0).uniform(-1, 1, (8, 1, 24, 24, 3)).astype(np.float32)
    np.savez(tmp_path / "cal.npz", input=samples)
    r = cli(str(FLOAT), "--calibration", "cal.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "run-time ranges" not in r.stdout
    assert all("--calibration cal.npz" in c for c in next_commands(r.stdout) if " compare " in c)
    assert json.loads(cli(str(FLOAT), "--calibration", "cal.npz", "--json", cwd=tmp_path).stdout)["ranges"] == \
        {"mode": "calibrated", "method": "minmax"}
    assert "run-time ranges" not in cli(str(INT8), cwd=tmp_path).stdout
    assert json.loads(cli(str(INT8), "--json", cwd=tmp_path).stdout)["ranges"] == {"mode": "fixed"}


# ---- 3. outputs in the current directory, the model never overwritten ----------------------------------

def test_default_outputs_go_to_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "work").mkdir()
    shutil.copy(INT8, tmp_path / "models" / "m.tflite")
    for fmt, names in (("json", ["m.hexnn.json"]), ("c", ["m.c", "m.h"]), ("dot", ["m.dot"])):
        r = cli("../models/m.tflite", "--emit", fmt, cwd=tmp_path / "work")
        assert r.returncode == 0, r.stderr
        assert all((tmp_path / "work" / n).is_file() for n in names), fmt
    # and they are what was asked for: the graph of this model (its 24x24x3 int8 input), its C source, a drawing
    g = hx.load_graph(tmp_path / "work" / "m.hexnn.json")
    assert [(i.name, tuple(i.shape)) for i in g.inputs] == [("input", (1, 24, 24, 3))]
    assert "hexagon_nn_append_node" in (tmp_path / "work" / "m.c").read_text()
    assert (tmp_path / "work" / "m.dot").read_text().lstrip().startswith("digraph")
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["m.tflite"]


@pytest.mark.parametrize("args", [("m.tflite", "-o", "m.tflite"), ("m.hexnn.json",),
                                  ("m.tflite", "--emit", "c", "-o", "m.tflite"),
                                  ("run", "m.tflite", "--input", "x.npy", "-o", "m.tflite")])
def test_the_model_itself_is_never_overwritten(args: tuple[str, ...], tmp_path: Path) -> None:
    shutil.copy(INT8, tmp_path / "m.tflite")
    assert cli("m.tflite", cwd=tmp_path).returncode == 0  # writes m.hexnn.json, the graph-file model below
    np.save(tmp_path / "x.npy", np.zeros((1, 24, 24, 3), np.int8))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "never overwritten" in r.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# ---- 4. usage errors are one line -------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("run",), "Missing argument 'MODEL'"),
    (("run", str(INT8)), "Missing option '--input'"),
    (("run", str(INT8), "--inptu", "x.npz"), "No such option"),
    ((str(INT8), "--bogus"), "No such option"),
    (("xs3-export", str(INT8)), "Missing option"),
    (("ops", "--json", "--markdown"), "choose one"),
    (("compare", str(INT8), "--random", "0"), "--random"),
    ((str(INT8), "--emit", "bogus"), "bogus"),
])
def test_usage_errors_print_one_line_and_exit_2(args: tuple[str, ...], words: str, tmp_path: Path) -> None:
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == 2 and not r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], r.stderr
    assert "--help" in lines[0] or "bogus" in lines[0]


def test_help_is_unchanged(tmp_path: Path) -> None:
    for args, head in ((("--help",), "Usage: hexnn-import [OPTIONS] COMMAND [ARGS]..."),
                       (("run", "--help"), "Usage: hexnn-import run [OPTIONS] MODEL")):
        r = cli(*args, cwd=tmp_path)
        assert r.returncode == 0 and r.stdout.startswith(head) and "Options:" in r.stdout and not r.stderr


# ---- 5. xs3-export's table: different layers never print the same name -------------------------------------

def test_xs3_table_names_are_distinct_on_a_keras_model(tmp_path: Path) -> None:
    """keras_mobilenet_v2_int8: 64 layers whose names all start 'mobilenetv2_0.35_96_1/' and reach 300
    characters; cut to 28 characters they printed as 6 names."""
    manifest = json.loads(cli("xs3-export", str(KERAS_MV2), "-o", "out", "--json", cwd=tmp_path).stdout)
    names = [e["name"] for e in manifest["layers"]]
    assert len({n[:28] for n in names}) < len(names)  # the old cut collides on this model
    r = cli("xs3-export", str(KERAS_MV2), "-o", "out", "--force", cwd=tmp_path)  # "out" holds the first export
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    width = lines[0].index(" op ")
    shown = [line[:width].rstrip() for line in lines[1:1 + len(names)]]
    assert len(set(shown)) == len(names) == 64
    assert "block_13_expand_relu_1/Relu6" in shown  # the keras layer, readable
    for full, s in zip(names, shown):
        assert s.removeprefix("...") in full or s.split("...")[-1] in full, (s, full)
    assert "full names in manifest.json" in r.stdout


def test_display_names_never_repeat() -> None:
    long_a = "m/" + "x" * 60 + "/a_block_1/Relu"
    long_b = "m/" + "y" * 60 + "/a_block_1/Relu"  # the same end: the kept tails collide
    names = [long_a, long_b, "m/short", "m/short", "#2 short", "other", "m/z;m/z2"]
    shown = display_names(names, width=20)
    assert len(set(shown)) == len(shown) and all(len(s) <= 20 for s in shown)
    assert shown[2].startswith("#3 ") and shown[3].startswith("#4 ")
    assert display_names(["a/conv/Relu", "a/pool/Max"]) == ["conv/Relu", "pool/Max"]
