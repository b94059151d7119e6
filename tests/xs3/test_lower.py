"""Lowering in two visible steps (Replace, then Legalize), the canonicalizations, and the layers that
cannot be lowered: each keeps its reason."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing import xs3_models as tm
from hexnn_import.xs3.legalize import LoweredLayer, legalize
from hexnn_import.xs3.lower import lower_layer
from hexnn_import.xs3.replace import XS3Op
from hexnn_import.xs3.replace_rules import replace


def test_replace_then_legalize(lower_bytes) -> None:
    plan = lower_bytes(tm.conv_model((1, 12, 12, 3), 8, (3, 3), act="RELU6", out_scale=6 / 255))
    layer = plan.graph.source_layers[0]
    op = replace(layer)
    assert isinstance(op, XS3Op) and op.kernel == "conv2d_shallowin" and op.rule == "conv-shallowin"
    # Replace only canonicalizes: TFLite OHWI order, input channels padded 3 -> 4 with zeros
    assert op.weights.shape == (8, 3, 3, 4) and not op.weights[..., 3].any()
    assert np.array_equal(op.weights[..., :3], layer.weights)
    assert op.x_shape == (1, 12, 12, 4) and op.window is not None
    assert (op.window.start_row, op.window.start_col) == (-1, -1)
    low = legalize(op)
    assert isinstance(low, LoweredLayer)
    assert low.weights.shape == (8, 3, 8, 4)  # the augmented kernel width 32 / X_c
    assert low.bso.shape == (1, 7, 16) and low.bso.dtype == np.int16
    assert low.describe()["window"] == {"shape": [3, 3], "start": [-1, -1], "stride": [1, 1]}


def test_conv_covering_its_input_becomes_fully_connected(lower_bytes) -> None:
    r = lower_bytes(tm.conv_model((1, 4, 4, 5), 6, (4, 4), 1, "VALID")).results[0]
    assert r.lowered is not None and r.lowered.kernel == "fully_connected_8"
    assert r.lowered.weights.shape == (6, 80)  # N = 4 * 4 * 5
    x = np.random.default_rng(0).integers(-128, 128, (1, 4, 4, 5)).astype(np.int8)
    assert r.lowered.run(x).shape == (1, 1, 1, 6)


def test_fully_connected_pads_inputs_to_a_multiple_of_4(lower_bytes) -> None:
    r = lower_bytes(tm.fc_model(70, 10)).results[0]
    assert r.lowered is not None and r.lowered.weights.shape == (10, 72)
    assert r.lowered.describe()["output_dtype"] == "int8"


NOT_LOWERED = [
    ("depth multiplier", tm.depthwise_model((1, 6, 6, 4), (3, 3), mult=2), "depth multiplier 2"),
    ("dilation", tm.conv_model((1, 9, 9, 8), 8, (3, 3), dilation=2), "dilation 2x2"),
    ("multiplier too large (shift2 < 0)", tm.conv_model((1, 4, 4, 8), 8, (1, 1), out_scale=1e-9), "too large"),
]


@pytest.mark.parametrize("name,model,reason", NOT_LOWERED, ids=[c[0] for c in NOT_LOWERED])
def test_layer_that_cannot_be_lowered_keeps_its_reason(lower_bytes, name: str, model: bytes, reason: str) -> None:
    plan = lower_bytes(model)
    r = plan.results[0]
    assert r.lowered is None and reason in (r.reason or ""), r.reason
    e = r.entry()
    assert e["lowered"] is False and reason in e["reason"]


def test_non_conv_and_uint8_layers_are_reported(lower_bytes) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 4), np.uint8, scale=0.02, zero_point=128)
    w = b.add_const("w", np.full((4, 1, 1, 4), 130, np.uint8), scale=0.01, zero_point=128)
    bias = b.add_const("b", np.zeros(4, np.int32), scale=0.0002, zero_point=0)
    y = b.add_tensor("y", (1, 4, 4, 4), np.uint8, scale=0.05, zero_point=128)
    z = b.add_tensor("z", (1, 4, 4, 4), np.uint8, scale=0.05, zero_point=128)
    b.add_operator("CONV_2D", [x, w, bias], [y], {"padding": "SAME"})
    b.add_operator("RELU", [y], [z])
    b.set_io([x], [z])
    plan = lower_bytes(b.build())
    assert plan.results[0].reason == "weights are uint8, not quantized int8"
    relu = plan.results[1].lowered  # a per-tensor function of the code: lookup8 on the uint8 tensor's int8 view
    assert relu is not None and relu.kernel == "lookup8"
    assert np.array_equal(relu.op.table, np.clip(np.arange(256, dtype=np.uint8).view(np.int8), 0, 127))


def test_a_clamp_the_output_range_does_not_imply_follows_as_a_lookup8(lower_bytes, agreement) -> None:
    """RELU6 inside the int8 output range: the kernel, then lib_nn's lookup8 with the clamp as its table;
    the layer's output against LiteRT's (the fused activation included)."""
    model = tm.depthwise_model((1, 11, 11, 16), (3, 3), 2, act="RELU6")
    plan = lower_bytes(model)
    low = plan.results[0].lowered
    assert low is not None and low.op.clamp is not None
    # TFLite's RELU6 bounds in output codes: zero point .. zero point + round(6 / scale), within int8
    s_out, zp = tm._out_params(3 * 3, 0.4, "RELU6", 5)
    assert low.op.clamp == (max(-128, zp), min(127, zp + round(6 / s_out)))
    lo, hi = low.op.clamp
    assert hi < 127
    assert [c.kernel for c, _ in low.calls()] == ["conv2d_depthwise", "lookup8"]
    assert "lookup8" in " ".join(low.op.canonical)
    _, result = agreement(model, n=4)
    assert result.exact_fraction >= 0.99 and result.max_abs_diff <= 1, result.as_dict()
    x = np.random.default_rng(3).integers(-128, 128, (1, 11, 11, 16)).astype(np.int8)
    y = low.run(x)
    assert y.min() >= lo and y.max() <= hi


def test_lower_layer_catches_legalize_errors(lower_bytes) -> None:
    plan = lower_bytes(tm.conv_model((1, 4, 4, 8), 8, (1, 1), out_scale=1e-9))
    r = lower_layer(plan.graph.source_layers[0])
    assert r.lowered is None and r.replaced is not None and r.reason.startswith("conv2d_1x1: ")
    assert r.entry()["kernel"] == "conv2d_1x1"
