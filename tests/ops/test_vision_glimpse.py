"""QuantizedExtractGlimpse_8 (op text; TensorFlow offsets, seeded noise - ops/kernels/vision_glimpse.py)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.ops.kernels.vision_glimpse import GLIMPSE_NOISE_SEED
from hexnn_import.testing.opcheck import assert_op_error, f4

IMG = np.arange(16, dtype=np.uint8).reshape(1, 4, 4, 1) + 100     # value = 100 + 4*y + x


def glimpse(img, offsets, gw, gh, centered, normalized, uniform=1):
    return run_op("QuantizedExtractGlimpse_8", [img, f4(offsets), -1.0, 1.0, gw, gh, centered, normalized, uniform])


def test_inside_by_hand():
    # Centered + normalized (0, 0): centre (0*4/2 + 2, 0*4/2 + 2) = (2, 2); a 2x2 window starts at trunc(2 - 1) = 1:
    # rows/cols 1..2 -> 105, 106, 109, 110.  The range passes through.
    q, mn, mx = glimpse(IMG, [0.0, 0.0], 2, 2, 1, 1)
    assert q.shape == (1, 2, 2, 1) and q.ravel().tolist() == [105, 106, 109, 110]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # Normalized only: (y, x) = (0.5, 0.25) -> (2, 1); 3 wide x 1 high: x0 = trunc(1 - 1.5) = trunc(-0.5) = 0,
    # y0 = trunc(2 - 0.5) = 1 -> row 1, cols 0..2 = 104, 105, 106.
    q, _, _ = glimpse(IMG, [0.5, 0.25], 3, 1, 0, 1)
    assert q.ravel().tolist() == [104, 105, 106]
    # Centered only (pixels from the centre): (-1, 1) -> (1, 3); 2x2 from (trunc(0), trunc(2)) -> 100+2, 103, 106, 107.
    q, _, _ = glimpse(IMG, [-1.0, 1.0], 2, 2, 1, 0)
    assert q.ravel().tolist() == [102, 103, 106, 107]
    # Neither: (y, x) = (3, 3) is the window centre: 2x2 from (2, 2) -> 110, 111, 114, 115.
    q, _, _ = glimpse(IMG, [3.0, 3.0], 2, 2, 0, 0)
    assert q.ravel().tolist() == [110, 111, 114, 115]


def test_outside_is_seeded_noise():
    # Window 3x3 centred on (0, 0) (plain offsets): starts at trunc(-1.5) = -1 -> row/col -1 is outside.
    img = np.stack([IMG[0], IMG[0][::-1] - 50])              # two batches: codes 100..115 and 50..65
    offsets = [0.0, 0.0, 0.0, 0.0]
    q, _, _ = glimpse(img, offsets, 3, 3, 0, 0, uniform=1)
    assert np.array_equal(q[0, 1:, 1:], img[0, :2, :2]) and np.array_equal(q[1, 1:, 1:], img[1, :2, :2])
    # Uniform noise over [min, max] of each batch's codes, drawn from PCG64 seeded (GLIMPSE_NOISE_SEED, batch).
    for b, (lo, hi) in enumerate(((100, 115), (50, 65))):
        want = np.random.default_rng((GLIMPSE_NOISE_SEED, b)).integers(lo, hi + 1, size=(3, 3, 1))
        outside = np.ones((3, 3), bool)
        outside[1:, 1:] = False
        assert np.array_equal(q[b][outside], want[outside])
    again, _, _ = glimpse(img, offsets, 3, 3, 0, 0, uniform=1)
    assert np.array_equal(again, q)                           # reproducible
    # Gaussian noise: mean / population std of the batch codes, clipped and rounded half away.
    g, _, _ = glimpse(img, offsets, 3, 3, 0, 0, uniform=0)
    vals = np.random.default_rng((GLIMPSE_NOISE_SEED, 0)).normal(img[0].mean(), img[0].std(), size=(3, 3, 1))
    want = np.trunc(np.clip(vals, 0, 255) + 0.5)
    assert np.array_equal(g[0, 0], want[0]) and np.array_equal(g[0, 1:, 1:], img[0, :2, :2])


def test_against_indexing():
    rng = np.random.default_rng(12)
    img = rng.integers(0, 256, (3, 9, 8, 2), dtype=np.uint8)
    offs = rng.uniform(-0.6, 0.6, (3, 2))
    q, _, _ = glimpse(img, offs.ravel(), 4, 3, 1, 1, uniform=1)
    for b in range(3):
        y0 = int(np.trunc((np.float32(offs[b, 0]) * 9) / 2 + 4.5 - 1.5))
        x0 = int(np.trunc((np.float32(offs[b, 1]) * 8) / 2 + 4 - 2))
        for i in range(3):
            for j in range(4):
                if 0 <= y0 + i < 9 and 0 <= x0 + j < 8:
                    assert np.array_equal(q[b, i, j], img[b, y0 + i, x0 + j])
                else:
                    assert img[b].min() <= q[b, i, j].min() and q[b, i, j].max() <= img[b].max()


def test_errors():
    assert_op_error("QuantizedExtractGlimpse_8", [IMG, f4([0.0]), -1.0, 1.0, 2, 2, 0, 0, 1], "one (y, x) pair")
    assert_op_error("QuantizedExtractGlimpse_8", [IMG, f4([0.0, 0.0]), -1.0, 1.0, 0, 2, 0, 0, 1], "glimpse width")
    assert_op_error("QuantizedExtractGlimpse_8", [IMG, f4([0.0, 0.0]), 1.0, 2.0, 2, 2, 0, 0, 1], "does not contain 0")
