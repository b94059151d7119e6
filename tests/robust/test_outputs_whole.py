"""Outputs never replace inputs, and are written whole or not at all (issue 20, findings 1, 2, 6, 7; --max-memory).

Every refusal is checked the same way: exit code 2, exactly one line on
stderr (``error: ...``), and the working folder byte-for-byte as it was -
same listing (hidden files included), same MD5 of every file - so nothing
was changed and no temporary was left behind.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from hexnn_import.cli import cli
from hexnn_import.emit import files as emit_files
from hexnn_import.errors import HexnnError
from hexnn_import.testing.tflite_builder import TFLiteBuilder
from hexnn_import.xs3.export import MAX_STEM, file_stem

ROOT = Path(__file__).resolve().parents[2]
INT8 = ROOT / "models" / "small_int8.tflite"        # input 'input' [1, 24, 24, 3] int8
FLOAT = ROOT / "models" / "small_float.tflite"      # its float twin
DIGITS = ROOT / "models" / "digits_int8.tflite"     # classifier: output 'logits' [1, 10]
DIGITS_DATA = ROOT / "models" / "digits_test.npz"   # 'input' [450, 1, 8, 8, 1] float32, 'labels' [450]


# ---- helpers -------------------------------------------------------------------------------------------------

def snapshot(folder: Path) -> dict[str, str]:
    """Every file and folder below ``folder`` (hidden ones too): relative path -> MD5 of its bytes, or 'dir'."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        out[rel] = "dir" if p.is_dir() and not p.is_symlink() else hashlib.md5(p.read_bytes()).hexdigest()
    return out


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_refused(result: Result, *words: str) -> str:
    """Exit 2 and one line ``error: ...`` on stderr holding every word; returns that line."""
    lines = result.stderr.splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.stdout)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def refused_and_unchanged(folder: Path, args: tuple[str | Path, ...], *words: str) -> str:
    before = snapshot(folder)
    line = assert_refused(invoke(*args), *words)
    assert snapshot(folder) == before
    return line


def fc_chain(path: Path, names: list[str], batch: int = 1) -> Path:
    """An int8 TFLite model of fully-connected layers [batch, 8] -> [batch, 8], one per name (its output tensor)."""
    rng = np.random.default_rng(0)
    b = TFLiteBuilder()
    x = first = b.add_tensor("input", [batch, 8], np.int8, scale=0.05, zero_point=0)
    for k, name in enumerate(names):
        w = b.add_const(f"w{k}", rng.integers(-100, 100, (8, 8)).astype(np.int8), scale=0.01, zero_point=0)
        bias = b.add_const(f"b{k}", rng.integers(-50, 50, 8).astype(np.int32), scale=0.0005, zero_point=0)
        y = b.add_tensor(name, [batch, 8], np.int8, scale=0.1, zero_point=0)
        b.add_operator("FULLY_CONNECTED", [x, w, bias], [y])
        x = y
    b.set_io([first], [x])
    path.write_bytes(b.build())
    return path


@pytest.fixture()
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder (the current directory) holding m.tflite, f.tflite (float), x.npy, cal.npz, d.npz."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(INT8, tmp_path / "m.tflite")
    shutil.copy(FLOAT, tmp_path / "f.tflite")
    np.save(tmp_path / "x.npy", np.zeros((1, 24, 24, 3), np.int8))
    samples = np.random.default_rng(0).uniform(-1, 1, (2, 1, 24, 24, 3)).astype(np.float32)
    np.savez(tmp_path / "cal.npz", input=samples)
    np.savez(tmp_path / "d.npz", input=samples)
    return tmp_path


