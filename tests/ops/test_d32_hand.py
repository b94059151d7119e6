"""Hand-worked cases of the computing _d32 ops, and their errors (SEMANTICS.md §2, §5, §6, §7).

Every input goes in as d32 with odd paddings and 0xEE garbage in the padding;
the expected logical outputs are worked out in the comments.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.d32 import D32Tensor, to_d32
from hexnn_import.ops.registry import PAD_SAME, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error, i32, stride, u8

INF = math.inf
# in [-8, 7.9375]: step 1/16, zero 128.  w [-1, 0.9921875]: step 1/128, zero 128.  prod = 2**-11.
# out [-4, 3.96875]: step 1/32, zero 128.  final = 2**-11 / 2**-5 = 2**-6 <= 1 -> shamt 0,
# recip = round(2**-6 * 2**31) = 2**25, so q = floor(acc / 64 + 1/2); -out_min / prod = 4 * 2**11 = 8192.
IN16, W128, OUT32 = (-8.0, 7.9375), (-1.0, 0.9921875), (-4.0, 3.96875)
B32 = (-2.0 ** 19, 2.0 ** 19)  # qint32 bias: b_step = 2**20 / 2**32 = 2**-12, bias32 = b / 2


def d32(values, shape) -> D32Tensor:
    """Codes laid out as d32 with top 1 / bottom 2, left 3, before 5, padding garbage 0xEE."""
    return to_d32(u8(values, shape), top=1, bottom=2, left=3, before=5).fill_padding(0xEE)


def logical(t: D32Tensor) -> list:
    assert isinstance(t, D32Tensor)
    return t.logical().reshape(-1).tolist()


# x - 128 = [32, -32] (one pixel, two channels)
X2 = d32([160, 96], (1, 1, 1, 2))


@pytest.mark.parametrize("op", ["Supernode_8x8p32to8_d32", "Supernode_8x8p8to8_d32"])
def test_supernode_by_hand(op):
    # 1x1 filter, 2 in -> 1 out, w - 128 = [64, 0]: sum = 32 * 64 = 2048.
    # p32: bias b = 4 -> bias32 = 2, bb = half_even(2 + 8192) = 8194; acc = 10242, q = floor(160.03 + 0.5) = 160.
    # p8: bias over [-1, 1] (fill_bias_buf: zero quantize_uint(0, -1, 1) = roundf(127.5f) = 128), b = 128 -> 0:
    #     acc = 8192 + 2048 = 10240, q = floor(160 + 0.5) = 160.
    bias = i32([4]) if "p32" in op else u8([128], (1, 1, 1, 1))
    b_rng = B32 if "p32" in op else (-1.0, 1.0)
    q, mn, mx = run_op(op, [X2, u8([192, 128], (1, 1, 2, 1)), *IN16, *W128, stride(1, 1), bias, *b_rng, *OUT32],
                       padding=PAD_SAME)
    assert logical(q) == [160] and (mn.item(), mx.item()) == OUT32   # oracle (nnlib C): 160
    assert q.padding[:3] == (4, 4, 4) and q.before == 0  # fresh default padding


@pytest.mark.parametrize("op", ["DepthwiseSupernode_8x8p32to8_d32", "DepthwiseSupernode_8x8p8to8_d32"])
def test_depthwise_supernode_by_hand(op):
    # 1x1 depthwise, dmul 1: w - 128 = [64, -64]; sums = [32*64, -32*-64] = [2048, 2048];
    # bias 0 (p32 b = 0; p8 b = zero code 128): acc = 8192 + 2048 = 10240 -> q = 160 on both channels.
    bias = i32([0, 0]) if "p32" in op else u8([128, 128], (1, 1, 1, 2))
    b_rng = B32 if "p32" in op else (-1.0, 1.0)
    q, _, _ = run_op(op, [X2, u8([192, 64], (1, 1, 2, 1)), *IN16, *W128, stride(1, 1), bias, *b_rng, *OUT32],
                     padding=PAD_VALID)
    assert logical(q) == [160, 160]


@pytest.mark.parametrize("op", ["QuantizedBatchNorm_8x8p32to8_d32", "QuantizedBatchNorm_8x8p8to8_d32"])
def test_batchnorm_by_hand(op):
    # scale - 128 = [64, -64]: products [2048, 2048]; bias 0 -> acc 10240 -> 160, 160 (as the depthwise case)
    bias = i32([0]) if "p32" in op else u8([128], (1, 1, 1, 1))
    b_rng = B32 if "p32" in op else (-1.0, 1.0)
    q, _, _ = run_op(op, [X2, u8([192, 64], (1, 1, 1, 2)), *IN16, *W128, bias, *b_rng, *OUT32])
    assert logical(q) == [160, 160]


@pytest.mark.parametrize("op", ["InputSupernode_8x8p32to8_outd32", "InputSupernode_8x8p8to8_outd32"])
def test_input_supernode_by_hand(op):
    # flat input depth 1, x - 128 = 32, w - 128 = 64 -> 2048, bias 0 -> acc 10240 -> 160; output d32
    bias = i32([0]) if "p32" in op else u8([128], (1, 1, 1, 1))
    b_rng = B32 if "p32" in op else (-1.0, 1.0)
    inputs = [u8([160], (1, 1, 1, 1)), u8([192], (1, 1, 1, 1)), *IN16, *W128, stride(1, 1), bias, *b_rng, *OUT32]
    q, _, _ = run_op(op, inputs, padding=PAD_SAME)
    assert logical(q) == [160]
    inputs[0] = u8(np.full(5, 128), (1, 1, 1, 5))
    assert_op_error(op, inputs, "depth of 1..4", padding=PAD_SAME)
    inputs[0] = d32([160], (1, 1, 1, 1))
    assert_op_error(op, inputs, "must be a flat tensor", padding=PAD_SAME)


def test_pools_by_hand():
    # one 2x2 VALID window over codes [[1, 9], [4, 5]] (one channel):
    # max 9; L2 on [0, 2.55] (zero 0): S = 1 + 81 + 16 + 25 = 123, sqrt(123 / 4) = 5.55 -> 6, range [0, 2.55].
    x = d32([1, 9, 4, 5], (1, 2, 2, 1))
    win = np.zeros((1, 2, 2, 1), np.int32)
    for op, want in (("QuantizedMaxPool_8_d32", 9), ("QuantizedL2Pool_8_d32", 6)):
        q, mn, mx = run_op(op, [x, 0.0, 2.55, win, win], padding=PAD_VALID)
        assert logical(q) == [want], op
        assert mn.item() == 0.0 and mx.item() == pytest.approx(2.55)  # [0, 2.55 - 0] for L2 too
    # avg: the output is 1x1, so op_avgpool_d32.c's reduce-to-1x1 path: sum 19 over 4 taps, per-sum step
    # rdiff = 2.55 / (255 * 4) = 0.0025, zero 0; sums' range [0, 19 * 0.0025 = 0.0475] is below 255.1 steps,
    # so it widens to [0, 255.1 * 0.0025 = 0.63775]; scale 0.0025 * 255 / 0.63775 = 0.99961 -> 32755 / 2**15,
    # shift 0: (2 * 19 * 32755 + 0x4000) >> 15 = 38, (38 + 1) >> 1 = 19 (19 * 0.0025 = 0.0475, the mean).
    q, mn, mx = run_op("QuantizedAvgPool_8_d32", [x, 0.0, 2.55, win, win], padding=PAD_VALID)
    assert logical(q) == [19]
    assert mn.item() == 0.0 and mx.item() == pytest.approx(0.63775, rel=1e-6)


def test_resize_bilinear_by_hand():
    # [0, 100] along w, w_out 3, no align_corners: src = x * 2/3 -> 0, 2/3, 4/3 (clamped neighbour):
    # 0;  0 * 1/3 + 100 * 2/3 = 66.67 -> 67;  100
    q, mn, mx = run_op("QuantizedResizeBilinear_8_d32", [d32([0, 100], (1, 1, 2, 1)), i32([1, 3]), -1.0, 1.0])
    assert logical(q) == [0, 67, 100] and (mn.item(), mx.item()) == (-1.0, 1.0)


def test_tanh_sigmoid_by_hand():
    # op_tanh_d32.c (fixed-point table): input [-128, 127]: step 1, zero 128; code 128 -> 0.0,
    # code 255 -> 127.0. tanh on [-1, 128/127] (zero code 127, top code 254): 0 -> 127, 1 -> 254.
    # sigmoid on [0, 1]: 0.5 -> 128, ~1.0 -> 255.
    x = d32([128, 255], (1, 1, 1, 2))
    q, mn, mx = run_op("QuantizedTanh_8_d32", [x, -128.0, 127.0])
    assert logical(q) == [127, 254] and (mn.item(), mx.item()) == (-1.0, float(np.float32(128 / 127)))
    q, mn, mx = run_op("QuantizedSigmoid_8_d32", [x, -128.0, 127.0])
    assert logical(q) == [128, 255] and (mn.item(), mx.item()) == (0.0, 1.0)
    # on [-4, 3.96875] the table's quadratic segments give (codes of the C oracle's operate_ref_function;
    # op_tanh.c's float tanhf, the flat op's, differs from them by up to a few codes)
    x = d32([0, 64, 100, 128, 160, 200, 255], (1, 1, 1, 7))
    assert logical(run_op("QuantizedTanh_8_d32", [x, -4.0, 3.96875])[0]) == [0, 5, 38, 127, 224, 251, 254]
    assert logical(run_op("QuantizedSigmoid_8_d32", [x, -4.0, 3.96875])[0]) == [5, 30, 75, 128, 186, 231, 250]


S1 = (-128.0, 127.0)  # step 1, zero 128: code c is the real c - 128


def test_add_sub_by_hand():
    # A = codes [130, 200] = reals [2, 72]; B (broadcast [1,1,1,1]) = code 125 = -3; out range S1.
    # add: [-1, 69] -> codes [127, 197];  sub: [5, 75] -> [133, 203]
    a, b = d32([130, 200], (1, 1, 2, 1)), d32([125], (1, 1, 1, 1))
    for op in ("QuantizedAdd_8p8to8_d32", "QuantizedAdd_8x8to8_d32"):
        q, mn, mx = run_op(op, [a, b, *S1, *S1, *S1])
        assert logical(q) == [127, 197] and (mn.item(), mx.item()) == S1
    for op in ("QuantizedSub_8p8to8_d32", "QuantizedSub_8x8to8_d32"):
        q, _, _ = run_op(op, [a, b, *S1, *S1, *S1])
        assert logical(q) == [133, 203]
        # A to B (rsub): A = code 130 = 2 broadcast over B = [125, 200] = [-3, 72]: [5, -70] -> [133, 58]
        q, _, _ = run_op(op, [d32([130], (1, 1, 1, 1)), d32([125, 200], (1, 1, 2, 1)), *S1, *S1, *S1])
        assert logical(q) == [133, 58] and q.shape == (1, 1, 2, 1)


def test_mul_by_hand():
    # op_add_d32.c's multiply (the device, issue 36). A on S1 (step 1, zero 128), B on [-1, 0.9921875] (step 1/128,
    # zero 128): range_bias = (((2*128-255)**2 + 256) >> 9) * 256 = 0. First range: 1/8 of the worst case
    # [min(127*-1, -128*0.9921875), max(127*0.9921875, -128*-1)] = [-127, 128] -> [-15.875, 16] (zero point 127
    # exactly). Scaling: out_scl 8, out_z 127, post_scale_flt 8/128 = 2**-4 (exponent -3): rsh 3,
    # post_scale 0.0625 * 8 * 32768 = 16384, adj_bias (16384 >> 15) + 127 * 8 = 1016.
    # A [130, 140] = [2, 12], B [192, 160] = [0.5, 0.25]: intermediates (a-128)(b-128) = [128, 384];
    # (t * 16384 + 16384) >> 15 = [64, 192]; + 1016 = [1080, 1208]; (+4) >> 3 = [135, 151] (= 127 + 8 * [1, 3]);
    # no extreme clips, so no rerun and the range stays.
    q, mn, mx = run_op("QuantizedMul_8x8to8_d32", [d32([130, 140], (1, 1, 2, 1)), d32([192, 160], (1, 1, 2, 1)),
                                                   *S1, *W128])
    assert logical(q) == [135, 151] and (mn.item(), mx.item()) == (-15.875, 16.0)


def test_concat_by_hand_along_width():
    # The device's op_concat_d32.c (not op_concat.c's arithmetic): A on [0, 127], B on [-128, 127] (step 1);
    # merged range [-128, 127], zero exact (z = 128), out_level_recip = 255 / 255 = 1.
    # A: in_level = 127 / 255; offset = (int)((0 + 128) * 1 * 128) = 16384 (1/128 codes);
    #    gain = (int)(127 / 255 * 32768 = 16319.75) = 16319 (op_concat.c rounds: 16320);
    #    q = usat8((sat16((x * 16319 >> 8) + 16384) + 64) >> 7): 0 -> 128, 10 -> (637 + 16448) >> 7 = 133,
    #    254 (126.50, nearest 255) -> (16191 + 16448) >> 7 = 254 (op_concat.c: 255)
    # B: offset 0, gain (int)32768 -> 32767 >= 32704: copied unchanged (7 -> 7)
    a = d32([0, 10, 254], (1, 1, 3, 1))
    b = to_d32(u8([7], (1, 1, 1, 1)), top=0, bottom=0, left=7, before=31).fill_padding(0x99)  # another alignment
    q, mn, mx = run_op("QuantizedConcat_8_d32", [i32([2]), a, b, 0.0, -128.0, 127.0, 127.0])
    assert logical(q) == [128, 133, 254, 7] and q.shape == (1, 1, 4, 1)
    assert (mn.item(), mx.item()) == (-128.0, 127.0)


def test_concat_range_is_zero_fixed_by_hand():
    # [0, 255] and [-255, 255]: merged [-255, 255] has z = 255 * 255 / 510 = 127.5; adjust_minmax_for_zero moves the
    # max (zi = 127, (zf - 1) * mn = 127.5 >= zf * mx = 127.5): max = -255 + 255 * 255 / 127 = 257.00787
    q, mn, mx = run_op("QuantizedConcat_8_d32", [i32([3]), d32([0], (1, 1, 1, 1)), d32([0], (1, 1, 1, 1)),
                                                 0.0, -255.0, 255.0, 255.0])
    assert mn.item() == -255.0 and mx.item() == pytest.approx(257.00787, abs=1e-5)
    assert mx.item() == np.float32(np.float32(-255.0) + np.float32(np.float32(65025.0) / np.float32(127.0)))


def test_binary_broadcast_errors():
    a = d32(np.zeros(12), (2, 2, 3, 1))
    small_wd_bad = d32(np.zeros(2), (2, 1, 1, 1))  # broadcasts along w with batches = 2
    for op in ("QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32", "QuantizedMul_8x8to8_d32"):
        assert_op_error(op, [a, small_wd_bad, *S1, *S1], "along w", "batches=1, height=1")
    # A would have to broadcast to B: Add (with an output end given) and Mul refuse, Sub does it as rsub
    assert_op_error("QuantizedAdd_8p8to8_d32", [d32([1], (1, 1, 1, 1)), a, *S1, *S1, -1.0], "B to A only")
    assert_op_error("QuantizedMul_8x8to8_d32", [d32([1], (1, 1, 1, 1)), a, *S1, *S1], "B to A only")
    assert_op_error("QuantizedSub_8p8to8_d32", [d32([1, 2], (1, 1, 1, 2)), d32([1, 2, 3], (1, 1, 3, 1)), *S1, *S1],
                    "B to A or A to B")
    assert_op_error("QuantizedAdd_8p8to8_d32", [a, a.logical(), *S1, *S1], "input 1", "must be a d32 tensor")



def test_single_a_free_range_is_the_devices_swap():
    """op_add_d32.c swaps a single A onto a tensor B (``compat_AtoB``) and, with no output end given, re-codes B
    (``mode_broadcast_1111``). By hand on S1 (code c is c - 128): 2 + x keeps the codes on [-126, 129]; 2 - x
    inverts them (255 - c) onto [-125, 130]."""
    x = np.array([0, 1, 128, 200, 255], np.uint8)
    for op, codes, lo, hi in (("QuantizedAdd_8p8to8_d32", x, -126.0, 129.0),
                              ("QuantizedSub_8p8to8_d32", 255 - x, -125.0, 130.0)):
        q, mn, mx = run_op(op, [d32([130], (1, 1, 1, 1)), d32(x, (1, 1, 5, 1)), *S1, *S1, -math.inf, math.inf])
        assert np.array_equal(q.logical().reshape(-1), codes)
        assert (float(mn.reshape(-1)[0]), float(mx.reshape(-1)[0])) == (lo, hi)
        real = (codes.astype(float) + lo)
        assert np.array_equal(real, 2.0 + (x - 128.0) if "Add" in op else 2.0 - (x - 128.0))

def test_twin_errors_name_the_d32_node():
    # the flat twin's checks run with the d32 node's context
    x = d32([1, 2, 3, 4], (1, 2, 2, 1))
    win = np.zeros((1, 2, 2, 1), np.int32)
    assert_op_error("QuantizedMaxPool_8_d32", [x, 2.0, 1.0, win, win], "min <= max", padding=PAD_VALID)
    assert_op_error("QuantizedMaxPool_8_d32", [x.logical(), -1.0, 1.0, win, win], "must be a d32 tensor")
    assert_op_error("Supernode_8x8p32to8_d32", [x, to_d32(u8([1], (1, 1, 1, 1))), *IN16, *W128, stride(1, 1),
                                                i32([0]), *B32, *OUT32], "input 1", "must be a flat tensor")
    assert_op_error("QuantizedConcat_8_d32", [i32([2]), x, d32([1, 2], (1, 1, 2, 1)), -1.0, -1.0, 1.0, 1.0],
                    "all dimensions but 2 must match")
    assert_op_error("QuantizedConcat_8_d32", [i32([4]), x, -1.0, 1.0], "0..3")
