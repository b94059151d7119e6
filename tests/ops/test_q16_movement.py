"""Transpose_16, AxisShuffle_16, SpaceToDepth_16, DepthToSpace_16, QuantizedPad_16, QuantizedPad_u16
(op texts; SEMANTICS.md §6: data moves, the range passes through)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, i4

#: values whose high and low bytes differ, so a byte-plane mix-up would show
WIDE = [256, 513, -1, 32767, -32768, 7]


def random16(rng: np.random.Generator, shape, kind: str) -> tuple[np.ndarray, float, float]:
    if kind == "int16":
        return rng.integers(-32768, 32768, shape).astype(np.int16), -2.0, 2.0
    if kind == "uint16":
        return rng.integers(0, 65536, shape).astype(np.uint16), -1.0, 3.0
    return rng.integers(0, 256, shape).astype(np.uint8), -1.0, 3.0


def test_transpose_16_by_hand():
    # x[0,i,j,0] = WIDE[3i + j], shape [1,2,3,1]; control [1,0,2] swaps h and w (text)
    x = np.array(WIDE, np.int16).reshape(1, 2, 3, 1)
    q, mn, mx = run_op("Transpose_16", [x, i4([1, 0, 2]), -1.0, 1.0])
    assert q.dtype == np.int16 and q[0, :, :, 0].tolist() == [[256, 32767], [513, -32768], [-1, 7]]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)


@pytest.mark.parametrize("kind", ["int16", "uint16", "uint8"])
@pytest.mark.parametrize("seed", range(3))
def test_transpose_16_is_np_transpose(kind, seed):
    rng = np.random.default_rng(seed)
    x, lo, hi = random16(rng, tuple(rng.integers(1, 5, size=4)), kind)
    k = int(rng.integers(2, 5))
    control = [int(v) for v in rng.permutation(k)]
    full = list(range(4 - k)) + [4 - k + c for c in control]
    q, mn, mx = run_op("Transpose_16", [x, i4(control), lo, hi])
    assert q.dtype == x.dtype and np.array_equal(q, np.transpose(x, full))
    assert (mn.item(), mx.item()) == (lo, hi)


def test_axis_shuffle_16_by_hand():
    # depth 6 in 2 groups: [g0: 0 1 2 | g1: 3 4 5] -> [0 3 1 4 2 5] (text: reshape [2,3], transpose, reshape)
    x = np.array(WIDE, np.int16).reshape(1, 1, 1, 6)
    q, _, _ = run_op("AxisShuffle_16", [x, i4([3]), i4([2]), -1.0, 1.0])
    assert q.tolist() == [[[[256, 32767, 513, -32768, -1, 7]]]]
    # negative axis -1 is the depth axis too
    q2, _, _ = run_op("AxisShuffle_16", [x, i4([-1]), i4([2]), -1.0, 1.0])
    assert np.array_equal(q, q2)


@pytest.mark.parametrize("kind", ["int16", "uint16"])
def test_axis_shuffle_16_reference(kind):
    rng = np.random.default_rng(5)
    x, lo, hi = random16(rng, (2, 6, 4, 3), kind)
    q, _, _ = run_op("AxisShuffle_16", [x, i4([1]), i4([3]), lo, hi])
    expected = x.reshape(2, 3, 2, 4, 3).transpose(0, 2, 1, 3, 4).reshape(x.shape)
    assert q.dtype == x.dtype and np.array_equal(q, expected)


def test_space_depth_16_by_hand():
    # [1,2,2,1] block 2 -> [1,1,1,4] in the order (dy, dx): a b / c d -> a b c d
    x = np.array(WIDE[:4], np.int16).reshape(1, 2, 2, 1)
    q, mn, mx = run_op("SpaceToDepth_16", [x, i4([2]), -1.0, 1.0])
    assert q.tolist() == [[[[256, 513, -1, 32767]]]] and (mn.item(), mx.item()) == (-1.0, 1.0)
    back, _, _ = run_op("DepthToSpace_16", [q, i4([2]), -1.0, 1.0])
    assert np.array_equal(back, x)
    # crops [top, bottom, left, right] = [1, 0, 0, 1] keep only c
    c, _, _ = run_op("DepthToSpace_16", [q, i4([2]), -1.0, 1.0, i4([1, 0, 0, 1])])
    assert c.tolist() == [[[[-1]]]]


@pytest.mark.parametrize("kind", ["int16", "uint16", "uint8"])
def test_space_depth_16_reference(kind):
    rng = np.random.default_rng(11)
    x, lo, hi = random16(rng, (2, 4, 6, 3), kind)
    q, _, _ = run_op("SpaceToDepth_16", [x, i4([2, 3]), lo, hi])
    # text: [b, h/bh, bh, w/bw, bw*d] -> swap axes 2,3 -> [b, h/bh, w/bw, bh*bw*d]
    expected = x.reshape(2, 2, 2, 2, 9).transpose(0, 1, 3, 2, 4).reshape(2, 2, 2, 18)
    assert q.dtype == x.dtype and np.array_equal(q, expected)
    back, _, _ = run_op("DepthToSpace_16", [q, i4([2, 3]), lo, hi, i4([0, 1, 2, 0])])
    assert np.array_equal(back, x[:, :3, 2:, :])


def test_pad_16_by_hand():
    # +-1: step 2**-15. 0.5 -> 16384; pads [[0,0],[0,0],[0,0],[1,2]] on depth
    x = np.array([-300, 300], np.int16).reshape(1, 1, 1, 2)
    pads = i4([0, 0, 0, 0, 0, 0, 1, 2]).reshape(1, 1, 4, 2)
    q, mn, mx = run_op("QuantizedPad_16", [x, -1.0, 1.0, pads, 0.5])
    assert q.dtype == np.int16 and q.tolist() == [[[[16384, -300, 300, 16384, 16384]]]]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # default 0.0 -> code 0; -inf -> -32768; 1.0 -> 32768 (within 1536 codes) -> clipped to 32767
    for value, code in ((None, 0), (-np.inf, -32768), (1.0, 32767), (-0.5, -16384)):
        extra = [] if value is None else [float(value)]
        q, _, _ = run_op("QuantizedPad_16", [x, -1.0, 1.0, pads, *extra])
        assert q[0, 0, 0, 0] == code and q[0, 0, 0, 4] == code


def test_pad_u16_by_hand():
    # [-1, 3]: step 2**-14, zero 16384; pad value code = round_away((v + 1) / 2**-14)
    x = np.array([[7, 65535]], np.uint16).reshape(1, 1, 1, 2)
    pads = i4([0, 0, 1, 0, 0, 0, 0, 0]).reshape(1, 1, 4, 2)           # one row above (h before)
    for value, code in ((None, 16384), (-1.0, 0), (3.0, 65535), (np.inf, 65535), (0.5, 24576)):
        extra = [] if value is None else [float(value)]
        q, mn, mx = run_op("QuantizedPad_u16", [x, -1.0, 3.0, pads, *extra])
        assert q.dtype == np.uint16 and q.tolist() == [[[[code, code]], [[7, 65535]]]]
        assert (mn.item(), mx.item()) == (-1.0, 3.0)


@pytest.mark.parametrize("op,kind", [("QuantizedPad_16", "int16"), ("QuantizedPad_u16", "uint16")])
def test_pad_16_is_np_pad(op, kind):
    rng = np.random.default_rng(2)
    x, lo, hi = random16(rng, (1, 3, 4, 2), kind)
    pads = [[0, 1], [2, 0], [1, 1], [0, 3]]
    q, _, _ = run_op(op, [x, lo, hi, i4(sum(pads, [])).reshape(1, 1, 4, 2), 0.25])
    step = (hi - lo) / 65536
    code = round(0.25 / step) if kind == "int16" else round((0.25 - lo) / step)
    assert np.array_equal(q, np.pad(x, pads, constant_values=code))


def test_errors_name_node_and_op():
    x = np.array(WIDE, np.int16).reshape(1, 1, 2, 3)
    assert_op_error("Transpose_16", [x, i4([0, 0]), -1.0, 1.0], "control")
    assert_op_error("Transpose_16", [x.astype(np.int32), i4([1, 0]), -1.0, 1.0], "input data", "dtype int32")
    assert_op_error("Transpose_16", [x, i4([1, 0]), -1.0, 0.5], "not symmetric")
    assert_op_error("AxisShuffle_16", [x.astype(np.uint8), i4([3]), i4([3]), -1.0, 1.0], "dtype uint8")
    assert_op_error("AxisShuffle_16", [x, i4([3]), i4([2]), -1.0, 1.0], "groups 2", "divide")
    assert_op_error("SpaceToDepth_16", [x, i4([2]), -1.0, 1.0], "multiples of block")
    pads = i4([0, 0, 0, 0, 0, 0, 1, 0]).reshape(1, 1, 4, 2)
    # 1.1 / 2**-15 = 36044.8 -> 36045, more than 1536 codes above 32767
    assert_op_error("QuantizedPad_16", [x, -1.0, 1.0, pads, 1.1], "1536 codes")
    assert run_op("QuantizedPad_16", [x, -1.0, 1.0, pads, float("nan")])[0].min() == -32768  # the device: lowest code
    assert_op_error("QuantizedPad_u16", [x, -1.0, 1.0, pads], "dtype int16")
    assert_op_error("QuantizedPad_16", [x, -1.0, 1.0, i4([-1, 0])], "negative")
