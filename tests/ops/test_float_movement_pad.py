"""Pad_f and MirrorPad_f (op texts: plain float data movement)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_MIRROR_REFLECT, PAD_MIRROR_SYMMETRIC, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error, f4, i4


def pads(*pairs):
    return i4([v for p in pairs for v in p], (1, 1, len(pairs), 2))


def test_pad_by_hand():
    # {1,2} as [1,1,1,2]; padding {{0,0},{0,0},{1,0},{0,1}}: one zero row before on w, one zero column after on d
    (out,) = run_op("Pad_f", [f4([1.0, 2.0]), pads((0, 0), (0, 0), (1, 0), (0, 1))])
    assert out.dtype == np.float32 and out.tolist() == [[[[0.0, 0.0, 0.0], [1.0, 2.0, 0.0]]]]
    # n = 1: only b is padded, one zero image on each side: shape (3,1,1,1) {0, 5, 0}
    (out,) = run_op("Pad_f", [f4([5.0]), pads((1, 1))])
    assert out.shape == (3, 1, 1, 1) and out.ravel().tolist() == [0.0, 5.0, 0.0]


@pytest.mark.parametrize("seed", range(5))
def test_pad_is_numpy_pad(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal([int(v) for v in rng.integers(1, 4, size=4)]).astype(np.float32)
    n = int(rng.integers(1, 5))
    table = [tuple(int(v) for v in rng.integers(0, 3, size=2)) for _ in range(n)]
    want = np.pad(x, table + [(0, 0)] * (4 - n))
    assert np.array_equal(run_op("Pad_f", [x, pads(*table)])[0], want)


def test_mirror_pad_by_hand():
    x = f4([1.0, 2.0, 3.0])
    # REFLECT about the edge element, 2 each side of d: 3 2 | 1 2 3 | 2 1
    (r,) = run_op("MirrorPad_f", [x, pads((0, 0), (0, 0), (0, 0), (2, 2))], padding=PAD_MIRROR_REFLECT)
    assert r.ravel().tolist() == [3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]
    # SYMMETRIC repeats the edge element: 2 1 | 1 2 3 | 3 2
    (s,) = run_op("MirrorPad_f", [x, pads((0, 0), (0, 0), (0, 0), (2, 2))], padding=PAD_MIRROR_SYMMETRIC)
    assert s.ravel().tolist() == [2.0, 1.0, 1.0, 2.0, 3.0, 3.0, 2.0]


@pytest.mark.parametrize("seed", range(5))
def test_mirror_pad_is_numpy_pad(seed):
    rng = np.random.default_rng(20 + seed)
    shape = [int(v) for v in rng.integers(2, 5, size=4)]
    x = rng.standard_normal(shape).astype(np.float32)
    for mode, padding in (("reflect", PAD_MIRROR_REFLECT), ("symmetric", PAD_MIRROR_SYMMETRIC)):
        table = [tuple(int(v) for v in rng.integers(0, n, size=2)) for n in shape]   # below the size (op_mirrorpad.c)
        got = run_op("MirrorPad_f", [x, pads(*table)], padding=padding)[0]
        assert np.array_equal(got, np.pad(x, table, mode=mode))


def test_pad_errors():
    x = f4([1.0, 2.0, 3.0])
    assert_op_error("Pad_f", [x, pads((0, 0), (0, -1))], "negative")
    assert_op_error("Pad_f", [x, i4([1, 1, 1])], "expected [1,1,n,2]")
    assert_op_error("MirrorPad_f", [x, pads((0, 0))], "NN_PAD_MIRROR_REFLECT", padding=PAD_VALID)
    assert_op_error("MirrorPad_f", [x, pads((0, 0), (0, 0), (0, 0), (3, 0))], "exceeds 2",
                    padding=PAD_MIRROR_REFLECT)
    # op_mirrorpad.c: every pad below its dimension in SYMMETRIC mode too (TF would take 3 here), and 4 rows
    assert_op_error("MirrorPad_f", [x, pads((0, 0), (0, 0), (0, 0), (0, 3))], "exceeds 2",
                    padding=PAD_MIRROR_SYMMETRIC)
    assert_op_error("MirrorPad_f", [x, pads((0, 0), (0, 0), (1, 1))], "exactly 4 rows",
                    padding=PAD_MIRROR_SYMMETRIC)
