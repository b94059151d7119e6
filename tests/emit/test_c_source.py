"""The C emitter: the bundled models' C compiles (gcc -fsyntax-only, stub SDK headers) and says what the graph says."""
from __future__ import annotations

import dataclasses

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.emit import EmitError, emit_c
from hexnn_import.graph import ELEMENT_DTYPES, Graph, NNPad, OutputDef

MODELS = Path(__file__).resolve().parents[2] / "models"

_ARRAY = re.compile(r"static const unsigned char (\w+)_const_(\d+)\[(\d+)\] HEXNN_ALIGNED = \{\n(.*?)\n\};", re.DOTALL)
_CONST_CALL = re.compile(r"hexagon_nn_append_const_node\(nn_id, (\d+), (\d+), (\d+), (\d+), (\d+), (\w+), (\d+)\)")
_NODE_CALL = re.compile(r"hexagon_nn_append_node\(nn_id, (\d+), OP_(\w+), NN_PAD_(\w+), (\w+), (\d+), (\w+), (\d+)\)")
_IN_TABLE = re.compile(r"static const hexagon_nn_input \w+_in_(\d+)\[(\d+)\] = \{ (.*?) \};")
_OUT_TABLE = re.compile(r"static const hexagon_nn_output \w+_out_(\d+)\[(\d+)\] = \{\n(.*?)\n\};", re.DOTALL)
_OUT_DESC = re.compile(r"\{ \.rank = (\d+), \.max_sizes = \{([\d, ]+)\}, \.elementsize = (\d+) \}")


def parse_c(text: str) -> dict[str, Any]:
    """Read the emitted source back: byte arrays, append calls (in order), input and output tables."""
    arrays = {int(m[2]): bytes(int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})", m[4])) for m in _ARRAY.finditer(text)}
    sizes = {int(m[2]): int(m[3]) for m in _ARRAY.finditer(text)}
    calls: list[tuple[str, tuple]] = []
    for m in re.finditer(r"HEXNN_TRY\((hexagon_nn_append_\w+\(.*?\))\);", text):
        call = m[1]
        c, n = _CONST_CALL.fullmatch(call), _NODE_CALL.fullmatch(call)
        assert c or n, call
        calls.append(("const", c.groups()) if c else ("node", n.groups()))  # type: ignore[union-attr]
    ins = {int(m[1]): [tuple(map(int, r)) for r in re.findall(r"\{(\d+), (\d+)\}", m[3])] for m in _IN_TABLE.finditer(text)}
    outs = {int(m[1]): [(int(r), tuple(int(v) for v in s.split(",")), int(e)) for r, s, e in _OUT_DESC.findall(m[3])]
            for m in _OUT_TABLE.finditer(text)}
    return {"arrays": arrays, "sizes": sizes, "calls": calls, "ins": ins, "outs": outs}


def le_bytes(data: np.ndarray) -> bytes:
    """What the C file must hold for a Const: its little-endian bytes in C order."""
    arr = np.ascontiguousarray(data)
    return arr.astype(arr.dtype.newbyteorder("<")).tobytes()


