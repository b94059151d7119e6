"""QuantizedBatchNorm_8x8p{8,32}to8 and QuantizedChannelScale_32xf (per-channel scaling).

Batch norm is computed as a 1x1 depthwise supernode (kernel docstring):
exact ``(x - x_zero) * (scale - scale_zero)``, then the §5 output stage of
SEMANTICS.md. Channel scale is ``round_away(q * k)`` with the range passed
through. Hand cases are worked in the comments; property cases compare
with the §5 stage evaluated with Python integers, a float64 formula, and
exact rational arithmetic (fractions.Fraction) for the channel scale.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import f32, i32, reference_codes, u8

BN8 = "QuantizedBatchNorm_8x8p8to8"
BN32 = "QuantizedBatchNorm_8x8p32to8"
CS = "QuantizedChannelScale_32xf"
INF = math.inf




def bn(op, x, s, in_rng, s_rng, bias, b_rng, out_rng, state=None):
    q, mn, mx = run_op(op, [x, s, *in_rng, *s_rng, bias, *b_rng, *out_rng], state=state, node="bn1")
    return q, mn.item(), mx.item()


def cs(q, k, rng=(-1.0, 1.0)):
    out, mn, mx = run_op(CS, [q, f32(k), *rng], node="cs1")
    return out, mn.item(), mx.item()




# ---------------------------------------------------------------- hand cases
# in [-8, 7.9375]: step 1/16, zero 128.  scale [-1, 0.9921875]: step 1/128, zero 128.  prod = 2**-11.
# out [-4, 3.96875]: step 1/32, zero 128; final = 2**-6 -> shamt 0, recip = 2**25; -out_min/prod = 8192.
IN16, S128, OUT32 = (-8.0, 7.9375), (-1.0, 0.9921875), (-4.0, 3.96875)


def test_batchnorm_p32_hand_case():
    # qint32 bias over [-2**19, 2**19]: bias32 = b / 2; b = [101, -51] -> bb = half_even(8242.5) = 8242,
    # half_even(8166.5) = 8166.   scale - 128 = [64, -64].
    # x - 128: pixel 0 [32, -32], pixel 1 [64, 16]
    # sums: pixel 0 [2048, 2048], pixel 1 [4096, -1024]; acc: [10290, 10214], [12338, 7142]
    # q = floor(acc / 64 + 1/2): 160.78 -> 161, 159.59 -> 160, 192.78 -> 193, 111.59 -> 112
    x = u8([160, 96, 192, 144], (1, 1, 2, 2))
    q, lo, hi = bn(BN32, x, u8([192, 64], (1, 1, 1, 2)), IN16, S128, i32([101, -51]), (-2.0 ** 19, 2.0 ** 19),
                   OUT32)
    assert q.shape == (1, 1, 2, 2)
    assert q.reshape(-1).tolist() == [161, 160, 193, 112]
    assert (lo, hi) == OUT32


def test_batchnorm_p8_hand_case_broadcast_scale_and_bias():
    # scale [1,1,1,1] code 192 (scale - 128 = 64, real 0.5) and quint8 bias [1,1,1,1] code 160 over
    # [-4, 3.96875] (step 1/32, zero 128: real 1.0) apply to both channels.
    # bias32 = 1.0 / 2**-11 = 2048 -> bb = 8192 + 2048 = 10240.
    # x - 128 = [8, -16, 32, 0] -> sums = 64 * that = [512, -1024, 2048, 0]
    # acc = [10752, 9216, 12288, 10240] -> acc / 64 = [168, 144, 192, 160] (exact).
    # (real check: 8/16 * 0.5 + 1 = 1.25 -> 128 + 1.25 * 32 = 168)
    x = u8([136, 112, 160, 128], (1, 1, 2, 2))
    q, _, _ = bn(BN8, x, u8([192], (1, 1, 1, 1)), IN16, S128, u8([160], (1, 1, 1, 1)), (-4.0, 3.96875), OUT32)
    assert q.reshape(-1).tolist() == [168, 144, 192, 160]


def test_batchnorm_auto_range_starts_at_depthwise_start():
    # Data at the zero code, zero bias: result 0. Auto start [-0.125, 0.125], zero-fixed by adjust_range:
    # z = 0.125 * 255 / 0.25 = 127.5 -> (zf - 1) * mn = 0.0625 >= zf * mx = 0.0625 -> grow max:
    # max = -0.125 + 255 * 0.125 / 127 = 16/127; zero code 127; final = 2**-11 * 1016 < 1.75.
    q, lo, hi = bn(BN32, u8([128] * 4, (1, 2, 2, 1)), u8([200], (1, 1, 1, 1)), IN16, S128, i32([0]),
                   (-1.0, 1.0), (-INF, INF), state={})
    assert np.all(q == 127)
    assert lo == -0.125 and hi == pytest.approx(16 / 127, rel=1e-7)


def test_channel_scale_hand_cases():
    # op_channelscale.c: m = roundf_i32(k * 2**28), out = sat32((q * m + 2**27) >> 28) (round half up).
    # [7, -7, 5, 3] * [0.5, 0.5, 0.25, 1] = [3.5, -3.5, 1.25, 3] -> floor(v + 0.5): [4, -3, 1, 3]
    out, lo, hi = cs(i32([7, -7, 5, 3]), [0.5, 0.5, 0.25, 1.0], rng=(-3.0, 5.0))
    assert out.dtype == np.int32 and out.reshape(-1).tolist() == [4, -3, 1, 3]
    assert (lo, hi) == (-3.0, 5.0)     # range passes through
    # one value for every channel: (2**31 - 1) * 0.5 + 0.5 = 2**30; -2**31 * 0.5 + 0.5 -> -2**30;
    # 1 * 0.5 + 0.5 = 1; -1 * 0.5 + 0.5 = 0
    out, _, _ = cs(i32([2 ** 31 - 1, -2 ** 31, 1, -1]), [0.5])
    assert out.reshape(-1).tolist() == [2 ** 30, -2 ** 30, 1, 0]
    # float32(0.1) * 2**28 = 26843546 exactly: 15 * m + 2**27 = 2.0000000223 * 2**28 -> 2;
    # -25 * m + 2**27 = -2.0000000372 * 2**28 -> -3; 10 * m + 2**27 = 1.5000000149 * 2**28 -> 1
    out, _, _ = cs(i32([15, -25, 10]), [0.1])
    assert out.reshape(-1).tolist() == [2, -3, 1]
    # scales outside (0, 1] are used as they are (the C only counts them): 7 * 1.5 + 0.5 = 11;
    # 7 * -0.5 + 0.5 = -3; 7 * 0 -> 0; (2**31 - 1) * 2 saturates to 2**31 - 1
    out, _, _ = cs(i32([7, 7, 7, 2 ** 31 - 1]), [1.5, -0.5, 0.0, 2.0])
    assert out.reshape(-1).tolist() == [11, -3, 0, 2 ** 31 - 1]


# ------------------------------------------------------------ property cases

IN_RNG, S_RNG = (-2.0, 3.0), (-1.0, 1.0)   # zeros 102 and 128
PROD = (5.0 / 255) * (2.0 / 255)
B32_RNG = (-2.0 ** 20 * PROD, 2.0 ** 20 * PROD)
B_STEP = (float(np.float32(B32_RNG[1])) - float(np.float32(B32_RNG[0]))) / 2 ** 32


def test_batchnorm_p32_matches_references():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (2, 5, 6, 4), dtype=np.uint8)
    s = rng.integers(0, 256, 4).astype(np.uint8)
    bias = rng.integers(-2 ** 24, 2 ** 24, 4).astype(np.int32)
    sums = (x.astype(np.int64) - 102) * (s.astype(np.int64) - 128)
    ref = sums * PROD + bias * B_STEP
    a = max(-ref.min(), ref.max()) * 1.02
    q, lo, hi = bn(BN32, x, s.reshape(1, 1, 1, 4), IN_RNG, S_RNG, i32(bias), B32_RNG, (-a, a * 127 / 128))
    np.testing.assert_array_equal(q, reference_codes(sums, PROD, [b * B_STEP / PROD for b in bias], lo, hi))
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - 128) * step - ref)) <= step


def test_batchnorm_p8_auto_within_one_step_of_float():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, (1, 6, 6, 3), dtype=np.uint8)
    s = rng.integers(0, 256, 3).astype(np.uint8)
    bias = rng.integers(0, 256, 3).astype(np.uint8)
    b_rng = (-3.0, 2.0)   # step 5/255, zero 153
    ref = (x - 102.0) * (5.0 / 255) * (s - 128.0) * (2.0 / 255) + (bias - 153.0) * (5.0 / 255)
    state: dict = {}
    q, lo, hi = bn(BN8, x, s.reshape(1, 1, 1, 3), IN_RNG, S_RNG, bias.reshape(1, 1, 1, 3), b_rng, (-INF, INF),
                   state=state)
    assert lo <= ref.min() and ref.max() <= hi
    step = (hi - lo) / 255
    assert np.max(np.abs((q.astype(np.float64) - round(-lo / step)) * step - ref)) <= step


def test_channel_scale_matches_the_c_rule():
    # channelscale_32xf_execute in Python integers: m = (int)(f32(k * 2**28) + 0.5f) (float32 sum, truncated),
    # out = sat32(floor((q * m + 2**27) / 2**28))
    rng = np.random.default_rng(7)
    q = rng.integers(-2 ** 31, 2 ** 31, (2, 3, 4, 5)).astype(np.int32)
    q[0, 0, 0, :] = [2 ** 31 - 1, -2 ** 31, 0, 1, -1]
    k = rng.uniform(1e-6, 1.0, 5).astype(np.float32)
    k[0], k[1] = 1.0, 3.0
    out, _, _ = cs(q, k)
    f = np.float32
    m = [int(np.trunc(f(f(v) * f(2 ** 28)) + f(0.5))) for v in k]
    for idx in np.ndindex(q.shape):
        expect = (int(q[idx]) * m[idx[-1]] + 2 ** 27) >> 28
        assert int(out[idx]) == min(max(expect, -2 ** 31), 2 ** 31 - 1)


# --------------------------------------------------------------- error cases

@pytest.mark.parametrize("op", [BN8, BN32])
def test_batchnorm_errors(op):
    x = u8([128] * 4, (1, 1, 2, 2))
    bias = (lambda n: i32([0] * n)) if op == BN32 else (lambda n: u8([0] * n, (1, 1, 1, n)))

    def raises(match, *, s=None, b=None, in_rng=IN16, out_rng=OUT32):
        s = u8([128, 128], (1, 1, 1, 2)) if s is None else s
        b = bias(2) if b is None else b
        with pytest.raises(OpError, match=rf"node bn1 \({op}\).*{match}"):
            bn(op, x, s, in_rng, S128, b, (-1.0, 1.0), out_rng)

    raises("scale has 3 elements", s=u8([128] * 3, (1, 1, 1, 3)))
    raises("bias has 3 elements", b=bias(3))
    raises("input range", in_rng=(0.5, 1.0))
    raises("output range", out_rng=(1.0, 2.0))
    raises("output min", out_rng=(INF, INF))


def test_channel_scale_errors():
    q = i32([1, 2, 3])
    with pytest.raises(OpError, match=rf"node cs1 \({CS}\).*scale has 2 elements"):
        cs(q, [0.5, 0.5])
    with pytest.raises(OpError, match=rf"node cs1 \({CS}\).*NaN"):
        cs(q, [1.0, math.nan, 1.0])
    with pytest.raises(OpError, match=rf"node cs1 \({CS}\).*input range"):
        cs(q, [1.0, 1.0, 1.0], rng=(2.0, 1.0))
    with pytest.raises(OpError, match=rf"node cs1 \({CS}\).*expected 4-D"):
        run_op(CS, [np.zeros((3,), np.int32), f32([1.0]), -1.0, 1.0], node="cs1")
