"""The fast paths of issue 11 give the very bits of the plain formulas, on both sides of every switch.

Each fast path is chosen by a proven bound (float32 products below 2**24, the
float64 output stage below 2**52, an
einsum or tap loop for depthwise, void-block copies for d32) or by a cache
(per-node constants kept in ``ctx.state``). These tests put inputs on both
sides of each switch and compare with references written from SEMANTICS.md
and hexagon_nn's C alone (``opcheck.reference_conv``, ``testing.supernode_c``, Python integers,
``fractions``).
"""
from __future__ import annotations

import contextlib


import numpy as np
import pytest

from hexnn_import.engine import Engine, blas_limit
from hexnn_import.ops import run_op
from hexnn_import.ops.conv_core import conv_plan
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.depthwise_core import depthwise_plan
from hexnn_import.ops.kernels.channel_scale import q28_scales, scale_codes
from hexnn_import.ops.quant import step_zero
from hexnn_import.ops.registry import PAD_SAME, PAD_SAME_CAFFE, PAD_VALID
from hexnn_import.testing.opcheck import f32, i32, reference_conv, stride
from hexnn_import.testing.supernode_c import c_supernode_codes

RNG = np.random.default_rng(11)


def supernode(x, w, in_rng, w_rng, bias, b_rng, out_rng, padding=PAD_SAME, s=(1, 1), state=None):
    return run_op("Supernode_8x8p32to8", [x, w, f32(in_rng[0]), f32(in_rng[1]), f32(w_rng[0]), f32(w_rng[1]),
                                          stride(*s), i32(bias), f32(b_rng[0]), f32(b_rng[1]),
                                          f32(out_rng[0]), f32(out_rng[1])], padding=padding, state=state)


def expected(x, w, in_rng, w_rng, bias, b_rng, out_rng, padding=PAD_SAME, s=(1, 1)):
    """hexagon_nn's codes for a fixed, zero-exact output range (the C's rule worked in Python:
    :mod:`hexnn_import.testing.supernode_c`, 32-bit wrapping included)."""
    return c_supernode_codes(x, w, lambda iz, wz: reference_conv(x, iz, w, wz, *s, padding).astype(np.int64),
                             in_rng, w_rng, np.asarray(bias).reshape(-1), b_rng, True, out_rng)


@pytest.mark.parametrize("fh,din,dout,s,padding,extreme", [
    (1, 16, 8, (1, 1), PAD_SAME, False),     # 1x1: no im2col, float32 products
    (1, 8, 5, (2, 2), PAD_VALID, False),     # 1x1 strided
    (3, 3, 7, (2, 2), PAD_SAME, False),      # im2col, float32
    (3, 5, 4, (1, 2), PAD_SAME_CAFFE, False),
    (3, 300, 3, (1, 1), PAD_SAME, True),     # bound >= 2**24: float64 products
])
def test_supernode_products_both_precisions(fh, din, dout, s, padding, extreme):
    x = RNG.integers(0, 256, (1, 9, 11, din), dtype=np.uint8)
    w = (np.where(RNG.random((fh, fh, din, dout)) < 0.5, 0, 255) if extreme
         else RNG.integers(0, 256, (fh, fh, din, dout))).astype(np.uint8)
    in_rng, w_rng = (-1.0, 3.0), (-2.0, 2.0)
    plan = conv_plan(w, step_zero(*w_rng)[1], step_zero(*in_rng)[1])
    assert plan.dtype == (np.float64 if extreme else np.float32)
    bias = RNG.integers(-2 ** 20, 2 ** 20, dout)
    out = (-40.0, 60.0) if not extreme else (-4000.0, 6000.0)
    from hexnn_import.ops.quant import adjust_range
    out = adjust_range(*out)
    q, _, _ = supernode(x, w, in_rng, w_rng, bias, (-1.0, 1.0), out, padding, s)
    np.testing.assert_array_equal(q, expected(x, w, in_rng, w_rng, bias, (-1.0, 1.0), out, padding, s))


