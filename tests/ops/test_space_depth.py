"""SpaceToDepth_8, DepthToSpace_8, SpaceToBatchND_8, BatchToSpaceND_8 (op texts; SEMANTICS.md §6)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error


def ints(*vals: int) -> np.ndarray:
    return np.array(vals, np.int32).reshape(1, 1, 1, -1)


def pairs(*vals: int) -> np.ndarray:
    """A paddings/crops tensor as op_batchspace.c requires it: shape [1, 1, k, 2] (k = block entries)."""
    return np.array(vals, np.int32).reshape(1, 1, -1, 2)


def rand_u8(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=shape).astype(np.uint8)


def space_to_depth_ref(x: np.ndarray, bh: int, bw: int) -> np.ndarray:
    """Independent form: output channel block (dy*bw + dx) holds the phase x[:, dy::bh, dx::bw, :]."""
    b, h, w, d = x.shape
    out = np.zeros((b, h // bh, w // bw, bh * bw * d), np.uint8)
    for dy in range(bh):
        for dx in range(bw):
            k = dy * bw + dx
            out[..., k * d:(k + 1) * d] = x[:, dy::bh, dx::bw, :]
    return out


def space_to_batch_ref(xp: np.ndarray, bh: int, bw: int) -> np.ndarray:
    """Independent form: output batch (dy*bw + dx)*b + n holds the phase xp[n, dy::bh, dx::bw, :]."""
    return np.concatenate([xp[:, dy::bh, dx::bw, :] for dy in range(bh) for dx in range(bw)], axis=0)


# ---------------------------------------------------------------- SpaceToDepth / DepthToSpace

def test_space_to_depth_by_hand():
    # x[0,y,x,0] = 4y + x on a 4x4 image, block 2:
    # out pixel (0,0) = x(0,0), x(0,1), x(1,0), x(1,1) = 0, 1, 4, 5
    # out pixel (1,1) = x(2,2), x(2,3), x(3,2), x(3,3) = 10, 11, 14, 15
    x = np.arange(16, dtype=np.uint8).reshape(1, 4, 4, 1)
    q, mn, mx = run_op("SpaceToDepth_8", [x, ints(2), -1.0, 3.0])
    assert q.dtype == np.uint8 and q.shape == (1, 2, 2, 4)
    assert q[0, 0, 0].tolist() == [0, 1, 4, 5]
    assert q[0, 1, 1].tolist() == [10, 11, 14, 15]
    assert (mn.item(), mx.item()) == (-1.0, 3.0)
    # block [1, 2] (bh=1, bw=2) on a 1x1x4x2 row [(0,1),(2,3),(4,5),(6,7)]:
    # pixel 0 takes input pixels 0 and 1 -> 0,1,2,3; pixel 1 takes pixels 2,3 -> 4,5,6,7
    x = np.arange(8, dtype=np.uint8).reshape(1, 1, 4, 2)
    q, _, _ = run_op("SpaceToDepth_8", [x, ints(1, 2), -1.0, 1.0])
    assert q.shape == (1, 1, 2, 4) and q.ravel().tolist() == list(range(8))


@pytest.mark.parametrize("shape,block", [((2, 4, 6, 3), (2,)), ((1, 6, 4, 2), (3, 2)), ((2, 2, 3, 5), (1, 3))])
def test_space_to_depth_equals_phase_slices(shape, block):
    x = rand_u8(shape, 1)
    bh, bw = (block[0], block[0]) if len(block) == 1 else block
    q, _, _ = run_op("SpaceToDepth_8", [x, ints(*block), -2.0, 2.0])
    assert np.array_equal(q, space_to_depth_ref(x, bh, bw))
    # the op text's own steps: [b, h/bh, bh, w/bw, bw*d] -> swap the two middle axes -> reshape
    b, h, w, d = shape
    steps = x.reshape(b, h // bh, bh, w // bw, bw * d).swapaxes(2, 3).reshape(q.shape)
    assert np.array_equal(q, steps)


def test_depth_to_space_by_hand():
    # one pixel of depth 4, block 2: channel (dy*2 + dx) goes to pixel (dy, dx)
    x = np.array([7, 8, 9, 10], np.uint8).reshape(1, 1, 1, 4)
    q, mn, mx = run_op("DepthToSpace_8", [x, ints(2), 0.0, 5.0])
    assert q.shape == (1, 2, 2, 1) and q[0, :, :, 0].tolist() == [[7, 8], [9, 10]]
    assert (mn.item(), mx.item()) == (0.0, 5.0)
    # depth 8, block 2 -> output depth 2; channel (dy*2 + dx)*2 + c -> pixel (dy, dx) channel c
    x = np.arange(8, dtype=np.uint8).reshape(1, 1, 1, 8)
    q, _, _ = run_op("DepthToSpace_8", [x, ints(2), 0.0, 5.0])
    assert q[0, 1, 0].tolist() == [4, 5] and q[0, 0, 1].tolist() == [2, 3]
    # crops [top=1, bottom=0, left=0, right=1] of the 4x4 result of the 2x2x4 inverse of
    # the SpaceToDepth hand case (values 4y + x): rows 1..3, columns 0..2
    x = np.array([[[0, 1, 4, 5], [2, 3, 6, 7]], [[8, 9, 12, 13], [10, 11, 14, 15]]], np.uint8)[None]
    q, _, _ = run_op("DepthToSpace_8", [x, ints(2), 0.0, 5.0, ints(1, 0, 0, 1)])
    assert q[0, :, :, 0].tolist() == [[4, 5, 6], [8, 9, 10], [12, 13, 14]]


@pytest.mark.parametrize("shape,block", [((2, 3, 2, 12), (2,)), ((1, 2, 3, 12), (3, 2)), ((1, 2, 4, 6), (1, 3))])
def test_depth_to_space_inverts_space_to_depth(shape, block):
    x = rand_u8(shape, 2)
    bh, bw = (block[0], block[0]) if len(block) == 1 else block
    q, _, _ = run_op("DepthToSpace_8", [x, ints(*block), -1.0, 1.0])
    b, h, w, d = shape
    assert q.shape == (b, h * bh, w * bw, d // (bh * bw))
    assert np.array_equal(space_to_depth_ref(q, bh, bw), x)
    crops = (1, 0, 0, min(1, w * bw - 1))
    qc, _, _ = run_op("DepthToSpace_8", [x, ints(*block), -1.0, 1.0, ints(*crops)])
    assert np.array_equal(qc, q[:, 1:, :q.shape[2] - crops[3], :])


def test_space_depth_errors():
    x = np.zeros((1, 4, 6, 2), np.uint8)
    assert_op_error("SpaceToDepth_8", [x, ints(4), -1.0, 1.0], "multiples of block 4x4")
    assert_op_error("SpaceToDepth_8", [x, ints(0), -1.0, 1.0], "block size [0] must be >= 1")
    assert_op_error("SpaceToDepth_8", [x, ints(1, 2, 3), -1.0, 1.0], "bad block size")
    assert_op_error("DepthToSpace_8", [x, ints(2), -1.0, 1.0], "depth 2 must be a multiple")
    y = np.zeros((1, 1, 1, 4), np.uint8)
    assert_op_error("DepthToSpace_8", [y, ints(2), -1.0, 1.0, ints(1, 1, 0, 0)], "leaves no output")
    assert_op_error("DepthToSpace_8", [y, ints(2), -1.0, 1.0, ints(-1, 0, 0, 0)], "bad crop tensor", "negative")
    assert_op_error("DepthToSpace_8", [y, ints(2), -1.0, 1.0, ints(0, 0)], "bad crop_tensor shape")
    assert_op_error("DepthToSpace_8", [y.reshape(1, 4), ints(2), -1.0, 1.0], "expected 4-D")


# ---------------------------------------------------------------- SpaceToBatchND / BatchToSpaceND

def test_space_to_batch_by_hand():
    # [[1,2],[3,4]], block [2,2], no padding: batch (dy*2 + dx) holds pixel (dy, dx) -> 1, 2, 3, 4
    x = np.array([1, 2, 3, 4], np.uint8).reshape(1, 2, 2, 1)
    q, mn, mx = run_op("SpaceToBatchND_8", [x, ints(2, 2), pairs(0, 0, 0, 0), -1.0, 1.0])
    assert q.shape == (4, 1, 1, 1) and q.ravel().tolist() == [1, 2, 3, 4]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # range [-1, 1]: step = 2/255, zero = round_away(1 / (2/255)) = round_away(127.5) = 128.
    # row [5,6,7], block [1,2], pads [[0,0],[1,0]]: padded row [128,5,6,7];
    # dx=0 takes columns 0,2 -> [128, 6]; dx=1 takes columns 1,3 -> [5, 7]
    x = np.array([5, 6, 7], np.uint8).reshape(1, 1, 3, 1)
    q, _, _ = run_op("SpaceToBatchND_8", [x, ints(1, 2), pairs(0, 0, 1, 0), -1.0, 1.0])
    assert q.shape == (2, 1, 2, 1) and q[:, 0, :, 0].tolist() == [[128, 6], [5, 7]]
    # one block entry (bw = 1), pads [top=1, bottom=1], range [0, 1] (zero code 0):
    # column [9,10] -> padded [0,9,10,0]; dy=0 rows 0,2 -> [0,10]; dy=1 rows 1,3 -> [9,0]
    x = np.array([9, 10], np.uint8).reshape(1, 2, 1, 1)
    q, _, _ = run_op("SpaceToBatchND_8", [x, ints(2), pairs(1, 1), 0.0, 1.0])
    assert q.shape == (2, 2, 1, 1) and q[:, :, 0, 0].tolist() == [[0, 10], [9, 0]]


def test_batch_to_space_by_hand():
    # inverse of the first case above: batches 1,2,3,4 -> [[1,2],[3,4]]
    x = np.array([1, 2, 3, 4], np.uint8).reshape(4, 1, 1, 1)
    q, mn, mx = run_op("BatchToSpaceND_8", [x, ints(2, 2), pairs(0, 0, 0, 0), -1.0, 1.0])
    assert q.shape == (1, 2, 2, 1) and q[0, :, :, 0].tolist() == [[1, 2], [3, 4]]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # inverse of the second case with crops [[0,0],[1,0]]: rebuilt row [128,5,6,7], drop column 0
    x = np.array([128, 6, 5, 7], np.uint8).reshape(2, 1, 2, 1)
    q, _, _ = run_op("BatchToSpaceND_8", [x, ints(1, 2), pairs(0, 0, 1, 0), -1.0, 1.0])
    assert q.shape == (1, 1, 3, 1) and q.ravel().tolist() == [5, 6, 7]


@pytest.mark.parametrize("shape,block,pads", [
    ((2, 4, 6, 3), (2, 3), (0, 0, 0, 0)),
    ((1, 3, 5, 2), (2, 2), (1, 0, 2, 1)),
    ((3, 5, 2, 1), (3,), (0, 1)),
])
def test_space_batch_round_trip(shape, block, pads):
    x = rand_u8(shape, 3)
    q, _, _ = run_op("SpaceToBatchND_8", [x, ints(*block), pairs(*pads), -0.5, 1.5])
    bh, bw = (block[0], 1) if len(block) == 1 else block
    top, bottom, left, right = (*pads, 0, 0) if len(pads) == 2 else pads
    zero = round(0.5 / (2.0 / 255))  # 63.75 -> 64
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=zero)
    assert np.array_equal(q, space_to_batch_ref(xp, bh, bw))
    back, mn, mx = run_op("BatchToSpaceND_8", [q, ints(*block), pairs(*pads), -0.5, 1.5])
    assert np.array_equal(back, x)
    assert (mn.item(), mx.item()) == (-0.5, 1.5)


def test_space_batch_errors():
    # op_batchspace.c: each case is an error in nnlib's C too (harness row "move SpaceToBatchND_8")
    x = np.zeros((1, 3, 4, 1), np.uint8)
    assert_op_error("SpaceToBatchND_8", [x, ints(2, 2), pairs(0, 0, 0, 0), -1.0, 1.0], "padded height 3")
    # pads must be shaped [1, 1, k, 2] for a block of k entries: flat [1,1,1,4] or two values for k = 2
    # are the C's "bad pad shape"
    assert_op_error("SpaceToBatchND_8", [x, ints(2, 2), ints(0, 0, 0, 0), -1.0, 1.0], "bad stride / paddings shape")
    assert_op_error("SpaceToBatchND_8", [x, ints(2, 2), pairs(1, 0), -1.0, 1.0], "bad stride / paddings shape")
    assert_op_error("BatchToSpaceND_8", [x, ints(2, 2), ints(0, 0, 0, 0), -1.0, 1.0], "bad stride / crops shape")
    y = np.zeros((3, 1, 1, 1), np.uint8)
    assert_op_error("BatchToSpaceND_8", [y, ints(2, 1), pairs(0, 0, 0, 0), -1.0, 1.0], "batches 3 not evenly")
    z = np.zeros((4, 1, 1, 1), np.uint8)
    # crops larger than the 2x2 result: the C fails to prepare its output
    assert_op_error("BatchToSpaceND_8", [z, ints(2, 2), pairs(1, 2, 0, 0), -1.0, 1.0], "larger than the 2x2 result")
    # negative crops: the C reads outside its input (undefined values), the engine refuses
    assert_op_error("BatchToSpaceND_8", [z, ints(2, 2), pairs(0, 0, 0, -1), -1.0, 1.0], "negative")


def test_space_batch_what_the_c_accepts():
    """Cases that were errors by the op texts and that nnlib's C runs (values from the C, op_batchspace.c)."""
    x = np.arange(1, 13, dtype=np.uint8).reshape(1, 3, 4, 1)
    # negative pads crop: pads [1, 0, -2, 2] -> padded rows [pad, r0, r1, r2], columns [c2, c3, pad, pad]
    q, mn, mx = run_op("SpaceToBatchND_8", [x, ints(2, 2), pairs(1, 0, -2, 2), -1.0, 1.0])
    assert q.shape == (4, 2, 2, 1)
    assert q[..., 0].tolist() == [[[128, 128], [7, 128]], [[128, 128], [8, 128]],
                                  [[3, 128], [11, 128]], [[4, 128], [12, 128]]]
    # the range is copied unchecked; the pad byte is quantize_uint8(0, min, max): 0 for min > max or a
    # range above 0, 255 for a range below 0
    for (lo, hi), pad in (((1.0, -1.0), 0), ((1.0, 3.0), 0), ((-3.0, -1.0), 255)):
        q, mn, mx = run_op("SpaceToBatchND_8", [x, ints(2, 2), pairs(1, 0, 0, 0), lo, hi])
        assert q.ravel().tolist() == [pad, pad, 5, 7, pad, pad, 6, 8, 1, 3, 9, 11, 2, 4, 10, 12]
        assert (mn.item(), mx.item()) == (lo, hi)
    # crops leaving exactly nothing: an empty tensor (batch 1, 0 rows)
    z = np.zeros((4, 1, 1, 1), np.uint8)
    q, _, _ = run_op("BatchToSpaceND_8", [z, ints(2, 2), pairs(1, 1, 0, 0), -1.0, 1.0])
    assert q.shape == (1, 0, 2, 1)


def test_space_depth_copies_the_range():
    # op_depthspace.c tensor_copy's min/max: a range excluding 0 passes through
    x = np.arange(16, dtype=np.uint8).reshape(1, 4, 4, 1)
    q, mn, mx = run_op("SpaceToDepth_8", [x, ints(2), 0.5, 1.0])
    assert q[0, 0, 0].tolist() == [0, 1, 4, 5] and (mn.item(), mx.item()) == (0.5, 1.0)
