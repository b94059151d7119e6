"""The engine's short way to stored replays (hexnn_import.ops.replay_lane) and the speed forms of issue 37
(PadForConv's kept plan, Requantize_8to8's code table, tiled pools, AutoQuantize in float32): every tensor of
every run equal to the engine without them, on real models with fresh inputs each run."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import import engine
from hexnn_import.ops import replay_lane
from hexnn_import.ops.kernels import pool
from hexnn_import.ops.kernels.quantize import AutoQuantize
from hexnn_import.ops.registry import KernelContext, run_op

ROOT = Path(__file__).resolve().parents[1]


def _scalar(v: float) -> np.ndarray:
    return np.full((1, 1, 1, 1), v, np.float32)


def _runs(path: Path, n: int) -> tuple[list[dict], hx.Runner]:
    runner = hx.Runner(hx.prepare(hx.import_model(path)))
    spec = runner.graph.inputs[0]
    rng = np.random.default_rng(4)
    out = []
    for _ in range(n):
        x = rng.integers(-128, 128, spec.shape).astype(np.int8)
        out.append({r: np.asarray(v).copy() for r, v in runner.run_all({spec.name: x})[1].items()})
    return out, runner


@pytest.mark.parametrize("name", ["keras_ds_cnn_int8.tflite", "keras_person_detect_int8.tflite"])
def test_lane_gives_every_tensor_of_the_full_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = ROOT / "models" / "real" / name
    fast, runner = _runs(path, 4)
    lanes = [k for k in runner.engine._kernels.values() if isinstance(k, replay_lane.ReplayLane)]
    assert lanes and sum(k.hits for k in lanes) >= 2 * len(lanes), "the lane was not taken"
    monkeypatch.setattr(engine, "lane_for", lambda k: k)
    monkeypatch.setattr(pool, "tiles", lambda *a: None)
    ref, _ = _runs(path, 4)
    for a, b in zip(ref, fast):
        assert a.keys() == b.keys()
        assert not [r for r in a if not np.array_equal(a[r], b[r])]


def test_lane_falls_back_when_a_range_input_changes() -> None:
    """A replay is taken only for the very inputs it was built from: new range arrays run the kernel."""
    x = np.random.default_rng(0).integers(0, 256, (1, 4, 4, 3)).astype(np.uint8)
    lane = replay_lane.lane_for(engine.get_kernel("Requantize_8to8"))
    assert isinstance(lane, replay_lane.ReplayLane)
    ctx = KernelContext(node="n", op="Requantize_8to8", padding=0, state={}, n_outputs=3)
    s = _scalar
    ins = [x, s(-1.0), s(2.0), s(-1.0), s(127 / 128)]   # zero on code 128
    first = lane(ctx, ins)
    assert lane(ctx, ins)[0].tolist() == first[0].tolist() and lane.hits == 1
    other = [x, s(-1.0), s(2.0), s(-0.5), s(127 / 256)]
    got = lane(ctx, other)
    assert lane.hits == 1
    assert np.array_equal(got[0], run_op("Requantize_8to8", other)[0])


def test_pool_tiles_equal_window_view(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    for _ in range(60):
        f = int(rng.integers(1, 6))              # up to 25 taps: slice by slice and whole-axis reductions
        h, w = (f * int(v) for v in rng.integers(1, 4, 2))   # windows that tile, and global ones
        d = int(rng.integers(1, 9))
        x = rng.integers(0, 256, (1, h, w, d)).astype(np.uint8)
        for op in ("QuantizedMaxPool_8", "QuantizedAvgPool_8"):
            args = [x, np.float32(-1.0).reshape(1, 1, 1, 1), np.float32(2.0).reshape(1, 1, 1, 1),
                    np.zeros((1, f, f, 1)), np.zeros((1, f, f, 1))]
            got = run_op(op, args, padding=2)[0]   # VALID
            with monkeypatch.context() as m:
                m.setattr(pool, "tiles", lambda *a: None)
                assert np.array_equal(got, run_op(op, args, padding=2)[0])


def test_autoquantize_float32_equals_reference() -> None:
    """float32 data, read in place, gives what the same values given as float64 (converted first) give; the device
    arithmetic itself is held to nnlib's device code by tests/ops/test_hvx_autoquantize.py."""
    rng = np.random.default_rng(7)
    kernel = AutoQuantize("AutoQuantize")
    ctx = KernelContext(node="n", op="AutoQuantize", padding=0, state={}, n_outputs=3)
    for t in range(400):
        x = rng.normal(0, 10.0 ** rng.integers(-20, 20), (1, 1, 5, 31)).astype(np.float32)
        if t % 4 == 1:
            x = np.abs(x)
        if t % 4 == 2:
            x = (rng.integers(-40, 300, x.shape) * 0.5).astype(np.float32)   # halves of codes
        want = kernel.compute(ctx, x.astype(np.float64))
        got = kernel.compute(ctx, x)
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got, want))
    for bad, word in ((np.nan, "NaN"), (np.inf, "Inf")):
        with pytest.raises(Exception, match=word):
            run_op("AutoQuantize", [np.array([[[[1.0, bad]]]], np.float32)])


