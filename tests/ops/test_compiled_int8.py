"""onnxruntime's U8S8 product (hexnn_import.ops.compiled_int8): chosen by CPU flags, kept only where the node's
worst case proves it exact. On a CPU without VNNI (AVX2: ``vpmaddubsw`` saturates pairs of products in 16 bits)
the saturating weights must be refused, and the refusal must be right: the raw U8S8 session is shown to give
wrong sums there. Sums are compared with int64 products worked out here, and whole models with the numpy path."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.ops import compiled
from hexnn_import.ops import compiled_int8 as ci
from hexnn_import.ops.conv_core import conv_plan

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _warm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled.COMPILED_ENV, raising=False)
    compiled.warm()
    assert compiled._ort(), "onnxruntime is in the test extra"


def _raw_u8s8(ws: np.ndarray, x_zero: int, w_zero: int):  # type: ignore[no-untyped-def]
    """A U8S8 MatMulInteger session with no check at all (what the proof decides about)."""
    from onnx import TensorProto, helper, numpy_helper
    din, dout = ws.shape
    g = helper.make_graph([helper.make_node("MatMulInteger", ["X", "W", "XZ", "WZ"], ["S"])], "t",
                          [helper.make_tensor_value_info("X", TensorProto.UINT8, ["M", din])],
                          [helper.make_tensor_value_info("S", TensorProto.INT32, ["M", dout])],
                          [numpy_helper.from_array(ws, "W"), numpy_helper.from_array(np.array(x_zero, np.uint8), "XZ"),
                           numpy_helper.from_array(np.array(w_zero, np.int8), "WZ")])
    return compiled._session(g, compiled._ort())


def _exact(x: np.ndarray, ws: np.ndarray, x_zero: int, w_zero: int) -> np.ndarray:
    return (x.astype(np.int64) - x_zero) @ (ws.astype(np.int64) - w_zero)


def test_choice_follows_cpu_flags_and_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    flags = ci.cpu_flags()
    assert "sse2" in flags or not flags          # x86-64 Linux names its flags; elsewhere: none known
    monkeypatch.delenv(ci.INT8_ENV, raising=False)
    assert ci.want_u8s8() == bool(flags & {"avx512_vnni", "avx_vnni"})
    monkeypatch.setenv(ci.INT8_ENV, "u8u8")
    assert not ci.want_u8s8()
    monkeypatch.setenv(ci.INT8_ENV, "U8S8")
    assert ci.want_u8s8()


def test_worst_rows_put_every_product_of_a_channel_at_its_extreme() -> None:
    ws = np.array([[3, -2], [0, 5], [-7, -1]], np.int8)            # din 3, dout 2
    rows = ci.worst_rows(ws)
    assert rows.tolist() == [[255, 0, 0], [0, 0, 255], [0, 255, 0], [255, 0, 255]]


@pytest.mark.parametrize("k", [64, 512])
def test_saturating_weights_are_refused_without_vnni_and_exact_with_it(k: int, monkeypatch: pytest.MonkeyPatch
                                                                       ) -> None:
    """All +127 weights (quint8 255 around 128): the issue's worst case, 255 * 127 * 2 per pair."""
    monkeypatch.setenv(ci.INT8_ENV, "u8s8")
    w = np.full((1, 1, k, 8), 255, np.uint8)
    plan = conv_plan(w, 128, 3)
    sess = ci.u8s8_session(plan, compiled._ort(), compiled._session)
    ws = np.rint(plan.wmat + 0).astype(np.int8)
    x = np.random.default_rng(k).integers(0, 256, (32, k)).astype(np.uint8)
    x[0] = 255
    raw_exact = np.array_equal(_raw_u8s8(ws, 3, 0).run(None, {"X": x})[0], _exact(x, ws, 3, 0))
    if ci.has_vnni():
        assert sess is not None and raw_exact
    else:
        assert sess is None and not raw_exact      # the refusal is right: U8S8 saturates on this CPU


def test_weights_that_cannot_saturate_are_kept_and_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """|w| <= 64: 255 * 64 * 2 = 32640 fits int16, so U8S8 is exact on every x86-64 CPU and is kept."""
    monkeypatch.setenv(ci.INT8_ENV, "u8s8")
    rng = np.random.default_rng(3)
    w = rng.integers(128 - 64, 128 + 65, (1, 1, 300, 24)).astype(np.uint8)
    plan = conv_plan(w, 128, 17)
    sess = ci.u8s8_session(plan, compiled._ort(), compiled._session)
    assert sess is not None
    x = rng.integers(0, 256, (50, 300)).astype(np.uint8)
    ws = (w.astype(np.int64) - 128).reshape(300, 24)
    assert np.array_equal(sess.run(None, {"X": x})[0], _exact(x, ws, 17, 0))


def test_model_with_u8s8_forced_equals_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """MobileNetV2 0.35 (int8): every 1x1 product tries U8S8 (kept or refused node by node), every tensor equal to
    the numpy path's over three runs."""
    monkeypatch.setattr(compiled, "ORT_MIN_MACS", 0)
    path = ROOT / "models" / "real" / "keras_mobilenet_v2_int8.tflite"
    graph = hx.prepare(hx.import_model(path))
    spec = graph.inputs[0]
    x = np.random.default_rng(1).integers(-128, 128, spec.shape).astype(np.int8)

    def runs() -> list[dict]:
        runner = hx.Runner(graph)
        return [{r: np.asarray(v).copy() for r, v in runner.run_all({spec.name: x})[1].items()} for _ in range(3)]

    monkeypatch.setenv(ci.INT8_ENV, "u8s8")
    fast = runs()
    monkeypatch.setenv(compiled.COMPILED_ENV, "0")
    ref = runs()
    for a, b in zip(ref, fast):
        assert a.keys() == b.keys()
        assert not [r for r in a if not np.array_equal(a[r], b[r])]
