"""The fused speed forms of issue 37 for float models with run-time ranges, against the numpy path bit for bit:
the output stage and the per-channel extremes in one compiled pass (``compiled.stage_extremes``, whose codes
``run_exact`` keeps only when the first range holds), the vectorized int32 extremes, the range outputs a node
hands out again (``kernel_io.kept_range_out``) and a replay rebound to them (``node_cache.Replay.rebind``)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hexnn_import.ops import compiled, replay_lane
from hexnn_import.ops.kernel_io import kept_range_out
from hexnn_import.ops.output_stage.codes import presat, saturated
from hexnn_import.ops.output_stage.requant import FloatStage, Requant
from hexnn_import.ops.registry import KernelContext

import hexnn_import as hx
from hexnn_import import engine

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _warm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled.COMPILED_ENV, raising=False)
    compiled.warm()
    assert compiled.available(), "numba is in the test extra: pip install '.[test]'"


def _numpy_codes(sums: np.ndarray, fs: FloatStage) -> np.ndarray:
    rq = Requant(0.0, 1.0, 0, np.zeros(fs.mm.size, np.int64), np.zeros(fs.mm.size, np.int64))
    return saturated(presat(sums, rq, fs))


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_stage_extremes_equal_the_stage_and_numpy_extremes(dtype: type) -> None:
    # mm = 2**-k and integer offsets put results exactly on code boundaries; the saturation edges; the
    # largest sums each type holds (int32 limits; float32 integers below 2**24)
    rng = np.random.default_rng(3)
    top = 2 ** 31 - 1 if dtype is np.int32 else 2 ** 24 - 1
    mm = np.array([2.0 ** -4, 2.0 ** -10, 0.75, 2.0 ** -40, 1.0])
    off = np.array([0.5, 100.0, -3.0, 255.0, 0.0])
    sums = np.concatenate([rng.integers(-5000, 5000, (300, 5)),
                           np.array([[-8, 1024, 4, 1, 255], [4088, -102400, 344, -1, 256], [top, -top, 0, top, -1],
                                     [-top - (dtype is np.int32), top, -1, -top, 0]])]).astype(dtype)
    got = compiled.stage_extremes(sums.reshape(1, 2, -1, 5), FloatStage(mm, off))
    assert got is not None
    codes, (lo, hi), (cmin, cmax) = got
    np.testing.assert_array_equal(codes, _numpy_codes(sums.reshape(1, 2, -1, 5), FloatStage(mm, off)))
    np.testing.assert_array_equal(lo, sums.min(axis=0).astype(np.float64))
    np.testing.assert_array_equal(hi, sums.max(axis=0).astype(np.float64))
    pre = presat(sums.astype(np.float64), Requant(0.0, 1.0, 0, np.zeros(5, np.int64), np.zeros(5, np.int64)),
                 FloatStage(mm, off))   # every pre-saturation code, float64 (floors are the codes)
    assert (cmin, cmax) == (math.floor(pre.min()), math.floor(pre.max()))
    lo2, hi2 = compiled.channel_extremes(sums)
    assert np.array_equal(lo2, lo) and np.array_equal(hi2, hi)


def test_stage_extremes_leaves_other_sums_to_the_general_loops() -> None:
    fs = FloatStage(np.ones(2), np.zeros(2))
    assert compiled.stage_extremes(np.zeros((3, 2), np.float64), fs) is None   # float64 sums may pass 2**31
    assert compiled.stage_extremes(np.zeros((0, 2), np.int32), fs) is None
    big = np.array([[2.0 ** 40, -(2.0 ** 45)], [1.0, 2.0]])
    lo, hi = compiled.channel_extremes(big)
    assert lo.tolist() == [1.0, -(2.0 ** 45)] and hi.tolist() == [2.0 ** 40, 2.0]


def test_kept_range_out_hands_out_the_same_read_only_arrays_while_the_bits_hold() -> None:
    state: dict = {}
    a = kept_range_out(state, -1.5, 2.25)
    assert kept_range_out(state, -1.5, 2.25)[0] is a[0] and not a[0].flags.writeable
    assert a[0].dtype == np.float32 and a[0].shape == (1, 1, 1, 1) and a[1].item() == 2.25
    z = kept_range_out(state, 0.0, 1.0)
    neg = kept_range_out(state, -0.0, 1.0)   # equal as floats, not as bits
    assert neg[0] is not z[0] and np.signbit(neg[0]).all() and not np.signbit(z[0]).any()
    assert kept_range_out(state, -0.0, 1.0)[0] is neg[0]


def test_a_replay_matched_by_value_is_then_matched_by_identity() -> None:
    lane = replay_lane.lane_for(engine.get_kernel("Requantize_8to8"))
    ctx = KernelContext(node="n", op="Requantize_8to8", padding=0, state={}, n_outputs=3)
    x = np.random.default_rng(0).integers(0, 256, (1, 4, 4, 3)).astype(np.uint8)

    def s(v: float) -> np.ndarray:
        return np.full((1, 1, 1, 1), v, np.float32)
    first = lane(ctx, [x, s(-1.0), s(2.0), s(-1.0), s(127 / 128)])
    again = [x, s(-1.0), s(2.0), s(-1.0), s(127 / 128)]   # equal values, new objects
    assert np.array_equal(lane(ctx, again)[0], first[0]) and lane.hits == 1
    r = ctx.state[replay_lane._REPLAY]
    assert r.all_ids == tuple(map(id, again[1:]))
    assert np.array_equal(lane(ctx, again)[0], first[0]) and lane.hits == 2


def test_face_landmark_with_widening_ranges_equals_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run-time ranges that settle and then widen (inputs scaled up): where the first range fails, the codes
    of the fused pass are dropped and the widened range's computed; every tensor of every run equals the
    numpy path's."""
    path = ROOT / "models" / "real" / "mediapipe_face_landmark.tflite"
    k = compiled.kernels()
    calls = {"stage_extremes": 0, "stage_rows": 0}
    for name in calls:
        fn = getattr(k, name)
        monkeypatch.setattr(k, name, lambda *a, _fn=fn, _n=name: (calls.__setitem__(_n, calls[_n] + 1), _fn(*a))[1])

    def runs() -> tuple[list[dict], list[dict]]:
        runner = hx.Runner(hx.prepare(hx.import_model(path)))
        spec = runner.graph.inputs[0]
        rng = np.random.default_rng(21)
        xs = [rng.uniform(0, 0.3, spec.shape), rng.uniform(0, 0.3, spec.shape), rng.uniform(-3, 3, spec.shape)]
        out, seen = [], []
        for x in xs:
            seen.append(dict(calls))
            out.append({r: np.asarray(v).copy() for r, v in runner.run_all({spec.name: x.astype(np.float32)})[1].items()})
        return out, seen

    fast, seen = runs()
    assert seen[2]["stage_extremes"] > seen[1]["stage_extremes"] > 0, seen
    assert calls["stage_rows"] > seen[2]["stage_rows"], "no range widened on the wide input"
    monkeypatch.setenv(compiled.COMPILED_ENV, "0")
    ref, _ = runs()
    for run, (a, b) in enumerate(zip(ref, fast)):
        assert a.keys() == b.keys()
        bad = [r for r in a if not np.array_equal(a[r], b[r])]
        assert not bad, f"run {run}: {len(bad)} tensors differ"


