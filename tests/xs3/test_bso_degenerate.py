"""Degenerate channels in the BSO stage (issue 18; SEMANTICS §1, §8): an all-zero weight channel, a zero
bias, a zero weight (or input) scale give a valid BSO - no division by zero, no NaN, every field in 16
bits - and the layer outputs the bias-only result (the output zero point when the multiplier is 0)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder
from hexnn_import.xs3.bso import bso_params, pack_bso, unpack_bso
from hexnn_import.xs3.errors import BSOError
from hexnn_import.xs3.vpu import bso_output_stage, bso_output_stage16

S_IN, ZP_IN, S_OUT, ZP_OUT = 0.02, -3, 0.05, 5
ACCS = np.array([0, 1, -1, 700, -700, 20000, -20000, 2 ** 24, 2 ** 31 - 1, -(2 ** 31 - 1)])


def _valid(p) -> None:
    for f in ("shift1", "scale", "offset_scale", "offset", "shift2"):
        v = getattr(p, f)
        assert np.all(np.abs(v) <= 2 ** 15) and v.dtype == np.int64, f
    back = unpack_bso(pack_bso(p), p.channels)
    for f in ("bias", "shift1", "scale", "offset_scale", "offset", "shift2"):
        assert np.array_equal(getattr(back, f), getattr(p, f)), f


@pytest.mark.parametrize("s_in,s_w", [(S_IN, 0.0), (0.0, 0.01), (0.0, 0.0)])
def test_zero_multiplier_outputs_the_zero_point(s_in: float, s_w: float) -> None:
    # M = s_in * s_w / s_out = 0: every product and the bias are real zeros, whatever the codes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = bso_params(np.array([0, 700, 20000, -(2 ** 31)]), np.array([0, 0, 50, -1000]), s_in, ZP_IN,
                       np.full(4, s_w), S_OUT, ZP_OUT)
    _valid(p)
    assert p.scale.tolist() == [0] * 4 and p.shift2.tolist() == [21] * 4   # §8's r = 16 shifts, scale 0
    acc = np.broadcast_to(ACCS[:, None], (ACCS.size, 4))
    y = bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)
    assert (y == ZP_OUT).all()


def test_zero_multiplier_16_bit_output() -> None:
    p = bso_params(np.array([20000]), np.array([0]), S_IN, 0, np.array([0.0]), S_OUT / 256, ZP_OUT * 256, out_bits=16)
    _valid(p)
    y = bso_output_stage16(ACCS[:, None], p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)
    assert np.all(np.abs(y.astype(np.int64) - ZP_OUT * 256) <= 1)     # the offset's own rounding only


def test_zero_weight_channel_and_zero_bias_by_hand() -> None:
    # channel 0 all-zero weights, bias 700 (s_w 0.01): y = round(700 * 0.02 * 0.01 / 0.05) + 5 = round(2.8) + 5 = 8;
    # channel 1 all-zero weights and bias: 5; channel 2 zero bias, real weights: an ordinary channel
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = bso_params(np.array([700, 0, 0]), np.array([0, 0, 40]), S_IN, ZP_IN, np.array([0.01, 0.01, 0.01]),
                       S_OUT, ZP_OUT)
    _valid(p)
    assert p.bias.tolist() == [700, 0, 120]                        # 0 - (-3) * 40
    y = bso_output_stage(p.bias[None, :], p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)
    assert y[0, :2].tolist() == [8, 5]


def test_output_scale_must_be_positive() -> None:
    for s_out in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(BSOError, match="output scale"):
            bso_params(np.array([0]), np.array([0]), S_IN, 0, np.array([0.01]), s_out, 0)


def _conv_with_zero_channels() -> bytes:
    # CONV_2D 3x3 SAME, 8 -> 4 channels; channel 1 all-zero weights with bias 700, channel 3 all-zero weights and
    # bias with the converter's scale 1.0 for an all-zero channel
    rng = np.random.default_rng(0)
    wq = rng.integers(-127, 128, (4, 3, 3, 8)).astype(np.int8)
    wq[1] = 0
    wq[3] = 0
    scales = np.array([0.01, 0.01, 0.01, 1.0], np.float32)
    bias = np.array([100, 700, 0, 0], np.int32)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 8), np.int8, scale=S_IN, zero_point=ZP_IN)
    wt = b.add_const("w", wq, scale=scales, zero_point=np.zeros(4, np.int64), quantized_dimension=0)
    bt = b.add_const("b", bias, scale=(np.float32(S_IN) * scales).astype(np.float32), zero_point=np.zeros(4, np.int64))
    y = b.add_tensor("y", (1, 4, 4, 4), np.int8, scale=S_OUT, zero_point=ZP_OUT)
    b.add_operator("CONV_2D", [x, wt, bt], [y], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                                 "dilation_w_factor": 1, "dilation_h_factor": 1},
                   fused_activation="NONE", version=3)
    b.set_io([x], [y])
    return b.build()


def test_lowered_conv_with_zero_channels_outputs_the_bias(lower_bytes) -> None:
    plan = lower_bytes(_conv_with_zero_channels())
    low = plan.results[0].lowered
    assert low is not None, plan.results[0].reason
    x = np.random.default_rng(1).integers(-128, 128, (1, 4, 4, 8)).astype(np.int8)
    y = low.run(x)
    assert (y[..., 1] == 8).all() and (y[..., 3] == ZP_OUT).all()   # round(2.8) + 5; the zero point
    assert len(np.unique(y[..., 0])) > 3                              # the ordinary channel still varies
