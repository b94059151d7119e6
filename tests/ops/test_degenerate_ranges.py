"""Zero-width and very narrow ranges compute, never raise (issue 18, failure 3; SEMANTICS §1).

Each case is checked against a value worked by hand, or against the same op on a
wide range holding the same real values (an all-zero tensor is all zeros on
[0, 0] and on [-1, 1] alike). min > max and NaN ends still raise OpError, and so
does what hexagon_nn's C refuses (a pad value other than min on [0, 0]).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, i4, u4

TINY = (-5e-13, 5e-13)   # a 1e-12-wide range


def ends(out):
    return float(out[1].item()), float(out[2].item())


# --- 32 -> 8 ------------------------------------------------------------------

@pytest.mark.parametrize("in_range", [(0.0, 0.0), TINY])
def test_requantize_32to8_all_zero_accumulators(in_range):
    x = np.zeros((1, 2, 2, 3), np.int32)
    q, mn, mx = run_op("Requantize_32to8", [x, *in_range, -1.0, 0.9921875])
    assert q.ravel().tolist() == [128] * 12          # real 0 on [-1, 0.9921875] is code 128
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)


def test_requantize_32to8_zero_width_output():
    # output [0, 0]: nn_requantize_i32_to_qu8_hvx's out_scale = 255/0 = inf, offset 0.5 - 0*inf = NaN, so the
    # gain >= 1 path converts NaN for every code: code 0 everywhere (C oracle)
    q, mn, mx = run_op("Requantize_32to8", [i4([0, -5, 7]), -1.0, 1.0, 0.0, 0.0])
    assert q.ravel().tolist() == [0, 0, 0] and (mn.item(), mx.item()) == (0.0, 0.0)


@pytest.mark.parametrize("in_range", [(0.0, 0.0), TINY, (-1.0, 1.0)])
def test_quantize_down_all_zero(in_range):
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to8", [np.zeros((1, 1, 2, 2), np.int32), *in_range])
    assert not q.any() and (mn.item(), mx.item()) == (0.0, 0.0)


# --- Quantize / Dequantize -----------------------------------------------------

def test_quantize_zero_range_follows_hvx_quant():
    # op_quantize.c find_scaling_for_hvx_quant: max = fmaxf(min + 1e-18f, max) -> [0, 1e-18]. The device's asm
    # (issue 36): range 1.0039e-18 = 1.1574 * 2**-60 (exponent field 67), common_exp 71, rangemant 606795,
    # scaling 0xFFFFFFFF // 606795 = 7077, min_offset 0 + (606795 >> 9) = 1185. 2.0 (field 128): shift
    # min(71 - 128, 31) = -57, a 6-bit amount 7: 0x800000 >> 7 = 65536; (65536 + 1185) * 7077 >> 16 = 7205,
    # >> 8 = 28 (2.0 is 2**60 ranges away: it wraps). -3.0: negative -> 0.
    q, mn, mx = run_op("Quantize", [f4([0.0, -3.0, 2.0]), 0.0, 0.0])
    assert q.ravel().tolist() == [0, 0, 28]
    assert mn.item() == 0.0 and mx.item() == np.float32(1e-18)


def test_dequantize_zero_range_uses_the_width_floor():
    # op_quantize.c dequantize_execute: step = flt_div_255(fmaxf(1e-18f, 0)) ~ 3.9e-21 (not below 2**-126, so
    # not the all-zero fill): x = q * step (C oracle bit patterns)
    (x,) = run_op("Dequantize", [u4([0, 17, 255]), 0.0, 0.0])
    assert [hex(int(v)) for v in x.view(np.uint32).ravel()] == ["0x0", "0x1f9d6987", "0x219392ef"]
    (x,) = run_op("Dequantize", [u4([128, 129]), *TINY])
    assert [hex(int(v)) for v in x.view(np.uint32).ravel()] == ["0x0", "0x278d4a16"]


def test_quantize_int32_zero_range():
    # op_quantize.c quantize32_execute: recip = 2**24 / 0 = inf; 0 * inf is NaN -> -1 (the device's
    # conversion), +x -> INT32_MAX, -x -> INT32_MIN; range (-0 * 256, 0 * 256)
    q, mn, mx = run_op("Quantize_int32", [f4([0.0, 1.0, -1.0]), 0.0, 0.0])
    assert q.ravel().tolist() == [-1, 2 ** 31 - 1, -2 ** 31] and (mn.item(), mx.item()) == (0.0, 0.0)


# --- bias adds -----------------------------------------------------------------

@pytest.mark.parametrize("b_range", [(0.0, 0.0), TINY])
def test_biasadd_8p8to32_zero_bias_matches_wide_range(b_range):
    x = u4([0, 100, 128, 255])
    b_zero_wide = u4([128, 128, 128, 128])            # all-zero bias on [-1, 0.9921875] (zero code 128)
    got = run_op("QuantizedBiasAdd_8p8to32", [x, np.full((1, 1, 1, 4), 128 if b_range == TINY else 0, np.uint8),
                                              -1.0, 0.9921875, *b_range])
    ref = run_op("QuantizedBiasAdd_8p8to32", [x, b_zero_wide, -1.0, 0.9921875, -1.0, 0.9921875])
    # M = max(|ends|) * 2**17 is the same (the input range dominates), so the bits must agree
    assert np.array_equal(got[0], ref[0]) and ends(got) == ends(ref)


def test_add_8p8to32_both_zero_ranges():
    # op_addsubmul_8to32.c addsub_832_execute: the larger step is 0 -> "bad input scale"
    with pytest.raises(OpError, match="bad input scale"):
        run_op("QuantizedAdd_8p8to32", [u4([3, 9]), u4([0, 200]), 0.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("b_range", [(0.0, 0.0), TINY])
def test_biasadd_32p32to32_zero_bias(b_range):
    x = i4([5, -7, 1 << 20])
    out = run_op("QuantizedBiasAdd_32p32to32", [x, i4([0, 0, 0]), -1.0, 1.0, *b_range])
    assert out[0].ravel().tolist() == [5, -7, 1 << 20] and ends(out) == (-1.0, 1.0)
    # a zero-width bias range means zero bias whatever its codes hold
    out = run_op("QuantizedBiasAdd_32p32to32", [x, i4([99, -3, 12345]), -1.0, 1.0, 0.0, 0.0])
    assert out[0].ravel().tolist() == [5, -7, 1 << 20]


# --- elementwise ---------------------------------------------------------------

@pytest.mark.parametrize("op", ["QuantizedAdd_8p8to8", "QuantizedMaximum"])
def test_add_max_constant_zero_operand(op):
    a = u4([0, 64, 128, 255])
    got = run_op(op, [a, u4([0]), -1.0, 0.9921875, 0.0, 0.0, -1.0, 0.9921875])
    ref = run_op(op, [a, u4([128]), -1.0, 0.9921875, -1.0, 0.9921875, -1.0, 0.9921875])
    assert np.array_equal(got[0], ref[0]) and ends(got) == ends(ref)


def test_add_8p8to8_auto_range_of_zero_inputs():
    q, mn, mx = run_op("QuantizedAdd_8p8to8", [u4([0, 0]), u4([0, 0]), 0.0, 0.0, 0.0, 0.0])
    assert not q.any() and mn.item() == 0.0 and mx.item() == np.float32(0.125 * 0.001)


def test_mul_8x8to8_zero_operand():
    # op_mul.c mul_8x8to8_execute: B's zero code is (int)NaN -> 0 on x86, so products (a-128)*7 are formed, but the
    # product step is 0: range [0, 0], scaleby 16 (rsh 9, scale 8192) -> 16 p; negative results wrap through
    # uint16_t and saturate: every code is 255, on the range [0, 0] (all values 0)
    q, mn, mx = run_op("QuantizedMul_8x8to8", [u4([0, 200, 255]), u4([7, 7, 7]), -1.0, 1.0, 0.0, 0.0])
    assert q.ravel().tolist() == [255, 255, 255] and (mn.item(), mx.item()) == (0.0, 0.0)


def test_mul_8x8to32_zero_operand():
    p, mn, mx = run_op("QuantizedMul_8x8to32", [u4([0, 200]), u4([7, 7]), -1.0, 1.0, 0.0, 0.0])
    # zero code of [0, 0] is 0, so codes pass; the range (0, 0) makes every value 0
    assert (mn.item(), mx.item()) == (0.0, 0.0)


def test_clamp_to_zero_range():
    # op_relu.c clamp_execute: both bounds quantize to code(0) = roundf(1 * 255 / 1.9921875) = 128 and the
    # input range is copied (the output range is not narrowed to [0, 0])
    q, mn, mx = run_op("QuantizedClamp_8", [u4([0, 128, 255]), -1.0, 0.9921875, 0.0, 0.0])
    assert q.ravel().tolist() == [128] * 3 and (mn.item(), mx.item()) == (-1.0, 0.9921875)


@pytest.mark.parametrize("op", ["QuantizedRelu_8", "QuantizedMaxPool_8"])
def test_relu_pool_zero_range_pass_through(op):
    x = np.zeros((1, 2, 2, 1), np.uint8)
    if op == "QuantizedRelu_8":
        out = run_op(op, [x, 0.0, 0.0])
    else:
        out = run_op(op, [x, 0.0, 0.0, np.zeros((1, 2, 2, 1), np.int32), np.zeros((1, 1, 1, 1), np.int32)],
                     padding=2)
    assert not out[0].any() and ends(out) == (0.0, 0.0)


def test_concat_zero_range_input():
    # [0, 0] next to [-1, 0.9921875]: merged [-1, 0.9921875]. op_concat.c: the zero-width input has
    # in_level 0, so its gain is 0 and every code becomes (0 + 2**14) >> 15 = 0 (not the zero code
    # 128; the C oracle's codes)
    q, mn, mx = run_op("QuantizedConcat_8", [i4([3]), u4([5, 9]), u4([0, 255]), 0.0, -1.0, 0.0, 0.9921875])
    assert q.ravel().tolist() == [0, 0, 0, 255] and (mn.item(), mx.item()) == (-1.0, 0.9921875)


def test_requantize_8to8_zero_input():
    q, mn, mx = run_op("Requantize_8to8", [u4([3, 250]), 0.0, 0.0, -1.0, 0.9921875])
    assert q.ravel().tolist() == [128, 128]


def test_mean_zero_output_range():
    x = np.zeros((1, 1, 2, 2), np.uint8)
    q, mn, mx = run_op("QuantizedMean_8", [x, -1.0, 0.9921875, i4([3]), 0.0, 0.0])
    # codes 0 on [-1, ...] are -1.0 each: below 0 on [0, 0] -> code 0
    assert not q.any() and (mn.item(), mx.item()) == (0.0, 0.0)


PAD_W = i4([0, 0, 0, 0, 1, 1, 0, 0], (1, 1, 4, 2))   # one column before and after


def test_pad_zero_range():
    """Pad value 0.0 on [0, 0]: on the device the NaN quotient converts to -1 and saturates to code 0."""
    q = run_op("QuantizedPad_8", [u4([0, 0], (1, 1, 2, 1)), 0.0, 0.0, PAD_W])[0]
    assert not q.any() and q.shape == (1, 1, 4, 1)


@pytest.mark.parametrize("value, code", [(1.0, "inf"), (-0.5, "-inf")])
def test_pad_zero_range_nonzero_value_is_the_c_error(value, code):
    """A pad value other than min on [0, 0]: 255 * (v - min) / 0 is +-inf, which (int) saturates on the device
    (INT_MAX / INT_MIN; x86 gives INT_MIN): outside -2..257, op_pad.c's "Pad value outside the range of inputs"."""
    assert_op_error("QuantizedPad_8", [u4([0, 0], (1, 1, 2, 1)), 0.0, 0.0, PAD_W, value],
                    f"pad value {value} on the zero-width input range [0.0, 0.0]", f"code {code}",
                    "Pad value outside the range of inputs")


