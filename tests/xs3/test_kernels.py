"""Each XS3 kernel against LiteRT on a tiny int8 model: >= 99% of outputs exact, none off by more than 1.

Inputs are integer codes over the whole int8 range (seeded); the kernel runs
on the same input tensor LiteRT's layer saw. Layout checks ride along.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.testing import xs3_models as tm
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_conv import conv1x1_weights, conv2d_1x1, shallowin_weights
from hexnn_import.xs3.kernels_fc import fc_weights
from hexnn_import.xs3.vpu import VPUOptions
from hexnn_import.xs3.window import Window

CASES = [
    # name, model, samples, kernel, canonicalization (substring) or ""
    ("deep 3x3 SAME, 40 channels (a 32 + 8 step per tap)", tm.conv_model((1, 9, 9, 40), 8, (3, 3)), 4,
     "conv2d_deep", ""),
    ("deep 3x3 stride 2 VALID, RELU", tm.conv_model((1, 10, 10, 12), 12, (3, 3), 2, "VALID", act="RELU"), 6,
     "conv2d_deep", ""),
    ("deep 5x5 SAME", tm.conv_model((1, 8, 8, 8), 16, (5, 5)), 4, "conv2d_deep", ""),
    ("deep 2x3 stride 2, 2 images", tm.conv_model((2, 7, 9, 12), 8, (2, 3), 2), 4, "conv2d_deep", ""),
    ("shallowin 3x3, 3 channels padded to 4",
     tm.conv_model((1, 12, 12, 3), 8, (3, 3), act="RELU6", out_scale=6 / 255), 8, "conv2d_shallowin", "3 -> 4"),
    ("shallowin 3x3 stride 2, 8 channels", tm.conv_model((1, 12, 12, 8), 4, (3, 3), 2), 8, "conv2d_shallowin", ""),
    ("shallowin 1x7 over 4 channels", tm.conv_model((1, 6, 10, 4), 8, (1, 7)), 6, "conv2d_shallowin", ""),
    ("1x1, 20 -> 24", tm.conv_model((1, 6, 6, 20), 24, (1, 1)), 4, "conv2d_1x1", ""),
    ("1x1, 2 images, 64 -> 20", tm.conv_model((2, 5, 5, 64), 20, (1, 1)), 4, "conv2d_1x1", ""),
    ("1x1 per-tensor weights", tm.conv_model((1, 6, 6, 16), 16, (1, 1), per_channel=False), 4, "conv2d_1x1", ""),
    ("1x1 with multipliers above 64 (shift2 6 and 7)", tm.conv_model((1, 6, 6, 8), 8, (1, 1), out_scale=3e-7), 4,
     "conv2d_1x1", ""),
    ("depthwise 3x3, 6 channels padded to 8", tm.depthwise_model((1, 10, 10, 6), (3, 3)), 4, "conv2d_depthwise",
     "6 -> 8"),
    ("depthwise 3x3 stride 2 SAME", tm.depthwise_model((1, 11, 11, 16), (3, 3), 2), 6, "conv2d_depthwise", ""),
    ("depthwise 5x5 VALID", tm.depthwise_model((1, 9, 9, 8), (5, 5), 1, "VALID"), 6, "conv2d_depthwise", ""),
    ("fully_connected_8, 70 inputs padded to 72, 3 rows", tm.fc_model(70, 10, rows=3), 40, "fully_connected_8", ""),
    ("fully_connected_8 per-channel, no bias", tm.fc_model(64, 33, per_channel=True, bias=False), 40,
     "fully_connected_8", ""),
    ("fully_connected_16 (logits read by ARG_MAX)", tm.fc_model(64, 20, rows=8, argmax=True), 10,
     "fully_connected_16", "16-bit logits"),
    ("conv covering its input -> fully_connected_8", tm.conv_model((1, 5, 5, 3), 10, (5, 5), 1, "VALID"), 100,
     "fully_connected_8", "covers the whole input"),
]


@pytest.mark.parametrize("name,model,n,kernel,canon", CASES, ids=[c[0] for c in CASES])
def test_kernel_agrees_with_litert(agreement, name: str, model: bytes, n: int, kernel: str, canon: str) -> None:
    plan, a = agreement(model, n)
    lowered = plan.lowered[0].lowered
    assert lowered is not None and lowered.kernel == kernel
    assert (canon in " ".join(lowered.op.canonical)) if canon else not lowered.op.canonical
    assert a.total >= 1000, a.total
    assert a.exact_fraction >= 0.99 and a.max_abs_diff <= 1, (a.exact_fraction, a.max_abs_diff)


def test_symmetric_saturation_never_writes_minus_128(agreement) -> None:
    model = tm.conv_model((1, 6, 6, 16), 16, (1, 1), zp_out=-100)  # many outputs saturate low
    plan, a = agreement(model, 4, VPUOptions(symmetric_output=True))
    layer = plan.lowered[0].lowered
    x = np.random.default_rng(2).integers(-128, 128, plan.lowered[0].layer.x.shape).astype(np.int8)
    y_default = layer.run(x)
    y_sym = layer.run(x, VPUOptions(symmetric_output=True))
    assert (y_default == -128).any() and y_sym.min() == -127
    assert np.array_equal(np.maximum(y_default, -127), y_sym)
    assert a.max_abs_diff <= 1  # LiteRT writes -128 where the symmetric kernel writes -127


def test_fully_connected_16_keeps_eight_more_bits(agreement) -> None:
    plan, _ = agreement(tm.fc_model(64, 20, rows=8, argmax=True), 1)
    layer = plan.lowered[0].lowered
    x = np.random.default_rng(5).integers(-128, 128, (8, 64)).astype(np.int8)
    y16 = layer.run16(x)
    assert y16.dtype == np.int16 and y16.shape == (8, 20)
    y8 = layer.run(x)
    assert np.array_equal((y16.astype(np.int64) + 128) >> 8, y8.astype(np.int64))
    assert len(np.unique(y16)) > len(np.unique(y8))


def test_weight_layouts() -> None:
    w = np.arange(2 * 3 * 2 * 4).reshape(2, 3, 2, 4).astype(np.int8)  # OHWI, K_w 2, X_c 4
    k = shallowin_weights(w)
    assert k.shape == (2, 3, 8, 4) and np.array_equal(k[:, :, :2], w) and not k[:, :, 2:].any()
    with pytest.raises(XS3Error):
        shallowin_weights(np.zeros((1, 1, 9, 4), np.int8))  # 9 * 4 > 32
    with pytest.raises(XS3Error):
        shallowin_weights(np.zeros((1, 1, 1, 12), np.int8))  # 12 does not divide 32
    assert conv1x1_weights(np.ones((5, 1, 1, 8), np.int8)).shape == (5, 8)
    fc = fc_weights(np.ones((3, 70), np.int8))
    assert fc.shape == (3, 72) and not fc[:, 70:].any()


def test_kernel_constraints_raise() -> None:
    bso = np.zeros((1, 7, 16), np.int16)
    with pytest.raises(XS3Error, match="multiple of 4"):
        conv2d_1x1(np.zeros((1, 2, 2, 6), np.int8), np.zeros((4, 6), np.int8), bso)
    with pytest.raises(XS3Error, match="padding"):
        Window(1, 1, -2, 0).check_overlap((4, 4), (2, 2))  # the first output row's window is all padding
