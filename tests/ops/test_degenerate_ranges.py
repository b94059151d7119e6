"""Zero-width and very narrow ranges compute, never raise (issue 18, failure 3; SEMANTICS §1).

Each case is checked against a value worked by hand, or against the same op on a
wide range holding the same real values (an all-zero tensor is all zeros on
[0, 0] and on [-1, 1] alike). min > max and NaN ends still raise OpError.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

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
    # output [0, 0]: quantize_uint8 over the 1e-18 floor: x <= 0 -> 0, x > 0 saturates
    q, mn, mx = run_op("Requantize_32to8", [i4([0, -5, 7]), -1.0, 1.0, 0.0, 0.0])
    assert q.ravel().tolist() == [0, 0, 255] and (mn.item(), mx.item()) == (0.0, 0.0)


@pytest.mark.parametrize("in_range", [(0.0, 0.0), TINY, (-1.0, 1.0)])
def test_quantize_down_all_zero(in_range):
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to8", [np.zeros((1, 1, 2, 2), np.int32), *in_range])
    assert not q.any() and (mn.item(), mx.item()) == (0.0, 0.0)


# --- Quantize / Dequantize -----------------------------------------------------

def test_quantize_zero_range_follows_hvx_quant():
    # op_quantize.c find_scaling_for_hvx_quant: max = fmaxf(min + 1e-18f, max) -> [0, 1e-18]
    q, mn, mx = run_op("Quantize", [f4([0.0, -3.0, 2.0]), 0.0, 0.0])
    assert q.ravel().tolist() == [0, 0, 255]
    assert mn.item() == 0.0 and mx.item() == np.float32(1e-18)


def test_dequantize_zero_range_is_zero():
    (x,) = run_op("Dequantize", [u4([0, 17, 255]), 0.0, 0.0])
    assert x.ravel().tolist() == [0.0, 0.0, 0.0]
    (x,) = run_op("Dequantize", [u4([128, 129]), *TINY])
    step = 1e-12 / 255
    assert x.ravel().tolist() == pytest.approx([0.0, step], rel=1e-5)


def test_quantize_int32_zero_range():
    q, mn, mx = run_op("Quantize_int32", [f4([0.0, 0.0]), 0.0, 0.0])
    assert q.ravel().tolist() == [0, 0] and mx.item() == np.float32(256e-18) and mn.item() == -mx.item()


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
    acc, mn, mx = run_op("QuantizedAdd_8p8to32", [u4([3, 9]), u4([0, 200]), 0.0, 0.0, 0.0, 0.0])
    assert acc.ravel().tolist() == [0, 0] and (mn.item(), mx.item()) == (0.0, 0.0)


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
    q, mn, mx = run_op("QuantizedMul_8x8to8", [u4([0, 200, 255]), u4([7, 7, 7]), -1.0, 1.0, 0.0, 0.0])
    assert not q.any() and (mn.item(), mx.item()) == (0.0, 0.0)


def test_mul_8x8to32_zero_operand():
    p, mn, mx = run_op("QuantizedMul_8x8to32", [u4([0, 200]), u4([7, 7]), -1.0, 1.0, 0.0, 0.0])
    # zero code of [0, 0] is 0, so codes pass; the range (0, 0) makes every value 0
    assert (mn.item(), mx.item()) == (0.0, 0.0)


def test_clamp_to_zero_range():
    q, mn, mx = run_op("QuantizedClamp_8", [u4([0, 128, 255]), -1.0, 0.9921875, 0.0, 0.0])
    assert not q.any() and (mn.item(), mx.item()) == (0.0, 0.0)


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
    # [0, 0] next to [-1, 0.9921875]: merged [-1, 0.9921875]; the zero input lands on zero code 128
    q, mn, mx = run_op("QuantizedConcat_8", [i4([3]), u4([5, 9]), u4([0, 255]), 0.0, -1.0, 0.0, 0.9921875])
    assert q.ravel().tolist() == [128, 128, 0, 255] and (mn.item(), mx.item()) == (-1.0, 0.9921875)


def test_requantize_8to8_zero_input():
    q, mn, mx = run_op("Requantize_8to8", [u4([3, 250]), 0.0, 0.0, -1.0, 0.9921875])
    assert q.ravel().tolist() == [128, 128]


def test_mean_zero_output_range():
    x = np.zeros((1, 1, 2, 2), np.uint8)
    q, mn, mx = run_op("QuantizedMean_8", [x, -1.0, 0.9921875, i4([3]), 0.0, 0.0])
    # codes 0 on [-1, ...] are -1.0 each: below 0 on [0, 0] -> code 0
    assert not q.any() and (mn.item(), mx.item()) == (0.0, 0.0)


def test_pad_zero_range():
    q = run_op("QuantizedPad_8", [u4([0, 0], (1, 1, 2, 1)), 0.0, 0.0, i4([0, 0, 0, 0, 1, 1, 0, 0], (1, 1, 4, 2))])[0]
    assert not q.any() and q.shape == (1, 1, 4, 1)


# --- still errors ----------------------------------------------------------------

@pytest.mark.parametrize("bad", [(1.0, 0.0), (math.nan, 1.0), (0.0, math.inf)])
def test_insane_ranges_still_raise(bad):
    assert_op_error("Requantize_32to8", [i4([1]), *bad, -1.0, 1.0], "input")
    assert_op_error("QuantizedBiasAdd_8p8to32", [u4([1]), u4([1]), -1.0, 1.0, *bad], "bias")
    assert_op_error("QuantizedAdd_8p8to8", [u4([1]), u4([1]), *bad, -1.0, 1.0], "input A")
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
    got = conv_family(op, x_codes(4), w, (0.0, 0.0), WIDE, out_rng)
    ref = conv_family(op, np.full((1, 2, 2, 3), 128, np.uint8), w, WIDE, WIDE, out_rng)
    assert np.array_equal(got[0], ref[0]) and got[1:] == ref[1:]
    if out_rng == WIDE:
        assert np.array_equal(got[0], bias_only(BIAS_CODES))


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
    q, mn, mx = conv_family(op, x_codes(), w, WIDE, w_rng, (0.0, 0.0))
    assert np.array_equal(q, bias_only([255, 0, 0])) and (mn, mx) == (0.0, 0.0)


def test_supernode_zero_width_output_hand_case():
    # in, w on WIDE (prod 2**-14), bias 0: acc = sum (x - 128) * (w - 128); w = identity * 64 (0.5)
    # x - 128 = [[1, -1, 0], [0, 0, 0], [-64, 64, 5], [3, 0, -3]] -> acc = 64 * (x - 128)
    # over [0, 0]: acc > 0 -> 255, acc <= 0 -> 0
    from hexnn_import.testing.opcheck import stride
    d = np.asarray([[1, -1, 0], [0, 0, 0], [-64, 64, 5], [3, 0, -3]])
    x = (d + 128).astype(np.uint8).reshape(1, 2, 2, 3)
    w = (np.eye(3, dtype=np.int64) * 64 + 128).astype(np.uint8).reshape(1, 1, 3, 3)
    q, mn, mx = run_op("Supernode_8x8p32to8", [x, w, *WIDE, *WIDE, stride(1, 1), i4([0, 0, 0]), *B32, 0.0, 0.0],
                       padding=1, node="sn")
    assert q.reshape(4, 3).tolist() == np.where(d > 0, 255, 0).tolist() and (mn.item(), mx.item()) == (0.0, 0.0)


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
    from hexnn_import.errors import OpError

    if where == "output" and bad == (0.0, math.inf):
        bad = (0.5, 1.0)    # +inf is an auto max; [0.5, 1] does not hold 0 and is not auto
    rngs = {"input": WIDE, "weights": WIDE, "output": WIDE, where: bad}
    with pytest.raises(OpError) as info:
        conv_family(op, x_codes(), rand_codes(W_SHAPE[FAMILY[op][0]], 2), rngs["input"], rngs["weights"],
                    rngs["output"])
    assert op in str(info.value)
