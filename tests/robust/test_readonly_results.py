"""``compare --results`` in a folder that cannot be written (issue [Robust] finding 4c: ``OSError 30``, exit 3):
one line, exit 2, before any run; so are ``--json`` / ``--report`` there.

The folder is read-only for real: ``chmod 555`` for a user, a read-only tmpfs for root (whom modes do not stop);
root without ``mount`` makes the file system refuse through ``os.open`` / ``os.mkdir`` (EROFS), as a read-only
mount does."""
from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from hexnn_import.cli import cli
from hexnn_import.compare import CompareOptions, command, compare
from hexnn_import.errors import InputDataError
from hexnn_import.testing.fuzz_compare_cases import refusing_writes

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "small_int8.tflite")


@pytest.fixture
def readonly(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)],
                             capture_output=True).returncode == 0
    with contextlib.ExitStack() as stack:
        if not mounted:
            stack.enter_context(refusing_writes(folder))
        try:
            yield folder
        finally:
            if mounted:
                subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def build_runners(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the model was imported: the folder was not checked first")

    monkeypatch.setattr(command, "build_runners", build_runners)


@pytest.mark.parametrize("where", ["ro/res", "ro", "json", "report"])
def test_a_read_only_folder_is_one_line_before_any_run(readonly: Path, no_run: None, where: str) -> None:
    args = {"ro/res": ["--results", str(readonly / "res")], "ro": ["--results", str(readonly)],
            "json": ["--json", str(readonly / "r.json")], "report": ["--report", str(readonly / "r.html")]}[where]
    result = CliRunner().invoke(cli, ["compare", MODEL, "--random", "2", *args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot write ") and "is not writable" in lines[0]
    assert list(readonly.iterdir()) == []


def test_the_api_refuses_it_too(readonly: Path) -> None:
    with pytest.raises(InputDataError, match=r"--results .*res: cannot write there"):
        compare(CompareOptions(MODEL, random=2, jobs=1, results=str(readonly / "res")))
    assert list(readonly.iterdir()) == []
