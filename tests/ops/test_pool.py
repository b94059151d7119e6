"""QuantizedMaxPool_8 and QuantizedAvgPool_8 (SEMANTICS.md §3 geometry, §6 arithmetic)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error as check_op_error, geometry

X4 = np.array([[1, 9, 2, 3],
               [4, 5, 6, 7],
               [8, 0, 10, 11],
               [12, 13, 14, 15]], np.uint8).reshape(1, 4, 4, 1)


def win(fh: int, fw: int) -> np.ndarray:
    """A "shape" input: only its shape [1, fh, fw, 1] is read."""
    return np.zeros((1, fh, fw, 1), np.int32)


def pool(op: str, x: np.ndarray, fh: int, fw: int, sh: int, sw: int, padding: int,
         mn: float = -1.0, mx: float = 1.0, node: str = "p1") -> tuple[np.ndarray, ...]:
    return run_op(op, [x, mn, mx, win(fh, fw), win(sh, sw)], padding=padding, node=node)


def assert_op_error(op: str, inputs: list, padding: int, *fragments: str) -> None:
    """``opcheck.assert_op_error`` at a padding mode (given positionally here)."""
    check_op_error(op, inputs, *fragments, padding=padding)

# --- MaxPool --------------------------------------------------------------

def test_maxpool_by_hand():
    # 3x3 window, stride 2 on 4x4: out = ceil(4/2) = 2, pad = (2-1)*2 + 3 - 4 = 1.
    # SAME puts it after: windows rows/cols {0-2, 2-3}:
    #   (0,0) {1,9,2,4,5,6,8,0,10} -> 10;  (0,1) {2,3,6,7,10,11} -> 11
    #   (1,0) {8,0,10,12,13,14} -> 14;     (1,1) {10,11,14,15} -> 15
    q, mn, mx = pool("QuantizedMaxPool_8", X4, 3, 3, 2, 2, PAD_SAME, -1.0, 0.9921875)
    assert q.dtype == np.uint8 and q.shape == (1, 2, 2, 1)
    assert q.ravel().tolist() == [10, 11, 14, 15]
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)  # range passes through
    # SAME_CAFFE puts it before: windows rows/cols {0-1, 1-3}:
    #   (0,0) {1,9,4,5} -> 9;  (0,1) {9,2,3,5,6,7} -> 9;  (1,0) {4,5,8,0,12,13} -> 13;  (1,1) -> 15
    q, _, _ = pool("QuantizedMaxPool_8", X4, 3, 3, 2, 2, PAD_SAME_CAFFE)
    assert q.ravel().tolist() == [9, 9, 13, 15]
    # VALID 2x2 stride 2: {1,9,4,5} 9, {2,3,6,7} 7, {8,0,12,13} 13, {10,11,14,15} 15
    q, _, _ = pool("QuantizedMaxPool_8", X4, 2, 2, 2, 2, PAD_VALID)
    assert q.ravel().tolist() == [9, 7, 13, 15]


def taps(x, oy, ox, fh, fw, sh, sw, top, left):
    """In-bounds taps [n, d] of one output position, by explicit index arithmetic."""
    _, h, w, _ = x.shape
    rows = [y for y in range(oy * sh - top, oy * sh - top + fh) if 0 <= y < h]
    cols = [c for c in range(ox * sw - left, ox * sw - left + fw) if 0 <= c < w]
    return x[:, rows][:, :, cols].reshape(x.shape[0], -1, x.shape[3]).astype(np.int64)


CASES = [((1, 7, 6, 3), 3, 2, 2, 1, PAD_SAME), ((2, 5, 8, 2), 3, 3, 2, 3, PAD_SAME_CAFFE),
         ((1, 9, 9, 4), 2, 4, 3, 2, PAD_VALID), ((1, 4, 5, 1), 5, 5, 1, 1, PAD_SAME)]


@pytest.mark.parametrize("shape,fh,fw,sh,sw,padding", CASES)
def test_maxpool_matches_minus_inf_padded_reference(shape, fh, fw, sh, sw, padding):
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 256, size=shape).astype(np.uint8)
    oh, top, _ = geometry(shape[1], fh, sh, padding)
    ow, left, _ = geometry(shape[2], fw, sw, padding)
    # reference: pad with -inf in float, then take each window's max
    xp = np.full((shape[0], shape[1] + fh + sh, shape[2] + fw + sw, shape[3]), -np.inf)
    xp[:, top:top + shape[1], left:left + shape[2]] = x
    ref = np.empty((shape[0], oh, ow, shape[3]))
    for oy in range(oh):
        for ox in range(ow):
            ref[:, oy, ox] = xp[:, oy * sh:oy * sh + fh, ox * sw:ox * sw + fw].max(axis=(1, 2))
    q, _, _ = pool("QuantizedMaxPool_8", x, fh, fw, sh, sw, padding)
    assert np.array_equal(q, ref.astype(np.uint8))


# --- AvgPool --------------------------------------------------------------

def test_avgpool_by_hand():
    # 3x3 SAME stride 1 on [[1,2,3],[4,5,6],[7,8,9]]: counts corner 4, edge 6, centre 9;
    # sat16(0x8000 // cnt): 4 -> 8192, 6 -> 5461, 9 -> 3640; out = (sum*r + 0x4000) >> 15
    #   (0,0) 1+2+4+5 = 12:       12*8192 + 16384 = 114688 -> 3.5    -> 3
    #   (0,1) 1+..+6 = 21:        21*5461 + 16384 = 131065 -> 3.9998 -> 3 (true mean 3.5)
    #   (0,2) 2+3+5+6 = 16:       16*8192 + 16384 = 147456 -> 4.5    -> 4
    #   (1,0) 1+2+4+5+7+8 = 27:   27*5461 + 16384 = 163831 -> 4.9997 -> 4
    #   (1,1) 45:                 45*3640 + 16384 = 180184 -> 5.4987 -> 5
    #   (1,2) 2+3+5+6+8+9 = 33:   33*5461 + 16384 = 196597 -> 5.9997 -> 5
    #   (2,0) 4+5+7+8 = 24:       24*8192 + 16384 = 212992 -> 6.5    -> 6
    #   (2,1) 4+..+9 = 39:        39*5461 + 16384 = 229363 -> 6.9996 -> 6
    #   (2,2) 5+6+8+9 = 28:       28*8192 + 16384 = 245760 -> 7.5    -> 7
    x = np.arange(1, 10, dtype=np.uint8).reshape(1, 3, 3, 1)
    q, mn, mx = pool("QuantizedAvgPool_8", x, 3, 3, 1, 1, PAD_SAME, 0.0, 2.5)
    assert q.dtype == np.uint8
    assert q.ravel().tolist() == [3, 3, 4, 4, 5, 5, 6, 6, 7]
    assert (mn.item(), mx.item()) == (0.0, 2.5)


def test_avgpool_valid_and_single_tap():
    # VALID 2x2 stride 2, two channels: cnt 4, r = 8192
    #   c0: 10+20+30+41 = 101: 101*8192 + 16384 = 843776 -> 25.75 -> 25
    #   c1: 10+20+30+42 = 102: 102*8192 + 16384 = 851968 -> 26.0  -> 26
    x = np.array([10, 10, 20, 20, 30, 30, 41, 42], np.uint8).reshape(1, 2, 2, 2)
    q, _, _ = pool("QuantizedAvgPool_8", x, 2, 2, 2, 2, PAD_VALID)
    assert q.ravel().tolist() == [25, 26]
    # 1x1 window: r = sat16(0x8000) = 32767; 255*32767 + 16384 = 8371969 -> 255.49 -> 255;
    # 1*32767 + 16384 = 49151 -> 1.49 -> 1;  0 -> 0.49 -> 0
    x = np.array([255, 1, 0], np.uint8).reshape(1, 1, 3, 1)
    q, _, _ = pool("QuantizedAvgPool_8", x, 1, 1, 1, 1, PAD_VALID)
    assert q.ravel().tolist() == [255, 1, 0]


@pytest.mark.parametrize("shape,fh,fw,sh,sw,padding", CASES)
def test_avgpool_matches_loop_reference(shape, fh, fw, sh, sw, padding):
    rng = np.random.default_rng(sum(shape) + 1)
    x = rng.integers(0, 256, size=shape).astype(np.uint8)
    oh, top, _ = geometry(shape[1], fh, sh, padding)
    ow, left, _ = geometry(shape[2], fw, sw, padding)
    q, _, _ = pool("QuantizedAvgPool_8", x, fh, fw, sh, sw, padding)
    assert q.shape == (shape[0], oh, ow, shape[3])
    for oy in range(oh):
        for ox in range(ow):
            t = taps(x, oy, ox, fh, fw, sh, sw, top, left)
            cnt, total = t.shape[1], t.sum(axis=1)
            expect = (total * min(32767, 0x8000 // cnt) + 0x4000) >> 15
            assert np.array_equal(q[:, oy, ox], expect)
            assert np.all(np.abs(q[:, oy, ox] - total / cnt) <= 1.0)  # close to the true mean


# --- errors ---------------------------------------------------------------

def test_errors():
    x = np.zeros((1, 3, 3, 2), np.uint8)
    for op in ("QuantizedMaxPool_8", "QuantizedAvgPool_8"):
        assert_op_error(op, [x, -1.0, 1.0, win(2, 2), win(1, 1)], PAD_NA, "padding")
        assert_op_error(op, [x, -1.0, 1.0, np.zeros((1, 2, 2, 2)), win(1, 1)], PAD_SAME, "depth")
        assert_op_error(op, [x, 2.0, 1.0, win(2, 2), win(1, 1)], PAD_SAME, "min <= max")
        assert_op_error(op, [x.reshape(3, 3, 2), -1.0, 1.0, win(2, 2), win(1, 1)], PAD_SAME, "4-D")


@pytest.mark.parametrize("op", ["QuantizedMaxPool_8", "QuantizedAvgPool_8"])
def test_as_the_c_where_the_engine_used_to_refuse(op):
    x = np.arange(18, dtype=np.uint8).reshape(1, 3, 3, 2)
    # a VALID window larger than the input: nn_pad_compute_outsize gives 0 rows (empty output, no error)
    q, mn, mx = run_op(op, [x, -1.0, 1.0, win(4, 2), win(1, 1)], padding=PAD_VALID)
    assert q.shape == (1, 0, 2, 2) and (mn.item(), mx.item()) == (-1.0, 1.0)
    # an unknown padding value (MIRROR_REFLECT = 3): size 0 on both axes
    q, _, _ = run_op(op, [x, -1.0, 1.0, win(2, 2), win(1, 1)], padding=3)
    assert q.shape == (1, 0, 0, 2)
    # a range excluding 0 is copied to the output unchanged; 1x1 windows copy the codes
    q, mn, mx = run_op(op, [x, 1.0, 2.0, win(1, 1), win(1, 1)], padding=PAD_VALID)
    assert np.array_equal(q, x) and (mn.item(), mx.item()) == (1.0, 2.0)


def test_avgpool_more_than_32768_taps_gives_zero():
    # avgpool_execute_slice_ref: count = sath(0x8000 / 40000) = 0, so (sum * 0 + 0x4000) >> 15 = 0
    big = np.full((1, 200, 200, 1), 255, np.uint8)
    q, _, _ = run_op("QuantizedAvgPool_8", [big, -1.0, 1.0, win(200, 200), win(1, 1)], padding=PAD_VALID)
    assert q.shape == (1, 1, 1, 1) and q.item() == 0