def test_output_stage_falls_back_to_int64_when_float64_is_not_provably_exact():
    # a bias near the int32 limit in accumulator units: fill_bias_buf's biasbuf (bias / prod - out_min / prod
    # - gemsumb * in_zero, ~2**31 - 20000 - 5e5) still fits, but biasbuf + gemsumb * in_zero + sum crosses
    # 2**31 - 1 for some sums (|sum| < 3 * 128**2), where the device's 32-bit adds wrap: the float64 stage is
    # not provably exact and the int64 path, which models the wrap, is used
    x = np.where(RNG.random((1, 4, 4, 3)) < 0.5, 0, 255).astype(np.uint8)
    x[0, 0, 0], x[0, 0, 1] = 255, 0                              # sums of channel 0: +-3 * 128 * 127 or so
    w = RNG.integers(0, 256, (1, 1, 3, 2), dtype=np.uint8)
    w[..., 0] = 255
    out = (-1.0, 127.0 / 128)                                    # zero code 128 exactly
    prod = float(np.float32(np.float32(2.0 / 255) * np.float32(2.0 / 255)))
    b_rng = (-(2 ** 31 - 36256) * prod, (2 ** 31 - 36256) * prod)   # bias 2**31 - 1 -> ~2**31 - 36256 in prod units
    bias = [2 ** 31 - 1, 0]
    q, _, _ = supernode(x, w, (-1.0, 1.0), (-1.0, 1.0), bias, b_rng, out)
    np.testing.assert_array_equal(q, expected(x, w, (-1.0, 1.0), (-1.0, 1.0), bias, b_rng, out))
    assert set(np.unique(q[..., 0])) == {0, 255}   # some sums wrapped to negative values, as on the device
    from hexnn_import.ops.output_stage.spec_stage import OutputPlan
    bound = np.array([1000.0, 1000.0])
    assert OutputPlan(1e-5, np.array([1e12, -1e12]), np.ones(2), bound).stage(-1.0, 1.0)[1] is None
    assert OutputPlan(1e-5, np.array([1.0, -1.0]), np.ones(2), bound).stage(-1.0, 1.0)[1] is not None


def test_cached_constants_follow_a_replaced_const_and_changed_ranges():
    state: dict = {}
    x = RNG.integers(0, 256, (1, 5, 5, 4), dtype=np.uint8)
    from hexnn_import.ops.quant import adjust_range
    out = adjust_range(-30.0, 50.0)
    for _ in range(2):  # a new weights array (same shape) and new ranges each time: never served stale
        w = RNG.integers(0, 256, (3, 3, 4, 3), dtype=np.uint8)
        for in_rng in ((-1.0, 3.0), (-2.0, 2.5)):
            bias = RNG.integers(-1000, 1000, 3)
            q, _, _ = supernode(x, w, in_rng, (-1.0, 1.0), bias, (-1.0, 1.0), out, state=state)
            np.testing.assert_array_equal(q, expected(x, w, in_rng, (-1.0, 1.0), bias, (-1.0, 1.0), out))
            q2, _, _ = supernode(x, w, in_rng, (-1.0, 1.0), bias, (-1.0, 1.0), out, state=state)  # cached
            np.testing.assert_array_equal(q2, q)


def test_auto_range_recompute_with_cached_stages():
    state: dict = {}
    x = RNG.integers(0, 256, (1, 6, 6, 8), dtype=np.uint8)
    w = RNG.integers(0, 256, (1, 1, 8, 4), dtype=np.uint8)
    inf = float("inf")
    first = supernode(x, w, (-1.0, 3.0), (-1.0, 1.0), [5, 6, 7, 8], (-1.0, 1.0), (-inf, inf), state=state)
    again = supernode(x, w, (-1.0, 3.0), (-1.0, 1.0), [5, 6, 7, 8], (-1.0, 1.0), (-inf, inf), state=state)
    lo, hi = float(first[1].item()), float(first[2].item())
    assert (lo, hi) == (float(again[1].item()), float(again[2].item()))
    np.testing.assert_array_equal(first[0], again[0])
    # the last computation of the auto run used the range it reports: its codes are those of that fixed range
    np.testing.assert_array_equal(first[0], expected(x, w, (-1.0, 3.0), (-1.0, 1.0), [5, 6, 7, 8], (-1.0, 1.0),
                                                     (lo, hi)))


