"""QuantizedDepthwiseConv2d_8x8to32 and DepthwiseSupernode_8x8p{8,32}to8 (SEMANTICS.md §3, §5).

Hand cases are worked in the comments. Property cases compare with
references written here: a depthwise convolution looping over channels,
multipliers and output pixels (explicit x_zero padding via np.pad), the §5
output stage evaluated with Python integers, and a float64 formula for the
"within one output step" check.
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID
from hexnn_import.testing.opcheck import i32, reference_codes, stride, u8

DW = "QuantizedDepthwiseConv2d_8x8to32"
P32 = "DepthwiseSupernode_8x8p32to8"
P8 = "DepthwiseSupernode_8x8p8to8"
INF = math.inf




def dw(x, w, in_rng, w_rng, strides=(1, 1), padding=PAD_SAME):
    acc, mn, mx = run_op(DW, [x, w, *in_rng, *w_rng, stride(*strides)], padding=padding, node="dw1")
    return acc, mn.item(), mx.item()


def sn(op, x, w, in_rng, w_rng, bias, b_rng, out_rng, strides=(1, 1), padding=PAD_SAME, state=None):
    """Run a depthwise supernode with the catalog's input order."""
    inputs = [x, w, *in_rng, *w_rng, stride(*strides), bias, *b_rng, *out_rng]
    q, mn, mx = run_op(op, inputs, padding=padding, state=state, node="dsn1")
    return q, mn.item(), mx.item()


