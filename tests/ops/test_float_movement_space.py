"""SpaceToDepth_f, DepthToSpace_f, SpaceToBatchND_f, BatchToSpaceND_f (op texts: plain float data movement)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, i4


def s2d_reference(x, bh, bw):
    """out[b, y, x, (dy*bw + dx)*d + c] = in[b, y*bh + dy, x*bw + dx, c], one block phase at a time."""
    b, h, w, d = x.shape
    out = np.zeros((b, h // bh, w // bw, bh * bw * d), x.dtype)
    for dy in range(bh):
        for dx in range(bw):
            out[..., (dy * bw + dx) * d:(dy * bw + dx + 1) * d] = x[:, dy::bh, dx::bw, :]
    return out


def s2b_reference(x, bh, bw):
    """out[(dy*bw + dx)*b + n, y, x, c] = in[n, y*bh + dy, x*bw + dx, c]."""
    b = x.shape[0]
    out = np.zeros((bh * bw * b, x.shape[1] // bh, x.shape[2] // bw, x.shape[3]), x.dtype)
    for dy in range(bh):
        for dx in range(bw):
            out[(dy * bw + dx) * b:(dy * bw + dx + 1) * b] = x[:, dy::bh, dx::bw, :]
    return out


def test_space_depth_by_hand():
    # [1,2,2,1] pixels (0,0)=1 (0,1)=2 (1,0)=3 (1,1)=4, block 2: channel (dy*2 + dx) -> {1,2,3,4} at the one pixel
    x = f4([1.0, 2.0, 3.0, 4.0], (1, 2, 2, 1))
    (y,) = run_op("SpaceToDepth_f", [x, 2])
    assert y.shape == (1, 1, 1, 4) and y.ravel().tolist() == [1.0, 2.0, 3.0, 4.0]
    # block [1,2] on width {1,2,3,4}: pixels {1,2} and {3,4}
    assert run_op("SpaceToDepth_f", [f4([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 4, 1), i4([1, 2])])[0].tolist() == \
        [[[[1.0, 2.0], [3.0, 4.0]]]]
    # DepthToSpace undoes it: {1,2,3,4} in depth -> 2x2 {{1,2},{3,4}}
    (z,) = run_op("DepthToSpace_f", [f4([1.0, 2.0, 3.0, 4.0]), 2])
    assert z.shape == (1, 2, 2, 1) and z.ravel().tolist() == [1.0, 2.0, 3.0, 4.0]
    # crops [top 1, bottom 0, left 0, right 1] keep row 1, column 0 of {{1,2},{3,4}}: {3}
    (c,) = run_op("DepthToSpace_f", [f4([1.0, 2.0, 3.0, 4.0]), 2, i4([1, 0, 0, 1])])
    assert c.shape == (1, 1, 1, 1) and c.item() == 3.0


@pytest.mark.parametrize("bh, bw", [(1, 1), (2, 2), (2, 3), (3, 1)])
def test_space_depth_reference(bh, bw):
    rng = np.random.default_rng(bh * 10 + bw)
    x = rng.standard_normal((2, 2 * bh, 3 * bw, 3)).astype(np.float32)
    block = i4([bh, bw]) if bh != bw else bh
    (y,) = run_op("SpaceToDepth_f", [x, block])
    assert np.array_equal(y, s2d_reference(x, bh, bw))
    assert np.array_equal(run_op("DepthToSpace_f", [y, block])[0], x)


def test_space_batch_by_hand():
    # [1,2,2,1] {1,2,3,4}, block [2,2], no padding: batch dy*2 + dx holds pixel (dy, dx): {1,2,3,4}
    (y,) = run_op("SpaceToBatchND_f", [f4([1.0, 2.0, 3.0, 4.0], (1, 2, 2, 1)), i4([2, 2]), i4([0, 0, 0, 0])])
    assert y.shape == (4, 1, 1, 1) and y.ravel().tolist() == [1.0, 2.0, 3.0, 4.0]
    # [1,1,2,1] {5,6}, block [2] (bw = 1), pads [top 1, bottom 0]: padded rows {0,0}, {5,6};
    # batch 0 = row 0, batch 1 = row 1
    (p,) = run_op("SpaceToBatchND_f", [f4([5.0, 6.0], (1, 1, 2, 1)), i4([2]), i4([1, 0])])
    assert p.shape == (2, 1, 2, 1) and p.ravel().tolist() == [0.0, 0.0, 5.0, 6.0]
    # BatchToSpaceND: [4,1,1,1] {1,2,3,4} block [2,2] -> 2x2 {{1,2},{3,4}}; crops bottom 1, left 1 keep {2}
    (z,) = run_op("BatchToSpaceND_f", [f4([1.0, 2.0, 3.0, 4.0], (4, 1, 1, 1)), i4([2, 2]), i4([0, 0, 0, 0])])
    assert z.shape == (1, 2, 2, 1) and z.ravel().tolist() == [1.0, 2.0, 3.0, 4.0]
    (c,) = run_op("BatchToSpaceND_f", [f4([1.0, 2.0, 3.0, 4.0], (4, 1, 1, 1)), i4([2, 2]), i4([0, 1, 1, 0])])
    assert c.shape == (1, 1, 1, 1) and c.item() == 2.0


@pytest.mark.parametrize("bh, bw", [(1, 1), (2, 2), (3, 2), (2, 1)])
def test_space_batch_reference(bh, bw):
    rng = np.random.default_rng(40 + bh * 10 + bw)
    x = rng.standard_normal((2, 2 * bh + 1, 2 * bw + 1, 2)).astype(np.float32)
    top, left = 1, (1 if bw > 1 else 0)
    bottom = (-(x.shape[1] + top)) % bh  # the least padding that makes the padded size a multiple
    right = (-(x.shape[2] + left)) % bw
    table = ((0, 0), (top, bottom), (left, right), (0, 0))
    pads = i4([top, bottom, left, right], (1, 1, 2, 2))
    (y,) = run_op("SpaceToBatchND_f", [x, i4([bh, bw]), pads])
    assert np.array_equal(y, s2b_reference(np.pad(x, table), bh, bw))
    assert np.array_equal(run_op("BatchToSpaceND_f", [y, i4([bh, bw]), pads])[0], x)


def test_space_errors():
    x = np.zeros((1, 3, 4, 2), np.float32)
    assert_op_error("SpaceToDepth_f", [x, 2], "must be multiples of block 2x2")
    assert_op_error("SpaceToDepth_f", [x, 0], "must be >= 1")
    assert_op_error("DepthToSpace_f", [x, 2], "multiple of block 2x2 = 4")
    assert_op_error("DepthToSpace_f", [np.zeros((1, 1, 1, 4), np.float32), 2, i4([1, 1, 0, 0])], "leave no output")
    assert_op_error("DepthToSpace_f", [np.zeros((1, 1, 1, 4), np.float32), 2, i4([0, 0, -1, 0])], ">= 0")
    assert_op_error("SpaceToBatchND_f", [x, i4([2, 2]), i4([0, 0, 0, 0])], "padded height 3")
    assert_op_error("SpaceToBatchND_f", [x, i4([2, 2]), i4([1, 0])], "expected 4")
    assert_op_error("BatchToSpaceND_f", [x, i4([2, 2]), i4([0, 0, 0, 0])], "multiple of block 2x2 = 4")
    assert_op_error("BatchToSpaceND_f", [np.zeros((2, 1, 1, 1), np.float32), i4([2]), i4([1, 1])], "leave no output")
