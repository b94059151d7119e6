"""Transpose_f/_int32, AxisShuffle_f/_int32, Reshape, Flatten, ExpandDims_f/_int32, Shape_int32, Rank_int32."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.ops.registry import KernelContext, get_kernel
from hexnn_import.testing.opcheck import assert_op_error, f4, i4, u4


def test_transpose_by_hand():
    # [1,1,2,3] {{1,2,3},{4,5,6}}, control [1,0] (the last two axes swapped): [1,1,3,2] {{1,4},{2,5},{3,6}}
    x = f4([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (1, 1, 2, 3))
    (y,) = run_op("Transpose_f", [x, i4([1, 0])])
    assert y.shape == (1, 1, 3, 2) and y.tolist() == [[[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]]]
    # the text: [1,0,2] and [0,2,1,3] both swap h and w; [0,1,2] changes nothing
    xi = i4(np.arange(24), (1, 2, 3, 4))
    a = run_op("Transpose_int32", [xi, i4([1, 0, 2])])[0]
    assert a.dtype == np.int32 and a.shape == (1, 3, 2, 4)
    assert np.array_equal(a, run_op("Transpose_int32", [xi, i4([0, 2, 1, 3])])[0])
    assert np.array_equal(run_op("Transpose_int32", [xi, i4([0, 1, 2])])[0], xi)
    # gentranspose.c nn_transpose_check takes 0..4 values: a control of 0 or 1 values leaves the input as it is
    assert np.array_equal(run_op("Transpose_int32", [xi, i4([0])])[0], xi)
    assert np.array_equal(run_op("Transpose_f", [x, i4([])])[0], x)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(4)))[::5])
def test_transpose_is_numpy_transpose(perm):
    x = np.random.default_rng(sum(perm)).standard_normal((2, 3, 4, 5)).astype(np.float32)
    assert np.array_equal(run_op("Transpose_f", [x, i4(perm)])[0], np.transpose(x, perm))


def test_axis_shuffle_by_hand():
    # depth {0..5} in 2 groups: [2,3] -> [3,2]: {0,3,1,4,2,5}; in 3 groups: [3,2] -> [2,3]: {0,2,4,1,3,5}
    x = f4(np.arange(6.0))
    assert run_op("AxisShuffle_f", [x, 3, 2])[0].ravel().tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert run_op("AxisShuffle_f", [x, -1, 3])[0].ravel().tolist() == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    (q,) = run_op("AxisShuffle_int32", [i4(np.arange(4), (1, 4, 1, 1)), 1, 2])  # h {0,1,2,3}: {0,2,1,3}
    assert q.dtype == np.int32 and q.ravel().tolist() == [0, 2, 1, 3]


@pytest.mark.parametrize("axis, groups", [(0, 2), (1, 3), (2, 1), (3, 4), (-3, 6)])
def test_axis_shuffle_reference(axis, groups):
    # out[p] = in[(p % g)*k + p // g] along the axis (n = g*k)
    shape = [2, 6, 3, 8]
    x = np.random.default_rng(groups).standard_normal(shape).astype(np.float32)
    n = shape[axis]
    k = n // groups
    idx = [(p % groups) * k + p // groups for p in range(n)]
    assert np.array_equal(run_op("AxisShuffle_f", [x, axis, groups])[0], np.take(x, idx, axis=axis))


def test_reshape_and_flatten():
    # [1,1,2,3] {0..5} -> [6] = [1,1,1,6]; -> [3,-1] = [1,1,3,2] (the -1 is 6/3 = 2); data order unchanged
    x = u4(np.arange(6), (1, 1, 2, 3))
    (a,) = run_op("Reshape", [x, i4([6])])
    assert a.dtype == np.uint8 and a.shape == (1, 1, 1, 6) and a.ravel().tolist() == list(range(6))
    assert run_op("Reshape", [x, i4([3, -1])])[0].shape == (1, 1, 3, 2)
    # op_reshape.c takes any negative value as the unknown dimension (the op text says -1)
    assert run_op("Reshape", [x, i4([-2, 3])])[0].shape == (1, 1, 2, 3)
    xf = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    assert np.array_equal(run_op("Reshape", [xf, i4([4, -1, 2, 5])])[0], xf.reshape(4, 3, 2, 5))
    # Flatten: [2,1,2,1] {1,2,3,4} -> [1,1,1,4] in row-major order
    (f,) = run_op("Flatten", [f4([1.0, 2.0, 3.0, 4.0], (2, 1, 2, 1))])
    assert f.shape == (1, 1, 1, 4) and f.ravel().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert np.array_equal(run_op("Flatten", [xf])[0], xf.reshape(1, 1, 1, -1))


def expand(op, x, out_shape):
    ctx = KernelContext(node="n7", op=op)
    ctx.out_shapes = [out_shape]  # type: ignore[attr-defined]
    return get_kernel(op)(ctx, [x])[0]


def test_expand_dims():
    # [1,1,2,3] -> the node's output shape [1,2,1,3]: same data {0..5}
    x = f4(np.arange(6.0), (1, 1, 2, 3))
    y = expand("ExpandDims_f", x, (1, 2, 1, 3))
    assert y.shape == (1, 2, 1, 3) and y.ravel().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    q = expand("ExpandDims_int32", i4([7, 8]), (2, 1))  # left-padded to [1,1,2,1]
    assert q.dtype == np.int32 and q.shape == (1, 1, 2, 1)
    with pytest.raises(OpError, match="does not hold the input's 6 elements"):
        expand("ExpandDims_f", x, (1, 1, 1, 5))
    assert_op_error("ExpandDims_f", [x], "output shape is unknown")


def test_shape_and_rank():
    # Shape_int32 of [2,3,4,5] is {2,3,4,5}; a 2-D (3,4) array is left-padded: {1,1,3,4}
    (s,) = run_op("Shape_int32", [np.zeros((2, 3, 4, 5), np.float32)])
    assert s.dtype == np.int32 and s.shape == (1, 1, 1, 4) and s.ravel().tolist() == [2, 3, 4, 5]
    assert run_op("Shape_int32", [np.zeros((3, 4), np.uint8)])[0].ravel().tolist() == [1, 1, 3, 4]
    # Rank_int32 copies input 1 (3) whatever input 0 is
    (r,) = run_op("Rank_int32", [np.zeros((1, 1, 4, 5), np.float32), 3])
    assert r.dtype == np.int32 and r.shape == (1, 1, 1, 1) and r.item() == 3


def test_shape_op_errors():
    x = f4(np.arange(6.0), (1, 1, 2, 3))
    assert_op_error("Transpose_f", [x, i4([0, 0])], "no repeats")
    assert_op_error("Transpose_f", [x, i4([1])], "bad transpose control")
    assert_op_error("Transpose_f", [x, i4([0, 1, 2, 3, 4])], "bad transpose control")
    assert_op_error("Transpose_f", [x, i4([1, 0], (1, 1, 2, 1))], "must be [1,1,1,n]")
    assert_op_error("AxisShuffle_f", [x, 4, 1], "names no dimension")
    assert_op_error("AxisShuffle_int32", [i4([1, 2, 3]), 3, 2], "divide the size 3")
    assert_op_error("Reshape", [x, i4([-1, -1])], "too many unknown dimensions")
    assert_op_error("Reshape", [x, i4([4])], "holds 4 elements, the input has 6")
    assert_op_error("Shape_int32", [np.zeros((1, 1, 1, 1, 2), np.float32)], "more than 4 dimensions")
    assert_op_error("Rank_int32", [x, i4([1, 2])], "expected 1")
