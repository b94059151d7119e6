"""Slice_f/_int32/_8 and StridedSlice_f/_int32/_uint8 (op texts: plain data movement, no min/max)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, i4, u4


def sslice(op, x, begin, end, step, *masks):
    return run_op(op, [x, i4(begin), i4(end), i4(step), *[np.int32(m) for m in masks]])[0]


def test_slice_text_examples():
    # start [0,0,2,0] size [-1,-1,4,-1] "extract width from 2...5 inclusive"; start [2,0] size [4,-1] the same
    x = np.arange(2 * 3 * 7 * 2, dtype=np.float32).reshape(2, 3, 7, 2)
    for start, size in (([0, 0, 2, 0], [-1, -1, 4, -1]), ([2, 0], [4, -1])):
        (out,) = run_op("Slice_f", [x, i4(start), i4(size)])
        assert out.shape == (2, 3, 4, 2) and out.dtype == np.float32
        # x[b,h,w,d] = ((b*3 + h)*7 + w)*2 + d: at b=1, h=2, depth 0 the widths 2..5 hold 2*(35+w) = 74,76,78,80
        assert out[1, 2, :, 0].tolist() == [74.0, 76.0, 78.0, 80.0]


def test_slice_int32_and_8_by_hand():
    # depth {10,20,30,40,50}: start 1 size 3 -> {20,30,40}; start 3 size -1 -> {40,50}
    assert run_op("Slice_int32", [i4([10, 20, 30, 40, 50]), i4([1]), i4([3])])[0].ravel().tolist() == [20, 30, 40]
    (q,) = run_op("Slice_8", [u4([10, 20, 30, 40, 50]), i4([3]), i4([-1])])
    assert q.dtype == np.uint8 and q.ravel().tolist() == [40, 50]


@pytest.mark.parametrize("seed", range(6))
def test_slice_is_numpy_indexing(seed):
    rng = np.random.default_rng(seed)
    shape = [int(v) for v in rng.integers(1, 6, size=4)]
    x = rng.standard_normal(shape).astype(np.float32)
    k = int(rng.integers(1, 5))
    starts, sizes, sl = [], [], []
    for n in shape[4 - k:]:
        b = int(rng.integers(0, n))
        s = int(rng.integers(1, n - b + 1)) if rng.random() < 0.6 else -1
        starts.append(b)
        sizes.append(s)
        sl.append(slice(b, n if s == -1 else b + s))
    want = x[(slice(None),) * (4 - k) + tuple(sl)]
    assert np.array_equal(run_op("Slice_f", [x, i4(starts), i4(sizes)])[0], want)
    xi = (x * 100).astype(np.int32)
    want_i = xi[(slice(None),) * (4 - k) + tuple(sl)]
    assert np.array_equal(run_op("Slice_int32", [xi, i4(starts), i4(sizes)])[0], want_i)


def test_slice_errors():
    x = f4([1.0, 2.0, 3.0])
    assert_op_error("Slice_f", [x, i4([3]), i4([1])], "do not fit")
    assert_op_error("Slice_f", [x, i4([1]), i4([3])], "do not fit")
    assert_op_error("Slice_f", [x, i4([0]), i4([0])], "do not fit")
    assert_op_error("Slice_f", [x, i4([0, 0]), i4([1])], "must match")
    assert_op_error("Slice_8", [u4([1, 2]), i4([0, 0, 0, 0, 0]), i4([1] * 5)], "start has 5 values")
    assert_op_error("Slice_8", [i4([1, 300]), i4([0]), i4([1])], "outside the code range")


def test_strided_slice_by_hand():
    x = f4(np.arange(10) * 10.0)  # [1,1,1,10]: 0,10,...,90
    # begin 1, end 8, step 3: samples 1,4,7; size ceil(7/3) = 3
    assert sslice("StridedSlice_f", x, [1], [8], [3]).ravel().tolist() == [10.0, 40.0, 70.0]
    # reverse: begin 7, end -1, step -3: samples 7,4,1 (ceil(8/3) = 3)
    assert sslice("StridedSlice_f", x, [7], [-1], [-3]).ravel().tolist() == [70.0, 40.0, 10.0]
    # begin_mask bit 3 (D) with step -2: begin forced to 9; end 0: 9,7,5,3,1
    assert sslice("StridedSlice_f", x, [0], [0], [-2], 8, 0, 0).ravel().tolist() == [90.0, 70.0, 50.0, 30.0, 10.0]
    # end_mask bit 3 with step 4 from 2: end forced to 10: 2,6 (ceil(8/4) = 2)
    assert sslice("StridedSlice_f", x, [2], [3], [4], 0, 8, 0).ravel().tolist() == [20.0, 60.0]
    # int32 [1,1,2,3] {{1,2,3},{4,5,6}}; k=2 (w,d): shrink bit 2 (W) at begin 1 -> row {4,5,6},
    # squeezed: (1,1,1,3) with the w dim removed and a 1 added on the left -> still (1,1,1,3)
    xi = i4([1, 2, 3, 4, 5, 6], (1, 1, 2, 3))
    got = sslice("StridedSlice_int32", xi, [1, 0], [0, 3], [1, 1], 0, 0, 4)
    assert got.shape == (1, 1, 1, 3) and got.ravel().tolist() == [4, 5, 6]
    # uint8 [1,1,2,3] codes: columns reversed (d begin 2, end -1, step -1) -> {{3,2,1},{6,5,4}}
    q = sslice("StridedSlice_uint8", u4([1, 2, 3, 4, 5, 6], (1, 1, 2, 3)), [2], [-1], [-1])
    assert q.dtype == np.uint8 and q.tolist() == [[[[3, 2, 1], [6, 5, 4]]]]


def test_strided_slice_shrink_squeezes():
    # [2,3,4,5], shrink_mask 4 (W) at w=2: (b,h,w,d) -> (1,b,h,d) = (1,2,3,5), the text's example
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    got = sslice("StridedSlice_f", x, [0, 0, 2, 0], [2, 3, 3, 5], [1, 1, 1, 1], 0, 0, 4)
    assert got.shape == (1, 2, 3, 5) and np.array_equal(got[0], x[:, :, 2, :])


@pytest.mark.parametrize("seed", range(8))
def test_strided_slice_is_numpy_indexing(seed):
    rng = np.random.default_rng(100 + seed)
    shape = [int(v) for v in rng.integers(1, 7, size=4)]
    x = rng.standard_normal(shape).astype(np.float32)
    begin, end, step, index = [], [], [], []
    shrink = int(rng.integers(0, 16))
    for axis, n in enumerate(shape):
        s = int(rng.choice([-3, -2, -1, 1, 2, 3]))
        b = int(rng.integers(0, n))
        if shrink >> axis & 1:
            e, idx = b + 1, b  # an integer index drops the axis, as shrink does
        elif s > 0:
            e = int(rng.integers(b + 1, n + 1))
            idx = slice(b, e, s)
        elif b == 0:
            s, e, idx = 1, 1, slice(0, 1)  # no room to step backwards from 0
        else:
            e = int(rng.integers(-1, b))
            idx = slice(b, None if e == -1 else e, s)
        begin.append(b)
        end.append(e)
        step.append(s)
        index.append(idx)
    want = x[tuple(index)]
    want = want.reshape((1,) * (4 - want.ndim) + want.shape)
    assert np.array_equal(sslice("StridedSlice_f", x, begin, end, step, 0, 0, shrink), want)


def test_strided_slice_errors():
    x = f4([1.0, 2.0, 3.0])
    op = "StridedSlice_f"
    assert_op_error(op, [x, i4([0]), i4([2]), i4([0])], "step on D is 0")
    assert_op_error(op, [x, i4([2]), i4([1]), i4([1])], "needs end > begin")
    assert_op_error(op, [x, i4([1]), i4([2]), i4([-1])], "needs end < begin")
    assert_op_error(op, [x, i4([0]), i4([5]), i4([1])], "leave the input's 0..2")
    assert_op_error(op, [x, i4([0]), i4([2]), i4([1]), np.int32(0)], "all three or not at all")
    assert_op_error(op, [x, i4([0]), i4([2]), i4([1]), np.int32(16), np.int32(0), np.int32(0)], "outside 0..15")
    assert_op_error(op, [x, i4([0, 0]), i4([2]), i4([1])], "equally many values")