def reference_depthwise(x, x_zero, w, w_zero, sh, sw, padding):
    """Depthwise sums by loops over channel, multiplier and output pixel; pads hold x_zero."""
    b, h, wd, din = x.shape
    fh, fw, _, dmul = w.shape

    def axis(size, f, s):
        if padding == PAD_VALID:
            return (size - f) // s + 1, 0, 0
        out = -(-size // s)
        pad = max(0, (out - 1) * s + f - size)
        before = pad // 2 if padding == PAD_SAME else pad - pad // 2
        return out, before, pad - before

    oh, top, bottom = axis(h, fh, sh)
    ow, left, right = axis(wd, fw, sw)
    xp = np.pad(x.astype(np.int64), ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=x_zero) - x_zero
    wc = w.astype(np.int64) - w_zero
    out = np.zeros((b, oh, ow, din * dmul), dtype=np.int64)
    for c in range(din):
        for m in range(dmul):
            for y in range(oh):
                for xx in range(ow):
                    patch = xp[:, y * sh:y * sh + fh, xx * sw:xx * sw + fw, c]
                    out[:, y, xx, c * dmul + m] = np.sum(patch * wc[:, :, c, m], axis=(1, 2))
    return out




# ---------------------------------------------------------------- hand cases

# in [-8, 7.9375]: step 1/16, zero 128.  w [-1, 0.9921875]: step 1/128, zero 128.  prod = 2**-11.
IN16, W128 = (-8.0, 7.9375), (-1.0, 0.9921875)


def test_depthwise_8x8to32_hand_case_channel_order():
    # din = 2, dmul = 2, 2x2 filter, VALID on a 2x2 input -> one pixel, 4 channels c*dmul+m.
    # x - 128: channel 0 [[1, 2], [3, 4]], channel 1 [[0, -2], [-4, 10]]
    # w - 128: (c0,m0) [[1, 0], [0, 1]]  -> 1 + 4            = 5
    #          (c0,m1) [[2, 2], [-2, 0]] -> 2 + 4 - 6 + 0    = 0
    #          (c1,m0) [[0, 1], [1, 0]]  -> -2 - 4           = -6
    #          (c1,m1) [[10, 0], [0, -10]] -> 0 - 100        = -100
    # output range: one = 2**-11, (-2**31 * one, 2**31 * one) = (-2**20, 2**20)
    x = np.zeros((1, 2, 2, 2), np.uint8)
    x[0, :, :, 0] = [[129, 130], [131, 132]]
    x[0, :, :, 1] = [[128, 126], [124, 138]]
    w = np.zeros((2, 2, 2, 2), np.uint8)
    w[:, :, 0, 0] = [[129, 128], [128, 129]]
    w[:, :, 0, 1] = [[130, 130], [126, 128]]
    w[:, :, 1, 0] = [[128, 129], [129, 128]]
    w[:, :, 1, 1] = [[138, 128], [128, 118]]
    acc, lo, hi = dw(x, w, IN16, W128, padding=PAD_VALID)
    assert acc.dtype == np.int32 and acc.shape == (1, 1, 1, 4)
    assert acc.reshape(-1).tolist() == [5, 0, -6, -100]
    assert (lo, hi) == (-2.0 ** 20, 2.0 ** 20)


def test_depthwise_8x8to32_hand_case_same_stride2():
    # 3x3 input, x - 128 = [[1,2,3],[4,5,6],[7,8,9]], 3x3 filter of ones (w - 128 = 1), SAME, stride 2:
    # out = ceil(3/2) = 2, pad = (2-1)*2 + 3 - 3 = 2 -> 1 before, 1 after (padded taps add 0).
    # (0,0): rows/cols -1..1 -> 1+2+4+5 = 12; (0,1): cols 1..3 -> 2+3+5+6 = 16;
    # (1,0): rows 1..3 -> 4+5+7+8 = 24;       (1,1): 5+6+8+9 = 28.
    x = u8(np.arange(129, 138), (1, 3, 3, 1))
    w = u8([129] * 9, (3, 3, 1, 1))
    acc, _, _ = dw(x, w, IN16, W128, strides=(2, 2), padding=PAD_SAME)
    assert acc.reshape(-1).tolist() == [12, 16, 24, 28]


def test_supernode_p32_hand_case():
    # out [-4, 3.96875]: step 1/32, zero 128 (exact).  bias qint32 over [-2**19, 2**19]: one code
    # 2**20 / 2**32 = 2**-12, bias32 = b * 2**-12 / 2**-11 = b / 2.
    # final = 2**-11 / 2**-5 = 2**-6 -> shamt 0, recip = 2**-6 * 2**31 = 2**25;  -out_min/prod = 8192.
    # bias [101, -51]: bb = half_even(50.5 + 8192) = 8242, half_even(-25.5 + 8192) = 8166.
    # din 1, dmul 2, 1x1 filter: x - 128 = [32, -32];  w - 128 = [64, -64].
    # pixel 0: sums [2048, -2048] -> acc [10290, 6118]; pixel 1: sums [-2048, 2048] -> acc [6194, 10214]
    # q = floor(acc * 2**25 / 2**31 + 1/2) = floor(acc / 64 + 1/2):
    #   10290/64 = 160.78 -> 161, 6118/64 = 95.59 -> 96, 6194/64 = 96.78 -> 97, 10214/64 = 159.59 -> 160
    x = u8([160, 96], (1, 1, 2, 1))
    w = u8([192, 64], (1, 1, 1, 2))
    q, lo, hi = sn(P32, x, w, IN16, W128, i32([101, -51]), (-2.0 ** 19, 2.0 ** 19), (-4.0, 3.96875))
    assert q.reshape(-1).tolist() == [161, 96, 97, 160]
    assert (lo, hi) == (-4.0, 3.96875)


def test_supernode_p8_hand_case_shift_and_saturation():
    # in [-128, 127]: step 1, zero 128.  w [-8, 7.9375]: step 1/16, zero 128.  prod = 1/16.
    # out [0, 3.984375]: step 1/64, zero 0; final = 4 -> frexp(4) = 0.5 * 2**3, shamt 3, recip = 2**30.
    # bias quint8 over [-4, 3.96875] (step 1/32, zero 128): b = 133 -> bias32 = (5/32) / (1/16) = 2.5,
    # bb = half_even(2.5) = 2.
    # 1x2 filter, w - 128 = [8, 1]; x - 128 = [1, -8, 8, 8], VALID -> 3 outputs:
    # sums [1*8 - 8*1, -8*8 + 8*1, 8*8 + 8*1] = [0, -56, 72]; acc = [2, -54, 74]
    # q = ((acc << 3) * 2**30 + 2**30) >> 31 = floor(4 * acc + 1/2) = [8, -216, 296] -> sat [8, 0, 255]
    x = u8([129, 120, 136, 136], (1, 1, 4, 1))
    w = u8([136, 129], (1, 2, 1, 1))
    q, lo, hi = sn(P8, x, w, (-128.0, 127.0), (-8.0, 7.9375), u8([133], (1, 1, 1, 1)), (-4.0, 3.96875),
                   (0.0, 3.984375), padding=PAD_VALID)
    assert q.reshape(-1).tolist() == [8, 0, 255]
    assert (lo, hi) == (0.0, 3.984375)


def test_supernode_auto_range_starts_depthwise_and_widens():
    state: dict = {}
    # Start [-0.125, 0.125]: adjust_range: z = 0.125 * 255 / 0.25 = 127.5, zi 127, zf 0.5;
    # (zf - 1) * mn = 0.0625 >= zf * mx = 0.0625 -> grow max: range = 255 * 0.125 / 127, max = 16/127.
    # step = 1/1016, zero 127.  final = 1016 / 2048 < 1.75: no 1.75-widening.
    # 1x1 filter w - 128 = 64, zero bias; x - 128 = [0, 16] -> sums [0, 1024] (reals 0 and 0.5).
    # bb = half_even(0.125 * 2048) = 256; recip = 1016 * 2**20; code of 1280 = floor(1280*1016/2048 + .5)
    # = 635 > 255 -> max = -0.125 + 635/1016 = 0.5 = 2**(-4/4) exactly; adjust_range(-0.125, 0.5):
    # z = 0.125 * 255 / 0.625 = 51, exact.  Range [-0.125, 0.5], step 1/408, zero 51.
    # Recompute: q = floor(acc * 408 / 2048 + 1/2) with acc = [256, 1280] -> [51, 255].
    x = u8([128, 144], (1, 1, 2, 1))
    w = u8([192], (1, 1, 1, 1))
    q, lo, hi = sn(P32, x, w, IN16, W128, i32([0]), (-1.0, 1.0), (-INF, INF), state=state)
    assert q.reshape(-1).tolist() == [51, 255]
    assert (lo, hi) == (-0.125, 0.5)
    # Second run, x - 128 = [0, -16] (real -0.5): starts from the kept [-0.125, 0.5];
    # code = 51 - 0.5 * 408 = -153 < 0 -> min = -0.125 - 153/408 = -0.5 (a power of 2**(1/4));
    # adjust_range(-0.5, 0.5): z = 127.5 again -> max = -0.5 + 255 * 0.5 / 127 = 64/127; step 1/254, zero 127.
    # bb = half_even(0.5 * 2048) = 1024, acc = [1024, 0], q = floor(acc * 254 / 2048 + 1/2) = [127, 0].
    q, lo, hi = sn(P32, u8([128, 112], (1, 1, 2, 1)), w, IN16, W128, i32([0]), (-1.0, 1.0), (-INF, INF),
                   state=state)
    assert q.reshape(-1).tolist() == [127, 0]
    assert lo == -0.5 and hi == pytest.approx(64 / 127, rel=1e-7)


# ------------------------------------------------------------ property cases

IN_RNG, W_RNG = (-2.0, 3.0), (-1.0, 1.0)   # zeros: round_away(102.0) = 102 and round_away(127.5) = 128
PROD = (5.0 / 255) * (2.0 / 255)
B32_RNG = (-2.0 ** 20 * PROD, 2.0 ** 20 * PROD)  # one qint32 code = PROD / 2**11


def _case(seed, din=3, dmul=2, shape=(2, 7, 6), f=(3, 3)):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (*shape, din), dtype=np.uint8)
    w = rng.integers(0, 256, (*f, din, dmul), dtype=np.uint8)
    bias = rng.integers(-2 ** 22, 2 ** 22, din * dmul).astype(np.int32)
    return x, w, bias