def check_matches_graph(graph: Graph, parsed: dict[str, Any]) -> None:
    consts = [n for n in graph.nodes if n.is_const]
    ops = [n for n in graph.nodes if not n.is_const]
    calls = parsed["calls"]
    assert sum(1 for k, _ in calls if k == "const") == len(consts)
    assert sum(1 for k, _ in calls if k == "node") == len(ops)
    assert [int(args[0]) for _, args in calls] == [n.node_id for n in graph.nodes]  # list order kept
    for (kind, args), node in zip(calls, graph.nodes):
        if kind == "const":
            _, b, h, w, d, array, n = args
            assert (int(b), int(h), int(w), int(d)) == tuple(node.data.shape)
            if array == "NULL":  # a shape-only Const: no bytes at all
                assert int(n) == 0 and node.node_id not in parsed["arrays"] and node.data.nbytes == 0
                continue
            payload = parsed["arrays"][node.node_id]
            assert array.endswith(f"_const_{node.node_id}") and int(n) == len(payload) == parsed["sizes"][node.node_id]
            assert payload == le_bytes(node.data), f"const {node.label}: bytes differ"
            back = np.frombuffer(payload, dtype=node.data.dtype.newbyteorder("<")).reshape(node.data.shape)
            assert back.tobytes() == np.ascontiguousarray(node.data).tobytes()
        else:
            _, op, pad, in_arr, n_in, out_arr, n_out = args
            assert op == node.op and pad == NNPad(node.padding).name
            assert int(n_in) == len(node.inputs) and int(n_out) == len(node.output_defs)
            assert parsed["ins"].get(node.node_id, []) == [tuple(r) for r in node.inputs]
            assert (in_arr == "NULL") == (not node.inputs) and (out_arr == "NULL") == (not node.output_defs)
            want = [(4, tuple(od.shape), ELEMENT_DTYPES[od.dtype].itemsize) for od in node.output_defs]
            assert parsed["outs"].get(node.node_id, []) == want


@pytest.mark.parametrize("model", ["small_int8.tflite", "small_float.tflite", "digits_int8.tflite",
                                   "mobilenet_v2_int8.tflite"])
def test_bundled_model_c_compiles_and_matches_graph(model: str, tmp_path: Path, gcc_check: Callable) -> None:
    graph = hx.prepare(hx.import_model(MODELS / model))
    written = emit_c(graph, tmp_path / "net.c", source=f"models/{model}")
    assert written == [str(tmp_path / "net.c"), str(tmp_path / "net.h")]
    gcc_check(tmp_path / "net.c")
    text = (tmp_path / "net.c").read_text()
    check_matches_graph(graph, parse_c(text))
    assert 'OP_Supernode_8x8p32to8_d32' in text and "hexagon_nn_prepare(nn_id)" in text
    assert "hexagon_nn_init(&nn_id)" in text


def test_header_names_inputs_and_outputs(tmp_path: Path, gcc_check: Callable) -> None:
    graph = hx.prepare(hx.import_model(MODELS / "small_int8.tflite"))
    emit_c(graph, tmp_path / "small-int8.c")
    h = (tmp_path / "small-int8.h").read_text()
    macros = dict(re.findall(r"#define (SMALL_INT8_\w+) (.*)", h))
    assert macros["SMALL_INT8_NODE_COUNT"] == str(len(graph))
    assert macros["SMALL_INT8_CONST_COUNT"] == str(sum(n.is_const for n in graph.nodes))
    assert macros["SMALL_INT8_CONST_BYTES"] == str(graph.const_bytes())
    io_in, io_out = graph.inputs[0], graph.outputs[0]
    assert macros["SMALL_INT8_INPUT0_NAME"] == f'"{io_in.name}"' and macros["SMALL_INT8_INPUT0_DTYPE"] == '"int8"'
    assert macros["SMALL_INT8_INPUT0_SHAPE"] == "{" + ", ".join(map(str, io_in.shape)) + "}"
    assert np.float32(float(macros["SMALL_INT8_INPUT0_SCALE"].rstrip("f"))) == np.float32(io_in.scale)
    assert macros["SMALL_INT8_INPUT0_ZERO_POINT"] == f"({io_in.zero_point})"
    assert macros["SMALL_INT8_INPUT0_NN_DTYPE"] == '"quint8"'
    assert macros["SMALL_INT8_OUTPUT0_NAME"] == f'"{io_out.name}"'
    assert (macros["SMALL_INT8_OUTPUT0_SLOT"], macros["SMALL_INT8_OUTPUT0_MIN_SLOT"],
            macros["SMALL_INT8_OUTPUT0_MAX_SLOT"]) == ("0", "1", "2")
    assert macros["SMALL_INT8_NN_OUTPUT_COUNT"] == "3"
    user = tmp_path / "user.c"  # the macros expand to valid C where a program uses them
    user.write_text('#include "small-int8.h"\n'
                    "static const unsigned int in_shape[] = SMALL_INT8_INPUT0_NN_SHAPE;\n"
                    "static const int out_shape[] = SMALL_INT8_OUTPUT0_SHAPE;\n"
                    "int use(void);\n"
                    "int use(void) { hexagon_nn_nn_id id; const char *n = SMALL_INT8_INPUT0_NAME;\n"
                    "  float s = SMALL_INT8_OUTPUT0_SCALE; int z = SMALL_INT8_OUTPUT0_ZERO_POINT;\n"
                    "  (void)n; (void)s; (void)z; (void)in_shape; (void)out_shape;\n"
                    "  return small_int8_build(&id) + SMALL_INT8_INPUT0_SLOT; }\n")
    gcc_check(user)


