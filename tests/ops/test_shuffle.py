"""AxisShuffle_8 and QuantizedChannelShuffle_8 (op texts; SEMANTICS.md §6: data moves, range passes through)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error


def ints(*vals: int) -> np.ndarray:
    return np.array(vals, np.int32).reshape(1, 1, 1, -1)


def shuffle_perm(n: int, groups: int) -> list[int]:
    """Independent form: output j = (group j % g, member j // g) = input (j % g) * (n/g) + j // g."""
    k = n // groups
    return [(j % groups) * k + j // groups for j in range(n)]


def test_channel_shuffle_by_hand():
    # depth 6 in 2 groups {0,1,2}, {3,4,5}: same-index channels together -> 0,3,1,4,2,5
    x = np.arange(6, dtype=np.uint8).reshape(1, 1, 1, 6)
    q, mn, mx = run_op("QuantizedChannelShuffle_8", [ints(2), x, -1.0, 2.0])
    assert q.ravel().tolist() == [0, 3, 1, 4, 2, 5]
    assert (mn.item(), mx.item()) == (-1.0, 2.0)
    # 3 groups {0,1}, {2,3}, {4,5} -> 0,2,4,1,3,5
    q, _, _ = run_op("QuantizedChannelShuffle_8", [ints(3), x, -1.0, 2.0])
    assert q.ravel().tolist() == [0, 2, 4, 1, 3, 5]
    # 1 group and depth-many groups leave the order unchanged
    for g in (1, 6):
        q, _, _ = run_op("QuantizedChannelShuffle_8", [ints(g), x, -1.0, 2.0])
        assert q.ravel().tolist() == list(range(6))


def test_axis_shuffle_by_hand():
    # axis w (2, or -2), width 4 = wa*wb with wa = 2 groups, wb = 2:
    # [b,h,2,2,d] -> transpose -> columns 0,2,1,3
    x = np.array([10, 11, 12, 13], np.uint8).reshape(1, 1, 4, 1)
    for axis in (2, -2):
        q, mn, mx = run_op("AxisShuffle_8", [x, ints(axis), ints(2), -3.0, 3.0])
        assert q.shape == (1, 1, 4, 1) and q.ravel().tolist() == [10, 12, 11, 13]
        assert (mn.item(), mx.item()) == (-3.0, 3.0)
    # axis h, height 6 in 3 groups of 2 -> rows 0,2,4,1,3,5
    x = np.arange(6, dtype=np.uint8).reshape(1, 6, 1, 1)
    q, _, _ = run_op("AxisShuffle_8", [x, ints(1), ints(3), -3.0, 3.0])
    assert q.ravel().tolist() == [0, 2, 4, 1, 3, 5]


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -4])
@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_axis_shuffle_equals_take(axis, groups):
    x = np.random.default_rng(7).integers(0, 256, size=(6, 6, 12, 6)).astype(np.uint8)
    q, _, _ = run_op("AxisShuffle_8", [x, ints(axis), ints(groups), -1.0, 1.0])
    n = x.shape[axis]
    assert np.array_equal(q, np.take(x, shuffle_perm(n, groups), axis=axis))
    if axis in (3, -1):
        c, _, _ = run_op("QuantizedChannelShuffle_8", [ints(groups), x, -1.0, 1.0])
        assert np.array_equal(c, q)


def test_shuffle_errors():
    x = np.zeros((1, 2, 3, 4), np.uint8)
    assert_op_error("AxisShuffle_8", [x, ints(4), ints(2), -1.0, 1.0], "axis 4 is out of range")
    assert_op_error("AxisShuffle_8", [x, ints(-5), ints(2), -1.0, 1.0], "axis -5 is out of range")
    assert_op_error("AxisShuffle_8", [x, ints(2), ints(2), -1.0, 1.0], "divide the size 3 of axis 2")
    assert_op_error("AxisShuffle_8", [x, ints(3), ints(0), -1.0, 1.0], "must be >= 1")
    assert_op_error("QuantizedChannelShuffle_8", [ints(3), x, -1.0, 1.0], "divide the size 4 of axis 3")
    assert_op_error("QuantizedChannelShuffle_8", [ints(2), x.astype(np.float32) + 0.5, -1.0, 1.0],
                    "non-integer")


def test_axis_shuffle_reads_axis_element_0_and_copies_the_range():
    # op_axisshuffle.c axishuffle_check_strategy reads tensor_get_int32(axis, 0) only, and
    # axisshuffle_execute tensor_copy's min/max unchecked: axis [3, 2] is axis 3, a range excluding 0
    # passes through. Values from nnlib's C (harness row "move AxisShuffle_8").
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    q, mn, mx = run_op("AxisShuffle_8", [x, ints(3, 2), ints(2), 0.25, 1.0])
    assert q.ravel().tolist() == [0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15,
                                  16, 18, 17, 19, 20, 22, 21, 23]
    assert (mn.item(), mx.item()) == (0.25, 1.0)
    # op_chanshuffle.c: the one input's range merged with 0 -> [fminf(0, 0.25), 1] = [0, 1], codes unchanged
    q, mn, mx = run_op("QuantizedChannelShuffle_8", [ints(2), x, 0.25, 1.0])
    assert q.ravel().tolist()[:8] == [0, 2, 1, 3, 4, 6, 5, 7]
    assert (mn.item(), mx.item()) == (0.0, 1.0)
