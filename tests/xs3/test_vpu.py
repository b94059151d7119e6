"""VPU arithmetic worked by hand, as lib_nn's C computes it: vlsat (ties, negatives, shifts of 0 and above 16,
no "never zero" rule), saturating accumulation in the C's order, output stages with one final shift
(vpu_sim.c, nn_op_helper.h; SEMANTICS §8)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.xs3.bso import BSSParams
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_conv import conv2d_1x1
from hexnn_import.xs3.kernels_fc import fc_deepin_shallowout_16
from hexnn_import.xs3.vpu import (VPUOptions, bso_output_stage, bso_output_stage16, bss_output_stage, chunked_steps,
                                  sat16, sat32, step_bounds, vdepth8, vlmacc_taps, vlmaccr, vlsat)

MAX32 = 2 ** 31 - 1

# (x, shift, vlsat_single_s16 / VLSAT in 16-bit mode with an exact rounding add)
VLSAT_CASES = [
    (3, 1, 2),               # 1.5 -> 2: ties toward +inf
    (-3, 1, -1),             # -1.5 -> -1: ties toward +inf, not away from zero
    (5, 2, 1),               # 1.25 -> 1
    (6, 2, 2),               # 1.5 -> 2
    (-6, 2, -1),             # -1.5 -> -1
    (-10, 2, -2),            # -2.5 -> -2
    (-1, 1, 0),              # -0.5 rounds to 0: lib_nn's C has no "negative never zero" rule
    (-2, 2, 0),              # -0.5
    (-3, 3, 0),              # -0.375
    (-5, 3, -1),             # -0.625 -> -1
    (0, 5, 0),               # zero stays zero
    (-7, 0, -7),             # shift 0: no rounding
    (100, -3, 100),          # negative shifts act as 0
    (40000, 0, 32767),       # symmetric 16-bit saturation
    (-40000, 0, -32767),
    (2 ** 24, 8, 32767),
    (-(2 ** 24), 8, -32767),
    (2 ** 20, 17, 8),        # shifts above 16
    (MAX32, 20, 2048),       # 2048 - 2**-20 rounds to 2048 (the C's int32 add would wrap here)
    (MAX32, 16, 32767),      # 32768 saturates
    (-MAX32, 31, -1),        # -1 + 2**-31 -> -1
    (-(2 ** 30), 32, 0),     # -0.25
    (-(2 ** 30), 40, 0),
]


@pytest.mark.parametrize("x,s,want", VLSAT_CASES)
def test_vlsat_by_hand(x: int, s: int, want: int) -> None:
    assert int(vlsat(np.array(x), s)) == want


def test_vlsat_per_channel_shift_broadcasts_on_the_last_axis() -> None:
    x = np.array([[6, 6, 6], [-6, -6, -6]])
    assert vlsat(x, np.array([0, 1, 2])).tolist() == [[6, 3, 2], [-6, -3, -1]]


def test_saturation_bounds_are_symmetric() -> None:
    assert sat32(np.array([2 ** 40, -(2 ** 40), -(2 ** 31)])).tolist() == [MAX32, -MAX32, -MAX32]
    assert sat16(np.array([32768, -32768, -32767])).tolist() == [32767, -32767, -32767]


def test_chunked_steps_split_each_tap_into_32_element_vlmaccr_steps() -> None:
    assert chunked_steps([40, 40]) == [(0, 32), (32, 40), (40, 72), (72, 80)]
    assert chunked_steps([8] * 3) == [(0, 8), (8, 16), (16, 24)]


def _pm_vectors() -> tuple[np.ndarray, np.ndarray]:
    """64 inputs whose first 32 products sum to +1000 and the next 32 to -1000."""
    x = np.zeros((1, 64), np.int8)
    x[0, 0], x[0, 1], x[0, 32], x[0, 33] = 100, 10, -100, -10
    w = np.zeros((64, 1), np.int8)
    w[[0, 1, 32, 33], 0] = [9, 10, 9, 10]
    return x, w


def test_vlmaccr_saturates_after_each_step_in_kernel_order() -> None:
    x, w = _pm_vectors()
    bias = np.array([MAX32 - 100])
    # step 1 adds +1000 and clamps at 2**31 - 1; step 2 takes 1000 away again
    assert int(vlmaccr(bias, x, w, [(0, 32), (32, 64)])[0, 0]) == MAX32 - 1000
    # one long step never leaves the range: bias unchanged
    assert int(vlmaccr(bias, x, w, [(0, 64)])[0, 0]) == MAX32 - 100
    # the other order (-1000 first) never saturates: the VPU is not associative
    assert int(vlmaccr(bias, x[:, ::-1].copy(), w[::-1].copy(), [(0, 32), (32, 64)])[0, 0]) == MAX32 - 100
    # negative saturation is symmetric: -(2**31 - 1), never -2**31
    assert int(vlmaccr(np.array([-MAX32 + 100]), -x, w, [(0, 32), (32, 64)])[0, 0]) == -MAX32 + 1000


def test_conv2d_1x1_saturates_after_every_product() -> None:
    # conv2d_1x1_ext_ref: acc = sat_s32(acc + X[cin] * K[cin]) for each input channel in turn
    x, w = _pm_vectors()
    bias = np.array([MAX32 - 100])
    xs = np.stack([x[0, :4], x[0, 32:36]]).reshape(1, 1, 1, 8)   # +100*9, +10*10, -100*9, -10*10
    ks = np.concatenate([w[:4, 0], w[32:36, 0]]).reshape(1, 8)
    assert int(vlmaccr(bias, xs.reshape(1, 8), ks.T, step_bounds([1] * 8))[0, 0]) == MAX32 - 1000
    assert int(vlmaccr(bias, xs.reshape(1, 8), ks.T, chunked_steps([8]))[0, 0]) == MAX32 - 100  # one VLMACCR
    # the kernel: 8 products of +127*127 saturate at 2**31 - 1, then 8 of -127*127 take 129032 away;
    # v = (acc + 2**15) >> 16 = 32766 (one 16-element VLMACCR step would leave acc = bias: v = 32767);
    # y = v * 1 - 32700 with shift2 0
    bso = np.zeros((1, 7, 16), np.int16)
    bso[0, 0, 0] = (MAX32 - 100) >> 16
    bso[0, 1, 0] = np.array((MAX32 - 100) & 0xFFFF, np.uint16).view(np.int16)
    bso[0, 2:7, 0] = [16, 1, 327, -100, 0]
    k = np.zeros((4, 16), np.int8)
    k[0] = [127] * 8 + [-127] * 8
    y = conv2d_1x1(np.full((1, 1, 1, 16), 127, np.int8), k, bso)
    assert int(y[0, 0, 0, 0]) == 32766 - 32700


def test_vlmaccr_without_saturation_is_the_plain_dot_product() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (7, 100)).astype(np.int8)
    w = rng.integers(-127, 128, (100, 5)).astype(np.int8)
    bias = rng.integers(-1000, 1000, 5)
    ref = bias + x.astype(np.int64) @ w.astype(np.int64)
    assert np.array_equal(vlmaccr(bias, x, w, chunked_steps([100])), ref)


def test_vlmacc_taps_saturate_after_every_tap() -> None:
    x = np.array([[[100], [-100]]], np.int8)  # one output, two taps, one channel
    w = np.array([[100], [100]], np.int8)
    assert int(vlmacc_taps(np.array([MAX32 - 5000]), x, w)[0, 0]) == MAX32 - 10000
    assert int(vlmacc_taps(np.array([MAX32 - 5000]), x[:, ::-1].copy(), w)[0, 0]) == MAX32 - 5000


def test_vdepth8_rounds_ties_up() -> None:
    assert vdepth8(np.array([128, 127, -128, -129, 256 * 5 + 128])).tolist() == [1, 0, 0, -1, 6]


def test_bso_output_stage_by_hand() -> None:
    # acc 1000, shift1 1 -> 500; * scale 16384 = 8192000; + offset_scale * offset 4096 * 512 -> 10289152;
    # shift2 21 = 4.906 output LSB: (10289152 + 2**20) >> 21 = 5
    p = dict(shift1=np.array([1]), scale=np.array([16384]), offset_scale=np.array([4096]), offset=np.array([512]),
             shift2=np.array([21]))
    assert int(bso_output_stage(np.array([1000]), **p)[0]) == 5
    # 16-bit output (fully_connected_16): shift2 13 gives the same value in 1/256 steps
    p16 = dict(p, shift2=np.array([13]))
    assert int(bso_output_stage16(np.array([1000]), **p16)[0]) == 1256


def test_one_rounding_shift_not_two() -> None:
    # a2 = offset_scale * offset = 5 * 2**21 + 2**20 - 2**12 = 5.498 output LSB -> 5. Shifting by 13, then
    # rounding >> 8 (lib_nn note 4's two steps) would round twice: 1407.5 -> 1408, 5.5 -> 6.
    p = dict(shift1=np.array([0]), scale=np.array([7]), offset_scale=np.array([4096]), offset=np.array([2815]),
             shift2=np.array([21]))
    assert 4096 * 2815 == 5 * 2 ** 21 + 2 ** 20 - 2 ** 12
    assert int(bso_output_stage(np.array([0]), **p)[0]) == 5
    assert int(vdepth8(vlsat(np.array(4096 * 2815), 13))) == 6  # the two-step form, for contrast


def test_no_never_zero_rule() -> None:
    # a2 = -2**20 is -0.5 output LSB at shift2 21: rounds to 0 (ties toward +inf), not -1
    p = dict(shift1=np.array([0]), scale=np.array([1]), offset_scale=np.array([1024]), offset=np.array([-1024]),
             shift2=np.array([21]))
    assert int(bso_output_stage(np.array([0]), **p)[0]) == 0
    # a tiny negative accumulator shifts to v = 0 at shift1 (acc -1, shift1 1: -0.5 -> 0), so y = 0
    p1 = dict(p, shift1=np.array([1]), scale=np.array([2 ** 14]), offset_scale=np.array([0]), offset=np.array([0]),
              shift2=np.array([14]))
    assert int(bso_output_stage(np.array([-1]), **p1)[0]) == 0
    assert int(bso_output_stage16(np.array([-1]), **dict(p1, shift2=np.array([20])))[0]) == 0


@pytest.mark.parametrize("shift2,want", [(0, 100), (1, 50), (3, 13), (7, 1), (8, 0)])
def test_any_shift2_computes(shift2: int, want: int) -> None:
    # acc 100, shift1 0, scale 1: a2 = 100; (100 + 2**(s-1)) >> s; lib_nn computes every shift2 from 0 up
    p = dict(shift1=np.array([0]), scale=np.array([1]), offset_scale=np.array([0]), offset=np.array([0]),
             shift2=np.array([shift2]))
    assert int(bso_output_stage(np.array([100]), **p)[0]) == want


def test_output_saturation_default_and_symmetric() -> None:
    p = dict(shift1=np.array([0]), scale=np.array([16384]), offset_scale=np.array([0]), offset=np.array([0]),
             shift2=np.array([14]))
    acc = np.array([-1000, 1000])
    assert bso_output_stage(acc, **p).tolist() == [-128, 127]
    assert bso_output_stage(acc, **p, options=VPUOptions(symmetric_output=True)).tolist() == [-127, 127]


def test_only_lib_nn_build_options_remain() -> None:
    assert VPUOptions().output_bounds == (-128, 127)
    for old in ({"negative_never_zero": True}, {"final_shift": "vdepth8"}):
        with pytest.raises(TypeError):
            VPUOptions(**old)


def test_bss_stage_by_hand() -> None:
    # v16 = 1000 >> 2 = 250; 250 * 0.5 (8192 in Q1.14) = 125
    assert int(bss_output_stage(np.array([1000]), np.array([2]), np.array([8192]))[0]) == 125
    # scale -1.0: 3 * -16384 + 8192 = -40960 -> >> 14 = -2.5 floors to -3
    assert int(bss_output_stage(np.array([3]), np.array([0]), np.array([-16384]))[0]) == -3
    # saturation: 32767 * ~2.0
    assert int(bss_output_stage(np.array([32767]), np.array([0]), np.array([32767]))[0]) == 32767


def test_fc_deepin_shallowout_16_by_hand() -> None:
    x = np.ones((1, 32), np.int8) * 2
    w = np.stack([np.ones(32, np.int8), -np.ones(32, np.int8)])
    bss = BSSParams(np.array([10, -10], np.int32), np.array([1, 0], np.uint16), np.array([16384, 8192], np.int16))
    # acc = 10 + 64 = 74 -> >> 1 = 37 -> * 1.0 = 37; acc = -10 - 64 = -74 -> * 0.5 = -37
    assert fc_deepin_shallowout_16(x, w, bss).tolist() == [[37, -37]]
    with pytest.raises(XS3Error):
        fc_deepin_shallowout_16(x[:, :28], w[:, :28], bss)
