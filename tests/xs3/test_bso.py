"""BSO / BSS computation and packing worked by hand (SEMANTICS §8; lib_nn note 5, nn_bso.h)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.xs3.bso import (BSOParams, bso_params, bss_params, fold_bias, join_bias, output_offset, pack_bso,
                                  quantize_multiplier, split_bias, unpack_bso)
from hexnn_import.xs3.errors import BSOError
from hexnn_import.xs3.vpu import bso_output_stage

# int32 bias -> (high half-word, low half-word as the int16 bit pattern of the unsigned value)
SPLITS = [(0, 0, 0), (1, 0, 1), (-1, -1, -1), (0x18000, 1, -32768), (65535, 0, -1), (-65536, -1, 0),
          (-(2 ** 31), -32768, 0), (2 ** 31 - 1, 32767, -1), (-70000, -2, -4464)]


@pytest.mark.parametrize("bias,hi,lo", SPLITS)
def test_bias_split_into_high_and_low_half_words(bias: int, hi: int, lo: int) -> None:
    h, l_ = split_bias(np.array([bias]))
    assert (int(h[0]), int(l_[0])) == (hi, lo)
    assert h.dtype == l_.dtype == np.int16
    assert int(join_bias(h, l_)[0]) == bias  # hi * 2**16 + (lo as unsigned)


def test_fold_bias_subtracts_the_input_zero_point_share_and_clips() -> None:
    assert fold_bias(np.array([100, -5]), np.array([10, 20]), -3).tolist() == [130, 55]
    assert fold_bias(np.array([2 ** 31 - 10]), np.array([-100]), 5).tolist() == [2 ** 31 - 1]
    assert fold_bias(np.array([-(2 ** 31) + 10]), np.array([100]), 5).tolist() == [-(2 ** 31)]


# M -> (shift1, scale, shift2), by hand from SEMANTICS §8
MULTIPLIERS = [
    (0.004, 1, 16777, 21),   # ceil(log2 M) = -7, r = 8, scale = round(0.004 * 2**22), r - 7 = 1
    (0.5, 0, 16384, 15),     # a power of two: scale would be 2**15 -> r - 1, 2**14; r - 7 = -6
    (1e-5, 10, 21475, 21),   # r = 17: 1e-5 * 2**31 = 21474.8
    (0.0, 9, 32767, 21),     # M = 0: r = 16, scale 2**15 - 1
    (100.0, 0, 25600, 8),    # r = -6: 100 * 2**8; r - 7 = -13 -> shift2 = 8
]


@pytest.mark.parametrize("m,shift1,scale,shift2", MULTIPLIERS)
def test_quantize_multiplier_by_hand(m: float, shift1: int, scale: int, shift2: int) -> None:
    s1, sc, s2 = quantize_multiplier(np.array([m]))
    assert (int(s1[0]), int(sc[0]), int(s2[0])) == (shift1, scale, shift2)
    if m:  # ((acc >> shift1) * scale) >> shift2 reproduces acc * M
        assert abs(scale * 2.0 ** -(shift1 + shift2) / m - 1) < 2e-4


def test_quantize_multiplier_rejects_only_a_negative_shift2() -> None:
    with pytest.raises(BSOError, match="shift2"):
        quantize_multiplier(np.array([2.0 ** 20]))            # shift2 = -6
    with pytest.raises(BSOError):
        quantize_multiplier(np.array([-1.0]))
    # shift2 below 8 is fine: lib_nn's one final shift goes straight to 8 bits (SEMANTICS §8)
    assert quantize_multiplier(np.array([200.0, 2.0 ** 13, 2.0 ** 14]))[2].tolist() == [7, 1, 0]


def test_an_8_bit_layer_with_a_large_multiplier_computes() -> None:
    # M = 200: shift1 0, scale 25600, shift2 7; acc 1 -> (25600 + 64) >> 7 = 200 -> 127; acc -1 -> -128;
    # zero point 3: offset_scale * offset = 3 * 2**7 = 384 (sqrt: 20 * 19 = 380, the nearest split)
    p = bso_params(np.array([0]), np.array([0]), 1.0, 0, np.array([2.0]), 0.01, 3)
    assert (p.shift1.tolist(), p.scale.tolist(), p.shift2.tolist()) == ([0], [25600], [7])
    assert (p.offset_scale.tolist(), p.offset.tolist()) == ([20], [19])
    y = bso_output_stage(np.array([[1], [-1], [0]]), p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)
    assert y[:, 0].tolist() == [127, -128, 3]  # 380 + 64 >> 7 = 3


def test_output_offset_by_hand() -> None:
    oscale, offset = output_offset(np.array([-128, 5, 0, 127]), np.array([21, 21, 21, 13]))
    assert oscale.tolist()[:3] == [16384, 3238, 0] and offset.tolist()[:3] == [-16384, 3238, 0]
    raw = np.array([-128, 5, 0, 127]) * 2.0 ** np.array([21, 21, 21, 13])
    assert np.all(np.abs(oscale * offset - raw) <= oscale / 2 + 1)  # within half an offset_scale step


def test_bso_params_end_to_end() -> None:
    p = bso_params(np.array([100, -5, 70000]), np.array([10, 20, -30]), 0.02, -3, np.array([0.01, 0.02, 0.005]),
                   0.05, 10)
    assert p.bias.tolist() == [130, 55, 69910]
    # M = 0.004, 0.008, 0.002
    assert p.shift1.tolist() == [1, 0, 2] and p.scale.tolist() == [16777] * 3 and p.shift2.tolist() == [21] * 3
    assert p.offset_scale.tolist() == [4579] * 3 and p.offset.tolist() == [4580] * 3  # 10 * 2**21 ~ 4579 * 4580


def test_bso_params_for_16_bit_outputs() -> None:
    p = bso_params(np.array([0]), np.array([0]), 0.02, 0, np.array([0.01]), 0.05 / 256, 5 * 256, out_bits=16)
    # M = 1.024: r = 0; headroom -1 (a non-zero zero point needs room): shift1 1, shift2 13
    assert (p.shift1.tolist(), p.shift2.tolist()) == ([1], [13])
    p0 = bso_params(np.array([0]), np.array([0]), 0.02, 0, np.array([0.01]), 0.05 / 256, 0, out_bits=16)
    assert (p0.shift1.tolist(), p0.shift2.tolist()) == ([0], [14])


def _params(c: int) -> BSOParams:
    k = np.arange(c)
    return BSOParams(k * 70000 - 500000, k % 5, 16000 + k, 100 + k, -k, 21 - k % 3)


def test_pack_bso_layout_with_tail_channels() -> None:
    bso = pack_bso(_params(20))
    assert bso.shape == (2, 7, 16) and bso.dtype == np.int16
    c = 17  # channel 17: group 1, offset 1
    hi, lo = split_bias(np.array([17 * 70000 - 500000]))
    assert bso[1, :, 1].tolist() == [hi[0], lo[0], 17 % 5, 16017, 117, -17, 21 - 17 % 3]
    assert bso[c // 16, 2, c % 16] == c % 5
    assert not bso[1, :, 4:].any()  # tail channels 20..31 are zero
    back = unpack_bso(bso, 20)
    for f in ("bias", "shift1", "scale", "offset_scale", "offset", "shift2"):
        assert np.array_equal(getattr(back, f), getattr(_params(20), f)), f


def test_pack_bso_exact_group_and_bad_shapes() -> None:
    assert pack_bso(_params(16)).shape == (1, 7, 16)
    assert pack_bso(_params(1)).shape == (1, 7, 16)
    with pytest.raises(BSOError):
        unpack_bso(np.zeros((1, 7, 16), np.int16), 17)
    with pytest.raises(BSOError):
        unpack_bso(np.zeros((1, 6, 16), np.int16), 1)


def test_bss_params_by_hand() -> None:
    p = bss_params(np.array([7, 0, 0]), np.array([1, 0, 0]), 1.0, -2, np.array([0.3, 0.25, 1.5]), 1.0)
    assert p.bias.tolist() == [9, 0, 0]
    # 0.3 -> shift 2, 1.2 * 2**14 = 19660.8; 0.25 -> shift 2, 16384; 1.5 -> shift 0, 24576
    assert p.shift.tolist() == [2, 2, 0] and p.scale.tolist() == [19661, 16384, 24576]
    assert p.shift.dtype == np.uint16 and p.scale.dtype == np.int16
    with pytest.raises(BSOError):
        bss_params(np.array([0]), np.array([0]), 1.0, 0, np.array([3.0]), 1.0)
    with pytest.raises(BSOError, match="zero point"):
        bss_params(np.array([0]), np.array([0]), 1.0, 0, np.array([0.5]), 1.0, zp_out=3)
