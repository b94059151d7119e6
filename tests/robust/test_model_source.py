"""A model path is resolved once (hexnn_import/model_source.py), and what is not a regular file is refused there
(issue 38 finding 3: a FIFO given as the model hung every command): one line, exit 2, in every command."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hexnn_import.errors import ModelFormatError
from hexnn_import.model_source import ModelSource

COMMANDS = [
    [],
    ["run", "--input", "x.npy"],
    ["run", "--xs3", "--input", "x.npy"],
    ["compare", "--random", "1"],
    ["xs3-export", "-o", "out"],
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]) or "convert")
def test_a_fifo_as_the_model_is_refused_at_once(args: list[str], tmp_path: Path) -> None:
    fifo = tmp_path / "model.tflite"
    os.mkfifo(fifo)
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    cmd = [sys.executable, "-m", "hexnn_import.cli", *args[:1], str(fifo), *args[1:]]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)  # a hang fails here
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a regular file (a pipe, socket or device)" in lines[0], r.stderr
    assert not (tmp_path / "out").exists()


def test_a_device_and_a_folder_are_not_models(tmp_path: Path) -> None:
    for path, why in (("/dev/null", "not a regular file"), (str(tmp_path), "is a directory")):
        with pytest.raises(ModelFormatError, match=why):
            ModelSource.open(path)
