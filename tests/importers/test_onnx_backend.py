"""The onnx package's node tests (``onnx.backend.test``, loaded with ``load_model_tests``) through
hexnn-import's backend (hexnn_import.testing.onnx_backend), for the ops the importer supports.

A case is run when every op of its model has an ONNX handler. It passes when the outputs agree
by onnx_backend.check_outputs (quantized outputs within 1 code, integer sums exact, float outputs
within 3 steps of an 8-bit grid); it is skipped only with the importer's own stated reason (the
UnsupportedOpsError naming the attribute, type or rank it does not take); the failures that remain
are listed in KNOWN_FAILURES with the reason. On onnx 1.23: 273 passed, 6 known failures, the rest
skipped with reasons (int16/int32/float16/bool data, rank-5 tensors, cubic resize...).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import TensorProto, numpy_helper

from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.importers.onnx.importer import HANDLERS, load_handlers
from hexnn_import.testing.onnx_backend import HexnnBackend, check_outputs

#: cases that run and disagree, with why (8-bit quantization cannot hold what they test)
KNOWN_FAILURES = {
    "test_log": "inputs 0.078..9.68 on one 8-bit grid (step 0.038): half a step at the smallest input moves its "
                "log by 0.22, 11 steps of the output grid (a logarithm of linearly quantized data)",
    "test_softmax_large_number": "inputs 0..10003 on one 8-bit grid (step 39) lose the unit differences "
                                 "the softmax reads",
    "test_averagepool_2d_strides": "calibration on the run-time-range graph (QuantizedAvgPool_8: its reciprocal "
                                   "0x8000 // 25 acts on the raw codes) observes a maximum 0.469 below the float "
                                   "0.483, and the calibrated graph saturates there (0.0136 > 3 steps of 0.004)",
    **{name: "batch 5: hexagon_nn's QuantizedLRN_8 (op_lrn.c lrn_8_execute_ref, followed bit for bit) quantizes "
             "batch k on the running range of batches 0..k and reports the range of all, so earlier batches read "
             "back off by up to 0.5 (batch 1 agrees within 3 steps)" for name in ("test_lrn", "test_lrn_default")},
    "test_gru_seq_length": "the decomposition in float64 is onnxruntime's within 8e-8; inputs 1..18 times weights "
                           "up to 2.3 put x W_h + b on one 8-bit grid over [-49.5, 33.6] (step 0.33; z's 0.21): "
                           "batch 0's candidate pre-activation -0.431 reads -0.326 (n -0.315 for -0.406) and "
                           "1 - z 0.349 for 0.366, so h -0.111 for -0.149 (0.038, 19 steps of Y_h's 0.002), kept "
                           "to Y_h by the saturated z of the second step",
    "test_lstm_reverse": "the decomposition in float64 is onnxruntime's within 1e-7; QuantizedTanh_8's fixed output "
                         "range [-1, 1.008] (step 0.0079, 4.9 steps of Y_h's 0.0016) reads g 0.8031 for 0.8005 and "
                         "tanh(c) 0.5354 for 0.5375 at the first (last in time) step, and the cell state carries it: "
                         "Y_h 0.4094 for 0.4041 (0.0053), Y_c 0.8031 for 0.7970",
}
MIN_PASSED = 235

#: cases whose float data input sits on exact half codes of its calibrated range; the engine's Quantize is the
#: device's (quantize_floats_to_8b_asm, issue 36), which rounds a half down, so the outputs are judged against
#: onnx.reference run on that input as the device codes it (:func:`_device_coded`), and against the case's own
#: outputs within the stated number of steps (the measured figure)
HALF_CODE_INPUTS = {
    # X = 1..6, calibrated to [0, 6] (step 6/255): 1, 3, 5 are codes 42.5, 127.5, 212.5, read 42, 127, 212
    # (0.988, 2.988, 4.988). Measured: 2.99 steps of Y's 0.00073 from onnx.reference on those X, 3.90 steps
    # (0.00285) from the case's outputs (2.1 steps before issue 36, when halves rounded up)
    "test_gru_bidirectional": (0, 4.0),
}


def _device_coded(case, inputs: list[np.ndarray], index: int) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """onnx.reference's outputs with input ``index`` on its 8-bit grid over ``[min(0, lo), max(0, hi)]``, half
    codes rounded down as the device's Quantize does (``x * 255 / width`` is exact for these small integers)."""
    from onnx.reference import ReferenceEvaluator

    x = inputs[index].astype(np.float64)
    lo, hi = min(0.0, x.min()), max(0.0, x.max())
    codes = np.ceil((x - lo) * 255 / (hi - lo) - 0.5)
    coded = list(inputs)
    coded[index] = (lo + codes * (hi - lo) / 255).astype(inputs[index].dtype)
    names = [i.name for i in case.model.graph.input if i.name not in {t.name for t in case.model.graph.initializer}]
    return list(ReferenceEvaluator(case.model).run(None, dict(zip(names, coded))))


def _cases() -> list:
    from onnx.backend.test.loader import load_model_tests

    load_handlers()
    ops = {op for _, op in HANDLERS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_model_tests(kind="node")
    return [c for c in cases if all(n.op_type in ops for n in c.model.graph.node)]


CASES = _cases()
RESULTS: dict[str, str] = {}


def _array(a: object) -> np.ndarray:
    return numpy_helper.to_array(a) if isinstance(a, TensorProto) else np.asarray(a)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case) -> None:
    inputs, outputs = ([_array(a) for a in part] for part in case.data_sets[0])
    rep = HexnnBackend.prepare(case.model)
    try:
        got = rep.run(inputs)
    except UnsupportedOpsError as exc:
        RESULTS[case.name] = "skipped"
        pytest.skip(str(exc))
    if case.name in HALF_CODE_INPUTS:
        index, steps = HALF_CODE_INPUTS[case.name]
        for g, want, step in zip(got, outputs, rep.steps):
            assert np.abs(g.astype(np.float64) - want).max() <= steps * step, (case.name, steps)
        outputs = _device_coded(case, inputs, index)
    why = check_outputs(got, outputs, rep.steps)
    RESULTS[case.name] = "failed" if why else "passed"
    if why and case.name in KNOWN_FAILURES:
        pytest.xfail(KNOWN_FAILURES[case.name])
    assert why is None, why


def test_node_case_count() -> None:
    """Runs after the cases (file order): the pass count stays at the level reached."""
    if len(RESULTS) < len(CASES):
        pytest.skip("run with the whole file to count the cases")
    passed = sum(v == "passed" for v in RESULTS.values())
    assert passed >= MIN_PASSED, f"{passed} of {len(CASES)} node cases passed"
