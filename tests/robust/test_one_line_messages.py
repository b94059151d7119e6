"""Every message one line on stderr (issue 38, findings 4b and 8): a model name with undecodable bytes exports
(the header comment shows them as ``\\xNN``), a name with a newline forges no second ``error:`` line, numpy's
floating-point warnings (9 lines on a 10,000-Add ONNX chain) are not printed, and onnxruntime's own error line is not logged
before the project's error."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.cli import cli as cli_group
from hexnn_import.litert_runtime import ort_quiet_run_options
from hexnn_import.printable import one_line_warnings, printable

ROOT = Path(__file__).resolve().parents[2]
INT8 = ROOT / "models" / "small_int8.tflite"


def test_printable_escapes_undecodable_bytes_and_control_characters() -> None:
    assert printable("m\udcff.tflite") == "m\\xff.tflite"        # os.fsdecode(b"m\xff.tflite")
    assert printable("a\nerror: b\x1b[31m") == "a\\nerror: b\\x1b[31m"
    assert printable("été.onnx") == "été.onnx"


@pytest.mark.skipif(sys.platform != "linux", reason="Linux file names are bytes")
def test_a_non_utf8_model_name_exports(tmp_path: Path) -> None:
    model = os.path.join(os.fsencode(tmp_path), b"m\xff\xfe.tflite")
    shutil.copy(INT8, model)
    r = CliRunner().invoke(cli_group, ["xs3-export", os.fsdecode(model), "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    header = (tmp_path / "out" / "m_xs3.h").read_text(encoding="utf-8")
    assert "kernel tensors of m\\xff\\xfe.tflite" in header


def test_a_newline_in_a_file_name_forges_no_error_line(tmp_path: Path) -> None:
    (tmp_path / "bad\nerror: forged.tflite").write_bytes(b"not a model")
    r = CliRunner().invoke(cli_group, [str(tmp_path / "bad\nerror: forged.tflite")])
    lines = [line.replace(str(tmp_path) + "/", "") for line in r.stderr.strip().splitlines()]
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: bad\\nerror: forged.tflite"), lines


def test_numpy_float_warnings_off_and_others_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with one_line_warnings():
        big = np.float32(3e38) * np.float32(10)  # numpy warns "overflow encountered in scalar multiply"
        warnings.warn("two\nlines", UserWarning)
    assert big == np.inf
    assert capsys.readouterr().err == "warning: UserWarning: two\\nlines\n"
    with pytest.warns(RuntimeWarning):  # outside the block numpy warns as before
        np.float32(3e38) * np.float32(10)


def _failing_reshape() -> bytes:
    shape = numpy_helper.from_array(np.array([3, 5], np.int64), "s")  # 8 elements into 15: fails at run
    g = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def test_onnxruntime_s_error_line_is_not_logged(capfd: pytest.CaptureFixture[str]) -> None:
    ort = pytest.importorskip("onnxruntime")
    so = ort.SessionOptions()
    so.log_severity_level = 3  # as the project's sessions
    session = ort.InferenceSession(_failing_reshape(), so, providers=["CPUExecutionProvider"])
    x = {"x": np.ones((1, 8), np.float32)}
    errs = {}
    for how, options in (("loud", None), ("quiet", ort_quiet_run_options(ort))):
        with pytest.raises(Exception):
            session.run(None, x, options)
        errs[how] = capfd.readouterr().err
    assert "[E:onnxruntime" in errs["loud"]  # the line the quiet run options drop
    assert errs["quiet"].strip() == ""
