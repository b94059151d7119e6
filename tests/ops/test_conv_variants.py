"""Dilated, grouped and transposed convolutions with the §5 output stage (SEMANTICS.md §3, §5).

Hand cases are worked in the comments. Property cases compare with
references written here: convolutions by explicit loops over output pixels
(dilated / grouped, with np.pad by x_zero) or input pixels (transposed,
scatter form of TF conv2d_transpose), the §5 output stage evaluated with
Python integers, and float64 formulas for "within one output step".
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID
from hexnn_import.testing.opcheck import f32, geometry, i32, reference_codes, stride, u8

DIL = "QuantizedDilatedConv2d_8x8p32to8"
GRP = "QuantizedGroupedConv2d_8x8p32to8"
T32 = "QuantizedTransposeConv2d_8x8p32to8"
T8 = "QuantizedTransposeConv2d_8x8p8to8"
INF = math.inf




def dilated(x, w, in_rng, w_rng, bias, b_rng, out_rng, dil, k=None, strides=(1, 1), padding=PAD_SAME, state=None):
    inputs = [x, w, bias, *in_rng, *w_rng, *b_rng, stride(*strides), i32(dil), *out_rng]
    inputs += [] if k is None else [f32(k)]
    q, mn, mx = run_op(DIL, inputs, padding=padding, state=state, node="cv1")
    return q, mn.item(), mx.item()


def grouped(x, w, in_rng, w_rng, bias, b_rng, out_rng, groups, k=None, strides=(1, 1), padding=PAD_SAME):
    inputs = [x, w, bias, *in_rng, *w_rng, *b_rng, stride(*strides), i32([groups]), *out_rng]
    inputs += [] if k is None else [f32(k)]
    q, mn, mx = run_op(GRP, inputs, padding=padding, node="cv1")
    return q, mn.item(), mx.item()


def transposed(op, x, w, in_rng, w_rng, pads, bias, b_rng, out_rng, strides=(1, 1), k=None, groups=None,
               state=None):
    inputs = [x, w, *in_rng, *w_rng, np.asarray(pads, np.int32).reshape(1, 1, 2, 2), stride(*strides), bias,
              *b_rng, *out_rng]
    if k is not None or groups is not None:
        inputs.append(f32(k))
    if groups is not None:
        inputs.append(i32([groups]))
    q, mn, mx = run_op(op, inputs, padding=PAD_VALID, state=state, node="cv1")
    return q, mn.item(), mx.item()


def reference_conv(x, x_zero, w, w_zero, sh, sw, dh, dw, groups, padding):
    """Dilated/grouped sums by loops over output pixels and groups; w is [fh, fw, din/groups, dout]."""
    b, h, wd, _ = x.shape
    fh, fw, dg, dout = w.shape
    oh, top, bottom = geometry(h, (fh - 1) * dh + 1, sh, padding)
    ow, left, right = geometry(wd, (fw - 1) * dw + 1, sw, padding)
    xp = np.pad(x.astype(np.int64), ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=x_zero) - x_zero
    wc = w.astype(np.int64) - w_zero
    og = dout // groups
    out = np.zeros((b, oh, ow, dout), dtype=np.int64)
    for y in range(oh):
        for xx in range(ow):
            patch = xp[:, y * sh:y * sh + (fh - 1) * dh + 1:dh, xx * sw:xx * sw + (fw - 1) * dw + 1:dw, :]
            for g in range(groups):
                pg = patch[..., g * dg:(g + 1) * dg]
                out[:, y, xx, g * og:(g + 1) * og] = np.einsum("bijc,ijco->bo", pg, wc[..., g * og:(g + 1) * og])
    return out


def reference_transpose(x, x_zero, w, w_zero, sh, sw, pads, groups):
    """Transposed sums by scattering every input pixel (w is [O/groups, fh, fw, I]), then cropping."""
    b, h, wd, din = x.shape
    og, fh, fw, _ = w.shape
    dg = din // groups
    full = np.zeros((b, (h - 1) * sh + fh, (wd - 1) * sw + fw, og * groups), dtype=np.int64)
    xc = x.astype(np.int64) - x_zero
    wc = w.astype(np.int64) - w_zero
    for y in range(h):
        for xx in range(wd):
            for g in range(groups):
                v = xc[:, y, xx, g * dg:(g + 1) * dg]                        # [b, dg]
                contrib = np.einsum("bc,oijc->bijo", v, wc[..., g * dg:(g + 1) * dg])
                full[:, y * sh:y * sh + fh, xx * sw:xx * sw + fw, g * og:(g + 1) * og] += contrib
    top, bottom, left, right = pads
    return full[:, top:full.shape[1] - bottom, left:full.shape[2] - right]




# ---------------------------------------------------------------- hand cases
# Shared ranges: in [-8, 7.9375] (step 1/16, zero 128), w [-1, 0.9921875] (step 1/128, zero 128),
# prod = 2**-11; out [-4, 3.96875] (step 1/32, zero 128): final = 2**-6, shamt 0, recip = 2**25 * k;
# -out_min/prod = 8192; qint32 bias over [-2**19, 2**19] -> bias32 = b / 2.
# With zero bias and k = 1: q = floor((8192 + sums) / 64 + 1/2) = 128 + floor(sums / 64 + 1/2).
IN16, W128, OUT32 = (-8.0, 7.9375), (-1.0, 0.9921875), (-4.0, 3.96875)
B19 = (-2.0 ** 19, 2.0 ** 19)


def test_dilated_hand_case_valid_and_same():
    # 1x5 input, x - 128 = [64, 0, -64, 32, 96]; 1x2 filter, w - 128 = [64, 32]; dilation {1, 2}:
    # window 3, out[j] = x[j] * 64 + x[j+2] * 32 (positions relative to the padded input).
    # VALID (3 outputs): [64*64 - 64*32, 0 + 32*32, -64*64 + 96*32] = [2048, 1024, -1024]
    #   -> q = 128 + [32, 16, -16] = [160, 144, 112]
    # SAME: out 5, pad 2 -> 1 before, 1 after: out[j] = x[j-1]*64 + x[j+1]*32
    #   = [0 + 0, 64*64 - 64*32, 0 + 32*32, -64*64 + 96*32, 32*64 + 0] = [0, 2048, 1024, -1024, 2048]
    #   -> [128, 160, 144, 112, 160]
    x = u8([192, 128, 64, 160, 224], (1, 1, 5, 1))
    w = u8([192, 160], (1, 2, 1, 1))
    q, lo, hi = dilated(x, w, IN16, W128, i32([0]), B19, OUT32, (1, 2), padding=PAD_VALID)
    assert q.reshape(-1).tolist() == [160, 144, 112]
    assert (lo, hi) == OUT32
    q, _, _ = dilated(x, w, IN16, W128, i32([0]), B19, OUT32, (1, 2), padding=PAD_SAME)
    assert q.reshape(-1).tolist() == [128, 160, 144, 112, 160]


def test_grouped_hand_case_with_channel_scales():
    # One pixel, din 4, groups 2, 1x1 filter [1,1,2,2]: output 0 sees inputs 0,1; output 1 sees inputs 2,3.
    # x - 128 = [10, 20, 30, 40]; w - 128: out 0 [64, 32], out 1 [-32, 64].
    # sums: out 0 = 10*64 + 20*32 = 1280; out 1 = 30*(-32) + 40*64 = 1600.
    # k = [1, 0.5]: recip = [2**25, 2**24]; bias 0: bb = [8192, 8192/0.5 = 16384].
    # q0 = floor((8192 + 1280) / 64 + 1/2) = floor(148.5) = 148
    # q1 = floor((16384 + 1600) / 128 + 1/2) = floor(140.5 + 0.5) = 141  (real 1600 * 2**-11 * 0.5 = 0.390625)
    x = u8([138, 148, 158, 168], (1, 1, 1, 4))
    w = np.zeros((1, 1, 2, 2), np.uint8)
    w[0, 0, :, 0] = [192, 160]
    w[0, 0, :, 1] = [96, 192]
    q, lo, hi = grouped(x, w, IN16, W128, i32([0, 0]), B19, OUT32, 2, k=[1.0, 0.5])
    assert q.reshape(-1).tolist() == [148, 141]
    assert (lo, hi) == OUT32


def test_transpose_hand_case_stride2_pads_and_bias():
    # x - 128 = [16, -8] (1x2), weights [O=1, 1, 3, I=1], w - 128 = [64, 32, -32], stride {1, 2}.
    # Full width (2-1)*2 + 3 = 5: [16*64, 16*32, 16*(-32) + (-8)*64, -8*32, -8*(-32)]
    #                          = [1024, 512, -1024, -256, 256]  -> q = 128 + sums/64 = [144, 136, 112, 124, 132]
    # pads [0, 0, 1, 1] (left 1, right 1) keep the middle three: [136, 112, 124].
    x = u8([144, 120], (1, 1, 2, 1))
    w = u8([192, 160, 96], (1, 1, 3, 1))
    q, lo, hi = transposed(T32, x, w, IN16, W128, [0, 0, 0, 0], i32([0]), B19, OUT32, strides=(1, 2))
    assert q.reshape(-1).tolist() == [144, 136, 112, 124, 132]
    assert (lo, hi) == OUT32
    q, _, _ = transposed(T32, x, w, IN16, W128, [0, 0, 1, 1], i32([0]), B19, OUT32, strides=(1, 2))
    assert q.reshape(-1).tolist() == [136, 112, 124]
    # p8: quint8 bias over [-4, 3.96875] (step 1/32, zero 128), code 160 = real 1.0 -> bias32 = 1.0 / 2**-11
    # = 2048 -> bb = 8192 + 2048, i.e. +32 codes: [168, 144, 156].
    q, _, _ = transposed(T8, x, w, IN16, W128, [0, 0, 1, 1], u8([160], (1, 1, 1, 1)), (-4.0, 3.96875), OUT32,
                         strides=(1, 2))
    assert q.reshape(-1).tolist() == [168, 144, 156]


def test_transpose_hand_case_groups():
    # One pixel, I = 2 channels, x - 128 = [16, -8]; weights [1, 1, 1, 2], w - 128 = [64, 32].
    # groups 2 (weights [O/groups, H, W, I]): output g sees input g -> sums [16*64, -8*32] = [1024, -256]
    #   -> q = 128 + [16, -4] = [144, 124]
    # groups 1: one output, 16*64 - 8*32 = 768 -> 128 + 12 = 140.
    x = u8([144, 120], (1, 1, 1, 2))
    w = u8([192, 160], (1, 1, 1, 2))
    q, _, _ = transposed(T32, x, w, IN16, W128, [0, 0, 0, 0], i32([0, 0]), B19, OUT32, k=[1.0, 1.0], groups=2)
    assert q.reshape(-1).tolist() == [144, 124]
    q, _, _ = transposed(T32, x, w, IN16, W128, [0, 0, 0, 0], i32([0]), B19, OUT32)
    assert q.reshape(-1).tolist() == [140]


# ------------------------------------------------------------ property cases

IN_RNG, W_RNG = (-2.0, 3.0), (-1.0, 1.0)   # zeros 102 and 128
PROD = (5.0 / 255) * (2.0 / 255)
B32_RNG = (-2.0 ** 20 * PROD, 2.0 ** 20 * PROD)  # one qint32 code = PROD / 2**11
B_STEP = (float(np.float32(B32_RNG[1])) - float(np.float32(B32_RNG[0]))) / 2 ** 32


def _check_codes(q, lo, hi, sums, bias, k):
    """Codes equal the integer §5 reference; reals within one step of the float64 formula."""
    kk = [1.0] * sums.shape[-1] if k is None else [float(np.float32(v)) for v in k]
    np.testing.assert_array_equal(q, reference_codes(sums, PROD, [b * B_STEP / PROD for b in bias], lo, hi, k=kk))
    ref = sums * PROD * np.asarray(kk) + bias * B_STEP
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - round(-lo / step)) * step - ref)) <= step


def _fixed_range(sums, bias, k=None):
    """A zero-exact range [-a, a*127/128] (zero code 128) covering the float result."""
    kk = 1.0 if k is None else np.asarray(k)
    ref = sums * PROD * kk + bias * B_STEP
    a = max(-ref.min(), ref.max()) * 1.02
    return -a, a * 127 / 128


def _data(seed, x_shape, w_shape, n_bias):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, x_shape, dtype=np.uint8), rng.integers(0, 256, w_shape, dtype=np.uint8),
            rng.integers(-2 ** 22, 2 ** 22, n_bias).astype(np.int32))


@pytest.mark.parametrize("padding", [PAD_SAME, PAD_VALID, PAD_SAME_CAFFE])
@pytest.mark.parametrize("dil", [(1, 1), (2, 3), (3, 1)])
def test_dilated_matches_references(padding, dil):
    x, w, bias = _data(padding + 3 * dil[0], (2, 9, 10, 3), (3, 2, 3, 4), 4)
    k = [1.0, 0.5, 0.75, 0.01]
    sums = reference_conv(x, 102, w, 128, 1, 1, *dil, 1, padding)
    q, lo, hi = dilated(x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, _fixed_range(sums, bias, k), dil, k=k,
                        padding=padding)
    _check_codes(q, lo, hi, sums, bias, k)


@pytest.mark.parametrize("padding", [PAD_SAME, PAD_VALID, PAD_SAME_CAFFE])
@pytest.mark.parametrize("groups,strides", [(1, (1, 1)), (2, (2, 2)), (3, (1, 2)), (6, (2, 1))])
def test_grouped_matches_references(padding, groups, strides):
    x, w, bias = _data(groups * 3 + padding, (2, 7, 8, 6), (3, 3, 6 // groups, 6), 6)
    sums = reference_conv(x, 102, w, 128, *strides, 1, 1, groups, padding)
    q, lo, hi = grouped(x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, _fixed_range(sums, bias), groups,
                        strides=strides, padding=padding)
    _check_codes(q, lo, hi, sums, bias, None)


@pytest.mark.parametrize("strides,pads,groups,f", [
    ((1, 1), (0, 0, 0, 0), 1, (3, 3)),
    ((2, 2), (1, 0, 1, 1), 1, (3, 3)),
    ((2, 3), (0, 1, 2, 0), 2, (4, 3)),
    ((3, 1), (1, 1, 0, 0), 4, (2, 2)),
])
def test_transpose_matches_references(strides, pads, groups, f):
    x, w, bias = _data(sum(strides) + groups, (2, 4, 5, 4), (3, *f, 4), 3 * groups)
    k = list(np.linspace(0.25, 1.0, 3 * groups))
    sums = reference_transpose(x, 102, w, 128, *strides, pads, groups)
    q, lo, hi = transposed(T32, x, w, IN_RNG, W_RNG, pads, i32(bias), B32_RNG, _fixed_range(sums, bias, k),
                           strides=strides, k=k, groups=groups)
    _check_codes(q, lo, hi, sums, bias, k)


def test_transpose_p8_within_one_step_of_float():
    x, w, _ = _data(31, (1, 5, 4, 3), (2, 3, 3, 3), 2)
    bias = np.asarray([10, 240], np.uint8)
    b_rng = (-3.0, 2.0)   # step 5/255, zero 153
    ref = reference_transpose(x, 102, w, 128, 2, 2, (1, 1, 1, 1), 1) * PROD + (bias - 153.0) * (5.0 / 255)
    out_rng = (min(0.0, ref.min()) * 1.05, max(0.0, ref.max()) * 1.05)
    q, lo, hi = transposed(T8, x, w, IN_RNG, W_RNG, (1, 1, 1, 1), bias.reshape(1, 1, 1, 2), b_rng, out_rng,
                           strides=(2, 2))
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - round(-lo / step)) * step - ref)) <= step


def test_auto_range_starts_at_conv_start_and_persists():
    # All data at the zero code and zero bias: the result is 0 and the auto range stays at the
    # convolution start [0, 0.5] (final = PROD * 510 < 1.75: no widening).
    x, w, _ = _data(5, (1, 4, 4, 2), (2, 2, 2, 2), 0)
    state: dict = {}
    q, lo, hi = dilated(np.full_like(x, 102), w, IN_RNG, W_RNG, i32([0, 0]), B32_RNG, (-INF, INF), (2, 2),
                        state=state)
    assert (lo, hi) == (0.0, 0.5) and np.all(q == 0)
    q, lo, hi = dilated(x, w, IN_RNG, W_RNG, i32([0, 0]), B32_RNG, (-INF, INF), (2, 2), state=state)
    sums = reference_conv(x, 102, w, 128, 1, 1, 2, 2, 1, PAD_SAME)
    assert lo <= min(0.0, sums.min() * PROD) and sums.max() * PROD <= hi and (lo, hi) != (0.0, 0.5)
    _, lo2, hi2 = dilated(np.full_like(x, 102), w, IN_RNG, W_RNG, i32([0, 0]), B32_RNG, (-INF, INF), (2, 2),
                          state=state)
    assert (lo2, hi2) == (lo, hi)


# --------------------------------------------------------------- error cases

def _raises(match, fn, *args, **kwargs):
    with pytest.raises(OpError, match=match):
        fn(*args, **kwargs)


def test_dilated_errors():
    x, w = u8([128] * 8, (1, 2, 2, 2)), u8([128] * 4, (1, 1, 2, 2))
    args = (x, w, IN16, W128, i32([0, 0]), B19, OUT32)
    _raises(rf"node cv1 \({DIL}\).*only 1x1 strides", dilated, *args, (1, 1), strides=(2, 1))
    _raises(rf"node cv1 \({DIL}\).*dilation 0x1", dilated, *args, (0, 1))
    _raises(rf"node cv1 \({DIL}\).*padding", dilated, *args, (1, 1), padding=PAD_NA)
    _raises(rf"node cv1 \({DIL}\).*VALID.*smaller than the window", dilated, x, u8([128] * 8, (2, 1, 2, 2)),
            IN16, W128, i32([0, 0]), B19, OUT32, (2, 1), padding=PAD_VALID)
    _raises(rf"node cv1 \({DIL}\).*channel scale 1", dilated, *args, (1, 1), k=[1.0, 2.0])
    _raises(rf"node cv1 \({DIL}\).*bias has 1", dilated, x, w, IN16, W128, i32([0]), B19, OUT32, (1, 1))


def test_grouped_errors():
    x = u8([128] * 4, (1, 1, 1, 4))
    w = u8([128] * 8, (1, 1, 2, 4))
    args = (x, w, IN16, W128, i32([0] * 4), B19, OUT32)
    _raises(rf"node cv1 \({GRP}\).*groups 3 must divide the input depth 4", grouped, *args, 3)
    _raises(rf"node cv1 \({GRP}\).*groups is 0", grouped, *args, 0)
    _raises(rf"node cv1 \({GRP}\).*filter depth 2 .* times groups 1", grouped, *args, 1)
    _raises(rf"node cv1 \({GRP}\).*channel scale 3 .*\(1/32, 1\]", grouped, *args, 2, k=[1.0, 1.0, 1.0, 1 / 64])
    _raises(rf"node cv1 \({GRP}\).*output range", grouped, x, w, IN16, W128, i32([0] * 4), B19, (0.5, 1.0), 2)


def test_transpose_errors():
    x, w = u8([128] * 2, (1, 1, 1, 2)), u8([128] * 2, (1, 1, 1, 2))
    ok = (IN16, W128)
    _raises(rf"node cv1 \({T32}\).*output size 0", transposed, T32, x, w, *ok, [1, 0, 0, 0], i32([0]), B19, OUT32)
    _raises(rf"node cv1 \({T32}\).*negative", transposed, T32, x, w, *ok, [0, 0, -1, 0], i32([0]), B19, OUT32)
    _raises(rf"node cv1 \({T32}\).*weights depth 1", transposed, T32, x, u8([128], (1, 1, 1, 1)), *ok,
            [0, 0, 0, 0], i32([0]), B19, OUT32)
    _raises(rf"node cv1 \({T32}\).*\(1/32, 1\]", transposed, T32, x, w, *ok, [0, 0, 0, 0], i32([0]), B19, OUT32,
            k=[0.01])
    _raises(rf"node cv1 \({T8}\).*groups 3", transposed, T8, x, w, *ok, [0, 0, 0, 0], u8([0], (1, 1, 1, 1)),
            B19, OUT32, k=[1.0], groups=3)
    _raises(rf"node cv1 \({T8}\).*bias has 1", transposed, T8, x, w, *ok, [0, 0, 0, 0], u8([0], (1, 1, 1, 1)),
            B19, OUT32, k=[1.0, 1.0], groups=2)
