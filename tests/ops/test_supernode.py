"""Supernode_8x8p32to8 and Supernode_8x8p8to8 (SEMANTICS.md §5).

Hand cases are worked in the comments (hexagon_nn's float32 rules; the values
checked against the nnlib C through the harness). Property cases compare with
independent references: a float64 convolution (explicit x_zero padding, loop
over taps), hexagon_nn's output stage worked with float32 scalars and Python
integers (:mod:`hexnn_import.testing.supernode_c`), and a float64 conv + bias
for the "within one output step" check.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID
from hexnn_import.testing.opcheck import f32, i32, reference_conv, stride, u8
from hexnn_import.testing.supernode_c import c_supernode_codes

P32 = "Supernode_8x8p32to8"
P8 = "Supernode_8x8p8to8"
INF = math.inf




def sn(op, x, w, in_rng, w_rng, bias, b_rng, out_rng, k=None, strides=(1, 1), padding=PAD_SAME, state=None):
    """Run a supernode with the catalog's input order."""
    inputs = [x, w, *in_rng, *w_rng, stride(*strides), bias, *b_rng, *out_rng]
    if k is not None:
        inputs.append(f32(k))
    q, mn, mx = run_op(op, inputs, padding=padding, state=state, node="sn1")
    return q, mn.item(), mx.item()




# ---------------------------------------------------------------- hand cases

def test_p32_hand_case_with_channel_scales():
    # in [-8, 7.9375]: step 15.9375/255 = 1/16, zero 128.  w [-1, 0.9921875]: step 1/128, zero 128.
    # prod = 2**-4 * 2**-7 = 2**-11.  out [-4, 3.96875]: step 1/32, zero 4*32 = 128 (already exact).
    # bias [-2**19, 2**19] qint32: b_step = 2**20 / 2**32 = 2**-12, so bias32 = b * 2**-12 / 2**-11 = b / 2.
    # k = [1, 0.5]: final = 1 * 2**-11 / 2**-5 = 2**-6 <= 1 -> shamt 0;
    # recip = [round(2**-6 * 2**31 * 1), round(2**-6 * 2**31 * 0.5)] = [2**25, 2**24].
    # -out_min / prod = 4 * 2**11 = 8192.
    # bb[0] = half_even((101/2 + 8192) / 1) = half_even(8242.5) = 8242
    # bb[1] = half_even((-51/2 + 8192) / 0.5) = 16333
    # x - 128 = [0, 32, -32, 72];  w - 128 = [64, -64]  (1x1 filter, 2 output channels)
    # channel 0: sums [0, 2048, -2048, 4608], acc = [8242, 10290, 6194, 12850],
    #   q = floor(acc * 2**25 / 2**31 + 1/2) = floor(acc/64 + 1/2)  (acc/64 = 128.78, 160.78, 96.78, 200.78)
    #     = [129, 161, 97, 201]
    # channel 1: sums [0, -2048, 2048, -4608], acc = [16333, 14285, 18381, 11725],
    #   q = floor(acc/128 + 1/2)  (acc/128 = 127.60, 111.60, 143.60, 91.60) = [128, 112, 144, 92]
    x = u8([128, 160, 96, 200], (1, 2, 2, 1))
    w = u8([192, 64], (1, 1, 1, 2))
    q, lo, hi = sn(P32, x, w, (-8.0, 7.9375), (-1.0, 0.9921875), i32([101, -51]), (-2.0 ** 19, 2.0 ** 19),
                   (-4.0, 3.96875), k=[1.0, 0.5])
    expected = np.asarray([[129, 128], [161, 112], [97, 144], [201, 92]], np.uint8).reshape(1, 2, 2, 2)
    np.testing.assert_array_equal(q, expected)
    assert (lo, hi) == (-4.0, 3.96875)


