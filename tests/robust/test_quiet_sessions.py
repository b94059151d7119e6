"""The reference sessions of ``compare`` (and of every caller of ``ort_reference_session``) are quiet (issue 38,
finding 8): a failing run raises, and onnxruntime prints nothing of its own to stderr before the project's
one-line error (its coloured ``[E:onnxruntime:...]`` line, which the same session without the quiet run
options prints: the twin check in test_one_line_messages.py)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.compare.onnx_reference import ort_reference_session

ort = pytest.importorskip("onnxruntime", reason="onnxruntime (the test extra's reference runtime) runs the sessions")


def _reshape(to: list[int]) -> bytes:
    shape = numpy_helper.from_array(np.array(to, np.int64), "s")
    g = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


@pytest.mark.parametrize("optimize", [True, False])
def test_a_failing_reference_run_logs_nothing(capfd: pytest.CaptureFixture[str], optimize: bool) -> None:
    session = ort_reference_session(ort, _reshape([3, 5]), threads=1, optimize=optimize)  # 8 elements into 15
    with pytest.raises(Exception, match="(?i)reshape"):
        session.run(None, {"x": np.ones((1, 8), np.float32)})
    assert capfd.readouterr().err == ""


def test_the_quiet_session_is_the_session() -> None:
    session = ort_reference_session(ort, _reshape([2, 4]))
    assert [o.name for o in session.get_outputs()] == ["y"] and session.get_inputs()[0].name == "x"
    x = np.arange(8, dtype=np.float32).reshape(1, 8)
    np.testing.assert_array_equal(session.run(["y"], {"x": x})[0], x.reshape(2, 4))
    options = ort.RunOptions()  # a caller's own run options are used as given
    np.testing.assert_array_equal(session.run(None, {"x": x}, options)[0], x.reshape(2, 4))
