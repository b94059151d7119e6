"""Open input dimensions on hand-made graphs (issue 34, finding 5): every one named in one error with a
``--input-shape`` line to paste, and the sizes the first layers imply used with a note.

Independent checks: onnxruntime runs the same dynamic file on inputs of the implied sizes (it refuses a
size that does not fit) and the imported graph agrees with it; the pasted line converts; the sizes in
the messages are worked out by hand from the graphs below.
"""
from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import helper

import hexnn_import as hx
from hexnn_import.cli import cli
from hexnn_import.errors import ModelFormatError
from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.onnx_compare import build_model, compare_onnx, run_ort

RNG = np.random.default_rng(34)


def _open(model: bytes, dims: dict[str, list]) -> bytes:  # type: ignore[type-arg]
    """``model`` with input dims replaced (str: a dim_param, None: no value, as Paddle2ONNX's -1 reads)."""
    m = onnx.load_from_string(model)
    for vi in m.graph.input:
        for d, v in zip(vi.type.tensor_type.shape.dim, dims.get(vi.name, [])):
            if v is None:
                d.Clear()
            elif isinstance(v, str):
                d.Clear()
                d.dim_param = v
    for vi in m.graph.output:
        vi.type.tensor_type.ClearField("shape")
    return m.SerializeToString()


def _three_branches() -> bytes:
    """x [N, K] @ w [16, 8]; s [1, L] reshaped to [1, 4, 6]; c [N, C, 8, 8] * conv weight [4, 3, 3, 3]:
    K = 16, L = 24 and C = 3 by hand."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y1"]),
             helper.make_node("Reshape", ["s", "target"], ["y2"]),
             helper.make_node("Conv", ["c", "k"], ["y3"], pads=[1, 1, 1, 1])]
    inits = {"w": RNG.normal(size=(16, 8)).astype(np.float32), "target": np.array([1, 4, 6], np.int64),
             "k": RNG.normal(size=(4, 3, 3, 3)).astype(np.float32)}
    model = build_model(nodes, {"x": (1, 16), "s": (1, 24), "c": (1, 3, 8, 8)},
                        {"y1": (1, 8), "y2": (1, 4, 6), "y3": (1, 4, 8, 8)}, inits)
    return _open(model, {"x": ["N", "K"], "s": [1, None], "c": ["N", "C", 8, 8]})


def test_sizes_the_first_layers_imply_are_used_with_a_note(tmp_path: Path) -> None:
    model = _three_branches()
    (tmp_path / "m.onnx").write_bytes(model)
    g = hx.import_model(tmp_path / "m.onnx")
    assert [io.shape for io in g.inputs] == [(1, 16), (1, 24), (1, 3, 8, 8)]
    notes = g.meta["notes"]
    assert "input 'x': dynamic batch set to 1, dim 1 set to 16 as MatMul" in notes[0], notes
    assert "input 's': dim 1 set to 24 as Reshape" in notes[1] and "--input-shape s=1,24" in notes[1], notes
    assert "input 'c': dynamic batch set to 1, dim 1 set to 3 as Conv" in notes[2], notes
    feeds = [{"x": RNG.normal(size=(1, 16)).astype(np.float32), "s": RNG.normal(size=(1, 24)).astype(np.float32),
              "c": RNG.normal(size=(1, 3, 8, 8)).astype(np.float32)} for _ in range(2)]
    run_ort(model, feeds[0])  # onnxruntime takes these sizes in the dynamic file itself
    cal = {k: np.stack([f[k] for f in feeds]) for k in feeds[0]}
    for name, agreement in compare_onnx(model, feeds, calibration=cal).items():
        assert agreement.sqnr >= 30, (name, agreement)


def _two_open() -> bytes:
    """a [N, 4, T] and b [N, C, S] joined on axis 2: C = 4 (Concat's other axes agree), T and S free."""
    nodes = [helper.make_node("Concat", ["a", "b"], ["y"], axis=2)]
    model = build_model(nodes, {"a": (1, 4, 6), "b": (1, 4, 5)}, {"y": (1, 4, 11)})
    return _open(model, {"a": ["N", 4, "T"], "b": ["N", "C", None]})


def test_every_open_dimension_is_named_in_one_error_with_a_line_to_paste(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(_two_open())
    r = CliRunner().invoke(cli, [str(path), "-o", str(tmp_path / "g.hexnn.json")])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.output
    msg = r.stderr
    assert "2 input dimensions of the model have no size" in msg, msg
    assert "input a [N,4,T] dim 2 open, dynamic batch set to 1" in msg, msg
    assert "input b [N,C,?] dim 2 open, dynamic batch set to 1, dim 1 set to 4 as Concat" in msg, msg
    line = msg.split("convert with ")[1].split(" (each ?")[0]
    assert line == "--input-shape a=1,4,? --input-shape b=1,4,?", line
    pasted = shlex.split(line.replace("a=1,4,?", "a=1,4,6").replace("b=1,4,?", "b=1,4,5"))
    r = CliRunner().invoke(cli, [str(path), *pasted, "-o", str(tmp_path / "g.hexnn.json")])
    assert r.exit_code == 0, r.output
    feeds = [{"a": RNG.normal(size=(1, 4, 6)).astype(np.float32), "b": RNG.normal(size=(1, 4, 5)).astype(np.float32)}]
    res = compare_onnx(_two_open(), feeds, input_shapes={"a": (1, 4, 6), "b": (1, 4, 5)})
    assert res["y"].sqnr >= 30, res


def test_a_given_input_leaves_only_the_others_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(_two_open())
    with pytest.raises(ModelFormatError) as info:
        hx.import_model(path, input_shapes={"a": (1, 4, 6)})
    msg = str(info.value)
    assert "1 input dimension of the model has no size" in msg and "input a " not in msg, msg
    assert msg.endswith("convert with --input-shape b=1,4,? (each ? replaced by the size to use)"), msg


def test_a_shared_dim_param_given_once_sizes_every_input(tmp_path: Path) -> None:
    nodes = [helper.make_node("Concat", ["a", "b"], ["y"], axis=1)]
    model = _open(build_model(nodes, {"a": (1, 4, 6), "b": (1, 3, 6)}, {"y": (1, 7, 6)}),
                  {"a": ["N", 4, "T"], "b": ["N", 3, "T"]})
    path = tmp_path / "m.onnx"
    path.write_bytes(model)
    with pytest.raises(ModelFormatError, match=r"--input-shape a=1,4,\? --input-shape b=1,3,\?"):
        hx.import_model(path)
    g = hx.import_model(path, input_shapes={"a": (1, 4, 6)})
    assert g.inputs[1].shape == (1, 3, 6)


def test_tflite_inputs_with_dynamic_sizes_are_named_together(tmp_path: Path) -> None:
    """Two inputs whose length is -1 in shape_signature: one error names both (the converter computed
    every layer with the placeholder 1, so only re-exporting gives another length)."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 1], np.float32, shape_signature=[1, -1])
    y = b.add_tensor("y", [1, 1], np.float32, shape_signature=[-1, -1])
    z = b.add_tensor("z", [1, 1], np.float32, shape_signature=[-1, -1])
    b.add_operator("ADD", [x, y], [z])
    b.set_io([x, y], [z])
    path = tmp_path / "m.tflite"
    path.write_bytes(b.build())
    with pytest.raises(ModelFormatError) as info:
        hx.import_model(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert "input x has dynamic dimensions [1, -1]" in msg and "input y has dynamic dimensions [-1, -1]" in msg, msg
    assert "only a dynamic batch is chosen automatically" in msg and "re-export" in msg, msg