# --- still errors ----------------------------------------------------------------

@pytest.mark.parametrize("bad", [(1.0, 0.0), (math.nan, 1.0), (0.0, math.inf)])
def test_insane_ranges_still_raise(bad):
    if all(map(math.isfinite, bad)):   # op_requantize.c checks no range: min > max is computed with
        assert run_op("Requantize_32to8", [i4([1]), *bad, -1.0, 1.0])[0].shape == (1, 1, 1, 1)
    else:
        assert_op_error("Requantize_32to8", [i4([1]), *bad, -1.0, 1.0], "input")
    assert_op_error("QuantizedBiasAdd_8p8to32", [u4([1]), u4([1]), -1.0, 1.0, *bad], "bias")
    if all(map(math.isfinite, bad)):   # op_quantize.c dequantize_execute checks no range either
        assert run_op("Dequantize", [u4([1]), *bad])[0].shape == (1, 1, 1, 1)
    else:
        assert_op_error("Dequantize", [u4([1]), *bad], "input")


# --- the supernode / convolution family (§5 output stage) -------------------------------------------
#
# Decision (issue 18): prod = in_step * w_step == 0 (a zero-width input or weight range) means the
# products contribute exactly 0 and the output is the bias alone, requantized with §5's rounding;
# a zero-width output range quantizes over the 1e-18 width floor (result <= 0 -> code 0, > 0 -> 255).
# Every op below is 1x1 over a [1, 2, 2, 3] input with 3 output channels and the real bias
# [0.5, -0.25, 0]: on WIDE (step 1/128, zero code 128) the bias alone is codes [192, 96, 128].

