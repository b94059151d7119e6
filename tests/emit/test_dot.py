"""The DOT emitter: it parses (dot -Tsvg where Graphviz is installed, else the parser check) and shows the graph."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import hexnn_import as hx
from hexnn_import.emit import EmitError, emit_graph, render_dot
from hexnn_import.emit.dot import D32_COLOR, SUPERNODE_FILL
from hexnn_import.graph import Graph, GraphIO, NNPad, OutputDef

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(scope="module")
def small() -> Graph:
    return hx.prepare(hx.import_model(MODELS / "small_int8.tflite"))


def test_small_model_dot_parses_and_shows_ops_shapes_ranges(small: Graph, dot_check: Callable) -> None:
    parsed = dot_check(render_dot(small, title="small_int8.tflite"))
    nodes = parsed["nodes"]
    ops = [n for n in small.nodes if not n.is_const]
    assert set(nodes) == {f"n{n.node_id}" for n in ops}  # Consts are folded into labels
    for n in ops:
        label = nodes[f"n{n.node_id}"]["label"]
        assert n.op in label and (not n.output_defs or "x".join(map(str, n.output_defs[0].shape)) in label)
    sup = next(n for n in ops if n.op.startswith("Supernode"))
    attrs = nodes[f"n{sup.node_id}"]
    assert attrs["fillcolor"] == SUPERNODE_FILL and attrs["color"] == D32_COLOR
    lo, hi = (float(small.node(sup.inputs[i].src_id).data.reshape(-1)[0]) for i in (10, 11))  # out_min, out_max
    assert f"out [{lo:.4g}, {hi:.4g}]" in attrs["label"]
    assert "weights uint8" in attrs["label"] and "SAME" in attrs["label"]
    d32_edges = [e for e in parsed["edges"] if e[2].get("color") == D32_COLOR]
    assert d32_edges and all("d32" in e[2]["label"] for e in d32_edges)
    n_pairs = len({(r.src_id, n.node_id) for n in ops for r in n.inputs if not small.node(r.src_id).is_const})
    assert len(parsed["edges"]) == n_pairs  # data + min + max from one node: one edge


def test_unfolded_consts_are_small_nodes(small: Graph, dot_check: Callable) -> None:
    parsed = dot_check(render_dot(small, fold_consts=False))
    assert set(parsed["nodes"]) == {f"n{n.node_id}" for n in small.nodes}
    const = next(n for n in small.nodes if n.is_const)
    assert parsed["nodes"][f"n{const.node_id}"]["shape"] == "note"
    assert len(parsed["edges"]) == len({(r.src_id, n.node_id) for n in small.nodes for r in n.inputs})


def test_labels_are_escaped(dot_check: Callable) -> None:
    g = Graph()
    name = 'a "quoted" \\ back\\slash {brace} ; -> [x]'
    x = g.append("INPUT", [], [OutputDef((1, 1, 1, 4), "float")], name=name)
    m = g.append("Relu_f", [(x.node_id, 0)], [OutputDef((1, 1, 1, 4), "float")], padding=NNPad.NA, name="r\nl")
    g.append("OUTPUT", [(m.node_id, 0)], [])
    g.inputs = [GraphIO('in"', (4,), "float32")]
    parsed = dot_check(render_dot(g, title='t"itle'))
    assert parsed["nodes"][f"n{x.node_id}"]["label"].split("\n")[0] == name
    assert parsed["nodes"][f"n{m.node_id}"]["label"].split("\n")[0] == "r l"


def test_float_model_and_mobilenet_parse(dot_check: Callable) -> None:
    for model in ("small_float.tflite", "mobilenet_v2_int8.tflite"):
        g = hx.prepare(hx.import_model(MODELS / model))
        parsed = dot_check(render_dot(g, title=model))
        assert len(parsed["nodes"]) == sum(not n.is_const for n in g.nodes)


def test_emit_dot_file_and_pictures(small: Graph, tmp_path: Path, dot_check: Callable) -> None:
    out = emit_graph(small, "dot", tmp_path / "g.dot", source="models/small_int8.tflite")
    assert out == [str(tmp_path / "g.dot")]
    dot_check((tmp_path / "g.dot").read_text())
    if shutil.which("dot"):
        emit_graph(small, "svg", tmp_path / "g.svg")
        assert b"<svg" in (tmp_path / "g.svg").read_bytes()
        emit_graph(small, "png", tmp_path / "g.png")
        assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        for fmt in ("svg", "png"):
            with pytest.raises(EmitError, match="Graphviz"):
                emit_graph(small, fmt, tmp_path / f"g.{fmt}")
            assert not (tmp_path / f"g.{fmt}").exists()


def test_missing_graphviz_is_a_clear_error(small: Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot here, whatever the machine has
    with pytest.raises(EmitError, match="install Graphviz, or use --emit dot"):
        emit_graph(small, "svg", tmp_path / "g.svg")
    assert list(tmp_path.iterdir()) == []
