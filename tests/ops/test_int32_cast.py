"""The six Cast* ops and Convert_int32_f (hexagon_nn_ops.txt; truncation and saturation as documented)."""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

IMIN, IMAX = -2 ** 31, 2 ** 31 - 1


def cast(op: str, values, dtype) -> np.ndarray:
    x = np.asarray(values, dtype=dtype).reshape(1, 1, 1, -1)
    (y,) = run_op(op, [x])
    assert y.shape == x.shape
    return y


def test_float_to_integer_by_hand():
    # Truncation toward zero: -2.7 -> -2, 2.7 -> 2, -0.0 -> 0;
    # saturation: 3e9 -> 2**31 - 1, -3e9 and -Inf -> -2**31, +Inf -> 2**31 - 1
    y = cast("CastFloat32ToInt32", [-2.7, 2.7, -0.0, 3e9, -3e9, -math.inf, math.inf], np.float32)
    assert y.dtype == np.int32 and y.ravel().tolist() == [-2, 2, 0, IMAX, IMIN, IMIN, IMAX]
    # To uint8: -3.5 -> 0 (saturated), 2.9 -> 2, 255.9 -> 255, 300 -> 255, Inf -> 255, -0.5 -> 0
    y = cast("CastFloat32ToUInt8", [-3.5, 2.9, 255.9, 300, math.inf, -0.5], np.float32)
    assert y.dtype == np.uint8 and y.ravel().tolist() == [0, 2, 255, 255, 255, 0]


def test_int32_casts_by_hand():
    # int32 -> uint8 saturates: -5 -> 0, 0, 255, 256 -> 255, 2**31 - 1 -> 255
    y = cast("CastInt32ToUInt8", [-5, 0, 255, 256, IMAX], np.int32)
    assert y.dtype == np.uint8 and y.ravel().tolist() == [0, 0, 255, 255, 255]
    # int32 -> float32, round to nearest, ties to even. Spacing between 2**24 and 2**25 is 2:
    #   2**24 + 1 lies half way between 2**24 (mantissa even) and 2**24 + 2 (odd) -> 2**24;
    #   2**24 + 3 lies half way between 2**24 + 2 (odd) and 2**24 + 4 (even) -> 2**24 + 4;
    #   -7 -> -7.0 exactly; 2**31 - 1 -> 2**31.
    for op in ("CastInt32ToFloat32", "Convert_int32_f"):
        y = cast(op, [2 ** 24 + 1, 2 ** 24 + 3, -7, IMAX], np.int32)
        assert y.dtype == np.float32
        assert y.ravel().tolist() == [2 ** 24, 2 ** 24 + 4, -7, 2 ** 31]


def test_uint8_casts_by_hand():
    # Exact: 0, 1, 128, 255
    y = cast("CastUInt8ToFloat32", [0, 1, 128, 255], np.uint8)
    assert y.dtype == np.float32 and y.ravel().tolist() == [0, 1, 128, 255]
    y = cast("CastUInt8ToInt32", [0, 1, 128, 255], np.uint8)
    assert y.dtype == np.int32 and y.ravel().tolist() == [0, 1, 128, 255]


def test_match_reference():
    rng = np.random.default_rng(16)
    f = (rng.standard_normal(200) * 1e3).astype(np.float32)
    f[:3] = [1e10, -1e10, 0.999]
    y = cast("CastFloat32ToInt32", f, np.float32).ravel().tolist()
    assert y == [max(IMIN, min(IMAX, math.trunc(float(v)))) for v in f]
    y = cast("CastFloat32ToUInt8", f, np.float32).ravel().tolist()
    assert y == [max(0, min(255, math.trunc(float(v)))) for v in f]
    i = rng.integers(IMIN, IMAX, 200, endpoint=True).astype(np.int32)
    assert cast("CastInt32ToUInt8", i, np.int32).ravel().tolist() == [max(0, min(255, int(v))) for v in i]
    # float(int) in Python rounds to nearest double; a double of an int32 is exact, and float32() then
    # rounds once more to nearest-even: together the correctly rounded int32 -> float32 conversion.
    want = [float(np.float32(float(int(v)))) for v in i]
    assert cast("CastInt32ToFloat32", i, np.int32).ravel().tolist() == want


def test_errors():
    nan = np.array([1.0, math.nan], np.float32).reshape(1, 1, 1, 2)
    assert_op_error("CastFloat32ToInt32", [nan], "contains NaN")
    assert_op_error("CastFloat32ToUInt8", [nan], "contains NaN")
    assert_op_error("CastUInt8ToInt32", [np.array([256])], "outside the code range [0, 255]")
    assert_op_error("CastInt32ToFloat32", [np.array([2 ** 31])], "outside the code range")
    assert_op_error("Convert_int32_f", [np.array(["x"])], "expected int32 codes")
    assert_op_error("CastUInt8ToFloat32", [np.array([0.5])], "non-integer values")