WIDE = (-1.0, 0.9921875)
B32 = (-2.0 ** 19, 2.0 ** 19)            # qint32 bias: one code = 2**20 / 2**32 = 2**-12
BIAS_REAL = (0.5, -0.25, 0.0)
BIAS_CODES = [192, 96, 128]
S = 2.0 ** -40                           # scaling every range by a power of two is exact: WIDE * S is ~1.8e-12 wide
INF = math.inf

# op -> (family, qint32 bias, d32 input/output)
FAMILY = {
    "Supernode_8x8p32to8": ("conv", True, False),
    "Supernode_8x8p8to8": ("conv", False, False),
    "Supernode_8x8p32to8_d32": ("conv", True, True),
    "Supernode_8x8p8to8_d32": ("conv", False, True),
    "InputSupernode_8x8p32to8_outd32": ("input", True, True),
    "InputSupernode_8x8p8to8_outd32": ("input", False, True),
    "DepthwiseSupernode_8x8p32to8": ("dw", True, False),
    "DepthwiseSupernode_8x8p8to8": ("dw", False, False),
    "DepthwiseSupernode_8x8p32to8_d32": ("dw", True, True),
    "DepthwiseSupernode_8x8p8to8_d32": ("dw", False, True),
    "QuantizedBatchNorm_8x8p32to8": ("bn", True, False),
    "QuantizedBatchNorm_8x8p8to8": ("bn", False, False),
    "QuantizedBatchNorm_8x8p32to8_d32": ("bn", True, True),
    "QuantizedBatchNorm_8x8p8to8_d32": ("bn", False, True),
    "QuantizedDilatedConv2d_8x8p32to8": ("dil", True, False),
    "QuantizedGroupedConv2d_8x8p32to8": ("grp", True, False),
    "QuantizedTransposeConv2d_8x8p32to8": ("tconv", True, False),
    "QuantizedTransposeConv2d_8x8p8to8": ("tconv", False, False),
}
CONV_OPS = sorted(FAMILY)
#: The supernodes follow hexagon_nn 2.14.1's own code (op_supernode_new.c, op_dwise_snode_8bit.c,
#: include/supernode_utils.h), which departs from the decision above where the C computes or fails otherwise:
#: the input max is floored at min + 1e-18f (a zero-width input range has a tiny, nonzero level), a zero-width
#: output range is setup_initial_output_range's error, and a reversed weight range is read as a negative level.
#: Only a zero-width weight range (the C divides by zero) keeps the bias-alone rule.
SN_OPS = sorted(op for op, f in FAMILY.items() if f[0] in ("conv", "input", "dw"))
W_SHAPE = {"conv": (1, 1, 3, 3), "input": (1, 1, 3, 3), "dw": (1, 1, 3, 1), "bn": (1, 1, 1, 3),
           "dil": (1, 1, 3, 3), "grp": (1, 1, 1, 3), "tconv": (3, 1, 1, 3)}