def test_requantize_and_channel_scale_passes_equal_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """QuantizeDownAndShrinkRange / Requantize's device path (``quantize_asm``) and QuantizedChannelScale's Q28
    product in one compiled int64 pass: the numpy path's codes at the int32 limits, with offsets and gains that
    saturate, and scales above 1 (clipped) and below."""
    from hexnn_import.ops import nnlib_requant
    from hexnn_import.ops.kernels import channel_scale

    rng = np.random.default_rng(4)
    # with level 2**-15 over [-127.5, 127.5] the gain is 2**16 and codes round at every x = 0 mod 2**15
    x = np.concatenate([rng.integers(-2 ** 31, 2 ** 31, 3000), np.arange(-2 ** 17, 2 ** 17 + 1),
                        [-2 ** 31, 2 ** 31 - 1, 0, -1, 1]]).astype(np.int32)
    x = x.reshape(1, 1, -1, 5)
    cases = [(np.float32(2.0 ** -15), np.float32(-127.5), np.float32(127.5)), (np.float32(2.0 ** -20),
             np.float32(-3.0), np.float32(5.0)), (np.float32(1e-9), np.float32(-0.01), np.float32(0.02)),
             (np.float32(2.0 ** -31), np.float32(-1e-9), np.float32(4.0))]
    scales = [rng.uniform(-1.5, 1.5, 5), rng.uniform(0, 1, 5), np.array([1.75]), np.array([-2.0 ** -20])]
    fast = [nnlib_requant.requantize_i32_to_qu8(x, *c) for c in cases]
    fast += [channel_scale.scale_codes(x, channel_scale.q28_scales(k.astype(np.float32))) for k in scales]
    monkeypatch.setattr(nnlib_requant, "requant_q31", lambda *a: None)
    monkeypatch.setattr(channel_scale, "scale_q28", lambda *a: None)
    ref = [nnlib_requant.requantize_i32_to_qu8(x, *c) for c in cases]
    ref += [channel_scale.scale_codes(x, channel_scale.q28_scales(k.astype(np.float32))) for k in scales]
    assert len({int(v) for v in np.unique(ref[0])}) > 2   # codes inside the range, not only saturated ones
    for a, b in zip(ref, fast):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def test_tiled_max_pool_and_channel_pad_equal_their_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """QuantizedMaxPool_8 over tiling windows in one compiled pass (against the numpy path), and QuantizedPad_8 of
    the channel axis alone by void blocks (against ``np.pad`` with the pad code): the face landmark's
    downsampling blocks."""
    from hexnn_import.ops.kernels import pad, pool
    from hexnn_import.ops.registry import run_op

    rng = np.random.default_rng(6)
    def s(v: float) -> np.ndarray:
        return np.full((1, 1, 1, 1), v, np.float32)
    pools = []
    for f, (h, w, d) in ((2, (8, 6, 16)), (3, (9, 3, 5)), (1, (2, 3, 4)), (2, (4, 4, 33))):
        x = rng.integers(0, 256, (2, h, w, d)).astype(np.uint8)
        pools.append([x, s(-1.0), s(2.0), np.zeros((1, f, f, 1)), np.zeros((1, f, f, 1))])
    fast = [run_op("QuantizedMaxPool_8", args, padding=2)[0] for args in pools]   # VALID
    monkeypatch.setattr(pool, "compiled_tile_max", lambda *a: None)
    for args, got in zip(pools, fast):
        want = run_op("QuantizedMaxPool_8", args, padding=2)[0]
        assert got.dtype == want.dtype and np.array_equal(got, want)
    ctx = KernelContext(node="n", op="QuantizedPad_8", padding=0, state={}, n_outputs=3)
    for pads, value in (([[0, 0], [0, 0], [0, 0], [0, 16]], 0.0), ([[0, 0], [0, 0], [0, 0], [3, 5]], 1.5),
                        ([[0, 0], [1, 0], [0, 0], [0, 2]], -0.5)):
        x = rng.integers(0, 256, (1, 5, 4, 16)).astype(np.uint8)
        got = run_op("QuantizedPad_8", [x, s(-1.0), s(2.0), np.array(pads, np.int32).reshape(1, 1, 4, 2),
                                        s(value)])[0]
        code = pad.pad_value_code(ctx, value, -1.0, 2.0, False)
        assert 0 < code < 255 or value == 0.0
        assert got.dtype == np.uint8 and np.array_equal(got, np.pad(x, pads, constant_values=code))


