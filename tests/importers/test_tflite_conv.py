"""Conv-like TFLite builtins against LiteRT: depthwise (multiplier, dilation), dilated conv, FC
without bias, RELU_N1_TO_1, float models with run-time and calibrated ranges.

Quantized cases hold the issue's bar (>= 99% of outputs within 1 LSB of
LiteRT, none off by more than 2); float cases state an SQNR bar in dB.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder, quantize_bias, quantize_per_channel
from hexnn_import.testing.tflite_compare import assert_agrees, compare_tflite

RNG = np.random.default_rng(77)
Q = {np.int8: ((0.02, -3), (0.05, 10)), np.uint8: ((0.02, 125), (0.05, 138))}


def _weights(b: TFLiteBuilder, w: np.ndarray, dtype: type, per_channel: bool, axis: int, s_in: float
             ) -> tuple[int, np.ndarray]:
    if per_channel:
        q, scales = quantize_per_channel(w, axis=axis)
        return b.add_const("w", q, scale=scales, zero_point=np.zeros(len(scales), np.int64),
                           quantized_dimension=axis), scales
    scale = float(np.abs(w).max() / 127)
    n = w.shape[axis]
    if dtype is np.int8:
        return b.add_const("w", np.clip(np.round(w / scale), -127, 127).astype(np.int8), scale=scale,
                           zero_point=0), np.full(n, scale)
    return b.add_const("w", np.clip(np.round(w / scale) + 128, 0, 255).astype(np.uint8), scale=scale,
                       zero_point=128), np.full(n, scale)


def _depthwise(dtype: type, per_channel: bool, mult: int, dil: int, stride: int, padding: str, act: str) -> bytes:
    b = TFLiteBuilder()
    (s_in, zp_in), (s_out, zp_out) = Q[dtype]
    cin, hw, k = 4, 10, 3
    x = b.add_tensor("x", (1, hw, hw, cin), dtype, scale=s_in, zero_point=zp_in)
    w = RNG.normal(0, 0.4, size=(1, k, k, cin * mult))
    w[..., 1] *= 0.1
    wt, scales = _weights(b, w, dtype, per_channel, 3, s_in)
    qb, bs = quantize_bias(RNG.normal(0, 0.3, size=cin * mult), s_in, scales)
    bt = b.add_const("b", qb, scale=bs, zero_point=np.zeros(len(bs), np.int64))
    eff = (k - 1) * dil + 1
    o = -(-hw // stride) if padding == "SAME" else (hw - eff) // stride + 1
    y = b.add_tensor("y", (1, o, o, cin * mult), dtype, scale=s_out, zero_point=zp_out)
    b.add_operator("DEPTHWISE_CONV_2D", [x, wt, bt], [y],
                   {"padding": padding, "stride_w": stride, "stride_h": stride, "depth_multiplier": mult,
                    "dilation_w_factor": dil, "dilation_h_factor": dil},
                   fused_activation=act, version=3 if dtype is np.int8 else 2)
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("dtype,per_channel,mult,dil,stride,padding,act", [
    (np.int8, True, 1, 1, 1, "SAME", "RELU6"), (np.int8, True, 2, 1, 2, "SAME", "NONE"),
    (np.int8, True, 1, 2, 1, "VALID", "RELU"), (np.int8, False, 1, 1, 2, "VALID", "RELU_N1_TO_1"),
    (np.uint8, False, 1, 1, 1, "SAME", "RELU6"), (np.uint8, False, 2, 2, 1, "SAME", "NONE")])
def test_depthwise_conv_2d(dtype, per_channel, mult, dil, stride, padding, act) -> None:
    assert_agrees(_depthwise(dtype, per_channel, mult, dil, stride, padding, act))


@pytest.mark.parametrize("dtype,dil,padding", [(np.int8, 2, "SAME"), (np.uint8, 3, "VALID")])
def test_dilated_conv_2d(dtype, dil, padding) -> None:
    b = TFLiteBuilder()
    (s_in, zp_in), (s_out, zp_out) = Q[dtype]
    x = b.add_tensor("x", (1, 11, 11, 3), dtype, scale=s_in, zero_point=zp_in)
    w = RNG.normal(0, 0.3, size=(5, 3, 3, 3))
    wt, scales = _weights(b, w, dtype, dtype is np.int8, 0, s_in)
    qb, bs = quantize_bias(RNG.normal(0, 0.3, size=5), s_in, scales)
    bt = b.add_const("b", qb, scale=bs, zero_point=np.zeros(len(bs), np.int64))
    o = 11 if padding == "SAME" else 11 - 2 * dil
    y = b.add_tensor("y", (1, o, o, 5), dtype, scale=s_out, zero_point=zp_out)
    b.add_operator("CONV_2D", [x, wt, bt], [y], {"padding": padding, "dilation_w_factor": dil,
                                                 "dilation_h_factor": dil}, version=3 if dtype is np.int8 else 2)
    b.set_io([x], [y])
    assert_agrees(b.build())


def test_fully_connected_without_bias() -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (3, 8), np.int8, scale=0.03, zero_point=5)
    w = RNG.normal(0, 0.3, size=(4, 8))
    scale = float(np.abs(w).max() / 127)
    wt = b.add_const("w", np.round(w / scale).astype(np.int8), scale=scale, zero_point=0)
    y = b.add_tensor("y", (3, 4), np.int8, scale=0.04, zero_point=-2)
    b.add_operator("FULLY_CONNECTED", [x, wt, -1], [y], {"keep_num_dims": False}, version=4)
    b.set_io([x], [y])
    assert_agrees(b.build())


def _float_net(seed: int = 77) -> bytes:
    """conv3x3 RELU -> depthwise 3x3 (dilation 2) RELU6 -> FC: float32 throughout, its weights from its own
    generator (the same net whatever ran before it in the worker)."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 12, 12, 3), f32)
    w1 = b.add_const("w1", rng.normal(0, 0.4, size=(6, 3, 3, 3)).astype(f32))
    b1 = b.add_const("b1", rng.normal(0, 0.2, size=6).astype(f32))
    c1 = b.add_tensor("c1", (1, 12, 12, 6), f32)
    b.add_operator("CONV_2D", [x, w1, b1], [c1], {"padding": "SAME"}, fused_activation="RELU")
    w2 = b.add_const("w2", rng.normal(0, 0.4, size=(1, 3, 3, 6)).astype(f32))
    b2 = b.add_const("b2", rng.normal(0, 0.2, size=6).astype(f32))
    c2 = b.add_tensor("c2", (1, 8, 8, 6), f32)
    b.add_operator("DEPTHWISE_CONV_2D", [c1, w2, b2], [c2], {"padding": "VALID", "depth_multiplier": 1,
                                                             "dilation_w_factor": 2, "dilation_h_factor": 2},
                   fused_activation="RELU6")
    w3 = b.add_const("w3", rng.normal(0, 0.1, size=(5, 8 * 8 * 6)).astype(f32))
    b3 = b.add_const("b3", rng.normal(0, 0.2, size=5).astype(f32))
    y = b.add_tensor("y", (1, 5), f32)
    b.add_operator("FULLY_CONNECTED", [c2, w3, b3], [y], {"keep_num_dims": False})
    b.set_io([x], [y])
    return b.build()