def bias_for(op, scale=1.0):
    """The bias BIAS_REAL as (codes, range) in the op's bias type; ``scale`` scales the range (and the real bias)."""
    if FAMILY[op][1]:
        return i4([2048, -1024, 0]), (B32[0] * scale, B32[1] * scale)
    return u4(BIAS_CODES), (WIDE[0] * scale, WIDE[1] * scale)


def conv_family(op, x, w, in_rng, w_rng, out_rng, b_scale=1.0):
    """Run ``op`` with the catalog's input order; returns (flat codes, out_min, out_max)."""
    from hexnn_import.ops.d32 import D32Tensor, to_d32
    from hexnn_import.testing.opcheck import stride

    kind, _, d32 = FAMILY[op]
    bias, b_rng = bias_for(op, b_scale)
    xin = to_d32(x) if d32 and kind != "input" else x
    if kind in ("conv", "input", "dw"):
        inputs = [xin, w, *in_rng, *w_rng, stride(1, 1), bias, *b_rng, *out_rng]
    elif kind == "bn":
        inputs = [xin, w, *in_rng, *w_rng, bias, *b_rng, *out_rng]
    elif kind in ("dil", "grp"):
        extra = i4([1, 1]) if kind == "dil" else i4([3])
        inputs = [xin, w, bias, *in_rng, *w_rng, *b_rng, stride(1, 1), extra, *out_rng]
    else:
        inputs = [xin, w, *in_rng, *w_rng, np.zeros((1, 1, 2, 2), np.int32), stride(1, 1), bias, *b_rng, *out_rng]
    q, mn, mx = run_op(op, inputs, padding=2 if kind == "tconv" else 1, node="cv")
    if isinstance(q, D32Tensor):
        q = q.logical()
    assert q.shape == (1, 2, 2, 3)
    return q, mn.item(), mx.item()


