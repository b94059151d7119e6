"""int32 elementwise ops (wrapping modulo 2**32) and Range_int32 (hexagon_nn_ops.txt)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

IMIN, IMAX = -2 ** 31, 2 ** 31 - 1


def i32(values, shape=None) -> np.ndarray:
    a = np.asarray(values, dtype=np.int32)
    return a.reshape(shape if shape is not None else (1, 1, 1, -1))


def out(op: str, *inputs) -> list[int]:
    (y,) = run_op(op, list(inputs))
    assert y.dtype == np.int32
    return y.ravel().tolist()


def test_arith_by_hand():
    # No overflow: 7 + -3 = 4, 7 - -3 = 10, 7 * -3 = -21
    assert out("Add_int32", i32([7]), i32([-3])) == [4]
    assert out("Sub_int32", i32([7]), i32([-3])) == [10]
    assert out("Mul_int32", i32([7]), i32([-3])) == [-21]
    # Wraparound modulo 2**32: (2**31 - 1) + 1 = -2**31;  -2**31 - 1 = 2**31 - 1
    assert out("Add_int32", i32([IMAX]), i32([1])) == [IMIN]
    assert out("Sub_int32", i32([IMIN]), i32([1])) == [IMAX]
    # 65536 * 65536 = 2**32 -> 0;  46341**2 = 2147488281 -> 2147488281 - 2**32 = -2147479015
    assert out("Mul_int32", i32([65536, 46341]), i32([65536, 46341])) == [0, -2147479015]
    # -(-2**31) and |-2**31| wrap to -2**31; the others are plain
    # op_neg.c runs HVX saturating word ops (vsub_sat(0, x), vabs_sat): -IMIN and |IMIN| are IMAX
    assert out("Neg_int32", i32([IMIN, 5, -6, 0])) == [IMAX, -5, 6, 0]
    assert out("Abs_int32", i32([IMIN, 5, -6, 0])) == [IMAX, 5, 6, 0]


def test_broadcast_by_hand():
    # [1,1,2,1] + [1,1,1,3] -> [1,1,2,3]: [[10+1, 10+2, 10+3], [20+1, 20+2, 20+3]]
    (y,) = run_op("Add_int32", [i32([10, 20], (1, 1, 2, 1)), i32([1, 2, 3], (1, 1, 1, 3))])
    assert y.shape == (1, 1, 2, 3) and y.ravel().tolist() == [11, 12, 13, 21, 22, 23]


def test_bitwise_by_hand():
    # 12 = 0b1100, 10 = 0b1010: & 0b1000 = 8, | 0b1110 = 14, ^ 0b0110 = 6
    assert out("BitwiseAnd_int32", i32([12]), i32([10])) == [8]
    assert out("BitwiseOr_int32", i32([12]), i32([10])) == [14]
    assert out("BitwiseXor_int32", i32([12]), i32([10])) == [6]
    # Two's complement: -1 & 0x0F0F = 0x0F0F = 3855; IMIN | 1 = -2147483647; ~0 = -1, ~5 = -6, ~IMIN = IMAX
    assert out("BitwiseAnd_int32", i32([-1]), i32([0x0F0F])) == [3855]
    assert out("BitwiseOr_int32", i32([IMIN]), i32([1])) == [-2147483647]
    assert out("BitwiseNot_int32", i32([0, 5, IMIN])) == [-1, -6, IMAX]


def wrap(v: int) -> int:
    """Python integer reduced modulo 2**32 into the int32 range (two's complement)."""
    v &= 0xFFFFFFFF
    return v - 2 ** 32 if v >= 2 ** 31 else v


@pytest.mark.parametrize("op, fn", [("Add_int32", lambda a, b: a + b), ("Sub_int32", lambda a, b: a - b),
                                    ("Mul_int32", lambda a, b: a * b), ("BitwiseAnd_int32", lambda a, b: a & b),
                                    ("BitwiseOr_int32", lambda a, b: a | b),
                                    ("BitwiseXor_int32", lambda a, b: a ^ b)])
def test_binary_match_python_integers(op, fn):
    rng = np.random.default_rng(14)
    a = rng.integers(IMIN, IMAX, (2, 3, 1, 4), endpoint=True).astype(np.int32)
    b = rng.integers(IMIN, IMAX, (1, 3, 5, 1), endpoint=True).astype(np.int32)
    (y,) = run_op(op, [a, b])
    ab, bb = np.broadcast_arrays(a, b)
    want = [wrap(fn(int(p), int(q))) for p, q in zip(ab.ravel(), bb.ravel())]
    assert y.shape == (2, 3, 5, 4) and y.ravel().tolist() == want


def test_unary_match_python_integers():
    rng = np.random.default_rng(15)
    x = rng.integers(IMIN, IMAX, (2, 3, 4, 5), endpoint=True).astype(np.int32)
    x.flat[0] = IMIN
    vals = [int(v) for v in x.ravel()]
    sat = lambda v: min(IMAX, max(IMIN, v))  # noqa: E731
    assert out("Neg_int32", x) == [sat(-v) for v in vals]
    assert out("Abs_int32", x) == [sat(abs(v)) for v in vals]
    assert out("BitwiseNot_int32", x) == [wrap(~v) for v in vals]


def test_range_by_hand():
    # for (i = 0; i < 5; i += 2): 0, 2, 4
    (y,) = run_op("Range_int32", [0, 5, 2])
    assert y.dtype == np.int32 and y.shape == (1, 1, 1, 3) and y.ravel().tolist() == [0, 2, 4]
    # limit < start: condition i > limit: 5, 3, 1
    assert out("Range_int32", 5, 0, -2) == [5, 3, 1]
    # op_range.c range_execute: start == limit gives one element (start)
    assert out("Range_int32", 3, 3, 1) == [3]
    # a delta pointing away from the limit (or 0) is replaced by 1 / -1
    assert out("Range_int32", 0, 5, 0) == [0, 1, 2, 3, 4]
    assert out("Range_int32", 0, 3, -1) == [0, 1, 2]
    assert out("Range_int32", 5, 2, 1) == [5, 4, 3]
    # limit - start is taken modulo 2**32 (unsigned): IMIN+1 .. IMAX step 2**30 -> 4 values
    assert out("Range_int32", IMIN + 1, IMAX, 2 ** 30) == [IMIN + 1 + k * 2 ** 30 for k in range(4)]
    # Near the int32 ends the values never overflow: IMAX - 2 .. IMAX step 1 -> IMAX-2, IMAX-1
    assert out("Range_int32", IMAX - 2, IMAX, 1) == [IMAX - 2, IMAX - 1]


def test_range_matches_python_range():
    for start, limit, delta in [(-7, 20, 3), (20, -7, -3), (0, 1, 5), (-1, -10, -4), (4, 100, 1)]:
        assert out("Range_int32", start, limit, delta) == list(range(start, limit, delta))


def test_errors():
    assert_op_error("Add_int32", [i32([1, 2]), i32([1, 2, 3])], "do not broadcast")
    assert_op_error("Mul_int32", [np.array([2 ** 40]), i32([1])], "outside the code range")
    assert_op_error("Neg_int32", [np.array([1.5])], "non-integer values")
    assert_op_error("Range_int32", [0, i32([5, 6]), 1], "limit has 2 values")
