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
    # op_pad.c backfills the n rows onto the LAST n of b,h,w,d: 3 rows pad h, w, d
    # here h (0,0), w (1,0), d (0,2) -> [1,1,3,4]
    table = pads((0, 0), (1, 0), (0, 2))
    # no pad value: 0.0 -> roundf_i32(255f * (0 + 1) / 1.9921875) = roundf(128.0) = 128 (the zero code)
    q, mn, mx = run_op("QuantizedPad_8", [x, LO, HI, table])
    assert q.shape == (1, 1, 3, 4)
    assert q[0, 0].tolist() == [[128, 128, 128, 128], [1, 2, 128, 128], [3, 4, 128, 128]]
    assert (mn.item(), mx.item()) == (LO, HI)
    # pad value 0.5 -> roundf_i32(255f * 1.5 / 1.9921875) = 192
    q, _, _ = run_op("QuantizedPad_8", [x, LO, HI, table, 0.5])
    assert q[0, 0, 0, 0] == 192 and q[0, 0, 2, 3] == 192 and q[0, 0, 1, 0] == 1


@pytest.mark.parametrize("value, code", [
    (0.25, 160),          # 255 * 1.25 / 1.9921875 = 160
    (0.99609375, 255),    # 255.5 -> roundf_i32 256 -> saturated to 255
    (1.0078125, 255),     # 257 -> the last code clipped, not an error
    (-1.015625, 0),       # -2 -> clipped to 0
    (-0.00390625, 128),   # 127.5 -> rounds half away to 128
    (float("-inf"), 0),   # -inf -> 0, +inf -> 255
    (float("inf"), 255),
])
def test_pad_value_codes(value, code):
    q, _, _ = run_op("QuantizedPad_8", [u4([7]), LO, HI, pads((1, 0)), value])
    assert q.ravel().tolist() == [code, 7]


def test_pad_rows_are_backfilled_and_range_passes():
    # n = 1: the single row pads depth (the last dim), as pad_generic_execute backfills
    x = u4([9, 8], (1, 1, 1, 2))
    q, _, _ = run_op("QuantizedPad_8", [x, 0.0, 2.55, pads((1, 1)), 0.02])  # 255 * 0.02 / 2.55 = code 2
    assert q.shape == (1, 1, 1, 4)
    assert q.ravel().tolist() == [2, 9, 8, 2]
    # 4 rows: batches are padded too; a range excluding 0 is copied as given
    q, mn, mx = run_op("QuantizedPad_8", [x, 1.0, 3.55, pads((1, 0), (0, 0), (0, 0), (0, 0)), 1.0])
    assert q.shape == (2, 1, 1, 2) and q.ravel().tolist() == [0, 0, 9, 8]
    assert (mn.item(), mx.item()) == (1.0, np.float32(3.55))


@pytest.mark.parametrize("seed", range(6))
def test_pad_is_np_pad(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=rng.integers(1, 4, size=4)).astype(np.uint8)
    n = int(rng.integers(1, 5))
    table = [(int(a), int(b)) for a, b in rng.integers(0, 3, size=(n, 2))]
    width = [(0, 0)] * (4 - n) + table                      # rows pad the last n dims
    # range [-3, 5.5]: pad value 1.0 -> 255 * 4 / 8.5 = 120
    q, mn, mx = run_op("QuantizedPad_8", [x, -3.0, 5.5, pads(*table), 1.0])
    assert np.array_equal(q, np.pad(x, width, constant_values=120))
    code = int(rng.integers(0, 256))
    q, _, _ = run_op("QuantizedPad_V2_8", [x, -3.0, 5.5, pads(*table), np.full((1, 1, 1, 1), code, np.uint8)])
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
    # SYMMETRIC repeats the edge: 2 before, 2 after -> 20 10 | 10 20 30 | 30 20
    # (op_mirrorpad.c: pads must stay below the size in both modes, so 3 is not allowed here)
    q, _, _ = run_op("MirrorPad_8", [x, pads((0, 0), (0, 0), (0, 0), (2, 2)), LO, HI], padding=PAD_MIRROR_SYMMETRIC)
    assert q.ravel().tolist() == [20, 10, 10, 20, 30, 30, 20]
    # pads on h: h = [[1],[2]] reflected by 1 each side -> 2 1 2 1
    q, _, _ = run_op("MirrorPad_8", [u4([1, 2], (1, 2, 1, 1)), pads((0, 0), (1, 1), (0, 0), (0, 0)), LO, HI],
                     padding=PAD_MIRROR_REFLECT)
    assert q.ravel().tolist() == [2, 1, 2, 1]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode, padding", [("reflect", PAD_MIRROR_REFLECT), ("symmetric", PAD_MIRROR_SYMMETRIC)])
