"""Issue 20, finding 3: damaged models that import cleanly fail later in the pipeline with one line and exit 2.

Each case is one root cause the whole-pipeline fuzzing found (``xs3-export``,
``run --xs3``, ``compare``, ``--emit c`` / ``run`` on graph files), rebuilt
here deterministically: TFLite models with the project's TFLiteBuilder (a
one-line comment says how each differs from a valid model), graph files by
editing the graph of ``models/small_int8.tflite``. Every case asserts the
exit code 2, one ``error:`` line naming the layer / node / runtime, and that
the folder holds exactly the files it held before, byte for byte.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from click.testing import CliRunner

from hexnn_import.cli import cli
from hexnn_import.testing import TFLiteBuilder, choose_params, quantize_bias, quantize_per_channel

ROOT = Path(__file__).resolve().parents[2]
SMALL_INT8 = ROOT / "models" / "small_int8.tflite"


def conv_model(y_shape: tuple[int, ...] = (1, 6, 6, 4), pool_out: tuple[int, ...] | None = None,
               x_name: str = "x", y_scale: float | None = None) -> bytes:
    """int8 [1,6,6,4] -> (MAX_POOL_2D 2x2/2 declared ``pool_out``) -> CONV_2D 3x3 SAME, 4 channels, declared
    ``y_shape``; ``y_scale`` sets the output scale and a fused RELU6. The defaults give a valid model."""
    rng = np.random.default_rng(0)
    s_x, zp_x = choose_params(-1.0, 1.0, np.int8)
    s_y, zp_y = choose_params(-3.0, 3.0, np.int8)
    wq, s_w = quantize_per_channel(rng.normal(0, 0.4, size=(4, 3, 3, 4)), axis=0)
    bq, s_b = quantize_bias(rng.normal(0, 0.2, size=4), s_x, s_w)
    b = TFLiteBuilder()
    x = b.add_tensor(x_name, [1, 6, 6, 4], "int8", scale=s_x, zero_point=zp_x)
    src = x
    if pool_out is not None:
        src = b.add_tensor("pool", list(pool_out), "int8", scale=s_x, zero_point=zp_x)
        b.add_operator("MAX_POOL_2D", [x], [src], {"padding": "SAME", "stride_w": 2, "stride_h": 2,
                                                    "filter_width": 2, "filter_height": 2})
    wt = b.add_const("w", wq, scale=s_w, zero_point=np.zeros(4, np.int64), quantized_dimension=0)
    bt = b.add_const("b", bq, scale=s_b, zero_point=np.zeros(4, np.int64))
    y = b.add_tensor("y", list(y_shape), "int8", scale=y_scale or s_y, zero_point=zp_y)
    b.add_operator("CONV_2D", [src, wt, bt], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1},
                   fused_activation="RELU6" if y_scale else "NONE", version=3)
    b.set_io([x], [y])
    return b.build()


def fc_model(y_shape: tuple[int, ...]) -> bytes:
    """int8 [1,8] -> FULLY_CONNECTED to 5 outputs, declared ``y_shape`` (valid: [1, 5])."""
    rng = np.random.default_rng(1)
    s_x, zp_x = choose_params(-1.0, 1.0, np.int8)
    wq, s_w = quantize_per_channel(rng.normal(0, 0.3, size=(5, 8)), axis=0)
    bq, s_b = quantize_bias(rng.normal(0, 0.2, size=5), s_x, s_w)
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 8], "int8", scale=s_x, zero_point=zp_x)
    wt = b.add_const("w", wq, scale=float(s_w.max()), zero_point=0)
    bt = b.add_const("b", bq, scale=float(s_x * s_w.max()), zero_point=0)
    y = b.add_tensor("y", list(y_shape), "int8", scale=0.05, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], {}, version=4)
    b.set_io([x], [y])
    return b.build()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (what must not change)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run_cli(folder: Path, args: list[str]) -> tuple[int, list[str], str]:
    """Run the CLI in ``folder`` (so default outputs would land there); exit code, stderr lines, stdout."""
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        result = runner.invoke(cli, args)
    finally:
        os.chdir(cwd)
    return result.exit_code, [ln for ln in result.stderr.splitlines() if ln.strip()], result.stdout


def assert_refused(folder: Path, args: list[str], *words: str) -> None:
    """Exit 2, one ``error:`` line holding ``words``, and the folder unchanged byte for byte."""
    before = snapshot(folder)
    code, err, out = run_cli(folder, args)
    assert code == 2, (code, err)
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert "Traceback" not in out
    for w in words:
        assert w in err[0], (w, err[0])
    assert snapshot(folder) == before, "a file was written, changed or left behind"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    np.save(d / "x.npy", np.zeros((1, 6, 6, 4), np.int8))
    return d


# ---- TFLite: xs3-export / run --xs3 / compare -----------------------------------------------------
def test_valid_builder_model_exports(folder: Path) -> None:
    """The builder's valid model goes through every command the cases below refuse (so they test the damage)."""
    (folder / "m.tflite").write_bytes(conv_model())
    code, err, _ = run_cli(folder, ["xs3-export", "m.tflite", "-o", "out"])
    assert code == 0, err
    layer = json.loads((folder / "out" / "manifest.json").read_text())["layers"][0]
    # lowered, and every one of its 6 x 6 x 4 outputs equal to LiteRT's on the export's input
    assert layer["name"] == "y" and layer["lowered"], layer
    assert layer["compared"] == 6 * 6 * 4 and layer["exact_fraction"] == 1.0, layer
    code, err, _ = run_cli(folder, ["run", "--xs3", "m.tflite", "--input", "x.npy"])
    assert code == 0, err