@pytest.mark.parametrize("padding", [PAD_SAME, PAD_VALID, PAD_SAME_CAFFE])
@pytest.mark.parametrize("strides,dmul,f", [((1, 1), 1, (3, 3)), ((2, 2), 2, (3, 2)), ((1, 2), 3, (2, 4))])
def test_depthwise_8x8to32_equals_loop_reference(padding, strides, dmul, f):
    x, w, _ = _case(padding * 5 + dmul, dmul=dmul, f=f)
    acc, _, _ = dw(x, w, IN_RNG, W_RNG, strides=strides, padding=padding)
    np.testing.assert_array_equal(acc, reference_depthwise(x, 102, w, 128, *strides, padding))


@pytest.mark.parametrize("padding,strides", [(PAD_SAME, (1, 1)), (PAD_VALID, (2, 1)), (PAD_SAME_CAFFE, (2, 2))])
def test_supernode_p32_codes_match_integer_reference_and_float(padding, strides):
    x, w, bias = _case(3 + padding)
    sums = reference_depthwise(x, 102, w, 128, *strides, padding)
    ref = sums * PROD + bias * (PROD / 2 ** 11)
    a = max(-ref.min(), ref.max()) * 1.02
    out_rng = (-a, a * 127 / 128)  # step a/128, zero code 128 exactly: adjust_range keeps it
    q, lo, hi = sn(P32, x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, out_rng, strides=strides, padding=padding)
    assert (lo, hi) == (float(np.float32(-a)), float(np.float32(a * 127 / 128)))
    b_step = (float(np.float32(B32_RNG[1])) - float(np.float32(B32_RNG[0]))) / 2 ** 32
    np.testing.assert_array_equal(q, reference_codes(sums, PROD, [b * b_step / PROD for b in bias], lo, hi))
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - 128) * step - ref)) <= step