def odd_graph() -> Graph:
    """A hand-built graph with awkward names, a shape-only (void) Const and a float Const."""
    g = Graph()
    x = g.append("INPUT", [], [OutputDef((1, 2, 2, 4), "float")], name='in "x" */ ??= \\ \n é')
    w = g.add_const(np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4) - 1.5, name="w/*")
    v = g.add_const(np.zeros((1, 1, 1, 4), dtype="V0"), name="init")
    var = g.append("Variable", [(v.node_id, 0)], [OutputDef((1, 1, 1, 4), "float")], name="var")
    add = g.append("Add_f", [(x.node_id, 0), (w.node_id, 0)], [OutputDef((1, 2, 2, 4), "float")],
                   padding=NNPad.SAME, name="add")
    g.append("OUTPUT", [(add.node_id, 0), (var.node_id, 0)], [], name="out")
    from hexnn_import.graph import GraphIO
    g.inputs = [GraphIO('x"?', (1, 2, 2, 4), "float32")]
    g.outputs = [GraphIO("y\\", (2, 2, 4), "float32", refs=(0,))]
    return g


def test_awkward_names_and_shape_only_consts_compile(tmp_path: Path, gcc_check: Callable) -> None:
    g = odd_graph()
    emit_c(g, tmp_path / "9odd name.c")
    gcc_check(tmp_path / "9odd name.c")
    text = (tmp_path / "9odd name.c").read_text()
    assert "int g_9odd_name_build(hexagon_nn_nn_id *nn_id_out)" in text
    parsed = parse_c(text)
    check_matches_graph(g, parsed)
    void_id = next(n.node_id for n in g.nodes if n.name == "init")
    assert f"hexagon_nn_append_const_node(nn_id, {void_id}, 1, 1, 1, 4, NULL, 0)" in text


def test_failure_leaves_no_file(tmp_path: Path) -> None:
    g = odd_graph()
    g.nodes[0].output_defs[0] = dataclasses.replace(g.nodes[0].output_defs[0], dtype="bogus")  # unrepresentable
    with pytest.raises(hx.HexnnError, match="bogus"):  # the verifier (element types) or the renderer
        emit_c(g, tmp_path / "a.c")
    assert list(tmp_path.iterdir()) == []
    good = odd_graph()
    (tmp_path / "b.c").mkdir()  # the source cannot be written: the header written first is taken back
    with pytest.raises(hx.HexnnError):
        emit_c(good, tmp_path / "b.c")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.c"]
    (tmp_path / "b.c").rmdir()
    (tmp_path / "c.h").write_text("old header")
    (tmp_path / "c.c").mkdir()
    with pytest.raises(hx.HexnnError):
        emit_c(good, tmp_path / "c.c")
    assert (tmp_path / "c.h").read_text() == "old header"
    with pytest.raises(EmitError, match="other than"):
        emit_c(good, tmp_path / "d.h")
    with pytest.raises(hx.HexnnError, match="does not exist"):
        emit_c(good, tmp_path / "missing" / "e.c")
    assert not (tmp_path / "missing").exists()