def test_softmax_and_mean_replays_equal_their_first_runs() -> None:
    """QuantizedSoftmax_8 (terms looked up by code, both branches of op_softmax.c's step test) and QuantizedMean_8
    replayed on fresh data give the codes of a kernel that has never run."""
    rng = np.random.default_rng(11)
    s = _scalar
    for mn, mx, beta in ((-8.0, 8.0, 1.0), (-0.5, 0.3, 0.7), (-100.0, 100.0, 1.0), (-20.0, 40.0, 9.5)):
        state: dict = {}
        lane = replay_lane.lane_for(engine.get_kernel("QuantizedSoftmax_8"))
        ctx = KernelContext(node="n", op="QuantizedSoftmax_8", padding=0, state=state, n_outputs=3)
        rest = [s(mn), s(mx), s(beta)]
        for _ in range(6):
            x = rng.integers(0, 256, (1, 2, 3, 7)).astype(np.uint8)
            assert np.array_equal(lane(ctx, [x, *rest])[0], run_op("QuantizedSoftmax_8", [x, *rest])[0])
        assert lane.hits == 5
    lane = replay_lane.lane_for(engine.get_kernel("QuantizedMean_8"))
    ctx = KernelContext(node="n", op="QuantizedMean_8", padding=0, state={}, n_outputs=3)
    rest = [s(-1.0), s(3.0), np.array([1, 2], np.int32)]
    for _ in range(4):   # batch 1: one reduction batch per pass (a batch of 2 takes the device's misplaced-sum
        x = rng.integers(0, 256, (1, 3, 5, 4)).astype(np.uint8)   # path, nnlib_reduce_passes, never replayed)
        assert np.array_equal(lane(ctx, [x, *rest])[0], run_op("QuantizedMean_8", [x, *rest])[0])
    assert lane.hits == 3


def test_auto_range_replays_equal_full_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The float face-landmark model (run-time ranges: every supernode searches its range on each run): three runs
    on fresh inputs through the auto-range replays (kernels.supernode.settle) equal three full runs, tensor by
    tensor."""
    from hexnn_import.ops.kernels import dwise_scaled, supernode

    path = ROOT / "models" / "real" / "mediapipe_face_landmark.tflite"

    def runs() -> list[dict]:
        runner = hx.Runner(hx.prepare(hx.import_model(path)))
        spec = runner.graph.inputs[0]
        rng = np.random.default_rng(8)
        return [{r: np.asarray(v).copy() for r, v in runner.run_all(
            {spec.name: rng.uniform(0, 1, spec.shape).astype(np.float32)})[1].items()} for _ in range(3)]

    fast = runs()
    settle = supernode.settle

    def fixed_only(ctx, inputs, out, again, fixed, plan):  # type: ignore[no-untyped-def]
        if not ctx.state[supernode.STATE_KEY].auto:
            settle(ctx, inputs, out, again, fixed, plan)
    monkeypatch.setattr(supernode, "settle", fixed_only)
    monkeypatch.setattr(dwise_scaled, "settle", fixed_only)
    ref = runs()
    for a, b in zip(ref, fast):
        assert a.keys() == b.keys()
        assert not [r for r in a if not np.array_equal(a[r], b[r])]


@pytest.mark.parametrize("alpha_shape", [(1, 1, 1, 6), (1, 1, 1, 1), (1, 1, 5, 6)])
def test_prelu_v2_replay_equals_a_fresh_kernel(alpha_shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """QuantizedPRelu_8_V2 replayed (per-channel alphas: one compiled pass; other broadcasts: numpy) on fresh data
    gives the codes of a kernel that has never run, on numpy's shift, or and take."""
    from hexnn_import.ops import compiled
    from hexnn_import.ops.kernels import activation

    compiled.warm()
    rng = np.random.default_rng(12)
    s = _scalar
    alpha = rng.integers(0, 256, alpha_shape).astype(np.uint8)
    rest = [s(-3.0), s(5.0), alpha, s(0.0), s(0.25)]
    lane = replay_lane.lane_for(engine.get_kernel("QuantizedPRelu_8_V2"))
    ctx = KernelContext(node="n", op="QuantizedPRelu_8_V2", padding=0, state={}, n_outputs=3)
    for _ in range(4):
        x = rng.integers(0, 256, (2, 4, 5, 6)).astype(np.uint8)
        got = lane(ctx, [x, *rest])
        with monkeypatch.context() as m:
            m.setattr(activation, "channel_pair_lookup", lambda *a: None)
            want = run_op("QuantizedPRelu_8_V2", [x, *rest])
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
    assert lane.hits == 3
