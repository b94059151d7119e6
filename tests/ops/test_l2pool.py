"""QuantizedL2Pool_8: hexagon_nn's C rules (ops/src/op_l2pool.c), by hand and against the float L2."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.kernels.l2pool import SQRT_FX
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error as check_op_error

OP = "QuantizedL2Pool_8"


def win(fh: int, fw: int, b: int = 1, d: int = 1) -> np.ndarray:
    """A "shape" input: only its shape [b, fh, fw, d] is read."""
    return np.zeros((b, fh, fw, d), np.int32)


def l2pool(x: np.ndarray, fh: int, fw: int, sh: int, sw: int, padding: int,
           mn: float, mx: float) -> tuple[np.ndarray, ...]:
    return run_op(OP, [x, mn, mx, win(fh, fw), win(sh, sw)], padding=padding, node="l2")


def test_l2pool_by_hand():
    # op_l2pool.c l2pool_execute_ref. Range [-4, 27.875]: zero = quantize_uint8(0) = 32.
    # Codes [[32, 35, 40], [28, 32, 32]] -> deviations [[0, 3, 8], [-4, 0, 0]].
    # SAME 2x2 stride 1 on 2x3: out 2x3, adj = ((out-1)*stride + win - in) / 2 = 0 on both axes.
    # s = (S * recip + 0x4000) >> 15 with recip = (65536 / cnt + 1) >> 1, code = sqrt_fx(s):
    #   (0,0) S = 25, cnt 4 (recip 8192): s = 6 -> sqrt_fx 2;   (0,1) S = 73: s = 18 -> 4
    #   (0,2) S = 64, cnt 2 (recip 16384): s = 32 -> 6;         (1,0) S = 16, cnt 2: s = 8 -> 3
    #   (1,1), (1,2): S = 0 -> 0
    # Output range [0, 255 * ((max - min) / 255f)] = [0, 31.875].
    x = np.array([[32, 35, 40], [28, 32, 32]], np.uint8).reshape(1, 2, 3, 1)
    q, mn, mx = l2pool(x, 2, 2, 1, 1, PAD_SAME, -4.0, 27.875)
    assert q.dtype == np.uint8 and q.shape == (1, 2, 3, 1)
    assert q.ravel().tolist() == [2, 4, 6, 3, 0, 0]
    assert (mn.item(), mx.item()) == (0.0, 31.875)
    # SAME_CAFFE: L2Pool's own adj rule does not depend on the padding kind -> the same windows
    q, _, _ = l2pool(x, 2, 2, 1, 1, PAD_SAME_CAFFE, -4.0, 27.875)
    assert q.ravel().tolist() == [2, 4, 6, 3, 0, 0]
    # VALID 2x3 covers everything: S = 89, cnt 6 (recip 5461): s = 15 -> sqrt_fx 4
    q, _, _ = l2pool(x, 2, 3, 1, 1, PAD_VALID, -4.0, 27.875)
    assert q.shape == (1, 1, 1, 1) and q.item() == 4
    # VALID window larger than the input: an empty output (nnlib_pad_compute_outsize gives 0), no error
    q, _, _ = l2pool(x, 3, 3, 1, 1, PAD_VALID, -4.0, 27.875)
    assert q.shape == (1, 0, 1, 1)


def test_sqrt_fx_is_a_square_root():
    # include/op_sqrth_8.h sqrt_fx: within one code of sqrt(u), non-decreasing, saturating at 255
    u = np.arange(65536)
    err = SQRT_FX.astype(np.float64) - np.sqrt(u)
    assert np.all(np.abs(err) < 1.0) and np.all(np.diff(SQRT_FX.astype(np.int64)) >= 0)
    assert SQRT_FX[[0, 1, 4, 9, 16, 25, 100]].tolist() == [0, 1, 2, 3, 4, 5, 10]


@pytest.mark.parametrize("padding", [PAD_VALID, PAD_SAME, PAD_SAME_CAFFE])
def test_l2pool_close_to_float_l2(padding):
    rng = np.random.default_rng(7)
    for trial in range(6):
        h, w = (int(v) for v in rng.integers(3, 9, size=2))
        fh, fw, sh, sw = (int(v) for v in rng.integers(1, 4, size=4))
        x = rng.integers(0, 256, size=(2, h, w, 3)).astype(np.uint8)
        mn, mx = -1.0 - trial, 2.5
        q, omn, omx = l2pool(x, fh, fw, sh, sw, padding, mn, mx)
        step = (mx - mn) / 255.0
        zero = int(np.floor(-mn / step + 0.5))
        oh = (h - fh) // sh + 1 if padding == PAD_VALID else -(-h // sh)
        ow = (w - fw) // sw + 1 if padding == PAD_VALID else -(-w // sw)
        adj_y, adj_x = int(((oh - 1) * sh + fh - h) / 2), int(((ow - 1) * sw + fw - w) / 2)
        dev = (x.astype(np.float64) - zero) * step
        for i in range(oh):
            r0, r1 = max(0, i * sh - adj_y), min(h, i * sh - adj_y + fh)
            for j in range(ow):
                c0, c1 = max(0, j * sw - adj_x), min(w, j * sw - adj_x + fw)
                l2 = np.sqrt((dev[:, r0:r1, c0:c1] ** 2).mean(axis=(1, 2)))
                # fixed-point mean (16-bit reciprocal) and sqrt_fx: within ~1.5 output steps
                assert np.all(np.abs(q[:, i, j] * step - l2) <= 1.5 * step + 1e-9)
        assert omn.item() == 0.0 and omx.item() == pytest.approx(mx - mn)


def assert_op_error(inputs: list, padding: int, *fragments: str) -> None:
    """``opcheck.assert_op_error`` for this file's op at a padding mode."""
    check_op_error(OP, inputs, *fragments, padding=padding)

def test_l2pool_errors():
    x = np.zeros((1, 4, 4, 1), np.uint8)
    assert_op_error([x, -1.0, 1.0, win(2, 2, d=2), win(1, 1)], PAD_VALID, "bad window/stride shape")
    assert_op_error([x, -1.0, 1.0, win(2, 2), win(1, 1)], PAD_NA, "NN_PAD_NA")
    # a range excluding 0 is accepted (zero code saturates to 0): output range [0, 255 * (0.5 / 255f)]
    q, mn, mx = run_op(OP, [x + 255, 0.5, 1.0, win(2, 2), win(1, 1)], padding=PAD_VALID)
    assert q.ravel().tolist() == [255] * 9 and (mn.item(), mx.item()) == (0.0, 0.5)
    assert_op_error([x.astype(np.int32) + 300, -1.0, 1.0, win(2, 2), win(1, 1)], PAD_VALID, "outside the code range")