def test_p8_hand_case_shift_and_half_even_bias():
    # in [-128, 127]: step 1, zero 128.  w [-8, 7.9375]: step 1/16, zero 128.  prod = 1/16.
    # out [0, 3.984375]: step 1/64, zero 0.  final = (1/16) / (1/64) = 4 > 1 -> frexp(4) = 0.5 * 2**3,
    # shamt = 3;  recip = round(4 * 2**(31-3)) = 2**30.
    # bias quint8 over [-4, 3.96875]: step 1/32, zero 128; b = 133 -> bias32 = 5 * (1/32) / (1/16) = 2.5,
    # bb = half_even(2.5 + 0) = 2 (ties to even; away-from-zero would give 3).
    # x - 128 = [0, 1, -8, 8];  w - 128 = 8  -> sums [0, 8, -64, 64], acc = [2, 10, -62, 66]
    # q = ((acc << 3) * 2**30 + 2**30) >> 31 = floor(4 * acc + 1/2) = [8, 40, -248, 264] -> sat [8, 40, 0, 255]
    x = u8([128, 129, 120, 136], (1, 2, 2, 1))
    w = u8([136], (1, 1, 1, 1))
    q, lo, hi = sn(P8, x, w, (-128.0, 127.0), (-8.0, 7.9375), u8([133], (1, 1, 1, 1)), (-4.0, 3.96875),
                   (0.0, 3.984375), padding=PAD_VALID)
    np.testing.assert_array_equal(q.reshape(-1), [8, 40, 0, 255])
    assert (lo, hi) == (0.0, 3.984375)


AUTO_IN, AUTO_W = (-8.0, 7.9375), (-1.0, 0.9921875)  # steps 1/16 and 1/128, zeros 128; prod = 2**-11


def _auto_run(x_codes, state):
    """1x1x2x1 input, 1x1 filter code 192 (w - 128 = 64, real 0.5), zero bias, both ends auto."""
    return sn(P32, u8(x_codes, (1, 1, 2, 1)), u8([192], (1, 1, 1, 1)), AUTO_IN, AUTO_W, i32([0]),
              (-1.0, 1.0), (-INF, INF), state=state)


def test_auto_range_hand_case_widens_and_persists():
    state: dict = {}
    # Call 1: x - 128 = [0, 96] -> sums [0, 6144], reals [0, 6144 * 2**-11] = [0, 3.0].
    # Start [0, 0.5]: final = 2**-11 * 255 / 0.5 = 0.249 <= 1.75, no first-guess widening; bias 0.
    # Code of 3.0 is 1530 > 255 -> hexagon_nn's check_for_retry moves max to round_up_quarter_octave(
    # out_level * (1530 + 0.5) + 0) = round_up_quarter_octave(3.0019): the power of 2**(1/4) after the
    # first one above 3.0019 * 2**(1/4) = 3.57, i.e. 4.0 (supernode_utils.h); min stays 0 (no code < 0).
    # Recompute: q = round(3.0 * 255 / 4) = round(191.25) = 191.
    q, lo, hi = _auto_run([128, 224], state)
    assert q.reshape(-1).tolist() == [0, 191]
    assert (lo, hi) == (0.0, 4.0)
    # Call 2, smaller data (x - 128 = [0, 8]: real 0.25): the range is kept, not shrunk: round(15.94) = 16.
    q, lo, hi = _auto_run([128, 136], state)
    assert q.reshape(-1).tolist() == [0, 16]
    assert (lo, hi) == (0.0, 4.0)
    # Call 3 (x - 128 = 127: real 3.96875): code round(252.99) = 253 fits, the range stays [0, 4].
    q, lo, hi = _auto_run([128, 255], state)
    assert q.reshape(-1).tolist() == [0, 253]
    assert (lo, hi) == (0.0, 4.0)
    # Call 4, more than 4.0 (x - 128 = -128 and a sum of 2 taps is not possible here: use the widest code
    # again after a fresh state): a fresh state starts again from [0, 0.5].
    q, lo, hi = _auto_run([128, 129], {})
    assert (lo, hi) == (0.0, 0.5)