# ---- finding 1: no command writes over one of its own inputs -------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("run", "m.tflite", "--input", "x.npy", "-o", "x.npy"), ("-o x.npy", "--input")),
    (("run", "m.tflite", "--input", "x.npy", "-o", "./x.npy"), ("--input",)),
    (("run", "m.tflite", "--input", "./x.npy", "-o", "sub/../x.npy"), ("--input",)),
    (("run", "m.tflite", "--input", "x.npy", "-o", "m.tflite"), ("MODEL", "never overwritten")),
    (("convert", "f.tflite", "--calibration", "cal.npz", "-o", "cal.npz"), ("--calibration",)),
    (("convert", "f.tflite", "--calibration", "cal.h", "--emit", "c", "-o", "cal.c"), ("cal.h", "--calibration")),
    (("compare", "m.tflite", "--data", "d.npz", "--report", "d.npz"), ("--report", "--data")),
    (("compare", "m.tflite", "--data", "d.npz", "--json", "./d.npz"), ("--json", "--data")),
    (("compare", "m.tflite", "--float-model", "f.tflite", "--json", "f.tflite"), ("--float-model",)),
    (("compare", "f.tflite", "--calibration", "cal.npz", "--report", "cal.npz"), ("--calibration",)),
    (("compare", "m.tflite", "--json", "r.json", "--report", "./r.json"), ("one file",)),
    (("xs3-export", "m.tflite", "-o", "."), ("holds MODEL",)),
    (("xs3-export", "../w/m.tflite", "-o", "../w"), ("holds MODEL",)),
])
def test_an_output_over_an_input_is_refused(work: Path, args: tuple[str, ...], words: tuple[str, ...]) -> None:
    shutil.copy(work / "cal.npz", work / "cal.h")  # a calibration file numpy reads whatever its name
    (work / "sub").mkdir()
    (work / "w").mkdir()
    shutil.copy(INT8, work / "w" / "m.tflite")
    if args[1].startswith("../"):
        os.chdir(work / "sub")  # restored by monkeypatch.chdir's undo
    refused_and_unchanged(work, args, *words)


def test_links_to_an_input_count_as_the_input(work: Path) -> None:
    (work / "soft.npy").symlink_to(work / "x.npy")
    os.link(work / "x.npy", work / "hard.npy")
    for out in ("soft.npy", "hard.npy"):
        refused_and_unchanged(work, ("run", "m.tflite", "--input", "x.npy", "-o", out), "--input")
    refused_and_unchanged(work, ("run", "m.tflite", "--input", "soft.npy", "-o", "x.npy"), "--input")


def test_a_graph_files_source_model_is_an_input_of_compare(work: Path) -> None:
    """``compare g.hexnn.json`` reads the model the graph came from as its reference: never an output."""
    assert invoke("m.tflite", "-o", "g.hexnn.json").exit_code == 0
    refused_and_unchanged(work, ("compare", "g.hexnn.json", "--random", "1", "--json", "m.tflite"), "source model")


def test_an_export_folder_holding_the_input_data_is_refused(work: Path) -> None:
    (work / "out").mkdir()
    np.save(work / "out" / "x.npy", np.zeros((1, 24, 24, 3), np.int8))
    line = refused_and_unchanged(work, ("xs3-export", "m.tflite", "--input", "out/x.npy", "-o", "out", "--force"),
                                 "--input")
    assert "replaced whole" in line


# ---- finding 2: xs3-export writes its folder whole; --force replaces it whole ------------------------------

def test_a_non_empty_folder_needs_force(work: Path) -> None:
    assert invoke("xs3-export", "m.tflite", "-o", "out").exit_code == 0
    refused_and_unchanged(work, ("xs3-export", "m.tflite", "-o", "out"), "not empty", "--force")


def test_force_replaces_an_earlier_export_whole(work: Path) -> None:
    fc_chain(work / "other.tflite", ["dense_a", "dense_b"])
    assert invoke("xs3-export", "other.tflite", "-o", "out").exit_code == 0
    old_files = {p.name for p in (work / "out").iterdir()}
    r = invoke("xs3-export", "m.tflite", "-o", "out", "--force")
    assert r.exit_code == 0, r.stderr
    assert invoke("xs3-export", "m.tflite", "-o", "fresh").exit_code == 0
    new, fresh = snapshot(work / "out"), snapshot(work / "fresh")
    # nothing of the old export: the files every export names alike (manifest, the C runner and its build script)
    # hold the new export's bytes, every other old file is gone
    fixed = {"manifest.json", "xs3_runner.c", "build_runner.sh", "layers.npz"}
    assert fixed <= old_files and set(new) == set(fresh) and not set(new) & (old_files - fixed)
    assert all(new[k] == fresh[k] for k in new if k != "manifest.json")
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(".")) == []  # no temporary, no old copy


