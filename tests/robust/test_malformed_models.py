"""Malformed models are refused at convert, one line naming the node or tensor, exit 2 (issue 38, finding 7):
ONNX models onnx.checker refuses (duplicate output names, a node writing a graph input or an initializer, opset
999999), an ONNX Gather with constant indices outside the data, a TFLite RESHAPE to ``[-2, 32]``, a TFLite
operator writing a constant tensor, a SOFTMAX with beta NaN and a denormal output scale."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from hexnn_import.api import import_model
from hexnn_import.errors import HexnnError
from hexnn_import.testing.malformed_models import MALFORMED


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_models_are_refused_in_one_line(name: str, tmp_path: Path) -> None:
    suffix, build, words = MALFORMED[name]
    path = tmp_path / f"{name}{suffix}"
    path.write_bytes(build())
    with pytest.raises(HexnnError) as err:
        import_model(path)
    msg = str(err.value)
    assert "\n" not in msg and all(w in msg for w in words), msg


@pytest.mark.parametrize("name", ["onnx_duplicate_outputs", "onnx_writes_input", "onnx_writes_initializer"])
def test_onnx_s_checker_refuses_them_too(name: str) -> None:
    with pytest.raises(onnx.checker.ValidationError):  # independent: the rules are onnx's, not the importer's
        onnx.checker.check_model(onnx.load_from_string(MALFORMED[name][1]()))


def test_the_cli_exits_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "beta.tflite"
    path.write_bytes(MALFORMED["tflite_softmax_beta_nan"][1]())
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", str(path)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.glob("beta*.json"))
