"""Sum_f, Prod_f, Prod_int32, Min_f, Max_f: dims list, true rank, squeeze under NN_PAD_VALID (op texts)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error

X = np.array([[1, 2, 3], [4, 5, 6]], np.float32).reshape(1, 1, 2, 3)


def red(op: str, inputs: list, padding: int = PAD_NA) -> np.ndarray:
    (y,) = run_op(op, inputs, padding=padding)
    return y


def test_reductions_by_hand():
    # X = [[1,2,3],[4,5,6]] of shape [1,1,2,3].
    # True rank 2: dim 0 is W, dim 1 is D (axis 4 - 2 + k).
    # Sum over D (dims [1], rank 2): [1+2+3, 4+5+6] = [6, 15], kept as [1,1,2,1].
    y = red("Sum_f", [X, [1], 2])
    assert y.dtype == np.float32 and y.shape == (1, 1, 2, 1) and y.ravel().tolist() == [6, 15]
    # Same under NN_PAD_VALID: D squeezed away, the kept [1,1,2] moves to the end: [1,1,1,2].
    y = red("Sum_f", [X, [1], 2], PAD_VALID)
    assert y.shape == (1, 1, 1, 2) and y.ravel().tolist() == [6, 15]
    # Product over W (dims [0], rank 2): [1*4, 2*5, 3*6] = [4, 10, 18]
    assert red("Prod_f", [X, [0], 2]).ravel().tolist() == [4, 10, 18]
    # Rank 4, dims [2]: W as well.
    assert red("Prod_f", [X, [2]]).ravel().tolist() == [4, 10, 18]
    # No dims: the whole tensor to a scalar; a negative dim does the same.
    assert red("Min_f", [X]).shape == (1, 1, 1, 1) and red("Min_f", [X]).item() == 1
    y = red("Max_f", [X, [2, -1]], PAD_VALID)
    assert y.shape == (1, 1, 1, 1) and y.item() == 6
    # A dim listed twice counts once: Max over D = [3, 6]
    assert red("Max_f", [X, [3, 3]]).ravel().tolist() == [3, 6]


def test_text_squeeze_example():
    # The text's example: a [2,5,7,32] tensor reduced on H & W becomes [1,1,2,32] (VALID), else [2,1,1,32].
    x = np.ones((2, 5, 7, 32), np.float32)
    assert red("Sum_f", [x, [1, 2]], PAD_VALID).shape == (1, 1, 2, 32)
    assert red("Sum_f", [x, [1, 2]]).shape == (2, 1, 1, 32)
    assert red("Sum_f", [x, [1, 2]]).ravel()[0] == 35  # 5 * 7 ones


def test_float_details_by_hand():
    # Sum_f rounds once: [1, 2**-24, 2**-24] sums to 1 + 2**-23 exactly, a float32 number.
    e = 2.0 ** -24
    assert red("Sum_f", [np.array([1, e, e], np.float32).reshape(1, 1, 1, 3)]).item() == 1 + 2 * e
    # fminf / fmaxf from +-Inf: NaN is skipped; a slice of NaNs gives +Inf (Min) / -Inf (Max).
    x = np.array([[np.nan, 2], [np.nan, np.nan]], np.float32).reshape(1, 1, 2, 2)
    assert red("Min_f", [x, [3]]).ravel().tolist() == [2, math.inf]
    assert red("Max_f", [x, [3]]).ravel().tolist() == [2, -math.inf]


def test_prod_int32_by_hand():
    # 65536 * 65536 = 2**32 -> 0 modulo 2**32.
    # 46341 * 46341 = 2147488281 = 2**31 + 4633 -> 2147488281 - 2**32 = -2147479015.
    # -3 * 7 = -21 (no wrap).
    x = np.array([[65536, 65536], [46341, 46341], [-3, 7]], np.int32).reshape(1, 1, 3, 2)
    y = red("Prod_int32", [x, [3]])
    assert y.dtype == np.int32 and y.shape == (1, 1, 3, 1)
    assert y.ravel().tolist() == [0, -2147479015, -21]


def np_ref(op: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if op == "Prod_int32":
        out = np.ones([1 if i in axes else n for i, n in enumerate(x.shape)], dtype=object)
        for idx in np.ndindex(x.shape):
            key = tuple(0 if i in axes else v for i, v in enumerate(idx))
            out[key] = (out[key] * int(x[idx])) % 2 ** 32
        return np.vectorize(lambda v: v - 2 ** 32 if v >= 2 ** 31 else v)(out).astype(np.int32)
    fn = {"Sum_f": np.sum, "Prod_f": np.prod, "Min_f": np.min, "Max_f": np.max}[op]
    return fn(x.astype(np.float64), axis=axes, keepdims=True)


@pytest.mark.parametrize("op", ["Sum_f", "Prod_f", "Min_f", "Max_f", "Prod_int32"])
def test_matches_reference_for_every_dim_set(op):
    rng = np.random.default_rng(10)
    if op == "Prod_int32":
        x = rng.integers(-50000, 50000, (2, 3, 2, 3)).astype(np.int32)
    else:
        x = (rng.standard_normal((2, 3, 2, 3)) + 0.5).astype(np.float32)
    for rank in (1, 2, 3, 4):
        for n in range(1, rank + 1):
            for dims in itertools.combinations(range(rank), n):
                axes = tuple(4 - rank + d for d in dims)
                want = np_ref(op, x, axes)
                for padding in (PAD_NA, PAD_VALID):
                    y = red(op, [x, np.array(dims, np.int32).reshape(1, 1, 1, -1), rank], padding)
                    kept = [x.shape[i] for i in range(4) if i not in axes]
                    shape = (1,) * (4 - len(kept)) + tuple(kept) if padding == PAD_VALID else want.shape
                    assert y.shape == shape, (dims, rank, padding)
                    if op == "Prod_int32":
                        assert np.array_equal(y.ravel(), want.ravel())
                    else:
                        assert np.allclose(y.ravel(), want.ravel(), rtol=1e-6, atol=1e-6)


def test_errors():
    assert_op_error("Sum_f", [X, [2], 2], "[2] not below the true rank 2")
    assert_op_error("Max_f", [X, [0], 5], "true rank 5 must be 1..4")
    assert_op_error("Min_f", [X, [0], 0], "true rank 0")
    assert_op_error("Prod_f", [X, np.array([1.5])], "non-integer values")
    assert_op_error("Prod_int32", [np.array([2 ** 40])], "outside the code range")
    assert_op_error("Sum_f", [X, [1], np.array([4, 4])], "true rank has 2 values")