def reference_depthwise(x, xz, w, wz, sh, sw, padding):
    fh, fw, din, dmul = w.shape
    wide = np.zeros((fh, fw, din, din * dmul)) + wz   # as a full conv with a block-diagonal filter
    for c in range(din):
        for m in range(dmul):
            wide[:, :, c, c * dmul + m] = w[:, :, c, m]
    return reference_conv(x, xz, wide, wz, sh, sw, padding).astype(np.int64)


@pytest.mark.parametrize("hw,din,dmul,s,padding", [
    ((9, 7), 5, 1, (1, 1), PAD_SAME),           # small: one einsum
    ((9, 7), 3, 2, (2, 2), PAD_VALID),
    ((70, 66), 12, 1, (1, 1), PAD_SAME),        # large: tap loop with row-tiled weights
    ((71, 67), 12, 1, (2, 2), PAD_SAME),        # column phases for the stride
    ((64, 61), 6, 2, (3, 2), PAD_SAME_CAFFE),
])
def test_depthwise_paths(hw, din, dmul, s, padding):
    x = RNG.integers(0, 256, (1, *hw, din), dtype=np.uint8)
    w = RNG.integers(0, 256, (3, 3, din, dmul), dtype=np.uint8)
    acc, _, _ = run_op("QuantizedDepthwiseConv2d_8x8to32", [x, w, f32(-1.0), f32(3.0), f32(-2.0), f32(2.0),
                                                            stride(*s)], padding=padding)
    ref = reference_depthwise(x, step_zero(-1.0, 3.0)[1], w, step_zero(-2.0, 2.0)[1], *s, padding)
    assert acc.dtype == np.int32
    np.testing.assert_array_equal(acc, ref)


def test_depthwise_float64_taps_for_long_filters():
    # a 21x21 filter of high codes with zero points 0: the bound passes 2**24, so the taps run in float64
    w = np.where(RNG.random((21, 21, 2, 1)) < 0.1, 0, 255).astype(np.uint8)
    assert depthwise_plan(w, 0, 0).dtype == np.float64
    x = RNG.integers(0, 256, (1, 24, 23, 2), dtype=np.uint8)
    acc, _, _ = run_op("QuantizedDepthwiseConv2d_8x8to32", [x, w, f32(0.0), f32(1.0), f32(0.0), f32(1.0),
                                                            stride(1, 1)], padding=PAD_SAME)
    np.testing.assert_array_equal(acc, reference_depthwise(x, 0, w, 0, 1, 1, PAD_SAME))


def c_channel_scale(q: int, k: float) -> int:
    """op_channelscale.c in Python integers: m = (int)(f32(k * 2**28) + 0.5f), sat32((q * m + 2**27) >> 28)."""
    m = int(np.trunc(np.float32(np.float32(k) * np.float32(2 ** 28)) + np.float32(0.5)))
    return min(max((q * m + 2 ** 27) >> 28, -2 ** 31), 2 ** 31 - 1)


@pytest.mark.parametrize("k", [
    [0.75, 0.5000001, 1.0, 0.6],                 # |scale| <= 1: no saturation pass
    [1.0, 2.0 ** -12, 0.3, 2.0 ** -20],
    [2.0 ** -40],                                # one tiny scale for every channel
    [1.5, -3.0, 0.25, 7.0],                      # |scale| > 1: the saturating pass
])
def test_channel_scale_q28_rounding(k):
    kk = np.asarray(k, np.float32)
    q = RNG.integers(-2 ** 31, 2 ** 31, (2, 3, 5, 4 if kk.size > 1 else 3), dtype=np.int64).astype(np.int32)
    q[0, 0, 0, 0], q[0, 0, 0, 1] = -2 ** 31, 2 ** 31 - 1
    out, _, _ = run_op("QuantizedChannelScale_32xf", [q, kk.reshape(1, 1, 1, -1), f32(-1.0), f32(1.0)])
    ref = np.vectorize(c_channel_scale)(q.astype(np.int64), np.broadcast_to(kk.astype(np.float64), q.shape))
    np.testing.assert_array_equal(out, ref)
    assert np.array_equal(out, scale_codes(q, q28_scales(kk)))