def test_force_never_deletes_a_folder_that_is_not_an_export(work: Path) -> None:
    (work / "mine").mkdir()
    (work / "mine" / "notes.txt").write_text("my notes")
    refused_and_unchanged(work, ("xs3-export", "m.tflite", "-o", "mine", "--force"), "not an xs3 export")
    refused_and_unchanged(work, ("xs3-export", "m.tflite", "-o", "x.npy"), "not a folder")


def _fail_on_call(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """The n-th write of emit/files.py (a staged file, or a file of write_folder's hidden folder) fails as a full
    disk would."""
    calls = {"n": 0}

    def failing(real: Any, exc: Any) -> Any:
        def write(path: Any, payload: bytes) -> None:
            calls["n"] += 1
            if calls["n"] == n:
                raise exc(path)
            real(path, payload)
        return write

    monkeypatch.setattr(emit_files, "atomic_write_bytes", failing(
        emit_files.atomic_write_bytes, lambda path: HexnnError(f"cannot write {path}: No space left on device")))
    monkeypatch.setattr(emit_files, "_write_new", failing(
        emit_files._write_new, lambda path: OSError(errno.ENOSPC, "No space left on device")))


def test_a_failed_export_keeps_the_old_folder_and_leaves_nothing(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert invoke("xs3-export", "m.tflite", "-o", "out").exit_code == 0
    _fail_on_call(monkeypatch, 2)
    refused_and_unchanged(work, ("xs3-export", "m.tflite", "-o", "out", "--force"), "No space left")
    _fail_on_call(monkeypatch, 2)
    line = refused_and_unchanged(work, ("xs3-export", "m.tflite", "-o", "new/deeper"), "No space left")
    assert "cannot write new/deeper/" in line  # the file asked for, not the hidden folder; no parent left behind


def test_a_failed_rename_keeps_the_old_folder(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert invoke("xs3-export", "m.tflite", "-o", "out").exit_code == 0
    real = os.rename

    def rename(src: Any, dst: Any) -> None:
        if Path(src).name.endswith(".tmp"):  # the new folder moving in
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    refused_and_unchanged(work, ("xs3-export", "m.tflite", "-o", "out", "--force"), "cross-device")


def test_long_layer_names_give_bounded_unique_files(work: Path) -> None:
    """A 300-character name failed with 'File name too long'; two names alike in their first 100 characters
    must not share a file (now a member prefix in layers.npz, and the layer's C names)."""
    scope = "model/" + "dense_block/" * 25                     # 306 characters before the layer's own name
    names = [scope + "expand", scope + "project", "x" * 300]
    fc_chain(work / "long.tflite", names)
    r = invoke("xs3-export", "long.tflite", "-o", "out", "--json")
    assert r.exit_code == 0, r.stderr
    manifest = json.loads(r.stdout)
    prefixes = [e["arrays"] for e in manifest["layers"]]
    assert [e["name"] for e in manifest["layers"]] == names and len(set(prefixes)) == 3
    with np.load(work / "out" / "layers.npz") as z:
        for name, prefix in zip(names, prefixes):
            assert len(prefix) <= MAX_STEM + 1 and prefix.endswith("/")
            assert str(z[prefix + "name"]) == name  # the full name travels with the arrays


def test_file_stem_is_bounded_and_unique() -> None:
    taken: set[str] = {"manifest"}
    a = file_stem("a" * 240, taken)
    b = file_stem("p" * 100 + "/first_layer" * 10, taken)
    c = file_stem("p" * 100 + "/second_layer" * 10, taken)
    assert len(a) <= MAX_STEM and len(b) <= MAX_STEM and len(c) <= MAX_STEM and b != c
    assert b[:48] == c[:48] == "p" * 48  # readable start, told apart by the hash of the whole name
    assert file_stem("Conv/1", taken) == "Conv_1" and file_stem("conv_1", taken) == "conv_1_2"  # case-blind FS
    assert file_stem("manifest", taken) == "manifest_2"


# ---- finding 2: the other outputs of several files ----------------------------------------------------------

def test_emit_c_is_whole_or_nothing(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (work / "g.c").write_text("old source")
    (work / "g.h").write_text("old header")
    _fail_on_call(monkeypatch, 2)  # the .h is staged, the .c fails
    refused_and_unchanged(work, ("m.tflite", "--emit", "c", "-o", "g.c"), "No space left")
    monkeypatch.undo()
    monkeypatch.chdir(work)
    real, swaps = os.replace, []

    def replace(src: Any, dst: Any) -> None:
        if ".stage-" in Path(src).name and not Path(src).name.endswith(".tmp"):  # a staged file moving in
            swaps.append(dst)
            if len(swaps) == 2:
                raise OSError(errno.EIO, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    refused_and_unchanged(work, ("m.tflite", "--emit", "c", "-o", "g.c"), "Input/output error")
    assert len(swaps) == 2  # the header was in place, and was put back


def test_compare_json_and_report_are_whole_or_nothing(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (work / "r.json").write_text("{}")
    _fail_on_call(monkeypatch, 2)
    refused_and_unchanged(work, ("compare", "m.tflite", "--random", "1", "--json", "r.json", "--report", "r.html"),
                          "No space left")


# ---- finding 6: outputs only once everything succeeded; zero-size tensors -----------------------------------

def _zero_size_relu(path: Path) -> Path:
    b = TFLiteBuilder()
    x = b.add_tensor("input", [1, 0, 4], np.int8, scale=0.05, zero_point=0)
    y = b.add_tensor("output", [1, 0, 4], np.int8, scale=0.05, zero_point=0)
    b.add_operator("RELU", [x], [y])
    b.set_io([x], [y])
    path.write_bytes(b.build())
    return path


def test_a_zero_size_output_is_an_empty_array(work: Path) -> None:
    _zero_size_relu(work / "z.tflite")
    np.save(work / "z.npy", np.zeros((1, 0, 4), np.int8))
    r = invoke("run", "z.tflite", "--input", "z.npy", "-o", "out.npz")
    assert r.exit_code == 0, r.stderr
    with np.load(work / "out.npz") as z:
        assert z.files == ["output"] and z["output"].shape == (1, 0, 4) and z["output"].dtype == np.int8


def test_a_run_that_fails_after_computing_writes_nothing(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hexnn_import.cli as cli_module

    def broken(*args: Any) -> str:
        raise HexnnError("cannot show output 'output'")

    monkeypatch.setattr(cli_module, "output_line", broken)
    refused_and_unchanged(work, ("run", "m.tflite", "--input", "x.npy", "-o", "out.npz"), "cannot show")


def test_a_zero_batch_model_runs(work: Path) -> None:
    """A fully-connected model of batch 0 converts, so it runs: its output is the empty [0, 8] array (a
    model that converts must run; the file is written after the run succeeded)."""
    fc_chain(work / "b0.tflite", ["dense"], batch=0)
    np.save(work / "b0.npy", np.zeros((0, 8), np.int8))
    assert invoke("b0.tflite", "-o", "b0.hexnn.json").exit_code == 0
    r = invoke("run", "b0.tflite", "--input", "b0.npy", "-o", "out.npz")
    assert r.exit_code == 0, r.output
    with np.load(work / "out.npz") as z:
        assert z["dense"].shape == (0, 8) and z["dense"].dtype == np.int8
    r = invoke("run", "--xs3", "b0.tflite", "--input", "b0.npy")  # the empty layer stays off the XS3 kernels
    assert r.exit_code == 0 and "0 of 1 layers on XS3" in r.output, r.output


# ---- finding 7: compare's labels and --calibration x.npy ------------------------------------------------------

@pytest.mark.parametrize("labels, words", [
    (np.array([1, 2, 10]), ("label 10", "[0, 9]", "10 classes")),
    (np.array([1, -1, 2]), ("label -1", "[0, 9]")),
    (np.array(["cat", "dog", "cat"]), ("dtype <U3", "[0, 9]")),
    (np.array(["1", "2", "3"]), ("dtype <U1",)),
])
def test_labels_outside_the_classes_are_refused(work: Path, labels: np.ndarray, words: tuple[str, ...]) -> None:
    with np.load(DIGITS_DATA) as z:
        np.savez(work / "dl.npz", input=z["input"][:3], labels=labels)
    refused_and_unchanged(work, ("compare", str(DIGITS), "--data", "dl.npz", "--json", "r.json"), *words)


def test_calibration_npy_is_the_single_inputs_samples(work: Path) -> None:
    with np.load(work / "cal.npz") as z:
        np.save(work / "cal.npy", z["input"])
    for name, cal in (("a.hexnn.json", "cal.npz"), ("b.hexnn.json", "cal.npy")):
        r = invoke("f.tflite", "--calibration", cal, "-o", name, "--json")
        assert r.exit_code == 0, r.stderr
    a, b = (json.loads((work / n).read_text())["meta"]["calibration"] for n in ("a.hexnn.json", "b.hexnn.json"))
    assert a == b and a["ranges"]  # the same samples, the same ranges
    r = invoke("compare", "f.tflite", "--calibration", "cal.npy", "--random", "1")
    assert r.exit_code == 0, r.stderr


def test_calibration_npy_for_a_model_of_two_inputs_is_one_line(work: Path) -> None:
    b = TFLiteBuilder()
    x, y = b.add_tensor("x", [1, 4], np.float32), b.add_tensor("y", [1, 4], np.float32)
    s = b.add_tensor("sum", [1, 4], np.float32)
    b.add_operator("ADD", [x, y], [s])
    b.set_io([x, y], [s])
    (work / "two.tflite").write_bytes(b.build())
    np.save(work / "c2.npy", np.ones((3, 1, 4), np.float32))
    refused_and_unchanged(work, ("two.tflite", "--calibration", "c2.npy", "-o", "g.hexnn.json"), "missing")
    refused_and_unchanged(work, ("compare", "two.tflite", "--calibration", "c2.npy", "--json", "r.json"), "missing")


# ---- --max-memory ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("convert", "m.tflite", "-o", "g.hexnn.json"),
                                  ("run", "m.tflite", "--input", "x.npy", "-o", "o.npz"),
                                  ("compare", "m.tflite", "--random", "1", "--json", "r.json"),
                                  ("xs3-export", "m.tflite", "-o", "out")])
def test_max_memory_bounds_every_command(work: Path, args: tuple[str, ...]) -> None:
    refused_and_unchanged(work, (*args, "--max-memory", "1k"), "above the memory budget of 1.0 KiB")
    assert invoke(*args).exit_code == 0  # the budget was this invocation's only


def test_an_input_file_is_checked_before_it_is_read(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A .npy whose header claims [1, 100000, 100000, 3] int8 (28 GiB) is refused from its header alone."""
    header = {"descr": "|i1", "fortran_order": False, "shape": (1, 100000, 100000, 3)}
    with open(work / "huge.npy", "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, header)
    loads: list[Any] = []
    real = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: loads.append(a) or real(*a, **k))
    refused_and_unchanged(work, ("run", "m.tflite", "--input", "huge.npy", "-o", "o.npz", "--max-memory", "1G"),
                          "huge.npy", "GiB", "above the memory budget")
    assert not any("huge.npy" in str(a[0]) for a in loads)


def test_a_bad_size_is_a_usage_error(work: Path) -> None:
    refused_and_unchanged(work, ("run", "m.tflite", "--input", "x.npy", "--max-memory", "lots"), "--max-memory")
