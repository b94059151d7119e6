"""QuantizedDepthwiseConv2d_8x8to32 and DepthwiseSupernode_8x8p{8,32}to8 (SEMANTICS.md §3, §5).

Hand cases are worked in the comments. Property cases compare with
references written here: a depthwise convolution looping over channels,
multipliers and output pixels (explicit x_zero padding via np.pad), hexagon_nn's
output stage worked with float32 scalars and Python integers
(:mod:`hexnn_import.testing.supernode_c`), and a float64 formula for the
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
from hexnn_import.testing.opcheck import geometry, i32, stride, u8
from hexnn_import.testing.supernode_c import c_supernode_codes

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
    oh, top, bottom = geometry(h, fh, sh, padding)
    ow, left, right = geometry(wd, fw, sw, padding)
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
    # hexagon_nn (op_dwise_snode_8bit.c, supernode_utils.h), float32 throughout:
    # setup_initial_output_range: start [-0.125, 0.125], adjust_minmax_for_zero_with_constraints(flags 0):
    # z = 127.5, zi 127, zf 0.5, (zf - 1) * mn = 0.0625 >= zf * mx = 0.0625 -> move max out:
    # max = -0.125 + 255 * 0.125 / 127 = 0.12598425, step ~1/1016, zero 127.
    # Weights [-1, 0.9921875]: level 1.9921875 / 255 = 2**-7, zero quantize_uint8(0) = 128; input step 1/16,
    # zero 128: prod = 2**-11; final = prod / step ~ 0.496 <= 1.75 (no first-guess widening), shamt 0.
    # 1x1 filter w - 128 = 64, zero bias; x - 128 = [0, 16] -> sums [0, 1024]; biasbuf = round(0.125 / prod)
    # = 256; codes ~ [256, 1280] * 0.496 = [127, 635]: 635 > 255 -> check_for_retry: max =
    # round_up_quarter_octave(step * 635.5 - 0.125 = 0.5005) = 2**-0.5 = 0.70710677 (0.5005 * 2**0.25 =
    # 0.595 lies in [0.5946, 0.7071): mantissa 0.70710677); then adjust_minmax(-0.125, 0.7071, 0): z = 38.3,
    # (zf - 1) * mn = 0.087 < zf * mx = 0.217 -> move min out: min = 0.7071 * 39 / (39 - 255) = -0.12767206.
    # Recompute: step = 0.8347788 / 255, final ~ 0.14915, biasbuf = round(0.12767206 / prod) = round(261.47)
    # = 261: codes floor([261, 1285] * 0.14915 + 1/2) = [39, 192]. Oracle (nnlib C, harness model): the same.
    x = u8([128, 144], (1, 1, 2, 1))
    w = u8([192], (1, 1, 1, 1))
    q, lo, hi = sn(P32, x, w, IN16, W128, i32([0]), (-1.0, 1.0), (-INF, INF), state=state)
    assert q.reshape(-1).tolist() == [39, 192]
    assert (lo, hi) == (float(np.float32(-0.12767206)), float(np.float32(0.70710677)))
    # Second run, x - 128 = [0, -16] (sums [0, -1024]): starts from the kept range (the node's info);
    # codes [39, floor(-763 * 0.14915 + 1/2) = -114] -> min = round_up_quarter_octave(step * -114.5 - 0.1277
    # = -0.5025) = -0.70710677; adjust_minmax(-0.7071, 0.7071, 0): z = 127.5 again -> move max out: max =
    # -0.7071 + 255 * 0.7071 / 127 = 0.71267456; step ~ 0.0055678, final ~ 0.087697, biasbuf =
    # round(0.70710677 / prod) = round(1448.15) = 1448: codes floor([1448, 424] * 0.087697 + 1/2) = [127, 37].
    q, lo, hi = sn(P32, u8([128, 112], (1, 1, 2, 1)), w, IN16, W128, i32([0]), (-1.0, 1.0), (-INF, INF),
                   state=state)
    assert q.reshape(-1).tolist() == [127, 37]
    assert (lo, hi) == (float(np.float32(-0.70710677)), float(np.float32(0.71267456)))


# ------------------------------------------------------------ property cases

# zeros as hexagon_nn finds them: get_qu8_level_size_zero(-2, 3) -> 102; the depthwise weights'
# quantize_uint8(0, -1, 1) = roundf(127.5f) = 128 (level (max - min) / 255.0f)
IN_RNG, W_RNG = (-2.0, 3.0), (-1.0, 1.0)
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
    c_ref = c_supernode_codes(x, w, lambda iz, wz: reference_depthwise(x, iz, w, wz, *strides, padding), IN_RNG,
                              W_RNG, bias, B32_RNG, True, out_rng, dwise=True)   # the C's rule (module doc)
    np.testing.assert_array_equal(q, c_ref)
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - 128) * step - ref)) <= step


@pytest.mark.parametrize("k_kind", ["scales", "all_one", "single_one"])
def test_supernode_channel_scales_match_c_rule(k_kind):
    # A 13th input (prepare.c's fused ChannelScale, op_dwise_snode_8bit.c NN_IOCOUNT_RANGE(12,13)): per
    # channel recip = roundf_u32(common * k[c]) and biasbuf divided by k[c], max_k_factor 1.0. Scales that are
    # all 1.0 still count as present (per-channel recip); a single 1.0 means none (check_channelscale_present).
    x, w, bias = _case(31)
    k = {"scales": [1.0, 0.5, 0.25, 0.8, 1.0 / 2048, 0.3], "all_one": [1.0] * 6, "single_one": [1.0]}[k_kind]
    sums = reference_depthwise(x, 102, w, 128, 1, 1, PAD_SAME)
    a = float(np.abs(sums * PROD + bias * (PROD / 2 ** 11)).max()) * 1.02
    out_rng = (-a, a * 127 / 128)
    inputs = [x, w, *IN_RNG, *W_RNG, stride(1, 1), i32(bias), *B32_RNG, *out_rng,
              np.asarray(k, np.float32).reshape(1, 1, 1, -1)]
    q, lo, hi = run_op(P32, inputs, padding=PAD_SAME, node="dsn1")
    c_ref = c_supernode_codes(x, w, lambda iz, wz: reference_depthwise(x, iz, w, wz, 1, 1, PAD_SAME), IN_RNG, W_RNG,
                              bias, B32_RNG, True, out_rng, k=None if k_kind == "single_one" else k, dwise=True)
    np.testing.assert_array_equal(q, c_ref)


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
    with pytest.raises(OpError, match=rf"node dw1 \({DW}\).*filter depth 3"):
        dw(x, u8([128] * 3, (1, 1, 3, 1)), IN16, W128)
    with pytest.raises(OpError, match=rf"node dw1 \({DW}\).*input range"):
        dw(x, u8([128] * 2, (1, 1, 2, 1)), (1.0, 0.5), W128)
    with pytest.raises(OpError, match=rf"node dw1 \({DW}\).*expected 4-D"):
        dw(x, u8([128] * 2, (1, 2, 1)), IN16, W128)


def test_depthwise_8x8to32_as_the_c_where_the_engine_used_to_refuse():
    # depthwiseconv2d_execute_ref (op_depthwiseconv.c) accepts all of these:
    x = u8([129, 130, 131, 132], (1, 2, 2, 1))
    w = u8([129], (1, 1, 1, 1))                      # w - 128 = 1
    # NA padding: nn_pad_compute_outsize gives in // stride = 2 (1x1 filter: no padding)
    acc, _, _ = dw(x, w, IN16, W128, padding=PAD_NA)
    assert acc.reshape(-1).tolist() == [1, 2, 3, 4]
    # a VALID window larger than the input: an empty output
    acc, _, _ = dw(x, u8([128] * 9, (3, 3, 1, 1)), IN16, W128, padding=PAD_VALID)
    assert acc.shape == (1, 0, 0, 1)
    # an input range excluding 0: offset quantize_int(0, 0.5, 1) = roundf(-0.5 * 255 / 0.5) = -255, unclamped
    # (x + 255) * 1; the output range is still (INT32_MIN, INT32_MAX) * (0.5/255 * 1.9921875/255) in float32
    acc, lo, hi = dw(x, w, (0.5, 1.0), W128, padding=PAD_VALID)
    assert acc.reshape(-1).tolist() == [384, 385, 386, 387]
    f = np.float32
    lvl = f(f(0.5) / f(255)) * f(f(1.9921875) / f(255))
    assert (lo, hi) == (float(f(-2.0 ** 31) * lvl), float(f(2.0 ** 31) * lvl))


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
    raises("output range", out_rng=(-INF, -1.0))   # setup_initial_output_range: "invalid input min/max"


@pytest.mark.parametrize("op,bias,expected", [
    (P32, i32([0, 2 ** 28, -2 ** 28, 2 ** 30]), [128, 136, 120, 160]),
    (P8, u8([0, 50, 100, 255], (1, 1, 1, 4)), [128, 153, 178, 255]),
])
def test_supernode_bias_range_excluding_zero_computes_as_the_c(op, bias, expected):
    # fill_bias_buf accepts any bias range: level (max - min) / 2**32 (p32, offset 0) or / 255 with offset
    # quantize_uint(0, 1, 2) = max(0, roundf(-255)) = 0 (p8): over [1, 2] a code b counts as b * level, not
    # 1 + b * level. Zero sums (x = w = zero code), output [-1, 1] -> [-1.0039216, 0.99607843] (zero 128,
    # step 2/255): p32 reals [0, 1/16, -1/16, 1/4] -> 128 + [0, 8, -8, 32]; p8 reals [0, 50, 100, 255] / 255
    # -> 128 + [0, 25, 50, 127.5 -> sat 255]. Oracle (nnlib C, harness model): the same codes and range.
    x = u8([128] * 8, (1, 2, 2, 2))
    w = u8([128] * 4, (1, 1, 2, 2))
    q, lo, hi = sn(op, x, w, IN16, W128, bias, (1.0, 2.0), (-1.0, 1.0))
    assert q.reshape(-1).tolist() == expected * 4
    assert (lo, hi) == (float(np.float32(-1.0039216)), float(np.float32(0.99607843)))