def test_mirror_pad_is_np_pad(seed, mode, padding):
    rng = np.random.default_rng(seed)
    shape = [int(v) for v in rng.integers(1, 5, size=4)]
    x = rng.integers(0, 256, size=shape).astype(np.uint8)
    most = [n - 1 for n in shape]   # op_mirrorpad.c: pad < size in both modes
    width = [(int(rng.integers(0, m + 1)), int(rng.integers(0, m + 1))) for m in most]
    q, _, _ = run_op("MirrorPad_8", [x, pads(*width), 0.0, 1.0], padding=padding)
    assert np.array_equal(q, np.pad(x, width, mode=mode))


def test_errors():
    x = u4([1, 2, 3])
    w = pads((0, 0), (0, 0), (0, 0), (1, 1))
    assert_op_error("QuantizedPad_8", [x, LO, HI, w, 1.015625], "code 258")     # 2.015625 * 128 = 258
    assert_op_error("QuantizedPad_8", [x, LO, HI, w, -1.0234375], "code -3")    # -0.0234375 * 128 = -3
    # a NaN pad value: the quotient is NaN, which the device's convert_sf2w turns into -1 -> code 0 (no error)
    assert run_op("QuantizedPad_8", [x, LO, HI, w, float("nan")])[0].ravel().tolist() == [0, 1, 2, 3, 0]
    assert_op_error("QuantizedPad_8", [x, 1.0, 1.0, w, 0.5], "code -inf")       # zero-width range: 255 * -0.5 / 0
    # input 5 non-zero: the pad value must lie inside [min, max]
    assert_op_error("QuantizedPad_8", [x, LO, HI, w, 1.0, np.int32(1)], "outside the input range")
    q, _, _ = run_op("QuantizedPad_8", [x, LO, HI, w, 1.0, np.int32(0)])  # flag 0: clipped as usual
    assert q.ravel().tolist() == [255, 1, 2, 3, 255]
    assert_op_error("QuantizedPad_8", [x, LO, HI, pads((0, -1))], "negative")
    assert_op_error("QuantizedPad_8", [x, LO, HI, i4([1, 1, 1])], "depth 2")
    q, _, _ = run_op("QuantizedPad_8", [x, LO, HI, pads(*[(0, 0)] * 4, (5, 5))])   # rows past the 4th are ignored
    assert q.ravel().tolist() == [1, 2, 3]
    assert_op_error("QuantizedPad_8", [x, LO, HI, pads((0, 0), (0, 0), (0, 0), (2 ** 30, 2 ** 30))], "elements")
    assert_op_error("QuantizedPad_V2_8", [x, LO, HI, w, i4([256])], "outside the code range")
    q, _, _ = run_op("QuantizedPad_V2_8", [x, LO, HI, w, u4([9, 2])])           # the first byte is the pad code
    assert q.ravel().tolist() == [9, 1, 2, 3, 9]
    assert_op_error("MirrorPad_8", [x, w, LO, HI], "NN_PAD_MIRROR_REFLECT", padding=PAD_NA)
    assert_op_error("MirrorPad_8", [x, w, LO, HI], "NN_PAD_MIRROR_REFLECT", padding=PAD_SAME)
    # op_mirrorpad.c: a pad equal to the size is "depth too small" in both modes (nnlib's C errors too)
    for big in (pads((0, 0), (0, 0), (0, 0), (3, 0)), pads((0, 0), (0, 0), (0, 0), (0, 3))):
        for mode in (PAD_MIRROR_REFLECT, PAD_MIRROR_SYMMETRIC):
            assert_op_error("MirrorPad_8", [x, big, LO, HI], "D too small", "exceeds 2", padding=mode)
    assert_op_error("MirrorPad_8", [x, pads((0, 0), (1, 0), (0, 0), (0, 0)), LO, HI], "H too small",
                    padding=PAD_MIRROR_SYMMETRIC)
    # the pads must be exactly 4 rows [1,1,4,2] ("bad pad shape" in the C)
    assert_op_error("MirrorPad_8", [x, pads((0, 0), (1, 0)), LO, HI], "bad pad shape", padding=PAD_MIRROR_REFLECT)
