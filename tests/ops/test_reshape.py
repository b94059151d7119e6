"""QuantizedReshape and QuantizedFlatten (op texts; SEMANTICS.md §6: data moves, range passes through)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error


def shp(*dims: int) -> np.ndarray:
    return np.array(dims, np.int32)



def test_reshape_by_hand():
    # 24 codes 0..23 in [1,2,3,4]; target [-1, 6] -> left-padded [1, 1, -1, 6];
    # -1 = 24 / (1*1*6) = 4 -> [1,1,4,6]; row-major order kept, so out[0,0,r,c] = 6r + c
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    q, mn, mx = run_op("QuantizedReshape", [x, shp(-1, 6), -1.0, 0.9921875])
    assert q.dtype == np.uint8 and q.shape == (1, 1, 4, 6)
    assert q[0, 0, 1, 0] == 6 and q[0, 0, 3, 5] == 23 and q[0, 0, 2, 1] == 13
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)
    # qint32 data keeps its dtype; target of 4 values used as is
    x32 = np.array([-5, 7, 2 ** 31 - 1, -2 ** 31], np.int32).reshape(1, 1, 1, 4)
    q, _, _ = run_op("QuantizedReshape", [x32, shp(2, 1, 2, 1), -8.0, 8.0])
    assert q.dtype == np.int32 and q.shape == (2, 1, 2, 1)
    assert q.ravel().tolist() == [-5, 7, 2 ** 31 - 1, -2 ** 31]


@pytest.mark.parametrize("target", [(2, 3, 4), (-1,), (6, -1), (1, 2, -1, 3), (4, 1, 6, 1)])
def test_reshape_equals_numpy(target):
    x = np.random.default_rng(6).integers(0, 256, size=(2, 3, 2, 2)).astype(np.uint8)
    q, _, _ = run_op("QuantizedReshape", [x, shp(*target), -1.0, 1.0])
    full = (1,) * (4 - len(target)) + target
    assert np.array_equal(q, np.reshape(x, full))
    assert q.ndim == 4
    q[...] = 0  # the output is a copy, never a view of the input
    assert x.any()


def test_flatten():
    # [1,2,2,3] -> [1,1,1,12] in row-major order; range passes through
    x = np.arange(12, dtype=np.uint8).reshape(1, 2, 2, 3)
    q, mn, mx = run_op("QuantizedFlatten", [x, 0.0, 6.0])
    assert q.shape == (1, 1, 1, 12)
    assert q.ravel().tolist() == list(range(12))
    assert (mn.item(), mx.item()) == (0.0, 6.0)


def test_ranges_are_copied():
    # op_reshape.c / op_flatten.c tensor_copy min/max unchecked (nnlib's C gives the same)
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    q, mn, mx = run_op("QuantizedReshape", [x, shp(24), 0.5, 1.0])
    assert q.shape == (1, 1, 1, 24) and (mn.item(), mx.item()) == (0.5, 1.0)
    q, mn, mx = run_op("QuantizedFlatten", [x, 1.0, -1.0])
    assert q.ravel().tolist() == list(range(24)) and (mn.item(), mx.item()) == (1.0, -1.0)


def test_errors():
    x = np.zeros((1, 2, 3, 4), np.uint8)
    assert_op_error("QuantizedReshape", [x, shp(5, 5), -1.0, 1.0], "holds 25 elements", "24")
    # op_reshape.c reshape_execute: each of these is an error in nnlib's C too
    assert_op_error("QuantizedReshape", [x, shp(-1, -1), -1.0, 1.0], "too many unknown dimensions")
    assert_op_error("QuantizedReshape", [x, shp(-2, -1), -1.0, 1.0], "too many unknown dimensions")
    assert_op_error("QuantizedReshape", [x, shp(5, -1), -1.0, 1.0], "holds 20 elements", "24")
    assert_op_error("QuantizedReshape", [x, shp(0, -1), -1.0, 1.0], "bad shape input for reshape")
    assert_op_error("QuantizedReshape", [x, shp(1, 1, 1, 2, 12), -1.0, 1.0], "bad shape input", "depth must be 1..4")
    assert_op_error("QuantizedReshape", [x.astype(np.float32), shp(24), -1.0, 1.0], "dtype float32")
