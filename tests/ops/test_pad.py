"""QuantizedPad_8, QuantizedPad_V2_8 and MirrorPad_8 (op texts; SEMANTICS.md §6: pad code = code of the pad value)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_MIRROR_REFLECT, PAD_MIRROR_SYMMETRIC, PAD_NA, PAD_SAME
from hexnn_import.testing.opcheck import assert_op_error, i4, u4

LO, HI = -1.0, 0.9921875  # step 2**-7, zero code 128


def pads(*rows: tuple[int, int]) -> np.ndarray:
    """A padding tensor [1,1,n,2]."""
    return np.array(rows, np.int32).reshape(1, 1, len(rows), 2)


def test_pad_by_hand():
    x = u4([1, 2, 3, 4], (1, 1, 2, 2))
    # rows given for b, h, w (n = 3, the first three dims): h gets 1 before, w 2 after -> [1,2,4,2]
    table = pads((0, 0), (1, 0), (0, 2))
    # no pad value: 0.0 -> code round_away((0 + 1) * 128) = 128 (the zero code)
    q, mn, mx = run_op("QuantizedPad_8", [x, LO, HI, table])
    assert q.shape == (1, 2, 4, 2)
    assert q[0, :, :, 0].tolist() == [[128, 128, 128, 128], [1, 3, 128, 128]]
    assert q[0, :, :, 1].tolist() == [[128, 128, 128, 128], [2, 4, 128, 128]]
    assert (mn.item(), mx.item()) == (LO, HI)
    # pad value 0.5 -> round_away((0.5 + 1) * 128) = 192
    q, _, _ = run_op("QuantizedPad_8", [x, LO, HI, table, 0.5])
    assert q[0, 0, 0, 0] == 192 and q[0, 1, 3, 1] == 192 and q[0, 1, 0, 0] == 1


@pytest.mark.parametrize("value, code", [
    (0.25, 160),          # 1.25 * 128 = 160
    (0.99609375, 255),    # 1.99609375 * 128 = 255.5 -> 256 -> clipped to 255
    (1.0078125, 255),     # 2.0078125 * 128 = 257 -> the last code clipped, not an error
    (-1.015625, 0),       # -0.015625 * 128 = -2 -> clipped to 0
    (-0.00390625, 128),   # 0.99609375 * 128 = 127.5 -> rounds away to 128
    (float("-inf"), 0),   # -inf -> 0, +inf -> 255 (op text)
    (float("inf"), 255),
])
def test_pad_value_codes(value, code):
    q, _, _ = run_op("QuantizedPad_8", [u4([7]), LO, HI, pads((0, 0), (0, 0), (0, 0), (1, 0)), value])
    assert q.ravel().tolist() == [code, 7]


def test_pad_first_rows_are_batch_first():
    # n = 1: the single row pads batches (the first of b,h,w,d), not depth
    x = u4([9, 8], (1, 1, 1, 2))
    q, _, _ = run_op("QuantizedPad_8", [x, 0.0, 2.55, pads((1, 1)), 0.02])  # 0.02 / 0.01 = code 2
    assert q.shape == (3, 1, 1, 2)
    assert q.ravel().tolist() == [2, 2, 9, 8, 2, 2]


@pytest.mark.parametrize("seed", range(6))
def test_pad_is_np_pad(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=rng.integers(1, 4, size=4)).astype(np.uint8)
    n = int(rng.integers(1, 5))
    table = rng.integers(0, 3, size=(n, 2))
    width = [(int(a), int(b)) for a, b in table] + [(0, 0)] * (4 - n)
    # range [-3, 5.5]: step 8.5/255 = 1/30, pad value 1.0 -> code (1 + 3) * 30 = 120
    q, mn, mx = run_op("QuantizedPad_8", [x, -3.0, 5.5, pads(*width[:n]), 1.0])
    assert np.array_equal(q, np.pad(x, width, constant_values=120))
    code = int(rng.integers(0, 256))
    q, _, _ = run_op("QuantizedPad_V2_8", [x, -3.0, 5.5, pads(*width[:n]), np.full((1, 1, 1, 1), code, np.uint8)])
    assert np.array_equal(q, np.pad(x, width, constant_values=code))


def test_pad_v2_by_hand():
    # the quint8 pad value is a code of the input range, used as is: 7
    q, mn, mx = run_op("QuantizedPad_V2_8", [u4([1, 2]), LO, HI, pads((0, 0), (0, 0), (0, 0), (2, 1)),
                                             np.full((1, 1, 1, 1), 7, np.uint8)])
    assert q.ravel().tolist() == [7, 7, 1, 2, 7]
    assert (mn.item(), mx.item()) == (LO, HI)


def test_mirror_pad_by_hand():
    x = u4([10, 20, 30])
    # REFLECT about the edge element: pad 2 before and 2 after -> 30 20 | 10 20 30 | 20 10
    q, mn, mx = run_op("MirrorPad_8", [x, pads((0, 0), (0, 0), (0, 0), (2, 2)), LO, HI], padding=PAD_MIRROR_REFLECT)
    assert q.ravel().tolist() == [30, 20, 10, 20, 30, 20, 10]
    assert (mn.item(), mx.item()) == (LO, HI)
    # SYMMETRIC repeats the edge: 2 before, 3 after -> 20 10 | 10 20 30 | 30 20 10
    q, _, _ = run_op("MirrorPad_8", [x, pads((0, 0), (0, 0), (0, 0), (2, 3)), LO, HI], padding=PAD_MIRROR_SYMMETRIC)
    assert q.ravel().tolist() == [20, 10, 10, 20, 30, 30, 20, 10]
    # two rows given (b, h); h = [[1],[2]] reflected by 1 each side -> 2 1 2 1
    q, _, _ = run_op("MirrorPad_8", [u4([1, 2], (1, 2, 1, 1)), pads((0, 0), (1, 1)), LO, HI],
                     padding=PAD_MIRROR_REFLECT)
    assert q.ravel().tolist() == [2, 1, 2, 1]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode, padding", [("reflect", PAD_MIRROR_REFLECT), ("symmetric", PAD_MIRROR_SYMMETRIC)])
def test_mirror_pad_is_np_pad(seed, mode, padding):
    rng = np.random.default_rng(seed)
    shape = [int(v) for v in rng.integers(1, 5, size=4)]
    x = rng.integers(0, 256, size=shape).astype(np.uint8)
    most = [n - 1 if mode == "reflect" else n for n in shape]
    width = [(int(rng.integers(0, m + 1)), int(rng.integers(0, m + 1))) for m in most]
    q, _, _ = run_op("MirrorPad_8", [x, pads(*width), 0.0, 1.0], padding=padding)
    assert np.array_equal(q, np.pad(x, width, mode=mode))


def test_errors():
    x = u4([1, 2, 3])
    w = pads((0, 0), (0, 0), (0, 0), (1, 1))
    assert_op_error("QuantizedPad_8", [x, LO, HI, w, 1.015625], "code 258")     # 2.015625 * 128 = 258
    assert_op_error("QuantizedPad_8", [x, LO, HI, w, -1.0234375], "code -3")    # -0.0234375 * 128 = -3
    assert_op_error("QuantizedPad_8", [x, LO, HI, w, float("nan")], "NaN")
    # input 5 non-zero: the pad value must lie inside [min, max]
    assert_op_error("QuantizedPad_8", [x, LO, HI, w, 1.0, np.int32(1)], "outside the input range")
    q, _, _ = run_op("QuantizedPad_8", [x, LO, HI, w, 1.0, np.int32(0)])  # flag 0: clipped as usual
    assert q.ravel().tolist() == [255, 1, 2, 3, 255]
    assert_op_error("QuantizedPad_8", [x, LO, HI, pads((0, -1))], "negative")
    assert_op_error("QuantizedPad_8", [x, LO, HI, i4([1, 1, 1])], "[1,1,n,2]")
    assert_op_error("QuantizedPad_8", [x, LO, HI, pads(*[(0, 0)] * 5)], "10 values")
    assert_op_error("QuantizedPad_8", [x, 0.5, HI, w], "does not contain 0")
    assert_op_error("QuantizedPad_8", [x, LO, HI, pads((0, 0), (0, 0), (0, 0), (2 ** 30, 2 ** 30))], "elements")
    assert_op_error("QuantizedPad_V2_8", [x, LO, HI, w, i4([256])], "outside the code range")
    assert_op_error("QuantizedPad_V2_8", [x, LO, HI, w, u4([1, 2])], "quint8 scalar")
    assert_op_error("MirrorPad_8", [x, w, LO, HI], "NN_PAD_MIRROR_REFLECT", padding=PAD_NA)
    assert_op_error("MirrorPad_8", [x, w, LO, HI], "NN_PAD_MIRROR_REFLECT", padding=PAD_SAME)
    big = pads((0, 0), (0, 0), (0, 0), (3, 0))
    assert_op_error("MirrorPad_8", [x, big, LO, HI], "exceeds 2", padding=PAD_MIRROR_REFLECT)
    run_op("MirrorPad_8", [x, big, LO, HI], padding=PAD_MIRROR_SYMMETRIC)  # 3 <= size: allowed
    assert_op_error("MirrorPad_8", [x, pads((0, 0), (1, 0)), LO, HI], "on H", padding=PAD_MIRROR_REFLECT)
