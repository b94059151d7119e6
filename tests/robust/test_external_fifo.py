"""ONNX external data that is not a regular file is named for what it is (issue 38, finding 10: a FIFO given as
external data was reported as a file that "does not exist"); nothing is opened, so a FIFO cannot hang the read."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hexnn_import.api import import_model
from hexnn_import.errors import ModelFormatError
from tests.robust.test_external_data import save_external


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_as_external_data_is_named_a_fifo(tmp_path: Path) -> None:
    model = save_external(tmp_path / "m", "pipe.bin")
    os.mkfifo(tmp_path / "m" / "pipe.bin")
    result: list[BaseException] = []
    t = threading.Thread(target=lambda: _catch(model, result), daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "the import blocked on the FIFO"
    msg = str(result[0])
    assert isinstance(result[0], ModelFormatError) and "\n" not in msg, msg
    assert "'pipe.bin' is a named pipe (FIFO), not a regular file" in msg, msg


def test_a_folder_and_a_missing_file_as_external_data(tmp_path: Path) -> None:
    model = save_external(tmp_path / "m", "sub")
    (tmp_path / "m" / "sub").mkdir()
    with pytest.raises(ModelFormatError, match="'sub' is a directory, not a regular file"):
        import_model(model)
    model = save_external(tmp_path / "n", "missing.bin")
    with pytest.raises(ModelFormatError, match="'missing.bin' does not exist beside the model"):
        import_model(model)


def _catch(model: Path, out: list[BaseException]) -> None:
    try:
        import_model(model)
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        out.append(exc)