def test_supernode_p8_within_one_step_of_float():
    x, w, _ = _case(17, dmul=1)
    bias = np.random.default_rng(18).integers(0, 256, 3).astype(np.uint8)
    b_rng = (-3.0, 2.0)   # step 5/255, zero 153
    ref = reference_depthwise(x, 102, w, 128, 1, 1, PAD_SAME) * PROD + (bias - 153.0) * (5.0 / 255)
    out_rng = (min(0.0, ref.min()) * 1.05, max(0.0, ref.max()) * 1.05)
    q, lo, hi = sn(P8, x, w, IN_RNG, W_RNG, bias.reshape(1, 1, 1, 3), b_rng, out_rng)
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - round(-lo / step)) * step - ref)) <= step


def test_supernode_auto_range_covers_data_and_persists():
    x, w, bias = _case(23)
    state: dict = {}
    q, lo, hi = sn(P32, x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, (-INF, INF), state=state)
    ref = reference_depthwise(x, 102, w, 128, 1, 1, PAD_SAME) * PROD + bias * (PROD / 2 ** 11)
    assert lo <= ref.min() and ref.max() <= hi
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - round(-lo / step)) * step - ref)) <= step
    _, lo2, hi2 = sn(P32, np.full_like(x, 102), w, IN_RNG, W_RNG, i32(bias), B32_RNG, (-INF, INF), state=state)
    assert (lo2, hi2) == (lo, hi)   # ranges never shrink


def test_supernode_mobilenet_layer_is_fast():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (1, 112, 112, 32), dtype=np.uint8)
    w = rng.integers(0, 256, (3, 3, 32, 1), dtype=np.uint8)
    bias = rng.integers(-2 ** 20, 2 ** 20, 32).astype(np.int32)
    t0 = time.perf_counter()
    q, _, _ = sn(P32, x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, (-INF, INF), state={})
    assert time.perf_counter() - t0 < 1.0
    assert q.shape == (1, 112, 112, 32)


# --------------------------------------------------------------- error cases

def test_depthwise_8x8to32_errors():
    x = u8([128] * 8, (1, 2, 2, 2))
    ok_w = u8([128] * 2, (1, 1, 2, 1))
    with pytest.raises(OpError, match=rf"node dw1 \({DW}\).*filter depth 3"):
        dw(x, u8([128] * 3, (1, 1, 3, 1)), IN16, W128)
    with pytest.raises(OpError, match=rf"node dw1 \({DW}\).*padding"):
        dw(x, ok_w, IN16, W128, padding=PAD_NA)
    with pytest.raises(OpError, match=rf"node dw1 \({DW}\).*input range"):
        dw(x, ok_w, (0.5, 1.0), W128)
    with pytest.raises(OpError, match=rf"node dw1 \({DW}\).*VALID.*smaller than the window"):
        dw(x, u8([128] * 18, (3, 3, 2, 1)), IN16, W128, padding=PAD_VALID)
    with pytest.raises(OpError, match=rf"node dw1 \({DW}\).*expected 4-D"):
        dw(x, u8([128] * 2, (1, 2, 1)), IN16, W128)


@pytest.mark.parametrize("op", [P32, P8])
def test_supernode_errors(op):
    x = u8([128] * 8, (1, 2, 2, 2))
    w = u8([128] * 4, (1, 1, 2, 2))   # dout = 2 * 2 = 4

    def bias(n):
        return i32([0] * n) if op == P32 else u8([0] * n, (1, 1, 1, n))

    def raises(match, *, w=w, b=None, out_rng=(-1.0, 1.0), padding=PAD_SAME, b_rng=(-1.0, 1.0)):
        b = bias(4) if b is None else b
        with pytest.raises(OpError, match=rf"node dsn1 \({op}\).*{match}"):
            sn(op, x, w, IN16, W128, b, b_rng, out_rng, padding=padding)

    raises("bias has 2 elements", b=bias(2))
    raises("filter depth 1", w=u8([128] * 2, (1, 1, 1, 2)))
    raises("padding", padding=PAD_NA)
    raises("output range", out_rng=(0.5, 1.0))
    raises("output max", out_rng=(-INF, -1.0))
    raises("bias range", b_rng=(1.0, 2.0))
