"""Concat_f, ConcatV2_f, ConcatV2_int32, Split_f, Split_int32, Pack_f, Pack_int32 (op texts: plain data movement)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, i4

I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1


def test_concat_by_hand():
    # width concat of [1,1,2,1] {1,2} and [1,1,1,1] {3}: dimension 2 gives [1,1,3,1] {1,2,3}
    a, b = f4([1.0, 2.0], (1, 1, 2, 1)), f4([3.0], (1, 1, 1, 1))
    (out,) = run_op("Concat_f", [2, a, b])
    assert out.dtype == np.float32 and out.shape == (1, 1, 3, 1)
    assert out.ravel().tolist() == [1.0, 2.0, 3.0]
    # ConcatV2_f: the same, with the dimension last
    assert run_op("ConcatV2_f", [a, b, 2])[0].ravel().tolist() == [1.0, 2.0, 3.0]
    # ConcatV2_int32 on depth keeps int32 extremes: {MIN} ++ {MAX, 7} = {MIN, MAX, 7}
    (q,) = run_op("ConcatV2_int32", [i4([I32_MIN]), i4([I32_MAX, 7]), 3])
    assert q.dtype == np.int32 and q.ravel().tolist() == [I32_MIN, I32_MAX, 7]


@pytest.mark.parametrize("dim", range(4))
def test_concat_is_numpy_concatenate(dim):
    rng = np.random.default_rng(dim)
    base = [int(v) for v in rng.integers(1, 4, size=4)]
    parts = []
    for _ in range(int(rng.integers(1, 5))):
        shape = list(base)
        shape[dim] = int(rng.integers(1, 4))
        parts.append(rng.standard_normal(shape).astype(np.float32))
    want = np.concatenate(parts, axis=dim)
    assert np.array_equal(run_op("Concat_f", [dim, *parts])[0], want)
    assert np.array_equal(run_op("ConcatV2_f", [*parts, dim])[0], want)
    ints = [(p * 1000).astype(np.int32) for p in parts]
    assert np.array_equal(run_op("ConcatV2_int32", [*ints, dim])[0], np.concatenate(ints, axis=dim))


def test_concat_moves_nan_and_inf_unchanged():
    a = f4([np.nan, np.inf, -np.inf])
    out = run_op("Concat_f", [3, a, f4([0.0])])[0]
    assert np.array_equal(out, f4([np.nan, np.inf, -np.inf, 0.0]), equal_nan=True)


def test_concat_errors():
    a, b = f4([1.0, 2.0], (1, 1, 2, 1)), f4([3.0, 4.0], (1, 2, 1, 1))
    assert_op_error("Concat_f", [2, a, b], "dimensions must match except on the concatenation dimension 2")
    assert_op_error("Concat_f", [4, a, a], "expected 0..3")
    assert_op_error("ConcatV2_f", [a, a, -1], "expected 0..3")
    assert_op_error("ConcatV2_int32", [f4([0.5]), i4([1]), 3], "non-integer")
    assert_op_error("Concat_f", [3, np.zeros((2, 2), np.float32)], "expected 4-D")


def test_split_by_hand():
    # depth {1,2,3,4} in 2 parts: {1,2} and {3,4}
    p0, p1 = run_op("Split_f", [3, f4([1.0, 2.0, 3.0, 4.0])], n_outputs=2)
    assert p0.ravel().tolist() == [1.0, 2.0] and p1.ravel().tolist() == [3.0, 4.0]
    # height 3 of [1,3,1,1] int32 {5,6,7} in 3 parts: {5}, {6}, {7}
    parts = run_op("Split_int32", [1, i4([5, 6, 7], (1, 3, 1, 1))], n_outputs=3)
    assert [p.item() for p in parts] == [5, 6, 7] and all(p.dtype == np.int32 for p in parts)


@pytest.mark.parametrize("dim", range(4))
def test_split_is_numpy_split(dim):
    rng = np.random.default_rng(10 + dim)
    shape = [int(v) for v in rng.integers(1, 4, size=4)]
    n = int(rng.integers(1, 4))
    shape[dim] *= n
    x = rng.standard_normal(shape).astype(np.float32)
    got = run_op("Split_f", [dim, x], n_outputs=n)
    for g, w in zip(got, np.split(x, n, axis=dim), strict=True):
        assert np.array_equal(g, w)


def test_split_errors():
    x = f4([1.0, 2.0, 3.0, 4.0])
    assert_op_error("Split_f", [3, x], "the node's output count")
    assert_op_error("Split_f", [3, x], "3 equal parts do not divide size 4", n_outputs=3)
    assert_op_error("Split_int32", [7, i4([1, 2])], "expected 0..3", n_outputs=2)


def test_pack_by_hand():
    # two [1,1,1,2] inputs {1,2}, {3,4}: the rightmost 1 is w, so the output is [1,1,2,2] {{1,2},{3,4}}
    (out,) = run_op("Pack_f", [f4([1.0, 2.0]), f4([3.0, 4.0])])
    assert out.shape == (1, 1, 2, 2) and out.tolist() == [[[[1.0, 2.0], [3.0, 4.0]]]]
    # text's NOTE: [1,2,1,1] inputs {1,2}, {3,4} -> rightmost 1 is d, shape [1,2,1,2], but the data is
    # ordered as stacked in front ({1,2,3,4}), not as numpy stacking on d ({1,3,2,4})
    (q,) = run_op("Pack_int32", [i4([1, 2], (1, 2, 1, 1)), i4([3, 4], (1, 2, 1, 1))])
    assert q.shape == (1, 2, 1, 2) and q.ravel().tolist() == [1, 2, 3, 4]
    # the text's example: 4 inputs of [1,1,9,32] give [1,4,9,32]
    assert run_op("Pack_f", [np.zeros((1, 1, 9, 32), np.float32)] * 4)[0].shape == (1, 4, 9, 32)


def test_pack_is_numpy_stack_when_ones_lead():
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((1, 1, 3, 4)).astype(np.float32) for _ in range(5)]
    assert np.array_equal(run_op("Pack_f", xs)[0], np.stack(xs, axis=1).reshape(1, 5, 3, 4))
    assert np.array_equal(run_op("Pack_f", xs)[0], np.concatenate(xs, axis=1))


def test_pack_errors():
    assert_op_error("Pack_f", [f4([1.0, 2.0]), f4([1.0])], "must have the same shape")
    assert_op_error("Pack_f", [np.zeros((2, 2, 2, 2), np.float32)], "no dimension of size 1")


def test_plain_inputs_are_read_as_the_ops_type():
    # float64 data is rounded to float32 (0.1 -> float32(0.1)); integers that float32 holds exactly are fine
    (out,) = run_op("Concat_f", [3, np.array([[[[0.1]]]]), np.array([[[[3]]]], dtype=np.int64)])
    assert out.dtype == np.float32 and out.ravel().tolist() == [float(np.float32(0.1)), 3.0]
    # 2**24 + 1 has no float32; 1e39 is beyond float32; int32 ops refuse values beyond int32
    assert_op_error("Concat_f", [3, np.array([[[[2 ** 24 + 1]]]], dtype=np.int64)], "cannot hold exactly")
    assert_op_error("Concat_f", [3, np.array([[[[1e39]]]])], "beyond the float32 range")
    assert_op_error("ConcatV2_int32", [np.array([[[[2 ** 31]]]], dtype=np.int64), 3], "outside the code range")