def rand_codes(shape, seed):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def x_codes(seed=1):
    return rand_codes((1, 2, 2, 3), seed)


def bias_only(codes):
    return np.broadcast_to(np.asarray(codes, np.uint8), (1, 2, 2, 3))


@pytest.mark.parametrize("op", CONV_OPS)
@pytest.mark.parametrize("out_rng", [WIDE, (-INF, INF)])
def test_conv_family_zero_width_weights_is_bias_only(op, out_rng):
    # weights on [0, 0] are all zeros whatever their codes: the same bits as all-zero weights on WIDE
    w_shape = W_SHAPE[FAMILY[op][0]]
    got = conv_family(op, x_codes(), rand_codes(w_shape, 2), WIDE, (0.0, 0.0), out_rng)
    ref = conv_family(op, x_codes(), np.full(w_shape, 128, np.uint8), WIDE, WIDE, out_rng)
    assert np.array_equal(got[0], ref[0]) and got[1:] == ref[1:]
    if out_rng == WIDE:
        assert np.array_equal(got[0], bias_only(BIAS_CODES)) and got[1:] == WIDE


@pytest.mark.parametrize("op", CONV_OPS)
@pytest.mark.parametrize("out_rng", [WIDE, (-INF, INF)])
def test_conv_family_zero_width_input_is_bias_only(op, out_rng):
    # input on [0, 0] is all zeros whatever its codes: the same bits as the all-zero input (code 128) on WIDE
    w = rand_codes(W_SHAPE[FAMILY[op][0]], 3)
    if op in SN_OPS:
        # hexagon_nn: in_max = fmaxf(0, 0 + 1e-18f), in level flt_div_255(1e-18f) ~ 3.9e-21, prod ~ 3e-23;
        # fill_bias_buf: bias 0.5 / prod ~ 1.6e22 (and -out_min / prod) does not fit int32 -> its error
        # "Final too big, will cause overflow" (oracle: the same error, for both output ranges).
        with pytest.raises(OpError, match="Final too big"):
            conv_family(op, x_codes(4), w, (0.0, 0.0), WIDE, out_rng)
        return
    got = conv_family(op, x_codes(4), w, (0.0, 0.0), WIDE, out_rng)
    ref = conv_family(op, np.full((1, 2, 2, 3), 128, np.uint8), w, WIDE, WIDE, out_rng)
    assert np.array_equal(got[0], ref[0]) and got[1:] == ref[1:]
    if out_rng == WIDE:
        assert np.array_equal(got[0], bias_only(BIAS_CODES))


