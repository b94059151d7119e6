"""The fused BSO output stage gives exactly the literal stage's integers (xs3/fused_stage.py identities).

The literal stage (``bso_output_stage``, checked by hand in test_vpu.py) is
the reference: random 16-bit BSO parameters over their whole ranges,
accumulators spread over the bound and piled up at its ends and at every
rounding tie of both shifts, every shift2 from 0 up, both saturation modes,
int8 and quint8 outputs, int32 and int64 work types.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.xs3.bso import BSOParams
from hexnn_import.xs3.fused_stage import fused_stage
from hexnn_import.xs3.vpu import VPU_INT32_MAX, VPUOptions, bso_output_stage

OPTIONS = [VPUOptions(), VPUOptions(symmetric_output=True)]


def random_params(rng: np.random.Generator, c: int, shift1_hi: int = 20) -> BSOParams:
    i16 = (-(2 ** 15), 2 ** 15)
    return BSOParams(bias=rng.integers(-(2 ** 20), 2 ** 20, c), shift1=rng.integers(-2, shift1_hi, c),
                     scale=rng.integers(*i16, c), offset_scale=rng.integers(*i16, c), offset=rng.integers(*i16, c),
                     shift2=rng.integers(0, 31, c))


def accumulators(rng: np.random.Generator, p: BSOParams, bound: np.ndarray, rows: int) -> np.ndarray:
    """``[rows, C]`` accumulators within ``±bound``: uniform, the ends, and values around both shifts' ties."""
    c = p.channels
    acc = rng.integers(-bound, bound + 1, (rows, c))
    acc[0], acc[1], acc[2], acc[3] = bound, -bound, 0, -1
    s1 = np.clip(p.shift1, 0, 40)
    h1 = np.where(s1 > 0, np.left_shift(1, np.maximum(s1 - 1, 0)), 0)
    k = rng.integers(-64, 64, (rows // 2, c))
    ties = np.left_shift(k, s1) + h1 + rng.integers(-1, 2, k.shape)  # (acc + h1) >> s1 at and beside a tie
    acc[4:4 + rows // 2] = np.clip(ties, -bound, bound)
    return acc


@pytest.mark.parametrize("options", OPTIONS, ids=["default", "symmetric"])
@pytest.mark.parametrize("seed", range(4))
def test_fused_stage_equals_the_literal_stage(options: VPUOptions, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = random_params(rng, 48)
    bound = rng.integers(2 ** 10, 2 ** 28, 48)
    acc = accumulators(rng, p, bound, 400)
    want = bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2, options)
    extra = rng.integers(-1000, 1000, 48)  # the caller's sums leave this part of the bias out
    stage = fused_stage(BSOParams(p.bias - extra, *(getattr(p, f) for f in ("shift1", "scale", "offset_scale",
                                                                            "offset", "shift2"))),
                        bound + np.abs(p.bias), extra, options)
    assert stage is not None and stage.out_dtype is np.int8
    got = stage.apply((acc - p.bias).astype(np.float64 if seed % 2 else np.int64))  # integer-valued sums
    assert np.array_equal(got, want)
    q = fused_stage(p, bound + np.abs(p.bias), 0, options, out_offset=128)
    assert q is not None and q.out_dtype is np.uint8
    assert np.array_equal(q.apply(acc - p.bias), (want.view(np.uint8) ^ np.uint8(0x80)))


def test_tiny_negative_accumulators_round_to_zero() -> None:
    # shift1 4: acc -1..-8 round to v = 0 (lib_nn has no "never zero" rule), -9..-24 to -1, ...
    p = BSOParams(*(np.array([v]) for v in (0, 4, 2 ** 14, 0, 0, 14)))
    acc = np.arange(-40, 41).reshape(-1, 1)
    for options in OPTIONS:
        stage = fused_stage(p, np.array([100]), 0, options)
        assert stage is not None
        want = bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2, options)
        assert np.array_equal(stage.apply(acc), want)
    stage = fused_stage(p, np.array([100]), 0, VPUOptions())
    assert stage is not None
    assert stage.apply(np.array([[-3], [-8], [-9], [-24], [-25]]))[:, 0].tolist() == [0, 0, -1, -1, -2]


def test_wide_bounds_work_in_int64_and_stay_exact() -> None:
    rng = np.random.default_rng(7)
    p = random_params(rng, 32, shift1_hi=40)
    p.shift2[:] = rng.integers(24, 40, 32)
    bound = np.full(32, VPU_INT32_MAX)
    stage = fused_stage(p, bound, 0, VPUOptions())
    assert stage is not None and stage.work is np.int64 and stage.clamp16
    acc = accumulators(rng, p, bound - np.abs(p.bias), 300) + p.bias
    acc = np.clip(acc, -VPU_INT32_MAX, VPU_INT32_MAX)
    want = bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)
    assert np.array_equal(stage.apply(acc - p.bias), want)


@pytest.mark.parametrize("sign", [1, -1])
def test_an_inert_16_bit_clamp_is_skipped_and_results_stay_exact(sign: int) -> None:
    # scale * 32767 >> shift2 is far beyond the 8-bit range, so the output saturates before v does
    rng = np.random.default_rng(9)
    c = 16
    p = BSOParams(bias=rng.integers(-1000, 1000, c), shift1=np.full(c, 2),
                  scale=sign * rng.integers(2 ** 11, 2 ** 12, c),
                  offset_scale=rng.integers(-300, 300, c), offset=rng.integers(-300, 300, c), shift2=np.full(c, 12))
    bound = np.full(c, 2 ** 20)  # v reaches 2**18 > 32767 before the clamp
    for out_offset in (0, 128):
        stage = fused_stage(p, bound, 0, VPUOptions(), out_offset=out_offset)
        assert stage is not None and not stage.clamp16 and stage.work is np.int32
        acc = accumulators(rng, p, bound, 300)
        want = bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)
        got = stage.apply(acc - p.bias)
        assert np.array_equal(got, want.view(np.uint8) ^ np.uint8(0x80) if out_offset else want)
    # a scale small enough that the clamp decides some outputs (32767 * 8 >> 12 = 64 < 127) keeps it
    small = BSOParams(p.bias, p.shift1, sign * np.full(c, 8), p.offset_scale, p.offset, p.shift2)
    stage = fused_stage(small, bound, 0, VPUOptions())
    assert stage is not None and stage.clamp16
    acc = accumulators(rng, small, bound, 300)
    want = bso_output_stage(acc, small.shift1, small.scale, small.offset_scale, small.offset, small.shift2)
    assert np.array_equal(stage.apply(acc - small.bias), want)


