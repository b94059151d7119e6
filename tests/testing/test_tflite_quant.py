"""The converter-style quantization helpers (TFLite quantization spec, converter calibration)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.testing import (
    choose_params, dequantize, quantize_bias, quantize_per_channel, quantize_per_tensor,
    round_half_away,
)


@pytest.mark.parametrize("rmin,rmax,dtype,want", [
    (0.0, 6.0, np.int8, (6.0 / 255, -128)),        # RELU6 output
    (0.0, 6.0, np.uint8, (6.0 / 255, 0)),
    (-1.0, 1.0, np.uint8, (2.0 / 255, 128)),       # tie 127.5 rounds away from zero
    (1.0, 5.0, np.int8, (5.0 / 255, -128)),        # range widened down to 0
    (-3.0, -1.0, np.int8, (3.0 / 255, 127)),       # range widened up to 0
    (-2.0, 6.0, np.int8, (8.0 / 255, -64)),
    (0.0, 0.0, np.int8, (1.0, 0)),                 # degenerate range
])
def test_choose_params(rmin: float, rmax: float, dtype: type, want: tuple[float, int]) -> None:
    scale, zp = choose_params(rmin, rmax, dtype)
    assert scale == pytest.approx(want[0], rel=1e-6) and zp == want[1]
    assert scale == float(np.float32(scale))


def test_choose_params_zero_is_exact_and_symmetric_mode() -> None:
    scale, zp = choose_params(-0.37, 2.9, np.int8)
    assert quantize_per_tensor(0.0, scale, zp) == zp
    assert choose_params(-0.5, 2.54, np.int8, symmetric=True) == (pytest.approx(0.02), 0)


def test_round_half_away_from_zero() -> None:
    np.testing.assert_array_equal(round_half_away([0.5, -0.5, 1.5, -2.5, 2.4]), [1, -1, 2, -3, 2])


def test_quantize_per_tensor_clamps() -> None:
    q = quantize_per_tensor([-20.0, -0.1, 0.0, 0.26, 20.0], 0.1, 5, np.int8)
    np.testing.assert_array_equal(q, [-128, 4, 5, 8, 127])
    assert q.dtype == np.int8


@pytest.mark.parametrize("axis", [0, 3])
def test_quantize_per_channel(axis: int) -> None:
    w = np.random.default_rng(0).normal(size=(4, 3, 3, 4))
    w[(slice(None),) * axis + (1,)] = 0.0  # an all-zero channel
    q, scales = quantize_per_channel(w, axis=axis)
    assert q.dtype == np.int8 and scales.dtype == np.float32 and scales.shape == (4,)
    absmax = np.moveaxis(np.abs(q), axis, 0).reshape(4, -1).max(axis=1)
    np.testing.assert_array_equal(absmax, [127, 0, 127, 127])
    assert scales[1] == 1.0
    err = np.abs(dequantize(q, scales, 0, axis=axis) - w)
    assert np.all(np.moveaxis(err, axis, 0).reshape(4, -1).max(axis=1) <= scales / 2 + 1e-9)


def test_quantize_bias_scales_and_values() -> None:
    q, scales = quantize_bias([0.5, -0.25], 0.02, [0.01, 0.005])
    np.testing.assert_allclose(scales, [2e-4, 1e-4], rtol=1e-6)
    np.testing.assert_array_equal(q, [2500, -2500])
    assert q.dtype == np.int32
