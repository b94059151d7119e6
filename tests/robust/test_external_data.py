"""ONNX external data is read only from inside the model's folder, by the project's own check (issue 20,
finding 5; docs/limits.md): a relative ``location`` with no ``..`` component whose resolved path (symlinks
followed) lies inside the model's resolved folder - whatever the installed onnx package checks itself.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.api import import_model
from hexnn_import.errors import ModelFormatError
from hexnn_import.importers.onnx.importer import read_onnx
from hexnn_import.importers.onnx.reader import external_data_path

W = (np.arange(16 * 4, dtype=np.float32).reshape(16, 4) - 30) / 64


def matmul_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y],
                          [numpy_helper.from_array(W, "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def save_external(folder: Path, location: str = "w.bin") -> Path:
    """``folder/m.onnx`` whose initializer ``w`` is stored in ``folder/w.bin``, then pointed at ``location``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "m.onnx"
    onnx.save(matmul_model(), path, save_as_external_data=True, location="w.bin", size_threshold=0)
    if location != "w.bin":
        m = onnx.load(path, load_external_data=False)
        for e in m.graph.initializer[0].external_data:
            if e.key == "location":
                e.value = location
        onnx.save(m, path)
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def cli_refuses(model: Path, cwd: Path, words: tuple[str, ...]) -> None:
    """``hexnn-import MODEL -o g.json`` in a real process: exit 2, one line holding ``words``, nothing written."""
    before = snapshot(cwd)
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", str(model), "-o", str(model.parent / "g.json")],
                       capture_output=True, text=True, timeout=120, cwd=cwd)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert snapshot(cwd) == before


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside every model folder holding bytes a model could take for its weights."""
    secret = tmp_path / "outside" / "w.bin"
    secret.parent.mkdir()
    secret.write_bytes(W.tobytes())
    return secret


def test_normal_external_data_model_imports(tmp_path: Path) -> None:
    path = save_external(tmp_path / "good")
    assert (tmp_path / "good" / "w.bin").stat().st_size == W.nbytes
    m = read_onnx(path)
    assert np.array_equal(m.consts["w"], W)
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", str(path), "-o", str(tmp_path / "g.json")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # the written graph computes x @ W with the bytes read from w.bin: one-hot inputs give W's rows
    from hexnn_import.api import Runner, prepare
    from hexnn_import.compare.metrics import sqnr_db

    g = prepare(import_model(tmp_path / "g.json"))
    rows = np.concatenate([Runner(g).run({"x": np.eye(16, dtype=np.float32)[k:k + 1]})["y"] for k in range(16)])
    assert sqnr_db(W.astype(np.float64), rows.astype(np.float64)) >= 30.0


def test_symlink_beside_the_model_pointing_outside(tmp_path: Path, outside: Path) -> None:
    folder = tmp_path / "link"
    path = save_external(folder)
    (folder / "w.bin").unlink()
    os.symlink(outside, folder / "w.bin")
    cli_refuses(path, tmp_path, ("initializer w", "'w.bin' resolves outside the model's folder"))


def test_absolute_location(tmp_path: Path, outside: Path) -> None:
    path = save_external(tmp_path / "abs", str(outside))
    cli_refuses(path, tmp_path, ("initializer w", "is an absolute path"))


def test_dotdot_location(tmp_path: Path, outside: Path) -> None:
    path = save_external(tmp_path / "dots", "../outside/w.bin")
    cli_refuses(path, tmp_path, ("initializer w", "'../outside/w.bin' has a '..' component"))


def test_the_check_is_our_own(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the onnx package's external-data loading disabled, good models load and bad ones are refused."""
    import onnx.external_data_helper as edh

    def forbidden(*_a, **_k):
        raise AssertionError("the onnx package's external data loader was used")

    monkeypatch.setattr(edh, "load_external_data_for_model", forbidden)
    monkeypatch.setattr(edh, "load_external_data_for_tensor", forbidden)
    monkeypatch.setattr(onnx, "load_external_data_for_model", forbidden, raising=False)
    assert np.array_equal(read_onnx(save_external(tmp_path / "good")).consts["w"], W)
    with pytest.raises(ModelFormatError, match="has a '..' component"):
        import_model(save_external(tmp_path / "dots", "../outside/w.bin"))


@pytest.mark.parametrize("location,why", [
    ("", "no usable location"),
    ("sub/../w.bin", "'..' component"),
    ("sub\\..\\..\\w.bin", "'..' component"),
    ("/etc/passwd", "absolute path"),
    ("\\\\server\\share\\w.bin", "absolute path"),
    ("C:\\w.bin", "absolute path"),
    ("missing.bin", "does not exist"),
])
def test_location_rules(tmp_path: Path, location: str, why: str) -> None:
    with pytest.raises(ModelFormatError, match=why):
        external_data_path(location, tmp_path, "t")


def test_symlinks_inside_the_folder_are_followed(tmp_path: Path, outside: Path) -> None:
    folder = tmp_path / "m"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "w.bin").write_bytes(b"1234")
    os.symlink(folder / "data" / "w.bin", folder / "inside.bin")
    assert external_data_path("inside.bin", folder, "t") == (folder / "data" / "w.bin").resolve()
    assert external_data_path("data/w.bin", folder, "t") == (folder / "data" / "w.bin").resolve()
    os.symlink(outside.parent, folder / "dir")  # a folder link leading out
    with pytest.raises(ModelFormatError, match="resolves outside"):
        external_data_path("dir/w.bin", folder, "t")


@pytest.mark.parametrize("entries,why", [
    ({"offset": "300"}, "lies outside its file"),
    ({"length": "100"}, "holds 100 bytes, its dims"),
    ({"offset": "4", "length": "256"}, "lies outside its file"),
    ({"offset": "x"}, "not a number"),
])
def test_offset_and_length_checked(tmp_path: Path, entries: dict[str, str], why: str) -> None:
    path = save_external(tmp_path / "m")
    m = onnx.load(path, load_external_data=False)
    t = m.graph.initializer[0]
    for key, value in entries.items():
        for e in t.external_data:
            if e.key == key:
                e.value = value
                break
        else:
            e = t.external_data.add()
            e.key, e.value = key, value
    onnx.save(m, path)
    with pytest.raises(ModelFormatError, match=why):
        read_onnx(path)