def test_channel_lookup_through_per_channel_tables_equals_take() -> None:
    """PRelu's look-up ``codes[x * 256 + alpha[c]]`` on a large map goes through per-channel tables (kept per
    table and alphas): numpy's shift, or and take, also when the same alphas meet another table."""
    rng = np.random.default_rng(9)
    x = rng.integers(0, 256, (1, 40, 30, 16)).astype(np.uint8)   # 1200 pixels: the table path
    alpha = rng.integers(0, 256, 16).astype(np.uint8)
    for _ in range(2):
        codes = rng.integers(0, 256, 65536).astype(np.uint8)
        for xs in (x, x[:, :2, :3]):   # and the direct loop on a small map
            got = compiled.channel_pair_lookup(xs, alpha, codes)
            want = codes.take((xs.astype(np.int64) << 8) | alpha)
            assert got is not None and got.dtype == np.uint8 and np.array_equal(got, want)


def test_d32_output_with_its_layout_kept_equals_to_d32() -> None:
    """A _d32 output laid out from the checked layout of its shape (the second one of a shape on) is the tensor
    ``to_d32`` makes: same paddings, logical data and padded bytes."""
    from hexnn_import.ops.d32 import right_padding, to_d32
    from hexnn_import.ops.d32_io import d32_output

    rng = np.random.default_rng(2)
    for shape in ((1, 3, 5, 7), (2, 4, 9, 40), (1, 1, 1, 1)):
        for dtype in (np.uint8, np.int16):
            for _ in range(2):
                a = rng.integers(0, 200, shape).astype(dtype)
                got = d32_output(a)
                want = to_d32(a, top=4, bottom=4, left=4, right=right_padding(4, shape[2]), before=0)
                assert got.padding == want.padding and got.shape == want.shape and got.dtype == want.dtype
                assert np.array_equal(got.logical(), a) and np.array_equal(got.data, want.data)
                assert not got.logical_view().flags.writeable and a.flags.writeable
