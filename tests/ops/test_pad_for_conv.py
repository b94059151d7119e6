"""QuantizedPadForConv_8_d32 (op_pad_d32.c, PadForConv branch) and the _d32 twins of
kernels/d32_softmax_requant_prelu.py.

PadForConv cases are worked by hand from the C: amounts from nn_pad_compute_outsize_and_pad (SAME:
total ``f - 1 - ((in + s - 1) % s)``, the smaller half before; SAME_CAFFE: the larger half before; NA:
``in // s`` outputs, after-padding below 0 taken as 0), fill ``saturate_u8(roundf_i32(-min * 255 /
(max - min)))``, min/max copied.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops.d32 import from_d32, to_d32
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID, run_op

X = np.arange(1, 1 + 1 * 3 * 4 * 2, dtype=np.uint8).reshape(1, 3, 4, 2)


def pad_for_conv(x: np.ndarray, lo: float, hi: float, filt: tuple[int, int], stride: tuple[int, int],
                 padding: int) -> tuple[np.ndarray, float, float]:
    outs = run_op("QuantizedPadForConv_8_d32", [to_d32(x), lo, hi, np.zeros((*filt, 2, 2), np.uint8),
                                                np.zeros((1, *stride, 1), np.uint8)], padding=padding)
    return from_d32(outs[0]), float(outs[1].item()), float(outs[2].item())


@pytest.mark.parametrize("filt,stride,padding,pads", [
    ((3, 5), (1, 1), PAD_SAME, ((1, 1), (2, 2))),
    ((4, 4), (1, 1), PAD_SAME, ((1, 2), (1, 2))),          # odd total 3: 1 before, 2 after
    ((4, 4), (1, 1), PAD_SAME_CAFFE, ((2, 1), (2, 1))),    # the larger half before
    ((3, 3), (2, 2), PAD_SAME, ((1, 1), (0, 1))),          # h: 2 - (4 % 2)=2 -> 1:1; w: 2 - (5 % 2)=1 -> 0:1
    ((3, 3), (2, 2), PAD_NA, ((0, 0), (0, 1))),            # h: 1 output, (1-1)*2 - 0 = 0; w: 2 outputs -> 0:1
])
def test_amounts_and_fill(filt, stride, padding, pads) -> None:
    # [-1, 3]: fill = roundf(1 * 255 / 4 = 63.75) = 64
    got, lo, hi = pad_for_conv(X, -1.0, 3.0, filt, stride, padding)
    want = np.pad(X, ((0, 0), *pads, (0, 0)), constant_values=64)
    np.testing.assert_array_equal(got, want)
    assert (lo, hi) == (-1.0, 3.0)


def test_fill_saturates_for_ranges_without_zero() -> None:
    got, _, _ = pad_for_conv(X, 1.0, 3.0, (3, 3), (1, 1), PAD_SAME)      # -255/2 -> 0
    assert got[0, 0, 0, 0] == 0
    got, _, _ = pad_for_conv(X, -3.0, -1.0, (3, 3), (1, 1), PAD_SAME)    # 3*255/2 -> 255
    assert got[0, 0, 0, 0] == 255


def test_valid_copies_and_impossible_sizes_are_errors() -> None:
    # VALID pads nothing (nn_pad_compute_outsize_padding: 0 before and after); the device copies the input
    got, lo, hi = pad_for_conv(X, -1.0, 1.0, (3, 3), (1, 1), PAD_VALID)
    np.testing.assert_array_equal(got, X)
    assert (lo, hi) == (-1.0, 1.0)
    with pytest.raises(OpError):      # VALID with a filter taller than the input: no output
        pad_for_conv(X, -1.0, 1.0, (4, 3), (1, 1), PAD_VALID)
    with pytest.raises(OpError):      # NA with a stride larger than the input: no output
        pad_for_conv(X, -1.0, 1.0, (3, 3), (5, 5), PAD_NA)


@pytest.mark.parametrize("op,inputs", [
    ("QuantizedSoftmax_8", lambda x: [x, -4.0, 4.0]),
    ("Requantize_8to8", lambda x: [x, -4.0, 4.0, -2.0, 2.0 * 127 / 128]),
    ("QuantizedPRelu_8", lambda x: [x, -4.0, 4.0, np.full((1, 1, 1, 8), 0.25, np.float32)]),
    ("QuantizedPRelu_8_V2", lambda x: [x, -4.0, 4.0, np.full((1, 1, 1, 8), 64, np.uint8), 0.0, 1.0]),
])
def test_d32_twins_give_the_flat_results(op, inputs) -> None:
    x = np.random.default_rng(2).integers(0, 256, (1, 4, 5, 8)).astype(np.uint8)
    flat = run_op(op, inputs(x))
    d32 = run_op(f"{op}_d32", inputs(to_d32(x)))
    np.testing.assert_array_equal(from_d32(d32[0]), flat[0])
    for a, b in zip(d32[1:], flat[1:]):
        assert a.item() == b.item()
