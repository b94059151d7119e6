"""The compiled paths (hexnn_import.ops.compiled: numba loops, onnxruntime's MatMulInteger) against the numpy
reference path, bit for bit.

Loop by loop on worked-out edge cases, then whole real models run several times (so that replays and
settled auto ranges take the compiled forms) with ``HEXNN_COMPILED=0`` and without, every tensor compared.
numba is in the test extra: a missing numba fails here rather than skipping.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.ops import compiled
from hexnn_import.ops.conv_core import ConvGeometry
from hexnn_import.ops.depthwise_core import depthwise_plan, depthwise_sum_at
from hexnn_import.ops.kernels.add8 import pair_index
from hexnn_import.ops.output_stage.codes import presat, saturated
from hexnn_import.ops.output_stage.requant import FloatStage, Requant

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _warm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled.COMPILED_ENV, raising=False)
    monkeypatch.setattr(compiled, "ORT_MIN_MACS", 0)   # every product, also the small models' ones
    compiled.warm()
    assert compiled.available(), "numba is in the test extra: pip install '.[test]'"


def _numpy_codes(sums: np.ndarray, fs: FloatStage) -> np.ndarray:
    rq = Requant(0.0, 1.0, 0, np.zeros(fs.mm.size, np.int64), np.zeros(fs.mm.size, np.int64))
    return saturated(presat(sums, rq, fs))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_stage_equals_numpy_at_code_boundaries(dtype: type) -> None:
    # mm = 2**-k and integer-valued offsets put many results exactly on code boundaries (y = n, n - 2**-k),
    # plus both saturation edges and values far outside [0, 255]
    rng = np.random.default_rng(1)
    mm = np.array([2.0 ** -4, 2.0 ** -10, 0.75, 2.0 ** -20, 1.0])
    off = np.array([0.5, 100.0, -3.0, 255.0, 0.0])
    sums = np.concatenate([rng.integers(-5000, 5000, (400, 5)),
                           np.array([[0, 0, 0, 0, 0], [-8, 1024, 4, 1, 255], [4088, -102400, 344, -1, 256],
                                     [-1, -1, -1, 0, -256]])]).astype(dtype)
    fs = FloatStage(mm, off)
    got = compiled.stage_u8(sums.reshape(1, 2, -1, 5), fs)
    assert got is not None
    np.testing.assert_array_equal(got, _numpy_codes(sums.reshape(1, 2, -1, 5), fs))


@pytest.mark.parametrize("stride,pads,dmul,batch,x_zero", [
    (1, (1, 1, 1, 1), 1, 1, 0), (2, (0, 1, 0, 1), 1, 2, 128), (1, (0, 0, 0, 0), 2, 1, 255),
    (2, (1, 1, 1, 1), 3, 1, 7), (1, (2, 2, 2, 2), 1, 1, 77)])
def test_depthwise_loops_equal_numpy(stride: int, pads: tuple[int, ...], dmul: int, batch: int, x_zero: int) -> None:
    rng = np.random.default_rng(stride * 10 + dmul)
    h, w, din, f = 13, 11, 5, 3 if pads[0] < 2 else 5
    x = rng.integers(0, 256, (batch, h, w, din), dtype=np.uint8)
    wt = rng.integers(0, 256, (f, f, din, dmul), dtype=np.uint8)
    plan = depthwise_plan(wt, 119, x_zero)
    oh = (h + pads[0] + pads[1] - f) // stride + 1
    ow = (w + pads[2] + pads[3] - f) // stride + 1
    g = ConvGeometry(oh, ow, pads[0], pads[1], pads[2], pads[3], stride, stride)
    ref = depthwise_sum_at(x, plan, g)
    sums = compiled.depthwise_sums(x, plan, g)
    assert sums is not None and sums.dtype == np.int32
    np.testing.assert_array_equal(sums, ref.astype(np.int64))
    fs = FloatStage(rng.uniform(2.0 ** -9, 2.0 ** -7, din * dmul), rng.uniform(-20, 270, din * dmul).round())
    fused = compiled.build_depthwise(plan, g, x.shape, fs)
    assert fused is not None
    np.testing.assert_array_equal(fused(x), _numpy_codes(ref, fs))


def test_a_compiled_form_that_disagrees_is_not_used() -> None:
    x = np.arange(12, dtype=np.uint8).reshape(1, 2, 2, 3)
    assert compiled.compiled_replay(lambda a: a + 1, x, x) is None
    same = lambda a: a.copy()  # noqa: E731
    assert compiled.compiled_replay(same, x, x) is same


def test_pair_lookup_equals_take() -> None:
    rng = np.random.default_rng(3)
    a, b = (rng.integers(0, 256, (2, 7, 5, 3), dtype=np.uint8) for _ in range(2))
    codes = rng.integers(0, 256, 65536, dtype=np.uint8)
    inter = rng.integers(-32768, 32768, 65536).astype(np.int16)
    out, lo, hi = compiled.pair_lookup(a, b, codes, inter)
    idx = pair_index(a, b)
    np.testing.assert_array_equal(out, codes.take(idx))
    assert (lo, hi) == (int(inter.take(idx).min()), int(inter.take(idx).max()))


def _count_calls(monkeypatch: pytest.MonkeyPatch, loops: tuple[str, ...], sums_user: object) -> dict[str, int]:
    """Count the calls of the compiled loops ``loops`` (their single-threaded and ``_parallel`` forms) and the
    onnxruntime products that ``sums_user`` (the module calling ``conv_sums``) gets."""
    k = compiled.kernels()
    calls: dict[str, int] = {}

    def counting(name: str, fn):  # type: ignore[no-untyped-def]
        def call(*args):  # type: ignore[no-untyped-def]
            got = fn(*args)
            if name != "onnxruntime product" or got is not None:
                calls[name] = calls.get(name, 0) + 1
            return got
        return call

    for name in loops:
        for variant in (name, name + "_parallel"):
            if hasattr(k, variant):
                monkeypatch.setattr(k, variant, counting(name, getattr(k, variant)))
    monkeypatch.setattr(sums_user, "conv_sums", counting("onnxruntime product", sums_user.conv_sums))
    return calls


def _mark_all(path: Path, feed: dict[str, np.ndarray], runs: int) -> list[dict]:
    runner = hx.Runner(hx.prepare(hx.import_model(path)))
    return [{r: np.asarray(v).copy() for r, v in runner.run_all(feed)[1].items()} for _ in range(runs)]


@pytest.mark.parametrize("name", ["keras_mobilenet_v2_int8.tflite", "keras_mobilenet_v2_1.0_224_int8.tflite",
                                  "mediapipe_face_landmark.tflite",
                                  "keras_ds_cnn_int8.tflite", "torch_mobilenet_v3_small_qdq.onnx"])
def test_real_models_compiled_equal_numpy(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three runs each (first: numpy everywhere; then replays and settled ranges on the compiled loops)."""
    path = ROOT / "models" / "real" / name
    spec = hx.Runner(hx.prepare(hx.import_model(path))).graph.inputs[0]
    rng = np.random.default_rng(5)
    dt = np.dtype(spec.dtype)
    x = (rng.uniform(0, 1, spec.shape).astype(dt) if dt.kind == "f"
         else rng.integers(np.iinfo(dt).min, np.iinfo(dt).max + 1, spec.shape).astype(dt))
    from hexnn_import.ops.kernels import supernode

    calls = _count_calls(monkeypatch, ("stage_rows", "depthwise_stage", "depthwise_sums", "pair_lookup",
                                       "channel_extremes", "channel_extremes_i32", "stage_extremes",
                                       "depthwise_rows"), supernode)
    fast = _mark_all(path, {spec.name: x}, 3)
    # the loops these models exercise: fixed ranges (int8) replay the fused depthwise supernode; run-time
    # ranges (float) take the compiled sums and the stage with the extremes in one pass
    want = {"depthwise_sums", "depthwise_rows", "stage_extremes"} if "face" in name else {"stage_rows"}
    want.add("onnxruntime product")
    if "keras" in name:
        want |= {"depthwise_stage"}
    assert want <= set(calls), f"compiled loops used: {calls}"
    monkeypatch.setenv(compiled.COMPILED_ENV, "0")
    assert not compiled.available()
    ref = _mark_all(path, {spec.name: x}, 3)
    for run, (a, b) in enumerate(zip(ref, fast)):
        assert a.keys() == b.keys()
        bad = [r for r in a if not np.array_equal(a[r], b[r])]
        assert not bad, f"run {run}: {len(bad)} tensors differ, first {bad[0]}"


def test_xs3_path_compiled_equals_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The XS3 simulation's fast layers (compiled sums and BSO stage) against its numpy form, every tensor."""
    from hexnn_import.xs3.run import XS3Runner
    from hexnn_import.api import import_model

    path = ROOT / "models" / "real" / "keras_mobilenet_v2_int8.tflite"
    from hexnn_import.xs3 import kernels_fast as xs3_fast

    calls = _count_calls(monkeypatch, ("bso_stage", "bso_stage_f64", "depthwise_sums"), xs3_fast)

    def runs() -> list[dict]:
        runner = XS3Runner(import_model(path))
        spec = runner.graph.inputs[0]
        x = np.random.default_rng(9).integers(-128, 128, spec.shape).astype(np.int8)
        return [{r: np.asarray(v).copy() for r, v in runner.run_all({spec.name: x})[1].items()} for _ in range(2)]

    fast = runs()
    assert {"bso_stage_f64", "depthwise_sums", "onnxruntime product"} <= set(calls), calls
    monkeypatch.setenv(compiled.COMPILED_ENV, "0")
    ref = runs()
    for a, b in zip(ref, fast):
        assert a.keys() == b.keys()
        assert not [r for r in a if not np.array_equal(a[r], b[r])]
