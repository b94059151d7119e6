"""convert_insane_dwise (prepare.c do_convert_insane_dwise), cases worked from the C.

The whole-model checks against prepare.c itself are the golden node lists of the models whose layer
norms scale by a 1x1 depthwise (tests/data/golden/prepare/keras_vit_digits_int8.json and the encoders);
these cases pin the rules: which depthwise becomes a QuantizedMul_8x8to32 (filter 1x1, depth multiplier 1,
stride 1) with its filter reshaped ``[1,1,C,1] -> [1,1,1,C]``, which a QuantizedConv2d_8x8to32 (one input
channel), which stay; and what the new ops compute, worked by hand in numpy (the multiply's codes, whose
zero points are get_qu8_level_size_zero's, not the depthwise's: the same real products within an input step).
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from hexnn_import.graph import NNPad
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.insane_dwise import ConvertInsaneDwise
from hexnn_import.testing.prepare_graphs import QBuilder, q3, run_outputs

DW = "QuantizedDepthwiseConv2d_8x8to32"
RNG = np.random.default_rng(36)


def dwise(shape: tuple[int, int, int, int], w: np.ndarray, stride: int = 1,
          padding: NNPad = NNPad.SAME) -> tuple[QBuilder, int]:
    """INPUT (codes on [-1, 1]) -> depthwise (filter codes ``w`` on [-0.5, 0.5]) -> OUTPUT of the int32 triple."""
    b = QBuilder()
    x = b.input(shape)
    conv = b.conv(x, w, (-0.5, 0.5), stride, padding, op=DW)
    b.output(q3(conv))
    return b, conv.node_id


def converted(b: QBuilder) -> QBuilder:
    out = copy.deepcopy(b)
    run_pipeline(out.g, [ConvertInsaneDwise()])
    return out


def test_1x1_multiplier_1_becomes_a_broadcast_multiply_with_the_depthwise_sums() -> None:
    w = RNG.integers(0, 256, (1, 1, 5, 1), dtype=np.uint8)
    b, cid = dwise((1, 3, 4, 5), w)
    got = converted(b)
    mul = got.g.node(cid)
    assert mul.op == "QuantizedMul_8x8to32" and mul.padding == NNPad.NA
    assert mul.inputs == b.g.node(cid).inputs[:6]                  # data, filter and the four range ends
    filt = got.g.node(mul.inputs[1].src_id)
    assert filt.output_defs[0].shape == (1, 1, 1, 5) and filt.data.shape == (1, 1, 1, 5)
    assert filt.data.tobytes() == w.tobytes()                        # same bytes, dims 2 and 3 swapped
    x = RNG.integers(0, 256, (1, 3, 4, 5), dtype=np.uint8)
    codes, lo, hi = run_outputs(got.g, [x])
    # by hand, mul_832_execute: zero codes from get_qu8_level_size_zero, roundf(-min / flt_div_255(max - min)):
    # roundf(1 / 0.007843138f) = roundf(127.49999) = 127 for [-1, 1], the same for [-0.5, 0.5]; codes times 128
    want = (x.astype(np.int64) - 127) * (w.reshape(1, 1, 1, 5).astype(np.int64) - 127) * 128
    assert np.array_equal(codes.astype(np.int64), want)
    step = np.float32(2 / 255) * np.float32(1 / 255) / 128                      # one code: a_step * b_step / 128
    assert float(hi.item()) == pytest.approx(float(step) * 2**31, rel=1e-6) and float(lo.item()) == -float(hi.item())
    # the depthwise's own result (its zero codes are 128) is the same product within one input step per operand
    d_codes, _, d_hi = run_outputs(b.g, [x])
    real, d_real = codes * (float(hi.item()) / 2**31), d_codes * (float(d_hi.item()) / 2**31)
    assert np.abs(real - d_real).max() <= 2 / 255 * 0.5 + 1 / 255 * 1.0 + 1e-6


def test_one_input_channel_becomes_an_ordinary_convolution() -> None:
    w = RNG.integers(0, 256, (3, 3, 1, 4), dtype=np.uint8)
    b, cid = dwise((1, 6, 5, 1), w, stride=2, padding=NNPad.VALID)
    got = converted(b)
    conv = got.g.node(cid)
    assert conv.op == "QuantizedConv2d_8x8to32" and conv.padding == NNPad.VALID
    assert conv.inputs == b.g.node(cid).inputs and conv.output_defs == b.g.node(cid).output_defs
    assert got.g.node(conv.inputs[1].src_id).output_defs[0].shape == (3, 3, 1, 4)   # filter kept
    x = RNG.integers(0, 256, (1, 6, 5, 1), dtype=np.uint8)
    assert np.array_equal(run_outputs(got.g, [x])[0], run_outputs(b.g, [x])[0])


@pytest.mark.parametrize("wshape, stride", [((1, 1, 4, 1), 2),     # 1x1 but strided
                                            ((1, 1, 4, 2), 1),     # depth multiplier 2
                                            ((3, 3, 4, 1), 1),     # a real depthwise
                                            ((1, 3, 4, 1), 1)])    # 1x3
def test_other_depthwise_convolutions_stay(wshape: tuple[int, int, int, int], stride: int) -> None:
    b, cid = dwise((1, 6, 6, 4), RNG.integers(0, 256, wshape, dtype=np.uint8), stride)
    got = converted(b)
    assert got.g.node(cid).op == DW
    assert got.g.node(got.g.node(cid).inputs[1].src_id).output_defs[0].shape == wshape


def test_1x1_single_channel_is_a_multiply_first() -> None:
    # both rules hold (1x1, multiplier 1, stride 1 and input depth 1): the C tries the multiply first
    b, cid = dwise((1, 2, 2, 1), np.full((1, 1, 1, 1), 200, np.uint8))
    assert converted(b).g.node(cid).op == "QuantizedMul_8x8to32"