def test_float_model_runs_with_run_time_ranges() -> None:
    """No calibration: AutoQuantize, 8x8to32 products, bias add, shrink-range; stated bar 25 dB."""
    res = compare_tflite(_float_net(), n=4, seed=3)["y"]
    assert res.sqnr >= 25.0, res


def test_float_model_with_calibration_reaches_30_db() -> None:
    cal = {"x": np.random.default_rng(9).uniform(-1, 1, size=(16, 1, 12, 12, 3)).astype(np.float32)}
    res = compare_tflite(_float_net(), n=4, seed=3, calibration=cal)["y"]
    assert res.sqnr >= 30.0, res


def _dynamic_batch_model() -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 2), np.int8, scale=0.1, zero_point=0, shape_signature=(-1, 4, 4, 2))
    y = b.add_tensor("y", (1, 2, 2, 2), np.int8, scale=0.1, zero_point=0, shape_signature=(-1, 2, 2, 2))
    b.add_operator("MAX_POOL_2D", [x], [y], {"padding": "VALID", "stride_w": 2, "stride_h": 2,
                                            "filter_width": 2, "filter_height": 2})
    b.set_io([x], [y])
    return b.build()


def test_dynamic_batch_defaults_to_1_and_can_be_set(tmp_path) -> None:
    """A dynamic batch becomes 1 with a note; input_shapes sets any batch; other dims cannot change."""
    import hexnn_import as hx
    from hexnn_import.errors import InputDataError

    path = tmp_path / "dyn.tflite"
    path.write_bytes(_dynamic_batch_model())
    g = hx.import_model(path)
    assert g.inputs[0].shape == (1, 4, 4, 2)
    assert any("dynamic batch set to 1" in n and "--input-shape x=" in n for n in g.meta["notes"])
    x = np.arange(32, dtype=np.int8).reshape(1, 4, 4, 2)
    assert np.array_equal(hx.Runner(g).run({"x": x})["y"], x.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4)))
    g3 = hx.prepare(hx.import_model(path, input_shapes={"x": (3, 4, 4, 2)}))
    x3 = np.random.default_rng(0).integers(-128, 128, size=(3, 4, 4, 2)).astype(np.int8)
    want = x3.reshape(3, 2, 2, 2, 2, 2).max(axis=(2, 4))  # 2x2 max pool worked by numpy
    assert np.array_equal(hx.Runner(g3).run({"x": x3})["y"], want)
    with pytest.raises(InputDataError, match="only the batch"):
        hx.import_model(path, input_shapes={"x": (1, 8, 8, 2)})


def test_hybrid_weights_run_as_float_layers(tmp_path) -> None:
    """Float activations with int8 weights (the converter's dynamic-range mode): the weights are
    dequantized and the layer runs on the float path; compared with LiteRT's hybrid kernel."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 8), np.float32)
    wq = RNG.integers(-127, 128, size=(3, 8)).astype(np.int8)
    wt = b.add_const("w", wq, scale=0.02, zero_point=0)
    y = b.add_tensor("y", (1, 3), np.float32)
    b.add_operator("FULLY_CONNECTED", [x, wt, -1], [y], {})
    b.set_io([x], [y])
    res = compare_tflite(b.build(), n=4, seed=5)["y"]
    assert res.sqnr >= 30.0, res