@pytest.mark.parametrize("op", SN_OPS)
def test_supernode_zero_width_input_computes_as_the_c(op):
    # With a zero bias (bias range [0, 0]: level 0) and out_min = 0 fill_bias_buf fits: hexagon_nn computes.
    # Input level ~3.9e-21 with zero code 0 (roundf_i32(-0 / level)), so codes count from 0: |sum| <= 3 * 255
    # * 128 levels of ~3e-23 is far below half an output step (0.9921875 / 255): every code 0, the range as
    # given. Oracle (nnlib C, harness model): all 0, [0, 0.9921875].
    w = rand_codes(W_SHAPE[FAMILY[op][0]], 3)
    q, mn, mx = conv_family(op, x_codes(4), w, (0.0, 0.0), WIDE, (0.0, WIDE[1]), b_scale=0.0)
    assert np.array_equal(q, bias_only([0, 0, 0])) and (mn, mx) == (0.0, WIDE[1])


@pytest.mark.parametrize("op", CONV_OPS)
def test_conv_family_zero_width_input_and_weights(op):
    got = conv_family(op, x_codes(), rand_codes(W_SHAPE[FAMILY[op][0]], 5), (0.0, 0.0), (0.0, 0.0), WIDE)
    assert np.array_equal(got[0], bias_only(BIAS_CODES)) and got[1:] == WIDE


@pytest.mark.parametrize("op", CONV_OPS)
@pytest.mark.parametrize("w_rng", [(0.0, 0.0), WIDE])
def test_conv_family_zero_width_output(op, w_rng):
    # all-zero weights ([0, 0], or code 128 on WIDE): the result is the bias [0.5, -0.25, 0];
    # over [0, 0] (1e-18 width floor) a positive result saturates to 255, <= 0 gives the zero code 0
    w = np.full(W_SHAPE[FAMILY[op][0]], 128 if w_rng == WIDE else 7, np.uint8)
    if op in SN_OPS:   # setup_initial_output_range: min < max is required ("supernode: invalid input min/max")
        with pytest.raises(OpError, match="output range"):
            conv_family(op, x_codes(), w, WIDE, w_rng, (0.0, 0.0))
        return
    q, mn, mx = conv_family(op, x_codes(), w, WIDE, w_rng, (0.0, 0.0))
    assert np.array_equal(q, bias_only([255, 0, 0])) and (mn, mx) == (0.0, 0.0)