def test_narrow_bounds_work_in_int32() -> None:
    p = random_params(np.random.default_rng(3), 16, shift1_hi=8)
    p.shift2[:] = 20
    stage = fused_stage(p, np.full(16, 2 ** 20), 0, VPUOptions())
    assert stage is not None and stage.work is np.int32


@pytest.mark.parametrize("shift2", range(0, 9))
def test_small_shift2_fuses_and_stays_exact(shift2: int) -> None:
    rng = np.random.default_rng(20 + shift2)
    p = random_params(rng, 16, shift1_hi=12)
    p.shift2[:] = shift2
    bound = np.full(16, 2 ** 16)
    acc = accumulators(rng, p, bound, 200)
    for out_offset in (0, 128):
        stage = fused_stage(p, bound + np.abs(p.bias), 0, VPUOptions(), out_offset=out_offset)
        assert stage is not None
        want = bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)
        got = stage.apply(acc - p.bias)
        assert np.array_equal(got, want.view(np.uint8) ^ np.uint8(0x80) if out_offset else want)


def test_no_fused_stage_for_a_shift2_above_40() -> None:
    p = random_params(np.random.default_rng(1), 4)
    assert fused_stage(p, np.full(4, 1000), 0, VPUOptions()) is not None
    p.shift2[0] = 41
    assert fused_stage(p, np.full(4, 1000), 0, VPUOptions()) is None
