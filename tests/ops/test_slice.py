"""QuantizedSlice_8 and QuantizedStridedSlice_8 (op texts; SEMANTICS.md §6: data moves, range passes through)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, i4, u4


def sslice(x, begin, end, step, bm=0, em=0, sm=0, mn=-1.0, mx=1.0):
    return run_op("QuantizedStridedSlice_8", [x, i4(begin), i4(end), i4(step), np.int32(bm), np.int32(em),
                                              np.int32(sm), mn, mx])


def random_input(seed: int, dim_end: int) -> tuple[np.random.Generator, list[int], np.ndarray, int]:
    """A generator from ``seed`` and its first draws: a 4-D shape (dims 1..dim_end-1), codes of it, k in 1..4."""
    rng = np.random.default_rng(seed)
    shape = [int(v) for v in rng.integers(1, dim_end, size=4)]
    x = rng.integers(0, 256, size=shape).astype(np.uint8)
    return rng, shape, x, int(rng.integers(1, 5))


def test_slice_text_examples():
    # op text: start [0,0,2,0], size [-1,-1,4,-1] "extract width from 2...5 inclusive";
    # start [2,0], size [4,-1] is the same (left-padded with start 0 / size -1)
    x = np.arange(2 * 3 * 7 * 2, dtype=np.uint8).reshape(2, 3, 7, 2)
    for start, size in (([0, 0, 2, 0], [-1, -1, 4, -1]), ([2, 0], [4, -1])):
        q, mn, mx = run_op("QuantizedSlice_8", [x, i4(start), i4(size), -2.0, 6.0])
        assert q.shape == (2, 3, 4, 2)
        # x[b,h,w,d] = ((b*3 + h)*7 + w)*2 + d: at b=1,h=2 the width 2..5 depth 0 codes are 2*(35+w) = 74,76,78,80
        assert q[1, 2, :, 0].tolist() == [74, 76, 78, 80]
        assert (mn.item(), mx.item()) == (-2.0, 6.0)


@pytest.mark.parametrize("seed", range(6))
def test_slice_is_numpy_indexing(seed):
    rng, shape, x, k = random_input(seed, 6)
    full_start, full_size, sl = [], [], []
    for n in shape:
        b = int(rng.integers(0, n))
        s = int(rng.integers(1, n - b + 1)) if rng.random() < 0.6 else -1
        full_start.append(b)
        full_size.append(s)
        sl.append(slice(b, n if s == -1 else b + s))
    for i in range(4 - k):  # dims not given take the whole axis
        full_start[i], full_size[i], sl[i] = 0, -1, slice(None)
    q, _, _ = run_op("QuantizedSlice_8", [x, i4(full_start[4 - k:]), i4(full_size[4 - k:]), 0.0, 1.0])
    assert np.array_equal(q, x[tuple(sl)])


def test_strided_slice_by_hand():
    x = u4(np.arange(10) * 10)  # [1,1,1,10]: codes 0,10,...,90
    # begin 1, end 8, step 3: samples 1,4,7; size ceil((8-1)/3) = 3
    assert sslice(x, [1], [8], [3])[0].ravel().tolist() == [10, 40, 70]
    # op_stridedslice.c HANDLE_NEGATIVE_INDEX: a negative end becomes max(-1, end + n), so end -1 is
    # n-1 = 9 and "through index 0" is end_mask (or an end <= -n-1, clamped to -1).
    # reverse: begin 7, end_mask bit 3 (D) -> end -1, step -3: samples 7,4,1; size ceil((7+1)/3) = 3
    assert sslice(x, [7], [0], [-3], em=8)[0].ravel().tolist() == [70, 40, 10]
    assert sslice(x, [7], [-11], [-3])[0].ravel().tolist() == [70, 40, 10]
    # begin 9, end_mask, step -1: whole axis reversed
    assert sslice(x, [9], [-1], [-1], em=8)[0].ravel().tolist() == [90, 80, 70, 60, 50, 40, 30, 20, 10, 0]
    # begin -3 -> 7, end -1 -> 9: samples 7, 8 (TF-style negative indices)
    assert sslice(x, [-3], [-1], [1])[0].ravel().tolist() == [70, 80]
    # begin_mask bit 3 (D), step -2: begin forced to 10-1 = 9; end 0: 9,7,5,3,1
    assert sslice(x, [0], [0], [-2], bm=8)[0].ravel().tolist() == [90, 70, 50, 30, 10]
    # begin_mask with step +4: begin 0; end 9: 0,4,8
    assert sslice(x, [5], [9], [4], bm=8)[0].ravel().tolist() == [0, 40, 80]
    # end_mask bit 3 with step -4 from 6: end forced to -1: 6,2 (ceil(7/4) = 2)
    assert sslice(x, [6], [3], [-4], em=8)[0].ravel().tolist() == [60, 20]
    # end_mask with step +4 from 3: end forced to 10: 3,7
    assert sslice(x, [3], [4], [4], em=8)[0].ravel().tolist() == [30, 70]
    # mask bits of dims not covered by k=1 change nothing there (begin 0, end size, step 1 anyway)
    assert sslice(x, [3], [4], [4], bm=7, em=7)[0].shape == (1, 1, 1, 1)


def test_strided_slice_shrink():
    # x[b,h,w,d] = ((b*3 + h)*4 + w)*5 + d, shape [2,3,4,5]
    x = np.arange(120, dtype=np.uint8).reshape(2, 3, 4, 5)
    # shrink bit 2 (W) at begin 2: end/step ignored (0 and 0 here); W squeezed: (2,3,5) -> (1,2,3,5)
    q, mn, mx = sslice(x, [0, 0, 2, 0], [2, 3, 0, 5], [1, 1, 0, 1], sm=4)
    assert q.shape == (1, 2, 3, 5)
    assert q[0, 1, 2, 4] == ((1 * 3 + 2) * 4 + 2) * 5 + 4  # = 114
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # shrink W and D, begin/end masks on them ignored: x[b, h, 3, 1] -> (1,1,2,3)
    q, _, _ = sslice(x, [3, 1], [0, 0], [1, 1], bm=12, em=12, sm=12)
    assert q.shape == (1, 1, 2, 3)
    assert q[0, 0, 1, 0] == ((1 * 3 + 0) * 4 + 3) * 5 + 1  # = 76
    # shrink bit 0 (B) with k = 1: B is not covered by k, shrink keeps its index 0 -> (1,3,4,2)
    q, _, _ = sslice(x, [1], [5], [2], sm=1)
    assert q.shape == (1, 3, 4, 2)
    assert q[0, 2, 3].tolist() == [((0 * 3 + 2) * 4 + 3) * 5 + 1, ((0 * 3 + 2) * 4 + 3) * 5 + 3]  # [56, 58]


def reference_slice(x, begin, end, step, bm, em, sm):
    """numpy basic indexing built from op_stridedslice.c's rules (mask bits 0..3 = b,h,w,d; shrink keeps
    index ``begin``; an end of -n-1, clamped by HANDLE_NEGATIVE_INDEX to -1, means "through index 0")."""
    index = []
    for axis in range(4):
        bit = 1 << axis
        if sm & bit:
            index.append(begin[axis])
            continue
        b = None if bm & bit else begin[axis]
        e = None if (em & bit or end[axis] == -x.shape[axis] - 1) else end[axis]
        index.append(slice(b, e, step[axis]))
    out = x[tuple(index)]
    return out.reshape((1,) * (4 - out.ndim) + out.shape)


@pytest.mark.parametrize("seed", range(12))
def test_strided_slice_is_numpy_indexing(seed):
    rng, shape, x, k = random_input(seed, 7)
    begin, end, step = [], [], []
    for axis, n in enumerate(shape):
        if axis < 4 - k:
            b, e, s = 0, n, 1
        elif rng.random() < 0.5:  # forward: 0 <= begin < end <= n
            s = int(rng.integers(1, 4))
            b = int(rng.integers(0, n))
            e = int(rng.integers(b + 1, n + 1))
        else:  # reverse: -1 <= end < begin <= n-1, end -1 given as -n-1 (the C reads -1 as n-1)
            s = -int(rng.integers(1, 4))
            b = int(rng.integers(0, n))
            e = int(rng.integers(-1, b))
            e = -n - 1 if e == -1 else e
        begin.append(b)
        end.append(e)
        step.append(s)
    bm, em, sm = (int(v) for v in rng.integers(0, 16, size=3))
    q, _, _ = sslice(x, begin[4 - k:], end[4 - k:], step[4 - k:], bm, em, sm)
    assert np.array_equal(q, reference_slice(x, begin, end, step, bm, em, sm))


def test_errors():
    # each case is an error in nnlib's C too (op_slice.c slice_prepare / op_stridedslice.c strided_slice_impl;
    # checked through the harness rows "move QuantizedSlice_8" / "move QuantizedStridedSlice_8")
    x = u4(np.arange(10))
    assert_op_error("QuantizedSlice_8", [x, i4([8]), i4([3]), -1.0, 1.0], "in d too small", "size 3 from start 8")
    assert_op_error("QuantizedSlice_8", [x, i4([10]), i4([-1]), -1.0, 1.0], "bad d_size 0", "start 10")
    assert_op_error("QuantizedSlice_8", [x, i4([2]), i4([0]), -1.0, 1.0], "bad d_size 0")
    assert_op_error("QuantizedSlice_8", [x, i4([0, 2]), i4([-1]), -1.0, 1.0], "bad size/shape spec")
    assert_op_error("QuantizedSlice_8", [x, i4([0] * 5), i4([-1] * 5), -1.0, 1.0], "bad size/shape spec")
    op = "QuantizedStridedSlice_8"
    base = [np.int32(0)] * 3 + [-1.0, 1.0]
    assert_op_error(op, [x, i4([1]), i4([5]), i4([0]), *base], "invalid d_step 0")
    assert_op_error(op, [x, i4([5]), i4([5]), i4([1]), *base], "no output")
    assert_op_error(op, [x, i4([2]), i4([5]), i4([-1]), *base], "no output")
    assert_op_error(op, [x, i4([7]), i4([-1]), i4([-3]), *base], "no output")  # end -1 is 9
    assert_op_error(op, [x, i4([0]), i4([11]), i4([1]), *base], "indices beyond input range")
    assert_op_error(op, [x, i4([12]), i4([0]), i4([1]), np.int32(0), np.int32(0), np.int32(8), -1.0, 1.0],
                    "indices beyond input range")  # shrink at an index beyond the axis
    # fewer end values than begin's depth: the C reads past the end tensor; the engine refuses
    assert_op_error(op, [x, i4([0, 1]), i4([4]), i4([1, 1]), *base], "end has 1 values")
    assert_op_error(op, [x, i4([0]), i4([4]), i4([1]), np.int32(0), np.int32(0), np.int32(8), -1.0],
                    "got 8 inputs")


def test_what_the_c_accepts():
    """Cases the op texts made errors and nnlib's C runs (values from the C through the harness)."""
    x = u4(np.arange(10))
    # QuantizedSlice_8: the range is copied unchecked (op_slice.c tensor_copy)
    q, mn, mx = run_op("QuantizedSlice_8", [x, i4([0]), i4([-1]), 1.0, 2.0])
    assert q.ravel().tolist() == list(range(10)) and (mn.item(), mx.item()) == (1.0, 2.0)
    op = "QuantizedStridedSlice_8"
    base = [np.int32(0)] * 3 + [-1.0, 1.0]
    # negative begin/end count from the end: -3 -> 7, -1 -> 9
    assert run_op(op, [x, i4([-3]), i4([-1]), i4([1]), *base])[0].ravel().tolist() == [7, 8]
    # mask bits past 3 are ignored: begin_mask 16 does nothing
    assert run_op(op, [x, i4([0]), i4([4]), i4([1]), np.int32(16), *base[1:]])[0].ravel().tolist() == [0, 1, 2, 3]
    # order = begin's depth: end/step values past it are ignored ...
    assert run_op(op, [x, i4([0]), i4([4, 5]), i4([1]), *base])[0].ravel().tolist() == [0, 1, 2, 3]
    y = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    q, _, _ = run_op(op, [y, i4([1]), i4([2, 3, 4]), i4([1, 1, 1]), *base])
    assert q.shape == (1, 2, 3, 1) and q.ravel().tolist() == [1, 5, 9, 13, 17, 21]
    # ... a begin shaped [1,1,2,1] has depth 1: only its element 0 counts
    q, _, _ = run_op(op, [y, np.array([1, 1], np.int32).reshape(1, 1, 2, 1), i4([3]), i4([1, 1]), *base])
    assert q.ravel().tolist() == [1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22]
    # ... and 5 values are read at elements 1..4 (order-4 .. order-1)
    q, _, _ = run_op(op, [y, i4([9, 0, 1, 1, 1]), i4([9, 1, 2, 3, 4]), i4([9, 1, 1, 1, 1]), *base])
    assert q.ravel().tolist() == [17, 18, 19, 21, 22, 23]
