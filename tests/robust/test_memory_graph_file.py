"""The graph file is written as it is made, with the very bytes ``json.dumps(graph_to_dict(g), indent=1)`` gave
(issue 38 [Robust]: writing a 100,000-ADD chain's graph file held the whole document, then ~80 million
small strings, then the text: 6.3 GB under ``--max-memory 2G``)."""
from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from hexnn_import.api import import_model, prepare
from hexnn_import.errors import HexnnError
from hexnn_import.graph import Graph, NNPad, OutputDef
from hexnn_import.json_stream import LazyDict, LazyList, iter_json
from hexnn_import.serialize import graph_to_dict, load_graph, save_graph
from hexnn_import.testing.hostile_chains import add_chain_tflite

ROOT = Path(__file__).resolve().parents[2]


def _reference(graph: Graph) -> bytes:
    return json.dumps(graph_to_dict(graph), indent=1).encode("utf-8")


@pytest.mark.parametrize("model", ["small_int8.tflite", "small_float.tflite", "digits_int8.tflite"])
def test_the_file_is_json_s_own_bytes(tmp_path: Path, model: str) -> None:
    for graph in (import_model(ROOT / "models" / model), prepare(import_model(ROOT / "models" / model))):
        save_graph(graph, tmp_path / "g.json")
        assert (tmp_path / "g.json").read_bytes() == _reference(graph)


def test_odd_values_are_json_s_own_bytes(tmp_path: Path) -> None:
    g = Graph()
    x = g.append("INPUT", [], [OutputDef((1, 1, 1, 3), "float")], name="entrée \"x\"\n")
    g.append("OUTPUT", [(x.node_id, 0)])
    g.add_const(np.array([np.nan, -np.inf, 1e-45], np.float32), name="\u2603")
    g.meta = {"empty": {}, "list": [], "nested": [{"a": [1, [2, {}]]}], "nan": math.nan, "inf": -math.inf,
              "unicode": "\u00e9\u2603", "none": None, "flag": True, "enum": NNPad.SAME, "tuple": (1, 2.5, False),
              "int_keys": {1: "a", 2.5: [None]}, "floats": [0.1, -0.0, 1e300, 5e-324], "big": 2 ** 70}
    save_graph(g, tmp_path / "g.json")
    assert (tmp_path / "g.json").read_bytes() == _reference(g)
    assert [n.name for n in load_graph(tmp_path / "g.json").nodes] == [n.name for n in g.nodes]


def test_lazy_containers_lay_out_as_json_does() -> None:
    cases = [[], {}, [[]], {"a": {}}, [1, [2, [3, {"b": [4]}]]], {"k": [{"x": 1.5, "y": None}], "z": "\u00e9"}]
    for value in cases:
        lazy = value
        if isinstance(value, list):
            lazy = LazyList(lambda v=value: iter(v))
        elif isinstance(value, dict):
            lazy = LazyDict(lambda v=value: iter(v.items()))
        assert "".join(iter_json(lazy)) == json.dumps(value, indent=1), value


def _write_peak(tmp_path: Path, n_adds: int) -> tuple[int, int]:
    """(bytes traced at the peak of save_graph, file size) for a chain of ``n_adds`` ADDs."""
    path = tmp_path / "chain.tflite"
    path.write_bytes(add_chain_tflite(n_adds))
    graph = prepare(import_model(path))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        save_graph(graph, tmp_path / "g.json")
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, (tmp_path / "g.json").stat().st_size


def test_writing_holds_a_small_part_of_the_text(tmp_path: Path) -> None:
    """Four times the nodes: the file grows by ~0.4 MB, what writing it holds by a few per cent of that (the blobs
    table, written last; json.dumps held ~14 times the file)."""
    (peak1, size1), (peak4, size4) = _write_peak(tmp_path, 30), _write_peak(tmp_path, 120)
    assert size4 - size1 > 400_000, (size1, size4)
    assert peak4 - peak1 < (size4 - size1) // 10, (peak1, peak4, size1, size4)
    assert peak4 < 1 << 20, peak4  # pieces of 64 KiB characters are written as they fill


def test_a_failure_while_writing_leaves_no_file(tmp_path: Path) -> None:
    g = prepare(import_model(ROOT / "models" / "small_int8.tflite"))
    g.meta = {"bad": object()}  # json cannot encode it: found while the file is being written
    with pytest.raises(TypeError):
        save_graph(g, tmp_path / "g.json")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(HexnnError):
        save_graph(g, tmp_path / "no" / "g.json")
