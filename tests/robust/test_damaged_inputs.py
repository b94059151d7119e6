"""Damaged inputs, degenerate graph-file ranges, constants too big to fold, inconsistent shapes (issue [Robust]).

Findings of the whole-pipeline fuzzer (``hexnn_import.testing.fuzz_pipeline``) fixed outside the
fuzzer's own files, each with the case that reproduced it rebuilt here by hand:

- an ``.npz`` whose member is damaged after its header (a bad CRC, a broken deflate stream): the header
  check passes, the read fails; one line, exit 2, nothing written;
- a graph file whose output min and max are one value (a zero-width range, legal by SEMANTICS §1):
  every code is that value, converted onto the source's int8 codes by hand;
- an ONNX ConstantOfShape of 16384 x 16384 floats on constant inputs: never evaluated by the constant
  folder (it stays an op, refused by the op mapping), so the import stays small;
- a conv whose declared output its window cannot give, a reshape that changes the number of values:
  refused when converting (they converted and then failed in the run: a model that converts must run).
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from hexnn_import.api import from_quantized_output
from hexnn_import.cli import cli
from hexnn_import.graph import GraphIO

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "small_int8.tflite"  # input 'input' int8 [1, 24, 24, 3]


def _npz_with_damaged_member(path: Path) -> None:
    """A valid .npz of the model's input, deflated, then one byte in the middle of the compressed data flipped."""
    buf = io.BytesIO()
    np.savez_compressed(buf, input=np.arange(24 * 24 * 3, dtype=np.int64).reshape(1, 24, 24, 3).astype(np.int8))
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.infolist()[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_npz_member_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    _npz_with_damaged_member(tmp_path / "x.npz")
    before = sorted(p.name for p in tmp_path.iterdir())
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(cli, ["run", str(MODEL), "--input", "x.npz", "-o", "y.npz"])
    finally:
        os.chdir(old)
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: x.npz:"), lines
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_zero_width_output_range_gives_the_one_value() -> None:
    # range [0.5, 0.5]: every quint8 code means 0.5; int8 at scale 0.25, zero point -3: 0.5 / 0.25 - 3 = -1
    io_ = GraphIO(name="y", shape=(1, 4), dtype="int8", scale=0.25, zero_point=-3)
    got = from_quantized_output(io_, np.array([0, 7, 128, 255], np.uint8), 0.5, 0.5)
    np.testing.assert_array_equal(got, np.full((1, 4), -1, np.int8))


def test_a_constant_of_shape_past_the_budget_is_not_folded(tmp_path: Path) -> None:
    const = helper.make_node("ConstantOfShape", ["s"], ["big"],
                             value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.0]))
    add = helper.make_node("Add", ["x", "x"], ["y"])
    g = helper.make_graph([const, add], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
                           helper.make_tensor_value_info("big", TensorProto.FLOAT, None)],
                          [helper.make_tensor("s", TensorProto.INT64, [2], [16384, 16384])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "m.onnx")
    # a real process, peak resident size from /proc (folding it would allocate 1 GiB of float32)
    code = ("import runpy, sys, atexit\n"
            "atexit.register(lambda: print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0],"
            " file=sys.stderr))\n"
            "sys.argv = ['hexnn-import', 'm.onnx', '-o', 'g.json']\n"
            "runpy.run_module('hexnn_import.cli', run_name='__main__')\n")
    # constants fold up to the memory budget (issue [Model families]: VGG-19's 411 MB ConstantOfShape weight
    # folds under the default budget); under a 256 MiB budget this 1 GiB one stays for the op mapping to refuse
    env = dict(os.environ, HEXNN_MAX_MEMORY="256M")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env=env)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and lines[0].startswith("error:") and "ConstantOfShape" in lines[0], r.stderr
    assert int(lines[-1].split()[1]) < 500 * 1024, lines[-1]
    assert not (tmp_path / "g.json").exists()


def _convert(tmp_path: Path, model: bytes) -> tuple[int, list[str]]:
    (tmp_path / "m.tflite").write_bytes(model)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(cli, ["m.tflite", "-o", "g.json"])
    finally:
        os.chdir(old)
    assert not (tmp_path / "g.json").exists()
    return r.exit_code, [ln for ln in r.stderr.splitlines() if ln.strip()]


def test_a_conv_whose_declared_output_its_window_cannot_give_is_refused_at_convert(tmp_path: Path) -> None:
    # 3x3 SAME stride 1 on [1, 6, 6, 4] gives [1, 6, 6, 4]; the file declares [1, 3, 6, 4] (the fuzzer's
    # "value" mutation of a shape): it used to convert and then fail in the run
    from tests.robust.test_pipeline_errors import conv_model

    code, err = _convert(tmp_path, conv_model(y_shape=(1, 3, 6, 4)))
    assert code == 2 and len(err) == 1, err
    assert "output shape [1, 3, 6, 4] does not follow from input [1, 6, 6, 4], window 3x3" in err[0], err


def test_a_reshape_that_changes_the_number_of_values_is_refused_at_convert(tmp_path: Path) -> None:
    from hexnn_import.testing import TFLiteBuilder

    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 2, 2, 3], np.int8, scale=0.1, zero_point=0)
    shape = b.add_const("shape", np.array([1, 10], np.int32))
    y = b.add_tensor("y", [1, 10], np.int8, scale=0.1, zero_point=0)  # 12 values cannot become 10
    b.add_operator("RESHAPE", [x, shape], [y])
    b.set_io([x], [y])
    code, err = _convert(tmp_path, b.build())
    assert code == 2 and len(err) == 1, err
    assert "reshapes [1, 2, 2, 3] (12 values) to [1, 1, 1, 10] (10 values)" in err[0], err


def test_graph_file_with_a_dtype_numpy_parses_as_python(tmp_path: Path) -> None:
    """The graph fuzz's case 573: a Const's dtype string "i1,(" makes numpy raise SyntaxError; it is the file's
    fault, a ModelFormatError on one line."""
    import json

    import hexnn_import as hx
    from hexnn_import.errors import ModelFormatError
    from hexnn_import.serialize import graph_from_dict, graph_to_dict

    doc = graph_to_dict(hx.import_model(hx.example_file("small_int8.tflite")))
    const = next(d for d in doc["nodes"] if "data" in d)
    const["data"]["dtype"] = "i1,("
    with pytest.raises(ModelFormatError, match=r"graph file is malformed: SyntaxError") as err:
        graph_from_dict(json.loads(json.dumps(doc)))
    assert "\n" not in str(err.value)
