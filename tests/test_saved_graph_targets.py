"""A saved graph file is a model like the others (issue 35 [Seams]): ``run --xs3``, ``xs3-export`` and
``compare --targets xs3`` take it and give what they give on the model file it was converted from.

The reference of each check is the same command on the model file itself (the path every other XS3 test holds to
LiteRT and lib_nn's C); the graph file must carry everything that path reads: the source-layer records and the
graph as imported (``Graph.imported``), which prepare must leave as a fresh import makes it.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import hexnn_import as hx
from hexnn_import.cli import cli
from hexnn_import.serialize import graph_to_dict

MODELS = Path(__file__).resolve().parents[1] / "models"
#: a real keras int8 keyword-spotting CNN (DS-CNN) of which 11 layers lower, and the bundled small model
CASES = [MODELS / "real" / "keras_ds_cnn_int8.tflite", MODELS / "small_int8.tflite"]


def _cli(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def _convert(model: Path, out: Path) -> Path:
    _cli(str(model), "-o", str(out))
    return out


def _input(model: Path, tmp: Path, seed: int = 0) -> Path:
    io = hx.import_model(model).inputs[0]
    x = np.random.default_rng(seed).integers(-128, 128, size=io.shape).astype(io.dtype)
    np.save(tmp / "x.npy", x)
    return tmp / "x.npy"


def _same_graph(a: hx.Graph, b: hx.Graph) -> None:
    assert [(n.node_id, n.op, n.name, list(n.inputs), [(o.shape, o.dtype) for o in n.output_defs])
            for n in a.nodes] == [(n.node_id, n.op, n.name, list(n.inputs), [(o.shape, o.dtype) for o in n.output_defs])
                                  for n in b.nodes]
    for na, nb in zip(a.nodes, b.nodes):
        if na.data is not None:
            assert na.data.dtype == nb.data.dtype and np.array_equal(na.data, nb.data), na.label
    assert a.tensor_map == b.tensor_map and a.tensor_ranges == b.tensor_ranges


@pytest.mark.parametrize("model", CASES, ids=lambda p: p.name)
def test_prepare_keeps_the_graph_as_imported_and_the_file_keeps_both(model: Path, tmp_path: Path) -> None:
    fresh = hx.import_model(model)
    prepared = hx.prepare(hx.import_model(model))
    assert prepared.prepared and prepared.imported is not None and not prepared.imported.prepared
    _same_graph(prepared.imported, fresh)  # prepare edited its own nodes, not the kept copy
    hx.save_graph(prepared, tmp_path / "g.hexnn.json")
    loaded = hx.load_graph(tmp_path / "g.hexnn.json")
    assert loaded.prepared and loaded.imported is not None
    _same_graph(loaded.imported, fresh)
    _same_graph(loaded, prepared)
    assert len(loaded.source_layers) == len(fresh.source_layers) > 0
    for a, b in zip(loaded.source_layers, fresh.source_layers):
        assert (a.opname, a.name, a.x, a.y, a.stride, a.activation, a.attrs.keys()) == \
               (b.opname, b.name, b.x, b.y, b.stride, b.activation, b.attrs.keys())
        for arr in ("weights", "bias", "w_scales", "w_zero_points"):
            va, vb = getattr(a, arr), getattr(b, arr)
            assert (va is None) == (vb is None) and (va is None or (va.dtype == vb.dtype and np.array_equal(va, vb)))
    # an array both graphs hold is written once
    doc = graph_to_dict(prepared)
    keys = [n["data"]["blob"] for n in doc["nodes"] if "data" in n]
    assert set(keys) <= set(doc["blobs"]) and len(doc["blobs"]) < len(keys) + len(
        [n for n in doc["imported"]["nodes"] if "data" in n])


@pytest.mark.parametrize("model", CASES, ids=lambda p: p.name)
def test_run_xs3_on_a_graph_file_gives_the_model_files_outputs(model: Path, tmp_path: Path) -> None:
    g = _convert(model, tmp_path / "m.hexnn.json")
    x = _input(model, tmp_path)
    a = _cli("run", "--xs3", str(model), "--input", str(x), "--json")
    b = _cli("run", "--xs3", str(g), "--input", str(x), "--json")
    ja, jb = json.loads(a), json.loads(b)
    assert ja["xs3_layers"] == jb["xs3_layers"] and len(ja["xs3_layers"]) >= 5
    assert ja["outputs"] == jb["outputs"]
    values = np.array(next(iter(ja["outputs"].values()))["values"])
    assert np.unique(values).size > 1  # an informative output, not a constant


def test_xs3_export_of_a_graph_file_writes_the_model_files_export(tmp_path: Path) -> None:
    model = CASES[0]
    g = _convert(model, tmp_path / "m.hexnn.json")
    _cli("xs3-export", str(model), "-o", str(tmp_path / "a"))
    _cli("xs3-export", str(g), "-o", str(tmp_path / "b"))
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "b").iterdir()) and len(files) > 5
    for name in files:
        if name != "manifest.json":
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    ma, mb = (json.loads((tmp_path / d / "manifest.json").read_text()) for d in "ab")
    assert mb["model"] == str(g) and ma["model"] == str(model)
    ma.pop("model"), mb.pop("model")
    assert ma == mb  # the agreement with LiteRT included: the graph's source model is at hand
    assert mb["agreement"]["reference"].startswith("LiteRT")


def test_xs3_export_of_a_graph_file_whose_model_is_gone_says_agreement_not_measured(tmp_path: Path) -> None:
    model = shutil.copy(CASES[1], tmp_path / "small.tflite")
    g = _convert(Path(model), tmp_path / "m.hexnn.json")
    Path(model).write_bytes(Path(model).read_bytes() + b"\0")  # changed since the import: not its source any more
    out = _cli("xs3-export", str(g), "-o", str(tmp_path / "o"))
    assert "agreement with the source runtime not measured: the graph's source model is not at hand" in out
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["summary"]["lowered"] == 5 and manifest["agreement"]["reference"] is None


def test_compare_targets_xs3_on_a_graph_file(tmp_path: Path) -> None:
    model = CASES[1]
    g = _convert(model, tmp_path / "m.hexnn.json")
    runs = [json.loads(_cli("compare", str(m), "--random", "3", "--targets", "hexagon,xs3", "--json", "-"))
            for m in (model, g)]
    for r in runs:  # the tested runners name the file they ran: the model file, or the graph file
        r.pop("model", None)
        for runner in r["runners"].values():
            runner.pop("model")
    assert runs[0] == runs[1]
    assert "xs3 (5 of 6 layers on lib_nn)" in json.dumps(runs[1])


def test_a_version_1_graph_file_still_loads(tmp_path: Path) -> None:
    """Files written before version 2 (Const bytes inline as b64, no layers) load; XS3 then lowers nothing and
    xs3-export says why in one line."""
    doc = graph_to_dict(hx.prepare(hx.import_model(CASES[1])))
    blobs = doc.pop("blobs")
    for n in doc["nodes"]:
        if "data" in n:
            n["data"]["b64"] = blobs[n["data"].pop("blob")]
    for key in ("prepared", "source_layers", "imported"):
        doc.pop(key)
    doc["version"] = 1
    (tmp_path / "old.hexnn.json").write_text(json.dumps(doc))
    old = hx.load_graph(tmp_path / "old.hexnn.json")
    assert not old.source_layers and old.imported is None
    res = CliRunner().invoke(cli, ["xs3-export", str(tmp_path / "old.hexnn.json"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "no source-layer records" in res.output and not (tmp_path / "o").exists()
