"""The IR's invariants (prepare notes, "invariants") and the graph file round trip."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from hexnn_import.errors import GraphError, ModelFormatError
from hexnn_import.graph import Graph, NNPad, OutputDef, Ref
from hexnn_import.serialize import graph_from_dict, graph_to_dict, load_graph, save_graph


def small_graph() -> Graph:
    g = Graph()
    inp = g.append("INPUT", [], [OutputDef((1, 2, 2, 1), "float")], name="in")
    mn = g.const_ref(-1.0, "mn")
    mx = g.const_ref(float("inf"), "mx")
    w = g.const_ref(np.arange(-4, 4, dtype=np.int8).reshape(1, 2, 2, 2), "w")
    q = g.append("Quantize", [Ref(inp.node_id, 0), mn, mx],
                 [OutputDef((1, 2, 2, 1), "quint8"), OutputDef.scalar(), OutputDef.scalar()], NNPad.SAME, "q")
    g.append("OUTPUT", [Ref(q.node_id, 0), w], [], name="out")
    return g


def test_verify_accepts_a_well_formed_graph() -> None:
    g = small_graph()
    g.verify()
    assert len(g) == 6
    assert g.op_counts() == {"Const": 3, "INPUT": 1, "OUTPUT": 1, "Quantize": 1}


def test_refs_must_name_earlier_nodes_and_existing_outputs() -> None:
    g = small_graph()
    with pytest.raises(GraphError, match="names no earlier node"):
        g.append("Dequantize", [(999999, 0), (999999, 1), (999999, 2)], [OutputDef((1, 1, 1, 1), "float")])
    q = g.nodes[4]
    with pytest.raises(GraphError, match="names no output"):
        g.append("Dequantize", [(q.node_id, 3), (q.node_id, 1), (q.node_id, 2)], [OutputDef((1, 1, 1, 1), "float")])


def test_duplicate_ids_are_refused() -> None:
    g = small_graph()
    with pytest.raises(GraphError, match="already in the graph"):
        g.add_const(np.zeros(1, np.float32), node_id=g.nodes[0].node_id)


def test_verify_detects_a_ref_to_a_later_node() -> None:
    g = small_graph()
    q = g.nodes[4]
    out = g.nodes[5]
    # swap Quantize after OUTPUT: OUTPUT now reads a later node
    g.nodes[4], g.nodes[5] = out, q
    with pytest.raises(GraphError, match="earlier node"):
        g.verify()


def test_consumer_index_follows_edits() -> None:
    g = small_graph()
    q = g.nodes[4]
    out = g.nodes[5]
    assert [n.node_id for n in g.consumers(q.node_id)] == [out.node_id]
    g.set_inputs(out, [Ref(g.nodes[0].node_id, 0)])
    assert g.consumers(q.node_id) == []
    g.verify()
    g.remove(q)
    g.verify()
    # tamper with the index behind the graph's back: verify must notice
    out.inputs.append(Ref(g.nodes[1].node_id, 0))
    with pytest.raises(GraphError, match="consumer index"):
        g.verify()


def test_verify_rejects_unknown_ops() -> None:
    g = Graph()
    g.append("NoSuchOp_8", [], [OutputDef((1, 1, 1, 1), "float")])
    with pytest.raises(GraphError, match="not in the op catalog"):
        g.verify()


def test_verify_knows_each_ops_input_and_output_counts() -> None:
    # Quantize takes (data, min, max) and gives (data, min, max) (catalog); a pass that drops the max input,
    # or forgets the min / max outputs, builds a node that would only fail when run
    g = small_graph()
    inp, mn = Ref(g.nodes[0].node_id, 0), Ref(g.nodes[1].node_id, 0)
    g.append("Quantize", [inp, mn], [OutputDef((1, 2, 2, 1), "quint8"), OutputDef.scalar(), OutputDef.scalar()])
    with pytest.raises(GraphError, match=r"\(Quantize\): 2 inputs, the op takes 3"):
        g.verify()
    g = small_graph()
    mx = Ref(g.nodes[2].node_id, 0)
    g.append("Quantize", [Ref(g.nodes[0].node_id, 0), Ref(g.nodes[1].node_id, 0), mx],
             [OutputDef((1, 2, 2, 1), "quint8")], name="short")
    with pytest.raises(GraphError, match=r"node short \(Quantize\): 1 outputs, the op takes 3"):
        g.verify()


def refused_quantize(min_data: np.ndarray | None = None, data_def: OutputDef = OutputDef((1, 2, 2, 1), "quint8"),
                     name: str = "q2") -> str:
    """The GraphError of small_graph() plus a Quantize reading ``min_data`` (a Const) as its min, or
    declaring ``data_def`` as its data output."""
    g = small_graph()
    mn = Ref(g.nodes[1].node_id, 0) if min_data is None else g.const_ref(min_data, "bad_min")
    g.append("Quantize", [Ref(g.nodes[0].node_id, 0), mn, Ref(g.nodes[2].node_id, 0)],
             [data_def, OutputDef.scalar(), OutputDef.scalar()], name=name)
    with pytest.raises(GraphError) as err:
        g.verify()
    return str(err.value)


def test_verify_knows_each_ops_element_types() -> None:
    # Quantize's min input is a float; an int32 there (or a quint8 data output declared float) is refused,
    # while uint8 / quint8 and int32 / qint32 are the same storage and pass
    assert re.search(r"node q2 \(Quantize\): input 1 \(\w+\) is int32, the op takes float",
                     refused_quantize(np.zeros((1, 1, 1, 1), np.int32)))
    assert re.search(r"node q3 \(Quantize\): output 0 \(\w+\) is float, the op takes quint8",
                     refused_quantize(data_def=OutputDef((1, 2, 2, 1), "float"), name="q3"))


def test_verify_knows_the_fixed_ranks() -> None:
    # every tensor is 4-D [b, h, w, d], and a range slot (Quantize's in_min / in_max) reads one value: a pass
    # that wires a per-channel vector there, or declares a 3-D output, is refused when the graph is verified
    assert re.search(r"node q4 \(Quantize\): input 1 \(\w+\) has shape \[1, 1, 1, 4\], the op reads one",
                     refused_quantize(np.zeros((1, 1, 1, 4), np.float32), name="q4"))
    assert re.search(r"node q5 \(Quantize\): output 0 has shape \[2, 2, 1\], not 4-D",
                     refused_quantize(data_def=OutputDef((2, 2, 1), "quint8"), name="q5"))  # type: ignore[arg-type]

def test_round_trip_is_exact(tmp_path) -> None:
    g = small_graph()
    g.tensor_map["q"] = Ref(g.nodes[4].node_id, 0)
    g.meta = {"source_format": "test", "notes": ["a"]}
    path = tmp_path / "g.hexnn.json"
    save_graph(g, path)
    h = load_graph(path)
    assert graph_to_dict(h) == graph_to_dict(g)
    for a, b in zip(g.nodes, h.nodes):
        assert (a.node_id, a.op, a.inputs, a.padding, a.name) == (b.node_id, b.op, b.inputs, b.padding, b.name)
        if a.data is not None:
            assert a.data.dtype == b.data.dtype and a.data.tobytes() == b.data.tobytes()
    # the inf scalar survives bit for bit
    assert np.isinf(h.nodes[2].data).all()


def test_load_rejects_broken_files(tmp_path) -> None:
    p = tmp_path / "x.hexnn.json"
    p.write_text("")
    with pytest.raises(ModelFormatError, match="empty"):
        load_graph(p)
    p.write_text("{not json")
    with pytest.raises(ModelFormatError, match="invalid JSON"):
        load_graph(p)
    doc = graph_to_dict(small_graph())
    doc["nodes"][4]["inputs"][0] = [123456, 0]
    with pytest.raises(ModelFormatError, match="earlier node"):
        graph_from_dict(json.loads(json.dumps(doc)))
    del doc["nodes"][0]["op"]
    with pytest.raises(ModelFormatError, match="malformed"):
        graph_from_dict(doc)


def test_zero_length_const_round_trips() -> None:
    """A Variable's zero-length initialiser (element size 0) survives the graph file."""
    import json

    from hexnn_import.serialize import graph_from_dict, graph_to_dict

    g = Graph()
    g.add_const(np.zeros((1, 1, 1, 4), dtype="V0"), "init")
    back = graph_from_dict(json.loads(json.dumps(graph_to_dict(g))))
    node = back.nodes[0]
    assert node.data.dtype.itemsize == 0 and node.data.shape == (1, 1, 1, 4)
    assert node.output_defs[0].dtype == "void"