def test_requantize_32to8_folded_zero_and_float_paths():
    x = RNG.integers(-2 ** 31, 2 ** 31, (1, 4, 4, 5), dtype=np.int64).astype(np.int32)
    for in_rng, out_rng in (((-1.0, 1.0), (-0.5, 0.7)), ((-1e-6, 1e-6), (-1e-7, 1e-7)), ((-1.0, 1.0), (0.0, 0.01))):
        q, mn, mx = run_op("Requantize_32to8", [x, f32(in_rng[0]), f32(in_rng[1]), f32(out_rng[0]), f32(out_rng[1])])
        lo, hi = float(mn.item()), float(mx.item())
        one = (float(np.float32(in_rng[1])) - float(np.float32(in_rng[0]))) / 2 ** 32
        sc = 255.0 / (hi - lo)
        g = one * sc
        if g >= 1:
            ref = [min(255, max(0, int(np.trunc(float(v) * g + 0.5 - lo * sc)))) for v in x.reshape(-1)]
        else:
            gi = int(np.trunc(g * 2 ** 31 + 0.5))
            z = int(np.trunc(0.5 - lo * sc))
            ref = [min(255, max(0, max(-32768, min(32767, (int(v) * gi + 2 ** 30) >> 31)) + z)) for v in x.reshape(-1)]
        assert q.reshape(-1).tolist() == ref


def test_bias_add_32_wraps_past_int32():
    # op_biasadd.c adds with Q6_P_vaddw_PP: 32-bit wrap-around, no saturation
    x = np.array([2 ** 31 - 10, -2 ** 31 + 10, 5], np.int32).reshape(1, 1, 1, 3)
    b = np.array([100, -100, 7], np.int32).reshape(1, 1, 1, 3)
    acc, _, _ = run_op("QuantizedBiasAdd_32p32to32", [x, b, f32(-1.0), f32(1.0), f32(-1.0), f32(1.0)])
    assert acc.reshape(-1).tolist() == [-2 ** 31 + 90, 2 ** 31 - 90, 12]


@pytest.mark.parametrize("shape", [(1, 7, 5, 8), (2, 3, 4, 48), (1, 2, 3, 64), (1, 1, 1, 1), (1, 3, 3, 33)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16])
def test_d32_block_copies_round_trip(shape, dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    for kw in ({}, {"left": 1, "top": 2, "bottom": 0}, {"before": 3}, {"fill": 5}):
        t = to_d32(a, **kw)
        spatial, depth = t.padding_masks()
        pad = np.broadcast_to(spatial | depth, t.data.shape)
        assert (t.data[pad] == kw.get("fill", 0)).all()
        np.testing.assert_array_equal(t.fill_padding(7).logical(), a)   # gathered, padding never read
        np.testing.assert_array_equal(to_d32(a[..., ::-1], **kw).logical(), a[..., ::-1])


def test_d32_chain_hands_on_the_flat_result_read_only():
    x = RNG.integers(0, 256, (1, 4, 4, 3), dtype=np.uint8)
    (t,) = run_op("Convert_to_d32", [x])
    view = t.logical_view()
    assert not view.flags.writeable
    np.testing.assert_array_equal(view, x)
    fresh = t.logical()
    assert fresh.flags.writeable and fresh is not view
    (flat,) = run_op("Convert_from_d32", [t])
    np.testing.assert_array_equal(flat, x)


def test_engine_hands_out_writable_outputs_and_honours_blas_setting(monkeypatch):
    from hexnn_import.graph import Graph, OutputDef, Ref

    g = Graph()
    inp = g.append("INPUT", [], [OutputDef((1, 2, 2, 3), "quint8")])
    conv = g.append("Convert_to_d32", [Ref(inp.node_id, 0)], [OutputDef((1, 2, 2, 3), "quint8_d32")])
    back = g.append("Convert_from_d32", [Ref(conv.node_id, 0)], [OutputDef((1, 2, 2, 3), "quint8")])
    g.append("OUTPUT", [Ref(back.node_id, 0)], [])
    x = RNG.integers(0, 256, (1, 2, 2, 3), dtype=np.uint8)
    (out,), every = Engine(g).run([x], mark_all=True)
    np.testing.assert_array_equal(out, x)
    assert out.flags.writeable and all(v.flags.writeable for v in every.values())
    monkeypatch.setenv("HEXNN_BLAS_THREADS", "0")  # 0: BLAS keeps its own setting
    assert isinstance(blas_limit(), contextlib.nullcontext)
