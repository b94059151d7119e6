"""QuantizedL2Pool_8 (SEMANTICS.md §3 geometry; arithmetic as the kernel's docstring states)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID

OP = "QuantizedL2Pool_8"


def win(fh: int, fw: int, b: int = 1, d: int = 1) -> np.ndarray:
    """A "shape" input: only its shape [b, fh, fw, d] is read."""
    return np.zeros((b, fh, fw, d), np.int32)


def l2pool(x: np.ndarray, fh: int, fw: int, sh: int, sw: int, padding: int,
           mn: float, mx: float) -> tuple[np.ndarray, ...]:
    return run_op(OP, [x, mn, mx, win(fh, fw), win(sh, sw)], padding=padding, node="l2")


def test_l2pool_by_hand():
    # Range [-4, 27.875]: step = 31.875/255 = 0.125, zero = 4/0.125 = 32.
    # Codes [[32, 35, 40], [28, 32, 32]] -> deviations q - zero = [[0, 3, 8], [-4, 0, 0]].
    # SAME 2x2 stride 1 on 2x3: out = 2x3, pad = 1 per axis, all after (SAME puts the extra after).
    #   (0,0) taps 0,3,-4,0: S = 0+9+16+0 = 25, cnt 4: sqrt(6.25) = 2.5 -> half up -> 3
    #   (0,1) taps 3,8,0,0: S = 73, cnt 4: sqrt(18.25) = 4.27 -> 4
    #   (0,2) taps 8,0 (column 3 is padding): S = 64, cnt 2: sqrt(32) = 5.66 -> 6
    #   (1,0) taps -4,0 (row 2 is padding): S = 16, cnt 2: sqrt(8) = 2.83 -> 3
    #   (1,1) taps 0,0 -> 0;  (1,2) tap 0 -> 0
    # Output range [0, in_max - in_min] = [0, 31.875]: same step 0.125, zero code 0.
    x = np.array([[32, 35, 40], [28, 32, 32]], np.uint8).reshape(1, 2, 3, 1)
    q, mn, mx = l2pool(x, 2, 2, 1, 1, PAD_SAME, -4.0, 27.875)
    assert q.dtype == np.uint8 and q.shape == (1, 2, 3, 1)
    assert q.ravel().tolist() == [3, 4, 6, 3, 0, 0]
    assert (mn.item(), mx.item()) == (0.0, 31.875)
    # SAME_CAFFE puts the padding before: (0,0) holds only tap 0 -> 0; (0,1) taps 0,3 -> sqrt(4.5) = 2.12 -> 2;
    # (1,2) taps 3,8,0,0 -> 4 (as SAME's (0,1)).
    q, _, _ = l2pool(x, 2, 2, 1, 1, PAD_SAME_CAFFE, -4.0, 27.875)
    assert q.ravel().tolist()[:2] == [0, 2] and q.ravel().tolist()[5] == 4
    # VALID 2x3 window covers everything: S = 0+9+64+16+0+0 = 89, cnt 6: sqrt(14.83) = 3.85 -> 4
    q, _, _ = l2pool(x, 2, 3, 1, 1, PAD_VALID, -4.0, 27.875)
    assert q.shape == (1, 1, 1, 1) and q.item() == 4


def reference(x: np.ndarray, fh: int, fw: int, sh: int, sw: int, padding: int, zero: int,
              step: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact codes with Python integers, round_half_up(sqrt(S/cnt)) = (isqrt(4S // cnt) + 1) // 2,
    and the float64 L2 (root mean square) of the dequantized in-bounds taps."""
    b, h, w, d = x.shape

    def geo(size: int, f: int, s: int) -> tuple[int, int]:
        if padding == PAD_VALID:
            return (size - f) // s + 1, 0
        out = -(-size // s)
        pad = max(0, (out - 1) * s + f - size)
        return out, (pad // 2 if padding == PAD_SAME else pad - pad // 2)

    oh, top = geo(h, fh, sh)
    ow, left = geo(w, fw, sw)
    dev = x.astype(np.int64) - zero
    out = np.zeros((b, oh, ow, d), np.int64)
    real_l2 = np.zeros((b, oh, ow, d), np.float64)
    real = dev * step
    for i in range(oh):
        r0, r1 = max(0, i * sh - top), min(h, i * sh - top + fh)
        for j in range(ow):
            c0, c1 = max(0, j * sw - left), min(w, j * sw - left + fw)
            cnt = (r1 - r0) * (c1 - c0)
            s = (dev[:, r0:r1, c0:c1, :] ** 2).sum(axis=(1, 2))
            out[:, i, j, :] = [[(math.isqrt(4 * int(v) // cnt) + 1) // 2 for v in row] for row in s]
            real_l2[:, i, j, :] = np.sqrt((real[:, r0:r1, c0:c1, :] ** 2).mean(axis=(1, 2)))
    return out, real_l2


@pytest.mark.parametrize("padding", [PAD_VALID, PAD_SAME, PAD_SAME_CAFFE])
def test_l2pool_matches_reference(padding):
    rng = np.random.default_rng(7)
    for trial in range(6):
        h, w = rng.integers(3, 9, size=2)
        fh, fw, sh, sw = (int(v) for v in rng.integers(1, 4, size=4))
        x = rng.integers(0, 256, size=(2, h, w, 3)).astype(np.uint8)
        mn, mx = -1.0 - trial, 2.5  # zero codes vary with the trial
        q, omn, omx = l2pool(x, fh, fw, sh, sw, padding, mn, mx)
        step = (np.float32(mx) - np.float32(mn)) / 255.0
        zero = int(np.floor(-np.float32(mn) / step + 0.5))
        codes, real_l2 = reference(x, fh, fw, sh, sw, padding, zero, step)
        assert q.tolist() == codes.tolist()
        assert omn.item() == 0.0 and omx.item() == pytest.approx(mx - mn)
        # Output step equals the input step, zero code 0: dequantized within half a step of the float L2.
        assert np.all(np.abs(q * step - real_l2) <= step / 2 + 1e-9)


def assert_op_error(inputs: list, padding: int, *fragments: str) -> None:
    with pytest.raises(OpError) as info:
        run_op(OP, inputs, padding=padding, node="n7")
    msg = str(info.value)
    assert f"node n7 ({OP})" in msg
    for frag in fragments:
        assert frag in msg


def test_l2pool_errors():
    x = np.zeros((1, 4, 4, 1), np.uint8)
    assert_op_error([x, 0.5, 1.0, win(2, 2), win(1, 1)], PAD_VALID, "does not contain 0")
    assert_op_error([x, float("nan"), 1.0, win(2, 2), win(1, 1)], PAD_VALID, "not finite")
    assert_op_error([x, -1.0, 1.0, win(2, 2, d=2), win(1, 1)], PAD_VALID, "batch and depth")
    assert_op_error([x, -1.0, 1.0, win(2, 2), win(1, 1)], PAD_NA, "padding")
    assert_op_error([x, -1.0, 1.0, win(5, 5), win(1, 1)], PAD_VALID, "smaller than the window")
    assert_op_error([x.astype(np.int32) + 300, -1.0, 1.0, win(2, 2), win(1, 1)], PAD_VALID, "outside the code range")
