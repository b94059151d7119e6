"""QuantizedConcat_8 and QuantizedSplit_8 (op texts; SEMANTICS.md §6)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, i4, u4

RNG = np.random.default_rng(2024)


def concat(tensors: list[np.ndarray], ranges: list[tuple[float, float]], dim: int = 3, **kw):
    mins = [float(r[0]) for r in ranges]
    maxs = [float(r[1]) for r in ranges]
    return run_op("QuantizedConcat_8", [np.int32(dim), *tensors, *mins, *maxs], **kw)


def test_concat_by_hand():
    # merged range: min(0, 0, -255, 0) = -255, max(255, 255, 100) = 255; out_range 510
    # A [0, 255]: in_step 1, off = round_away(255 / 1) = 255, g = round_away(255/510 * 1 * 32768) = 16384
    #   q = ((x + 255) * 16384 + 16384) >> 15 = floor((x + 256) / 2): 0->128, 1->128 (128.5), 10->133, 255->255
    # B [-255, 255]: in_step 2, off = 0, g = round_away(32768) -> min(32767): q = x (copy)
    # C [0, 100]: in_step 100/255, off = round_away(255 * 255 / 100) = round_away(650.25) = 650,
    #   g = round_away(100/510 * 32768) = round_away(6425.098) = 6425
    #   x=0: (650*6425 + 16384) >> 15 = 4192634 >> 15 = 127 (127.949)
    #   x=128: (778*6425 + 16384) = 5015034 >> 15 = 153 (153.047)
    #   x=255: (905*6425 + 16384) = 5831009 >> 15 = 177 (177.948)
    q, mn, mx = concat([u4([0, 1, 10, 255]), u4([0, 7, 128, 255]), u4([0, 128, 255])],
                       [(0.0, 255.0), (-255.0, 255.0), (0.0, 100.0)])
    assert q.dtype == np.uint8 and q.shape == (1, 1, 1, 11)
    assert q.ravel().tolist() == [128, 128, 133, 255, 0, 7, 128, 255, 127, 153, 177]
    assert (mn.item(), mx.item()) == (-255.0, 255.0)


def test_concat_min_forced_to_zero_and_single_input():
    # one input [0, 2.55]: merged range [min(0, 0), 2.55] = the input range -> codes copied unchanged
    x = u4([0, 1, 2, 254, 255], (1, 1, 1, 5))
    q, mn, mx = concat([x], [(0.0, 2.55)])
    assert np.array_equal(q, x)
    assert (mn.item(), mx.item()) == (0.0, pytest.approx(2.55))


@pytest.mark.parametrize("seed", range(4))
def test_concat_equal_ranges_is_np_concatenate(seed):
    rng = np.random.default_rng(seed)
    b, h, w = rng.integers(1, 4, size=3)
    depths = rng.integers(1, 6, size=rng.integers(1, 5))
    parts = [rng.integers(0, 256, size=(b, h, w, d)).astype(np.uint8) for d in depths]
    q, mn, mx = concat(parts, [(-3.0, 5.0)] * len(parts))
    assert np.array_equal(q, np.concatenate(parts, axis=3))
    assert (mn.item(), mx.item()) == (-3.0, 5.0)


def reference_concat(tensors, ranges):
    """Independent per-element evaluation of SEMANTICS §6 with Python ints and math."""
    out_min = min(0.0, min(r[0] for r in ranges))
    out_max = max(r[1] for r in ranges)
    outs = []
    for x, (lo, hi) in zip(tensors, ranges):
        step = (hi - lo) / 255
        off = max(0, math.floor((lo - out_min) / step + 0.5))  # round half away (value >= 0)
        g = min(32767, math.floor(255 / (out_max - out_min) * step * 32768 + 0.5))
        vals = [min(255, max(0, ((int(v) + off) * g + 16384) // 32768)) for v in x.ravel()]
        outs.append(np.array(vals, np.uint8).reshape(x.shape))
    return np.concatenate(outs, axis=3), out_min, out_max


@pytest.mark.parametrize("seed", range(5))
def test_concat_mixed_ranges_reference(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 5))
    shape = tuple(int(v) for v in rng.integers(1, 4, size=3))
    tensors = [rng.integers(0, 256, size=(*shape, int(rng.integers(1, 5)))).astype(np.uint8) for _ in range(n)]
    # float32-exact sane ranges: min 0 or in [-10, 0), width at least 1
    ranges = []
    for _ in range(n):
        lo = float(np.float32(-rng.uniform(0, 10))) if rng.random() < 0.5 else 0.0
        ranges.append((lo, float(np.float32(max(0.0, lo + rng.uniform(1, 20))))))
    q, mn, mx = concat(tensors, ranges)
    want, out_min, out_max = reference_concat(tensors, ranges)
    assert np.array_equal(q, want)
    assert (mn.item(), mx.item()) == (np.float32(out_min), np.float32(out_max))
    # and the values survive: out_min + q*out_step within ~1 output step of in_min + x*in_step
    out_step = (out_max - out_min) / 255
    got = out_min + q.astype(np.float64) * out_step
    real = np.concatenate([lo + x.astype(np.float64) * (hi - lo) / 255 for x, (lo, hi) in zip(tensors, ranges)], axis=3)
    assert np.all(np.abs(got - real) <= 1.1 * out_step)


def test_split_by_hand():
    # [1,1,2,6] codes 0..11 split on depth into 3: part k holds depths 2k, 2k+1 of both rows
    x = np.arange(12, dtype=np.uint8).reshape(1, 1, 2, 6)
    out = run_op("QuantizedSplit_8", [np.int32(3), x, -1.0, 2.0], n_outputs=5)
    assert len(out) == 5
    assert [p.ravel().tolist() for p in out[:3]] == [[0, 1, 6, 7], [2, 3, 8, 9], [4, 5, 10, 11]]
    assert all(p.shape == (1, 1, 2, 2) and p.dtype == np.uint8 for p in out[:3])
    assert (out[3].item(), out[4].item()) == (-1.0, 2.0)


@pytest.mark.parametrize("seed", range(6))
def test_split_is_np_split(seed):
    rng = np.random.default_rng(seed)
    dim = int(rng.integers(0, 4))
    n = int(rng.integers(1, 4))
    shape = [int(v) for v in rng.integers(1, 4, size=4)]
    shape[dim] *= n
    x = rng.integers(0, 256, size=shape).astype(np.uint8)
    kept = x.copy()
    out = run_op("QuantizedSplit_8", [np.int32(dim), x, 0.0, 1.0], n_outputs=n + 2)
    for got, want in zip(out[:n], np.split(kept, n, axis=dim)):
        assert np.array_equal(got, want)
        got[...] = 0  # fresh arrays, never views of the input
    assert np.array_equal(x, kept)
    assert (out[n].item(), out[n + 1].item()) == (0.0, 1.0)


def test_errors():
    x = u4([1, 2, 3, 4], (1, 1, 2, 2))
    y = u4([1, 2], (1, 1, 1, 2))
    assert_op_error("QuantizedConcat_8", [np.int32(2), x, x, -1.0, -1.0, 1.0, 1.0], "only depth")
    assert_op_error("QuantizedConcat_8", [np.int32(3), x, y, -1.0, -1.0, 1.0, 1.0], "input data 1", "must match")
    assert_op_error("QuantizedConcat_8", [np.int32(3), x, x, -1.0, 1.0, 1.0], "3n+1")
    assert_op_error("QuantizedConcat_8", [np.int32(3), x, x, math.inf, -1.0, 1.0, 1.0], "input 0", "not finite")
    assert_op_error("QuantizedConcat_8", [np.int32(3), x.astype(np.float32) + 0.5, -1.0, 1.0], "non-integer")
    assert_op_error("QuantizedSplit_8", [np.int32(3), x, -1.0, 1.0], "output count is unknown")
    # op_split.c: "uneven split" and "split dimension out of range" in nnlib's C too
    assert_op_error("QuantizedSplit_8", [np.int32(2), x, -1.0, 1.0], "uneven split", "cannot be split into 3",
                    n_outputs=5)
    assert_op_error("QuantizedSplit_8", [np.int32(4), x, -1.0, 1.0], "split dimension 4 out of range", n_outputs=4)


def test_split_what_the_c_accepts():
    # op_split.c reads element 0 of the dimension tensor and copies min/max unchecked (values from the C)
    x = u4([1, 2, 3, 4], (1, 1, 2, 2))
    a, b, mn, mx = run_op("QuantizedSplit_8", [i4([3, 3]), x, 1.0, -1.0], n_outputs=4)
    assert a.ravel().tolist() == [1, 3] and b.ravel().tolist() == [2, 4]
    assert (mn.item(), mx.item()) == (1.0, -1.0)
