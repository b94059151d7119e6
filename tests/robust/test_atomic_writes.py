"""Every output file is written atomically: a failed or interrupted run leaves no partial file (issue [Robust]).

Writes go through :func:`hexnn_import.serialize.atomic_write_bytes` (a
temporary file in the target folder, then a rename). These tests make the
write fail half-way - the disk fills up, the user presses Ctrl-C, the
rename fails - and look at the folder afterwards: no new file, no
temporary file, the previous file unchanged. A last test checks that no code
writes an output file any other way.
"""
from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from hexnn_import.api import import_model
from hexnn_import.cli import cli
from hexnn_import.errors import HexnnError
from hexnn_import.model_source import ModelSource
from hexnn_import.serialize import atomic_write_bytes, save_graph

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "small_int8.tflite"


class _HalfWriter:
    """A file object that writes half of what it is given, then raises ``exc``."""

    def __init__(self, fh: Any, exc: BaseException):
        self.fh, self.exc = fh, exc

    def __enter__(self) -> "_HalfWriter":
        return self

    def __exit__(self, *args: Any) -> None:
        self.fh.close()

    def write(self, data: bytes) -> int:
        self.fh.write(data[: len(data) // 2])
        self.fh.flush()
        raise self.exc


def _fail_midway(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    real = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda fd, mode="r", *a, **k: _HalfWriter(real(fd, mode, *a, **k), exc))


def _disk_full() -> OSError:
    return OSError(errno.ENOSPC, "No space left on device")


def test_a_write_that_fails_midway_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_midway(monkeypatch, _disk_full())
    with pytest.raises(HexnnError, match="cannot write .*No space left on device"):
        atomic_write_bytes(tmp_path / "out.bin", b"x" * 10000)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "g.hexnn.json"
    save_graph(import_model(MODEL), target)
    before = target.read_bytes()
    _fail_midway(monkeypatch, _disk_full())
    with pytest.raises(HexnnError):
        save_graph(import_model(MODEL), target)
    assert target.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [target.name]


def test_an_interrupted_write_leaves_nothing_and_still_interrupts(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "old.bin").write_bytes(b"old")
    _fail_midway(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        atomic_write_bytes(tmp_path / "old.bin", b"new" * 1000)
    assert [p.name for p in tmp_path.iterdir()] == ["old.bin"] and (tmp_path / "old.bin").read_bytes() == b"old"


def test_a_failed_rename_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def replace(src: Any, dst: Any) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(HexnnError, match="cross-device"):
        atomic_write_bytes(tmp_path / "out.bin", b"payload")
    assert list(tmp_path.iterdir()) == []


def test_convert_that_fails_while_writing_leaves_no_graph_file(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_midway(monkeypatch, _disk_full())
    result = CliRunner().invoke(cli, [str(MODEL), "-o", str(tmp_path / "g.hexnn.json")])
    assert result.exit_code == 2 and "No space left" in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_convert_of_a_bad_model_keeps_the_previous_graph_file(tmp_path: Path) -> None:
    target = tmp_path / "g.hexnn.json"
    save_graph(import_model(MODEL), target)
    before = target.read_bytes()
    result = CliRunner().invoke(cli, [str(ROOT / "tests" / "data" / "bad" / "zero_scale.tflite"), "-o", str(target)])
    assert result.exit_code == 2 and target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_run_that_fails_while_writing_leaves_no_npz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = import_model(MODEL)
    np.savez(tmp_path / "x.npz", input=np.zeros(g.inputs[0].shape, np.int8))
    _fail_midway(monkeypatch, _disk_full())
    result = CliRunner().invoke(cli, ["run", str(MODEL), "--input", str(tmp_path / "x.npz"),
                                      "-o", str(tmp_path / "y.npz")])
    assert result.exit_code == 2 and "No space left" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["x.npz"]


def test_xs3_export_that_fails_midway_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = pytest.importorskip("hexnn_import.xs3.export")
    from hexnn_import.emit import files as emit_files

    calls = {"n": 0}
    real = emit_files._write_new  # each file of the hidden folder the export is built in

    def second_write_fails(path: Any, payload: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            _fail_midway(monkeypatch, _disk_full())
        real(path, payload)

    monkeypatch.setattr(emit_files, "_write_new", second_write_fails)
    with pytest.raises(HexnnError, match="No space left"):
        export.export_model(ModelSource.open(MODEL), import_model(MODEL), tmp_path / "out")
    assert calls["n"] == 2 and list(tmp_path.iterdir()) == []  # the folder is whole or absent (issue 20, finding 2)


#: ways of writing a file that bypass atomic_write_bytes
_DIRECT_WRITE = re.compile(r"\.write_text\(|\.write_bytes\(|\bopen\([^)]*['\"][wax]b?\+?['\"]|\.tofile\("
                           r"|np\.save(?:z|z_compressed|txt)?\(\s*(?!buf\b|io\.)[^,)]+,|json\.dump\(")


def test_no_code_writes_an_output_file_directly() -> None:
    offenders = []
    for folder in ("hexnn_import", "ops", "optimizer", "xs3"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("hexnn_import/testing/") or rel == "hexnn_import/serialize.py":
                continue
            for k, line in enumerate(path.read_text().splitlines(), 1):
                if _DIRECT_WRITE.search(line) and not line.lstrip().startswith("#"):
                    offenders.append(f"{rel}:{k}: {line.strip()}")
    assert not offenders, "write through hexnn_import.serialize.atomic_write_bytes:\n" + "\n".join(offenders)