def test_auto_range_hand_case_175_rule():
    # in [-128, 127] (step 1, zero 128), w [-8, 7.9375] (step 1/16, zero 128): prod = 1/16.
    # Start [0, 0.5]: final = (1/16) * 255 / 0.5 = 31.9 > 1.75 -> out_step = (1/16)/1.75 = 1/28,
    # both ends auto -> [-63/28, 192/28] = [-2.25, 6.857142857]; zero code 63 is exact.
    # final = 1.75 -> shamt 1, recip = 1.75 * 2**30;  bb = half_even(2.25 / (1/16)) = 36.
    # x - 128 = [0, 2], w - 128 = 8 -> sums [0, 16]; acc = [36, 52];
    # q = floor(2 * acc * 1.75 * 2**30 / 2**31 + 1/2) = floor(1.75 * acc + 1/2) = [63, 91]
    # (reals (63-63)/28 = 0 and (91-63)/28 = 1.0 = 16 / 16: exact).
    q, lo, hi = sn(P32, u8([128, 130], (1, 1, 2, 1)), u8([136], (1, 1, 1, 1)), (-128.0, 127.0),
                   (-8.0, 7.9375), i32([0]), (-1.0, 1.0), (-INF, INF))
    assert q.reshape(-1).tolist() == [63, 91]
    assert lo == pytest.approx(-2.25, rel=1e-7) and hi == pytest.approx(192 / 28, rel=1e-7)
    # Only max auto, min fixed at 0: max = 0 + 255 * (1/28) = 9.107; zero code 0;
    # bb = 0, q = floor(1.75 * [0, 16] + 1/2) = [0, 28]  (28/28 = 1.0).
    q, lo, hi = sn(P32, u8([128, 130], (1, 1, 2, 1)), u8([136], (1, 1, 1, 1)), (-128.0, 127.0),
                   (-8.0, 7.9375), i32([0]), (-1.0, 1.0), (0.0, INF))
    assert q.reshape(-1).tolist() == [0, 28]
    assert lo == 0.0 and hi == pytest.approx(255 / 28, rel=1e-7)
    # Only min auto, max fixed at 0: start [0, 0] is empty, the 1.75 rule opens it to [-255 * out_level, 0]
    # (zero code 255), out_level = float32(0.0625f / 1.75f) = 0.035714287f. Then (fill_info_minmax_basics,
    # need_adjust for a fixed max) out_level = flt_div_255(9.107143f) = 0.035714287f again and
    # final = 0.0625f / 0.035714287f = 1.7499999f (float32, not 1.75): shamt 1, recip =
    # roundf_u32(1.7499999f * 2**30) = 1879048064 = 1.75 * 2**30 - 128.
    # x - 128 = [0, -2] -> sums [0, -16]; bb = half_even(9.107143f / 0.0625f) = half_even(145.71) = 146
    # (subtracting and adding back gemsumb * in_zero changes nothing here); acc = [146, 130];
    # q = (2 * acc * recip + 2**30) >> 31 = floor(acc * 1.7499999 + 1/2) = [256 -> 255, 227]
    # (227.49998 + 0.5: the float32 final rounds the tie 227.5 down). Oracle (nnlib C): [255, 227].
    q, lo, hi = sn(P32, u8([128, 126], (1, 1, 2, 1)), u8([136], (1, 1, 1, 1)), (-128.0, 127.0),
                   (-8.0, 7.9375), i32([0]), (-1.0, 1.0), (-INF, 0.0))
    assert q.reshape(-1).tolist() == [255, 227]
    assert lo == pytest.approx(-255 / 28, rel=1e-7) and hi == 0.0


# ------------------------------------------------------------ property cases