def test_conv_output_shape_that_its_window_cannot_give(folder: Path) -> None:
    # made by conv_model: the conv's output declared [1,3,6,4] where SAME 3x3 stride 1 gives [1,6,6,4]
    (folder / "m.tflite").write_bytes(conv_model(y_shape=(1, 3, 6, 4)))
    # the importer's own check (XS3 lowering starts from the imported graph and does not repeat it)
    words = ("y: output shape [1, 3, 6, 4] does not follow from input [1, 6, 6, 4], window 3x3",
             "the file's shapes are inconsistent")
    assert_refused(folder, ["xs3-export", "m.tflite", "-o", "out"], *words)
    assert_refused(folder, ["run", "--xs3", "m.tflite", "--input", "x.npy", "-o", "y.npz"], *words)


def test_fully_connected_output_size_that_its_weights_cannot_give(folder: Path) -> None:
    # made by fc_model: the output declared [7,5] (35 values) where [1,8] x [5,8]^T gives [1,5]
    (folder / "m.tflite").write_bytes(fc_model((7, 5)))
    assert_refused(folder, ["xs3-export", "m.tflite", "-o", "out"], "y/reshape: reshapes [1, 1, 1, 5] (5 values)",
                   "[1, 1, 7, 5] (35 values)", "the file's shapes are inconsistent")


def test_layer_input_litert_computes_otherwise(folder: Path) -> None:
    # made by conv_model: a 2x2/2 MAX_POOL declared [1,6,6,4] (LiteRT computes [1,3,3,4]) feeds the conv
    (folder / "m.tflite").write_bytes(conv_model(pool_out=(1, 6, 6, 4)))
    assert_refused(folder, ["xs3-export", "m.tflite", "-o", "out"], "layer y:", "LiteRT computes pool as "
                   "[1, 3, 3, 4]", "declares [1, 6, 6, 4]")
    assert_refused(folder, ["run", "--xs3", "m.tflite", "--input", "x.npy", "-o", "y.npz"],
                   "node y/conv2d_shallowin (XS3_conv2d_shallowin)", "input 0 holds 36 values", "[1, 6, 6, 4]")


def test_model_litert_refuses_to_load(folder: Path) -> None:
    # made by conv_model: output scale 1e-37 (a normal float32, so the importer takes it; 1e-45, a denormal, is
    # refused at convert since issue 38) with a fused RELU6: 6 / scale overflows int32, LiteRT's prepare says no,
    # on two lines glued together, which the error joins into one
    (folder / "m.tflite").write_bytes(conv_model(y_scale=1e-37))
    words = ("LiteRT cannot load m.tflite", "no_integer_overflow_from_quantization", "; Node number 0 (CONV_2D)")
    assert_refused(folder, ["xs3-export", "m.tflite", "-o", "out"], *words)
    assert_refused(folder, ["compare", "m.tflite", "--random", "1", "--json", "r.json"], *words)


def test_tensor_name_litert_cannot_decode(folder: Path) -> None:
    # made by conv_model(x_name="zzzzname"), then the bytes "zzzz" of the name replaced by b"zz\xff\xfe"
    data = conv_model(x_name="zzzzname")
    assert data.count(b"zzzzname") == 1
    (folder / "m.tflite").write_bytes(data.replace(b"zzzzname", b"zz\xff\xfename"))
    assert_refused(folder, ["xs3-export", "m.tflite", "-o", "out"], "LiteRT cannot read the inputs of m.tflite",
                   "utf-8")
    assert_refused(folder, ["compare", "m.tflite", "--random", "1", "--report", "r.html"],
                   "LiteRT cannot read the tensors of m.tflite", "utf-8")


def test_model_that_crashes_litert(folder: Path) -> None:
    # models/small_int8.tflite with bytes 3796-3799 (an op's input, tensor 9) set to -1, the "optional
    # tensor" marker: the importer maps the model, LiteRT's allocate_tensors dies with SIGSEGV; the
    # commands that hand the file to LiteRT try it in a forked child first (testing/litert.crash_signal)
    data = bytearray((ROOT / "models" / "small_int8.tflite").read_bytes())
    assert int.from_bytes(data[3796:3800], "little", signed=True) == 9
    data[3796:3800] = b"\xff\xff\xff\xff"
    (folder / "m.tflite").write_bytes(bytes(data))
    words = ("LiteRT crashes loading m.tflite", "SIGSEGV", "damaged")
    assert_refused(folder, ["xs3-export", "m.tflite", "-o", "out"], *words)
    assert_refused(folder, ["compare", "m.tflite", "--random", "1", "--json", "r.json"], *words)


