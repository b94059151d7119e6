"""Transpose_8 and QuantizedTile_8 (op texts; SEMANTICS.md §6: data moves, range passes through)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, i4, u4


def test_transpose_by_hand():
    # x[0,i,j,0] = 3i + j, shape [1,2,3,1]
    x = np.arange(6, dtype=np.uint8).reshape(1, 2, 3, 1)
    # op text: [1,0,2] (last 3 dims h,w,d) transposes h and w; so does [0,2,1,3]
    for control in ([1, 0, 2], [0, 2, 1, 3]):
        q, mn, mx = run_op("Transpose_8", [x, i4(control), -1.0, 3.0])
        assert q.shape == (1, 3, 2, 1)
        assert q[0, :, :, 0].tolist() == [[0, 3], [1, 4], [2, 5]]
        assert (mn.item(), mx.item()) == (-1.0, 3.0)
    # [0,1,2] has no effect
    q, _, _ = run_op("Transpose_8", [x, i4([0, 1, 2]), -1.0, 3.0])
    assert np.array_equal(q, x)
    # k = 2, [1,0]: swaps w and d -> [1,2,1,3] with q[0,i,0,j] = 3i + j
    q, _, _ = run_op("Transpose_8", [x, i4([1, 0]), -1.0, 3.0])
    assert q.shape == (1, 2, 1, 3) and q[0, 1, 0].tolist() == [3, 4, 5]


@pytest.mark.parametrize("seed", range(8))
def test_transpose_is_np_transpose(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=rng.integers(1, 5, size=4)).astype(np.uint8)
    k = int(rng.integers(2, 5))
    control = [int(v) for v in rng.permutation(k)]
    full = list(range(4 - k)) + [4 - k + c for c in control]
    q, _, _ = run_op("Transpose_8", [x, i4(control), 0.0, 1.0])
    assert np.array_equal(q, np.transpose(x, full))
    assert q.flags["C_CONTIGUOUS"]


def test_tile_by_hand():
    # [1,1,1,2] codes [5, 9]; multiples [2,3] left-filled to [1,1,2,3]: width x2, depth x3
    q, mn, mx = run_op("QuantizedTile_8", [u4([5, 9]), i4([2, 3]), -2.0, 2.0])
    assert q.shape == (1, 1, 2, 6)
    assert q[0, 0].tolist() == [[5, 9, 5, 9, 5, 9], [5, 9, 5, 9, 5, 9]]
    assert (mn.item(), mx.item()) == (-2.0, 2.0)
    # batches x2 of [[1],[2]] in h: [1,2,1,1] -> [2,2,1,1]
    q, _, _ = run_op("QuantizedTile_8", [u4([1, 2], (1, 2, 1, 1)), i4([2, 1, 1, 1]), -2.0, 2.0])
    assert q.ravel().tolist() == [1, 2, 1, 2]


@pytest.mark.parametrize("seed", range(8))
def test_tile_is_np_tile(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=rng.integers(1, 4, size=4)).astype(np.uint8)
    k = int(rng.integers(1, 5))
    mult = [int(v) for v in rng.integers(1, 4, size=k)]
    q, _, _ = run_op("QuantizedTile_8", [x, i4(mult), 0.0, 1.0])
    assert np.array_equal(q, np.tile(x, mult))


def test_transpose_what_the_c_accepts():
    # op_transpose.c: a one-value control [0] is the identity, and min/max are copied unchecked
    # (nnlib's C gives these values through the harness row "move Transpose_8")
    x = u4([1, 2, 3, 4], (1, 1, 2, 2))
    q, mn, mx = run_op("Transpose_8", [x, i4([0]), -1.0, 1.0])
    assert q.shape == (1, 1, 2, 2) and q.ravel().tolist() == [1, 2, 3, 4]
    q, mn, mx = run_op("Transpose_8", [x, i4([1, 0]), 1.0, 1.0])
    assert q.ravel().tolist() == [1, 3, 2, 4] and (mn.item(), mx.item()) == (1.0, 1.0)

    # op_tile.c reads more than 4 multiples as b = the first, h, w, d = the last three (values from the C)
    q, _, _ = run_op("QuantizedTile_8", [x, i4([1, 1, 1, 1, 2]), -1.0, 1.0])
    assert q.shape == (1, 1, 2, 4) and q.ravel().tolist() == [1, 2, 1, 2, 3, 4, 3, 4]
    q, _, _ = run_op("QuantizedTile_8", [x, i4([3, 1, 1, 2, 1]), -1.0, 1.0])
    assert q.shape == (3, 1, 4, 2) and q.ravel().tolist() == [1, 2, 3, 4] * 6


def test_errors():
    # the bad controls are "bad transpose control" in nnlib's C too
    x = u4([1, 2, 3, 4], (1, 1, 2, 2))
    assert_op_error("Transpose_8", [x, i4([0, 0, 1]), -1.0, 1.0], "no repeats")
    assert_op_error("Transpose_8", [x, i4([0, 1, 3]), -1.0, 1.0], "0..2")
    assert_op_error("Transpose_8", [x, i4([0, 1, 2, 3, 4]), -1.0, 1.0], "bad transpose control", "0..4")
    assert_op_error("Transpose_8", [x.reshape(2, 2), i4([1, 0]), -1.0, 1.0], "expected 4-D")
    assert_op_error("QuantizedTile_8", [x, i4([0, 1]), -1.0, 1.0], ">= 1")
    assert_op_error("QuantizedTile_8", [x, i4([2 ** 20, 2 ** 20]), -1.0, 1.0], "elements")
    assert_op_error("QuantizedTile_8", [x, np.array([1.5], np.float32), -1.0, 1.0], "must hold integers")