# zeros as hexagon_nn finds them (get_qu8_level_size_zero, float32): 102, and 127 for the weights, since
# 1.0f / flt_div_255(2.0f) = 127.49999f rounds to 127 (float64 would give round_away(127.5) = 128)
IN_RNG, W_RNG = (-2.0, 3.0), (-1.0, 1.0)
W_ZERO = 127
IN_STEP, W_STEP = 5.0 / 255, 2.0 / 255
PROD = IN_STEP * W_STEP
B32_RNG = (-2.0 ** 20 * PROD, 2.0 ** 20 * PROD)  # qint32 bias step = 2**21 * PROD / 2**32 = PROD / 2**11


def _random_case(seed, din=3, dout=4, shape=(2, 7, 6)):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (*shape, din), dtype=np.uint8)
    w = rng.integers(0, 256, (3, 3, din, dout), dtype=np.uint8)
    bias = rng.integers(-2 ** 24, 2 ** 24, dout).astype(np.int32)
    return x, w, bias


@pytest.mark.parametrize("padding", [PAD_SAME, PAD_VALID, PAD_SAME_CAFFE])
@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (1, 2)])
def test_p32_within_one_step_of_float_reference(padding, strides):
    x, w, bias = _random_case(padding * 7 + strides[0] * 3 + strides[1])
    sums = reference_conv(x, 102, w, W_ZERO, *strides, padding)
    ref = sums * PROD + bias.astype(np.float64) * (PROD / 2 ** 11)
    out_rng = (min(0.0, ref.min()) * 1.05, max(0.0, ref.max()) * 1.05)
    q, lo, hi = sn(P32, x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, out_rng, strides=strides, padding=padding)
    step = (hi - lo) / 255
    zero = round(-lo / step)
    assert PROD / step <= 1.0  # final <= 1: rounding of bias, recip and result together stay within a step
    assert np.max(np.abs((q.astype(np.float64) - zero) * step - ref)) <= step


def test_p8_within_one_step_of_float_reference():
    x, w, _ = _random_case(11)
    bias = np.random.default_rng(12).integers(0, 256, 4).astype(np.uint8)
    b_rng = (-3.0, 2.0)  # step 5/255, zero round_away(153) = 153
    sums = reference_conv(x, 102, w, W_ZERO, 1, 1, PAD_SAME)
    ref = sums * PROD + (bias.astype(np.float64) - 153) * (5.0 / 255)
    out_rng = (min(0.0, ref.min()) * 1.05, max(0.0, ref.max()) * 1.05)
    q, lo, hi = sn(P8, x, w, IN_RNG, W_RNG, bias.reshape(1, 1, 1, 4), b_rng, out_rng)
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - round(-lo / step)) * step - ref)) <= step


def _zero_exact(a: float) -> tuple[float, float]:
    """[-a, a * 127/128]: step a/128, zero code 128 exactly, so adjust_range leaves it as given."""
    return -a, a * 127 / 128


@pytest.mark.parametrize("scale,out_rng,k", [
    (1.0, _zero_exact(32.0), [1.0, 0.75, 0.5, 0.01]),      # final < 1, shamt 0
    (1.0, _zero_exact(2 ** -8), [1.0, 0.75, 0.5, 0.01]),   # final > 1: shamt > 0, heavy saturation
    (1.0, _zero_exact(2 ** -20), [1.0, 1.0, 0.5, 0.001]),  # very narrow: (acc << shamt) * recip beyond 2**61
    (2.0 ** 50, _zero_exact(2 ** -20), [1.0, 1.0, 0.5, 0.001]),  # shamt > 64
    (1.0, (0.0, 255.0 * 2 ** -6), None),                   # ReLU-like range, no channel scales
])
def test_codes_match_python_integer_reference(scale, out_rng, k):
    # The reference is hexagon_nn's rule for a fixed output range, worked with float32 scalars and Python
    # integers (hexnn_import.testing.supernode_c, written from the C and checked against it): zeros and
    # levels from get_qu8_level_size_zero (weights [-1, 1] -> zero 127), recip / shamt with max_k = 1,
    # biasbuf in float32 rounded half-even, then 32-bit wrapping adds and shift (the narrow ranges wrap, as
    # on the device) and (s * recip + 2**30) >> 31.
    x, w, bias = _random_case(5)
    in_rng = (IN_RNG[0] * scale, IN_RNG[1] * scale)
    q, lo, hi = sn(P32, x, w, in_rng, W_RNG, i32(bias), B32_RNG, out_rng, k=k)
    assert (lo, hi) == out_rng
    ref = c_supernode_codes(x, w, lambda iz, wz: reference_conv(x, iz, w, wz, 1, 1, PAD_SAME), in_rng, W_RNG,
                            bias, B32_RNG, True, out_rng, k=k)
    np.testing.assert_array_equal(q, ref)