# ---- graph files: load, --emit c, run -------------------------------------------------------------
def graph_doc() -> dict[str, Any]:
    from hexnn_import.api import import_model
    from hexnn_import.serialize import graph_to_dict

    return graph_to_dict(import_model(SMALL_INT8))


def first(doc: dict[str, Any], pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return next(n for n in doc["nodes"] if pred(n))


def _numeric_name(doc: dict[str, Any]) -> None:
    first(doc, lambda n: n["op"] != "Const")["name"] = 2147483648


def _bool_name(doc: dict[str, Any]) -> None:
    first(doc, lambda n: n["op"] == "Const")["name"] = True


def _output_shape(value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        doc["outputs"][0]["shape"] = [1, value]
    return edit


def _const_with_inputs(doc: dict[str, Any]) -> None:
    op = first(doc, lambda n: n["op"] != "Const" and n["outputs"])
    const = next(n for n in doc["nodes"][doc["nodes"].index(op) + 1:] if n["op"] == "Const")
    const["inputs"] = [[op["id"], 0]]


def _data_on_an_op(doc: dict[str, Any]) -> None:
    const = first(doc, lambda n: n["op"] == "Const")
    first(doc, lambda n: n["op"] not in ("Const", "INPUT", "OUTPUT") and n["outputs"])["data"] = const["data"]


#: (edit of small_int8's graph, words of the error)
GRAPH_CASES: dict[str, tuple[Callable[[dict[str, Any]], None], tuple[str, ...]]] = {
    "numeric-node-name": (_numeric_name, ("name 2147483648 is not a string",)),
    "bool-node-name": (_bool_name, ("name True is not a string",)),
    "output-shape-1e308": (_output_shape(1e308), ("graph input/output logits", "[1, 1e+308]", "non-negative integers")),
    "output-shape-huge-int": (_output_shape(10 ** 308), ("graph input/output logits", "[1, 1000", "...", "more than 4 GiB")),
    "output-shape-negative": (_output_shape(-3), ("[1, -3]", "non-negative integers")),
    "output-shape-fraction": (_output_shape(2.5), ("[1, 2.5]", "non-negative integers")),
    "const-with-inputs": (_const_with_inputs, ("a Const node has no inputs", "gives 1")),
    "data-on-an-op-node": (_data_on_an_op, ("only a Const node carries 'data'",)),
}


@pytest.mark.parametrize("case", sorted(GRAPH_CASES))
@pytest.mark.parametrize("command", ["emit-c", "run", "dot"])
def test_damaged_graph_file(case: str, command: str, folder: Path) -> None:
    edit, words = GRAPH_CASES[case]
    doc = graph_doc()
    edit(doc)
    (folder / "g.hexnn.json").write_text(json.dumps(doc))
    args = {"emit-c": ["g.hexnn.json", "--emit", "c", "-o", "g.c"],
            "dot": ["g.hexnn.json", "--emit", "dot", "-o", "g.dot"],
            "run": ["run", "g.hexnn.json", "--input", "x.npy", "-o", "y.npz"]}[command]
    assert_refused(folder, args, "g.hexnn.json", "graph file is inconsistent", *words)


def test_unedited_graph_file_loads(folder: Path) -> None:
    """The edits above are the only damage: the graph they start from converts to C."""
    (folder / "g.hexnn.json").write_text(json.dumps(graph_doc()))
    doc = graph_doc()
    code, err, _ = run_cli(folder, ["g.hexnn.json", "--emit", "c", "-o", "g.c"])
    assert code == 0 and (folder / "g.h").is_file(), err
    # every Const of the file becomes one hexagon_nn_append_const_node call with its id
    appended = re.findall(r"hexagon_nn_append_const_node\(nn_id, (\d+),", (folder / "g.c").read_text())
    assert sorted(map(int, appended)) == sorted(n["id"] for n in doc["nodes"] if n["op"] == "Const")


def test_xs3_export_of_an_onnx_file_onnxruntime_refuses(folder: Path) -> None:
    """A QOperator file the importer reads and lowers but onnxruntime refuses (the pipeline fuzz's seed qop_cnn.onnx
    with an attribute its QLinearConv does not define, which the importer ignores and onnxruntime's graph check
    rejects; the fuzz's case 1110 did this with an opset the importer now refuses itself): xs3-export's agreement
    step says so in one line, exit 2 (it raised onnxruntime's own exception before)."""
    import onnx

    from hexnn_import.testing.fuzz_seeds import pipeline_seeds

    model = onnx.load_from_string(next(s for s in pipeline_seeds("onnx") if s.label == "qop_cnn.onnx").data)
    conv = next(n for n in model.graph.node if n.op_type == "QLinearConv")
    conv.attribute.append(onnx.helper.make_attribute("unheard_of", 1))
    (folder / "m.onnx").write_bytes(model.SerializeToString())
    assert_refused(folder, ["xs3-export", "m.onnx", "-o", "out"], "onnxruntime cannot load m.onnx")
    assert not (folder / "out").exists()
