"""The d32 layout (SEMANTICS.md §7): D32Tensor, to_d32 / from_d32, the layout ops, engine plumbing."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from hexnn_import.engine import Engine
from hexnn_import.graph import Graph, OutputDef, Ref
from hexnn_import.ops import run_op
from hexnn_import.ops.d32 import D32Tensor, after_padding, from_d32, right_padding, to_d32
from hexnn_import.testing.opcheck import assert_op_error, i32, u8

RNG = np.random.default_rng(732)


def test_default_paddings_by_hand():
    # §7: right = least making left + w + right a multiple of 4, minus 4 when above 7.
    assert right_padding(4, 5) == 3  # 4 + 5 = 9 -> 12
    assert right_padding(4, 8) == 0  # 12 already
    assert right_padding(4, 5, 7) == 7  # 4 + 5 + 7 = 16
    assert right_padding(4, 6, 7) == 6  # 4 + 6 + 7 = 17 -> 20: right 10 > 7 -> 6 (total 16)
    assert right_padding(0, 1, 5) == 7  # 1 + 5 = 6 -> 8: right 7
    assert after_padding(0, 3) == 29 and after_padding(30, 3) == 31 and after_padding(0, 64) == 0
    t = to_d32(np.zeros((1, 2, 5, 3), np.uint8))
    assert t.padding == (4, 4, 4, 3, 0, 29)
    assert t.data.shape == (1, 10, 1, 12, 32)


def test_address_formula_by_hand():
    # x[0, 0, 1, 2] = 6 with top/bottom 1, left 1, right 1, before 2 (d_total 32, w_total 4, h_total 3):
    # address = ((0*3 + 0+1) * 1 + (2+2)//32) * 4*32 + (1+1)*32 + (2+2)%32 = 128 + 64 + 4 = 196
    x = u8([1, 2, 3, 4, 5, 6], (1, 1, 2, 3))
    t = to_d32(x, top=1, bottom=1, left=1, right=1, before=2)
    assert t.address(0, 0, 1, 2) == 196
    assert t.data.reshape(-1)[196] == 6
    # x[0,0,0,0] = 1: ((0 + 1) * 1 + 0) * 128 + 32 + 2 = 162
    assert t.address(0, 0, 0, 0) == 162 and t.data.reshape(-1)[162] == 1
    assert int(np.count_nonzero(t.data)) == 6  # padding written as 0 by to_d32


def test_address_formula_two_slices_and_batches():
    # b=1, y=2, x=0, c=40 in [2,3,1,45] with top 4, left 4, right 3 (w_total 8), before 30 (d_total 96, 3 slices):
    # c + before = 70 -> slice 2, lane 6; h_total = 11
    # address = ((1*11 + 2+4) * 3 + 2) * 8*32 + (0+4)*32 + 6 = 53 * 256 + 134 = 13702
    x = RNG.integers(0, 256, (2, 3, 1, 45), dtype=np.uint8)
    t = to_d32(x, left=4, right=3, before=30)
    assert t.h_total == 11 and t.w_total == 8 and t.d_total == 96 and t.nd32 == 3
    assert t.address(1, 2, 0, 40) == 13702
    assert t.data.reshape(-1)[13702] == x[1, 2, 0, 40]
    # every element, vectorized, against the formula
    b, y, xx, c = np.meshgrid(*[np.arange(n) for n in x.shape], indexing="ij")
    np.testing.assert_array_equal(t.data.reshape(-1)[t.address(b, y, xx, c)], x)


@pytest.mark.parametrize("seed", range(40))
def test_roundtrip_is_identity_for_every_padding(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in (rng.integers(1, 4), rng.integers(1, 6), rng.integers(1, 11), rng.integers(1, 80)))
    x = rng.integers(0, 256, shape, dtype=np.uint8)
    left, before, tb = int(rng.integers(0, 8)), int(rng.integers(0, 32)), int(rng.integers(0, 6))
    right = right_padding(left, shape[2], int(rng.integers(0, 8)))
    after = after_padding(before, shape[3]) + 32 * int(rng.integers(0, 2))
    t = to_d32(x, top=tb, bottom=int(rng.integers(0, 6)), left=left, right=right, before=before, after=after)
    assert t.shape == shape and t.w_total % 4 == 0 and t.d_total % 32 == 0
    np.testing.assert_array_equal(from_d32(t.fill_padding(rng)), x)
    (back,) = run_op("Convert_from_d32", [run_op("Convert_to_d32", [x, before, left, 0, tb])[0]])
    np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("seed", range(12))
def test_a_lazy_layout_has_the_same_bytes_when_read(seed):
    # kernels hand on lazy d32 outputs (laid out on first read of .data): geometry without the bytes,
    # then exactly the bytes of the eager layout, the §7 addresses included
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if seed % 3 else np.int16
    shape = tuple(int(v) for v in (rng.integers(1, 3), rng.integers(1, 6), rng.integers(1, 11), rng.integers(1, 70)))
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    left, before, tb = int(rng.integers(0, 8)), int(rng.integers(0, 32)), int(rng.integers(0, 6))
    kw = dict(top=tb, bottom=tb, left=left, right=right_padding(left, shape[2], int(rng.integers(0, 8))),
              before=before, fill=int(rng.integers(0, 100)))
    eager, lazy = to_d32(x, **kw), to_d32(x, **kw, lazy=True)
    assert lazy._data is None
    assert (lazy.h_total, lazy.w_total, lazy.d_total, lazy.nd32, lazy.dtype) == \
        (eager.h_total, eager.w_total, eager.d_total, eager.nd32, eager.dtype)
    np.testing.assert_array_equal(lazy.logical(), x)
    assert lazy._data is None  # reading the logical data does not lay it out
    np.testing.assert_array_equal(lazy.data, eager.data)
    b, y, xx, c = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    np.testing.assert_array_equal(lazy.data.reshape(-1)[lazy.address(b, y, xx, c)], x)
    np.testing.assert_array_equal(from_d32(to_d32(x, **kw, lazy=True).fill_padding(rng)), x)


def test_int16_elements_roundtrip():
    x = RNG.integers(-32768, 32768, (2, 3, 5, 33), dtype=np.int16)
    t = to_d32(x).fill_padding(RNG)
    assert t.dtype == np.int16
    np.testing.assert_array_equal(t.logical(), x)


def test_fill_padding_masks_by_hand():
    # [1,1,1,1] value 7; top/bottom 0, left 0, right 3 (w_total 4), before 1 (after 30).
    # column 0: lane 0 (before) and lanes 2..31 (after) are depth padding; lane 1 holds 7;
    # columns 1..3 are spatial padding (all lanes).
    t = to_d32(u8([7], (1, 1, 1, 1)), top=0, bottom=0, left=0, right=3, before=1).fill_padding(0xAA, 0x55)
    col0 = t.data[0, 0, 0, 0]
    assert col0[1] == 7 and col0[0] == 0x55 and (col0[2:] == 0x55).all()
    assert (t.data[0, 0, 0, 1:] == 0xAA).all()


def test_d32tensor_rejects_bad_layouts():
    with pytest.raises(ValueError, match="multiple of 4"):
        to_d32(np.zeros((1, 1, 3, 1), np.uint8), right=0, left=0)
    with pytest.raises(ValueError, match="multiple of 32"):
        to_d32(np.zeros((1, 1, 4, 3), np.uint8), after=1)
    with pytest.raises(ValueError, match="layout needs"):
        D32Tensor(np.zeros((1, 9, 1, 8, 32), np.uint8), (1, 2, 4, 3), 4, 4, 4, 0, 0, 29)  # h_total 10
    with pytest.raises(ValueError, match="dtype"):
        to_d32(np.zeros((1, 1, 4, 1), np.float32))


def test_convert_ops_by_hand():
    # Convert_to_d32 with before 3, left 1, min right 2, top/bottom 1 on w = 5: 1 + 5 + 2 = 8 -> right 2; the
    # depth-before option is ignored, as op_convert_d32.c does (the device under emulation, issue 36)
    x = RNG.integers(0, 256, (2, 3, 5, 3), dtype=np.uint8)
    (t,) = run_op("Convert_to_d32", [x, i32([3]), i32([1]), i32([2]), i32([1])])
    assert isinstance(t, D32Tensor) and t.padding == (1, 1, 1, 2, 0, 29)
    (t,) = run_op("Convert_to_d32", [x])  # defaults: before 0, left 4, right 4+5 -> 12: 3, top/bottom 4
    assert t.padding == (4, 4, 4, 3, 0, 29)
    (flat,) = run_op("Convert_from_d32", [t.fill_padding(0x33)])
    np.testing.assert_array_equal(flat, x)


def test_convert_errors():
    x = np.zeros((1, 2, 2, 3), np.uint8)
    # an option out of range takes its default, as op_convert_d32.c's get_option does (issue 36)
    for opts in ([i32([32])], [0, 8], [0, 4, -1], [0, 4, 0, 9]):
        assert run_op("Convert_to_d32", [x, *opts])[0].padding == (4, 4, 4, 2, 0, 29)
    assert_op_error("Convert_to_d32", [to_d32(x)], "flat tensor", "Convert_from_d32")
    assert_op_error("Convert_from_d32", [x], "must be a d32 tensor", "Convert_to_d32")
    # a flat op fed a d32 tensor refuses it too (its dtype is not a code array)
    assert_op_error("QuantizedMaxPool_8", [to_d32(x), -1.0, 1.0, x, x], "dtype object")


def test_aix_d32_by_hand():
    # x [1,1,2,3] = [[1,2,3],[4,5,6]]: aix bytes [b][h][d/32][w][32]: w=0 lanes 0..2 = 1,2,3 at bytes 0..2,
    # w=1 lanes 0..2 = 4,5,6 at bytes 32..34; everything else 0; shape reported [1,1,2,32].
    x = u8([1, 2, 3, 4, 5, 6], (1, 1, 2, 3))
    aix, mn, mx = run_op("Convert_to_aix_d32", [to_d32(x).fill_padding(0xEE), -1.0, 1.0, i32([0])])
    assert aix.shape == (1, 1, 2, 32) and aix.dtype == np.uint8
    raw = aix.reshape(-1)
    assert raw[:3].tolist() == [1, 2, 3] and raw[32:35].tolist() == [4, 5, 6]
    assert int(np.count_nonzero(raw)) == 6 and (mn.item(), mx.item()) == (-1.0, 1.0)
    back, _, _ = run_op("Convert_to_aix_d32", [aix, -1.0, 1.0, i32([1])])
    assert isinstance(back, D32Tensor)
    np.testing.assert_array_equal(back.logical()[..., :3], x)  # depth comes back as d_total = 32
    # two slices: d = 40 -> slice 1 holds channels 32..39 after all of slice 0's columns
    y = RNG.integers(0, 256, (1, 2, 3, 40), dtype=np.uint8)
    aix, _, _ = run_op("Convert_to_aix_d32", [to_d32(y), -1.0, 1.0, i32([0])])
    raw = aix.reshape(1, 2, 2, 3, 32)
    np.testing.assert_array_equal(raw[:, :, 1, :, :8], y[..., 32:])
    assert_op_error("Convert_to_aix_d32", [y, -1.0, 1.0, i32([1])], "multiple of 32")


def test_fill_padding_op_fixed_and_random():
    x = RNG.integers(0, 256, (2, 2, 3, 5), dtype=np.uint8)
    t = to_d32(x, top=1, bottom=2, left=2, before=3)
    (f,) = run_op("FillPadding_8_d32", [t])  # default 0xFF everywhere
    spatial, depth = f.padding_masks()
    assert (f.data[np.broadcast_to(spatial | depth, f.data.shape)] == 0xFF).all()
    assert (t.data[np.broadcast_to(spatial | depth, t.data.shape)] == 0).all()  # the input is not modified
    (f,) = run_op("FillPadding_8_d32", [t, i32([0x11]), i32([0x22])])
    assert (f.data[np.broadcast_to(spatial, f.data.shape)] == 0x11).all()
    assert (f.data[np.broadcast_to(depth, f.data.shape)] == 0x22).all()
    np.testing.assert_array_equal(f.logical(), x)
    state: dict = {}
    (r1,) = run_op("FillPadding_8_d32", [t, i32([-1])], state=state)
    (r2,) = run_op("FillPadding_8_d32", [t, i32([-1])], state=state)
    pad = np.broadcast_to(spatial | depth, t.data.shape)
    assert len(np.unique(r1.data[pad])) > 100 and not (r1.data[pad] == r2.data[pad]).all()
    np.testing.assert_array_equal(r1.logical(), x)
    assert_op_error("FillPadding_8_d32", [t, i32([256])], "0..255 or -1")
    assert_op_error("FillPadding_8_d32", [x], "must be a d32 tensor")


def test_engine_passes_d32_tensors_and_outputs_flat():
    # INPUT -> Convert_to_d32 -> FillPadding(random) -> MaxPool_d32 -> OUTPUT (d32 value handed out flat)
    g = Graph()
    shape = (2, 3, 5, 35)
    inp = g.append("INPUT", [], [OutputDef(shape, "quint8")], name="x")
    cv = g.append("Convert_to_d32", [Ref(inp.node_id, 0)], [OutputDef(shape, "quint8_d32")], name="to")
    fp = g.append("FillPadding_8_d32", [Ref(cv.node_id, 0), g.const_ref(np.full((1, 1, 1, 1), -1, np.int32))],
                  [OutputDef(shape, "quint8_d32")], name="fill")
    mp = g.append("QuantizedMaxPool_8_d32", [Ref(fp.node_id, 0), g.const_ref(-1.0), g.const_ref(1.0),
                                             g.shape_ref((1, 2, 2, 1)), g.shape_ref((1, 1, 1, 1))],
                  [OutputDef(shape, "quint8_d32"), OutputDef.scalar(), OutputDef.scalar()], name="pool")
    mp.padding = 1  # NN_PAD_SAME
    g.append("OUTPUT", [Ref(mp.node_id, 0)], [])
    g.verify()
    x = RNG.integers(0, 256, shape, dtype=np.uint8)
    outs, every = Engine(g).run([x], mark_all=True)
    want, _, _ = run_op("QuantizedMaxPool_8", [x, -1.0, 1.0, np.zeros((1, 2, 2, 1)), np.zeros((1, 1, 1, 1))],
                        padding=1)
    assert isinstance(outs[0], np.ndarray)
    np.testing.assert_array_equal(outs[0], want)
    np.testing.assert_array_equal(every[Ref(cv.node_id, 0)], x)  # "mark all" tensors are flat too


def test_masks_cover_exactly_the_padding():
    for top, left, before in itertools.product((0, 2), (0, 5), (0, 31)):
        t = to_d32(np.ones((1, 2, 3, 4), np.uint8), top=top, bottom=1, left=left, before=before)
        spatial, depth = t.padding_masks()
        pad = np.broadcast_to(spatial | depth, t.data.shape)
        assert not (spatial & depth).any()
        assert int((~pad).sum()) == 24 and (t.data[~pad] == 1).all()