def test_channel_scales_act_as_scaled_weights():
    x, w, bias = _random_case(21)
    k = np.asarray([1.0, 0.5, 0.25, 0.8])
    sums = reference_conv(x, 102, w, W_ZERO, 1, 1, PAD_SAME)
    ref = sums * PROD * k + bias.astype(np.float64) * (PROD / 2 ** 11)   # weights of channel c times k[c]
    out_rng = (min(0.0, ref.min()) * 1.05, max(0.0, ref.max()) * 1.05)
    q, lo, hi = sn(P32, x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, out_rng, k=k)
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - round(-lo / step)) * step - ref)) <= step


def test_uniform_channel_scale_equals_doubled_range():
    # Zero bias: k = 0.5 everywhere with range R gives recip, shamt and bb equal to k = 1 with range 2R
    # (prod/out_step halves exactly; bb = (-out_min/prod)/0.5 = -2*out_min/prod), so codes are identical.
    x, w, _ = _random_case(8)
    zero_bias = i32([0, 0, 0, 0])
    q_half, _, _ = sn(P32, x, w, IN_RNG, W_RNG, zero_bias, B32_RNG, (-0.5, 1.5), k=[0.5] * 4)
    q_one, _, _ = sn(P32, x, w, IN_RNG, W_RNG, zero_bias, B32_RNG, (-1.0, 3.0))
    np.testing.assert_array_equal(q_half, q_one)


def test_auto_range_covers_data_grows_and_never_shrinks():
    rng = np.random.default_rng(4)
    w = rng.integers(0, 256, (3, 3, 3, 4), dtype=np.uint8)
    bias = rng.integers(-2 ** 20, 2 ** 20, 4).astype(np.int32)
    small = rng.integers(92, 113, (1, 8, 8, 3), dtype=np.uint8)   # codes near the zero 102
    large = rng.integers(0, 256, (1, 8, 8, 3), dtype=np.uint8)
    state: dict = {}

    def run(x):
        q, lo, hi = sn(P32, x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, (-INF, INF), state=state)
        ref = reference_conv(x, 102, w, W_ZERO, 1, 1, PAD_SAME) * PROD + bias * (PROD / 2 ** 11)
        return q, lo, hi, ref

    q1, lo1, hi1, ref1 = run(small)
    step1 = (hi1 - lo1) / 255
    assert lo1 <= ref1.min() and ref1.max() <= hi1                       # the first result covers the data
    assert np.max(np.abs((q1.astype(np.float64) - round(-lo1 / step1)) * step1 - ref1)) <= step1
    q2, lo2, hi2, ref2 = run(large)
    assert lo2 <= lo1 and hi2 >= hi1 and (hi2 - lo2) > (hi1 - lo1)      # grew
    assert lo2 <= ref2.min() and ref2.max() <= hi2
    q3, lo3, hi3, _ = run(small)
    assert (lo3, hi3) == (lo2, hi2)                                      # never shrinks


