"""Channel counts that are not multiples of 4 (issue 39): a CONV_2D's output channels are padded with zero
weights and a zero BSO channel, a MAX_POOL_2D's channels around the kernel, and the padding is cut back
(the layer's output has its real channels). Each layer is compared with LiteRT on the same input codes
(``xs3-export``'s per-layer agreement, :func:`hexnn_import.xs3.layer_agreement.layer_agreement`)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing import xs3_models as tm

CONVS = [  # (input shape, output channels, window, kernel)
    ((1, 6, 6, 16), 5, (3, 3), "conv2d_deep"),
    ((1, 9, 9, 3), 10, (3, 3), "conv2d_shallowin"),
    ((1, 5, 5, 12), 6, (1, 1), "conv2d_1x1"),
]


@pytest.mark.parametrize("x_shape,c_out,k,kernel", CONVS, ids=[c[3] for c in CONVS])
def test_output_channels_padded_to_a_multiple_of_4(agreement, x_shape, c_out: int, k, kernel: str) -> None:
    plan, result = agreement(tm.conv_model(x_shape, c_out, k), n=4)
    low = plan.results[0].lowered
    assert low is not None and low.kernel == kernel
    y4 = -(-c_out // 4) * 4
    assert low.weights.shape[0] == y4 and not low.weights[c_out:].any()  # zero weights in the padded channels
    assert low.op.y_shape[-1] == y4 and "output channels padded" in " ".join(low.op.canonical)
    x = np.random.default_rng(2).integers(-128, 128, x_shape).astype(np.int8)
    assert low.run(x).shape[-1] == c_out  # the padding is cut back
    assert result.exact_fraction >= 0.99 and result.max_abs_diff <= 1, result.as_dict()


def _maxpool_model(c: int) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 8, 8, c), np.int8, scale=0.05, zero_point=-3)
    y = b.add_tensor("y", (1, 3, 3, c), np.int8, scale=0.05, zero_point=-3)
    b.add_operator("MAX_POOL_2D", [x], [y], {"padding": "VALID", "stride_w": 2, "stride_h": 2,
                                            "filter_width": 3, "filter_height": 3})
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("c", [10, 3, 1])
def test_maxpool_channels_padded_around_the_kernel(agreement, c: int) -> None:
    plan, result = agreement(_maxpool_model(c), n=3)
    low = plan.results[0].lowered
    assert low is not None and low.kernel == "maxpool2d" and "channels padded" in " ".join(low.op.canonical)
    assert result.exact_fraction == 1.0, result.as_dict()
    # a property that must hold: each output is the maximum of its 3x3 window, per real channel
    x = np.random.default_rng(5).integers(-128, 128, (1, 8, 8, c)).astype(np.int8)
    want = np.lib.stride_tricks.sliding_window_view(x[0], (3, 3), axis=(0, 1))[::2, ::2].max(axis=(-2, -1))
    assert np.array_equal(low.run(x)[0], want)