def test_supernode_zero_width_output_hand_case():
    # hexagon_nn's supernode_check -> setup_initial_output_range(0, 0): "min > 0 || max < 0 || min >= max"
    # is "supernode: invalid input min/max" (oracle: the same error), whatever the data.
    from hexnn_import.testing.opcheck import stride
    d = np.asarray([[1, -1, 0], [0, 0, 0], [-64, 64, 5], [3, 0, -3]])
    x = (d + 128).astype(np.uint8).reshape(1, 2, 2, 3)
    w = (np.eye(3, dtype=np.int64) * 64 + 128).astype(np.uint8).reshape(1, 1, 3, 3)
    with pytest.raises(OpError, match="invalid input min/max"):
        run_op("Supernode_8x8p32to8", [x, w, *WIDE, *WIDE, stride(1, 1), i4([0, 0, 0]), *B32, 0.0, 0.0],
               padding=1, node="sn")


@pytest.mark.parametrize("op", CONV_OPS)
@pytest.mark.parametrize("tiny", ["input", "weights"])
def test_conv_family_tiny_ranges_scale_exactly(op, tiny):
    # ~1e-12-wide input (or weight) and output ranges: every range of the node scaled by the power of two
    # S = 2**-40 (the bias range with it, so the real bias scales too) gives the unscaled node's bits
    # (prod / out_step, bias / prod and out_min / prod are unchanged) and its output range times S
    x, w = x_codes(6), rand_codes(W_SHAPE[FAMILY[op][0]], 7)
    out = (-1.5, 2.5)
    ref = conv_family(op, x, w, WIDE, WIDE, out)
    small = (WIDE[0] * S, WIDE[1] * S)
    in_rng, w_rng = (small, WIDE) if tiny == "input" else (WIDE, small)
    got = conv_family(op, x, w, in_rng, w_rng, (out[0] * S, out[1] * S), b_scale=S)
    assert np.array_equal(got[0], ref[0]) and len(np.unique(ref[0])) > 3
    assert (got[1], got[2]) == (ref[1] * S, ref[2] * S)


@pytest.mark.parametrize("op", CONV_OPS)
def test_conv_family_tiny_bias_range(op):
    # a 1e-12-wide bias range: bias ~0, the same bits as a zero-width one
    x, w = x_codes(8), rand_codes(W_SHAPE[FAMILY[op][0]], 9)
    got = conv_family(op, x, w, WIDE, WIDE, WIDE, b_scale=S)
    ref = conv_family(op, x, w, WIDE, WIDE, WIDE, b_scale=0.0)
    assert np.array_equal(got[0], ref[0]) and got[1:] == ref[1:] == WIDE


@pytest.mark.parametrize("op", CONV_OPS)
@pytest.mark.parametrize("bad", [(1.0, 0.0), (math.nan, 1.0), (0.0, math.inf)])
@pytest.mark.parametrize("where", ["input", "weights", "output"])
def test_conv_family_insane_ranges_still_raise(op, bad, where):
    if where == "output" and bad == (0.0, math.inf):
        bad = (0.5, 1.0)    # +inf is an auto max; [0.5, 1] does not hold 0 and is not auto
    rngs = {"input": WIDE, "weights": WIDE, "output": WIDE, where: bad}
    if op in SN_OPS and where == "weights" and bad == (1.0, 0.0):
        # hexagon_nn does not check the weight range: get_qu8_level_size_zero(1, 0) gives the level
        # flt_div_255(-1) < 0 and zero 255, so prod / out_level < 0 and recip = roundf_u32(< 0) = 0: every
        # code 0, the range as given (oracle: the same).
        q, mn, mx = conv_family(op, x_codes(), rand_codes(W_SHAPE[FAMILY[op][0]], 2), WIDE, bad, WIDE)
        assert np.array_equal(q, bias_only([0, 0, 0])) and (mn, mx) == WIDE
        return
    with pytest.raises(OpError) as info:
        conv_family(op, x_codes(), rand_codes(W_SHAPE[FAMILY[op][0]], 2), rngs["input"], rngs["weights"],
                    rngs["output"])
    assert op in str(info.value)