def test_auto_max_with_fixed_min_keeps_min():
    x, w, bias = _random_case(9)
    q, lo, hi = sn(P32, x, w, IN_RNG, W_RNG, i32(bias), B32_RNG, (0.0, INF))
    ref = reference_conv(x, 102, w, W_ZERO, 1, 1, PAD_SAME) * PROD + bias * (PROD / 2 ** 11)
    assert lo == 0.0 and hi >= ref.max()
    assert np.all(q[ref < 0] == 0)


# --------------------------------------------------------------- error cases

def _raises(op, match, *, x=None, w=None, bias=None, out_rng=(-1.0, 1.0), k=None, in_rng=(-1.0, 1.0),
            padding=PAD_SAME):
    x = u8([128] * 4, (1, 2, 2, 1)) if x is None else x
    w = u8([128, 128], (1, 1, 1, 2)) if w is None else w
    bias = (i32([0, 0]) if op == P32 else u8([0, 0], (1, 1, 1, 2))) if bias is None else bias
    with pytest.raises(OpError, match=rf"node sn1 \({op}\).*{match}"):
        sn(op, x, w, in_rng, (-1.0, 1.0), bias, (-1.0, 1.0), out_rng, k=k, padding=padding)


@pytest.mark.parametrize("op", [P32, P8])
def test_supernode_errors(op):
    _raises(op, "padding", padding=PAD_NA)
    _raises(op, "depth", w=u8([128] * 4, (1, 1, 2, 2)))
    _raises(op, "bias has 3 elements", bias=i32([0, 0, 0]) if op == P32 else u8([0] * 3, (1, 1, 1, 3)))
    _raises(op, "channel scale 1", k=[1.0, 1.0 / 4096])
    _raises(op, "channel scale 0", k=[1.5, 1.0])
    _raises(op, "channel scale 1", k=[1.0, 0.0])
    _raises(op, "channel scales have 3", k=[1.0, 1.0, 1.0])
    _raises(op, "output range", out_rng=(0.5, 1.0))
    # setup_initial_output_range: "supernode: invalid input min/max" unless min <= 0 <= max and min < max
    _raises(op, "output range", out_rng=(INF, INF))
    _raises(op, "output range", out_rng=(-INF, -1.0))


@pytest.mark.parametrize("op,bias,expected", [(P32, i32([0, 0]), 128), (P8, u8([0, 0], (1, 1, 1, 2)), 0)])
def test_input_range_excluding_zero_computes_as_the_c(op, bias, expected):
    # hexagon_nn accepts an input range without 0 (fill_info_minmax_basics: get_qu8_level_size_zero):
    # [0.5, 1]: level flt_div_255(0.5) ~ 0.5/255, zero saturate_u8(roundf_i32(-0.5 / level)) = saturate_u8(-255) = 0,
    # so code 128 counts as 128 levels. Weights [-1, 1]: zero 127, w - 127 = 1: sum = 128, real 128 * prod =
    # 128 * (0.5/255) * (2/255) = 0.00197. Output [-1, 1] (fixed, zero 127.5): setup_initial_output_range's
    # adjust_minmax_for_zero_with_constraints moves both ends half a step down to [-1.0039216, 0.9960784]
    # (float32), zero code 128. p32, bias 0: code 128 + 0.00197 / (2/255) = 128.25 -> 128. p8, bias code 0 of
    # [-1, 1] (zero 128): real -1.0039, below out_min: code 0.25 - ... -> 0. Oracle (nnlib C, the harness's
    # supernode model): the same codes and range.
    x = u8([128] * 4, (1, 2, 2, 1))
    w = u8([128, 128], (1, 1, 1, 2))
    q, lo, hi = sn(op, x, w, (0.5, 1.0), (-1.0, 1.0), bias, (-1.0, 1.0), (-1.0, 1.0))
    assert q.reshape(-1).tolist() == [expected] * 8
    assert (lo, hi) == (float(np.float32(-1.0039216)), float(np.float32(0.99607843)))
