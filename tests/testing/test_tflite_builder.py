"""TFLiteBuilder models run in LiteRT must match numpy worked from TFLite's documented arithmetic.

Quantized ops follow the TFLite 8-bit quantization spec: real = scale * (q - zp),
conv/FC accumulate (q_x - zp_x) * q_w + bias in int32 and rescale by
s_x * s_w / s_out (per channel for per-channel filters); the fused activation
clamps in the quantized domain.  Rounding of the rescale differs from
round-to-nearest by at most 1 LSB, hence the tolerance.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite

from hexnn_import.testing import (
    TFLiteBuilder, choose_params, make_interpreter, quantize_bias, quantize_per_channel,
    quantize_per_tensor, run_litert,
)

MODELS = Path(__file__).resolve().parents[2] / "models"


def _conv_ref_int32(xq: np.ndarray, zp_x: int, wq: np.ndarray, bias: np.ndarray,
                    stride: int, pad: tuple[int, int]) -> np.ndarray:
    """int64 accumulators of an NHWC x OHWI convolution with explicit (top, left) padding."""
    _, h, w, _ = xq.shape
    o, kh, kw, _ = wq.shape
    oh, ow = -(-h // stride), -(-w // stride)
    xs = np.pad(xq.astype(np.int64) - zp_x, ((0, 0), (pad[0], kh), (pad[1], kw), (0, 0)))
    acc = np.zeros((1, oh, ow, o), np.int64)
    for i in range(oh):
        for j in range(ow):
            patch = xs[0, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            acc[0, i, j] = np.tensordot(wq.astype(np.int64), patch, axes=([1, 2, 3], [0, 1, 2]))
    return acc + bias


def _requantize(acc: np.ndarray, multiplier: np.ndarray, zp: int, lo: int, hi: int) -> np.ndarray:
    return np.clip(np.round(acc * multiplier) + zp, lo, hi).astype(np.int64)


def test_conv2d_int8_per_channel_relu_same_stride2() -> None:
    rng = np.random.default_rng(0)
    s_x, zp_x = choose_params(-1.0, 1.0, np.int8)
    s_y, zp_y = choose_params(0.0, 3.0, np.int8)
    w = rng.normal(0, 0.4, size=(4, 3, 3, 3))
    wq, s_w = quantize_per_channel(w, axis=0)
    bq, s_b = quantize_bias(rng.normal(0, 0.2, size=4), s_x, s_w)
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 7, 7, 3], "int8", scale=s_x, zero_point=zp_x)
    wt = b.add_const("w", wq, scale=s_w, zero_point=np.zeros(4, np.int64), quantized_dimension=0)
    bt = b.add_const("b", bq, scale=s_b, zero_point=np.zeros(4, np.int64))
    y = b.add_tensor("y", [1, 4, 4, 4], "int8", scale=s_y, zero_point=zp_y)
    b.add_operator("CONV_2D", [x, wt, bt], [y], {"padding": "SAME", "stride_w": 2, "stride_h": 2},
                   fused_activation="RELU", version=3)
    b.set_io([x], [y])
    xq = rng.integers(-128, 128, size=(1, 7, 7, 3)).astype(np.int8)
    (got,) = run_litert(b.build(), [xq])
    # SAME, stride 2, 7 -> 4: total pad (4-1)*2+3-7 = 2, one on top/left.
    acc = _conv_ref_int32(xq, zp_x, wq, bq, 2, (1, 1))
    multiplier = np.float32(s_x) * s_w.astype(np.float64) / np.float32(s_y)
    want = _requantize(acc, multiplier, zp_y, max(-128, zp_y), 127)
    assert got.dtype == np.int8 and got.shape == (1, 4, 4, 4)
    assert np.abs(got.astype(np.int64) - want).max() <= 1
    assert len(np.unique(got)) > 10  # not a degenerate case


@pytest.mark.parametrize("keep_num_dims", [False, True])
def test_fully_connected_int8_per_tensor(keep_num_dims: bool) -> None:
    rng = np.random.default_rng(1)
    s_x, zp_x = choose_params(-2.0, 1.0, np.int8)
    s_y, zp_y = choose_params(-4.0, 4.0, np.int8)
    w = rng.normal(0, 0.3, size=(5, 8))
    s_w, _ = choose_params(-np.abs(w).max(), np.abs(w).max(), np.int8, symmetric=True)
    wq = quantize_per_tensor(w, s_w, 0, np.int8)
    bq, s_b = quantize_bias(rng.normal(0, 0.5, size=5), s_x, s_w)
    out_shape = [1, 2, 5] if keep_num_dims else [2, 5]
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 2, 8], "int8", scale=s_x, zero_point=zp_x)
    wt = b.add_const("w", wq, scale=s_w, zero_point=0)
    bt = b.add_const("b", bq, scale=s_b[0], zero_point=0)
    y = b.add_tensor("y", out_shape, "int8", scale=s_y, zero_point=zp_y)
    b.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], {"keep_num_dims": keep_num_dims},
                   version=7 if keep_num_dims else 4)
    b.set_io([x], [y])
    xq = rng.integers(-128, 128, size=(1, 2, 8)).astype(np.int8)
    (got,) = run_litert(b.build(), {"x": xq})
    acc = (xq.reshape(2, 8).astype(np.int64) - zp_x) @ wq.astype(np.int64).T + bq
    want = _requantize(acc, np.float32(s_x) * np.float32(s_w) / np.float32(s_y), zp_y, -128, 127)
    assert list(got.shape) == out_shape
    assert np.abs(got.reshape(2, 5).astype(np.int64) - want).max() <= 1


def test_fully_connected_without_bias() -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 3], "float32")
    wt = b.add_const("w", np.array([[1, 2, 3], [0, -1, 0.5]], np.float32))
    y = b.add_tensor("y", [1, 2], "float32")
    b.add_operator("FULLY_CONNECTED", [x, wt, -1], [y])
    b.set_io([x], [y])
    (got,) = run_litert(b.build(), [np.array([[1, 1, 2]], np.float32)])
    np.testing.assert_array_equal(got, [[9.0, 0.0]])


def test_max_pool_int8_exact() -> None:
    rng = np.random.default_rng(2)
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 6, 6, 2], "int8", scale=0.05, zero_point=-3)
    y = b.add_tensor("y", [1, 3, 3, 2], "int8", scale=0.05, zero_point=-3)
    b.add_operator("MAX_POOL_2D", [x], [y], {"padding": "VALID", "stride_w": 2, "stride_h": 2,
                                            "filter_width": 2, "filter_height": 2}, version=2)
    b.set_io([x], [y])
    xq = rng.integers(-128, 128, size=(1, 6, 6, 2)).astype(np.int8)
    (got,) = run_litert(b.build(), [xq])
    want = xq.reshape(1, 3, 2, 3, 2, 2).max(axis=(2, 4))
    np.testing.assert_array_equal(got, want)


def _read_const(b: TFLiteBuilder, name: str) -> np.ndarray:
    """Read back a constant from a builder's own flatbuffer (round trip through the file)."""
    m = tflite.Model.GetRootAsModel(b.build(), 0)
    t = m.Subgraphs(0).Tensors(b.tensor_index(name))
    return m.Buffers(t.Buffer()).DataAsNumpy().view(np.float32).reshape(t.ShapeAsNumpy())


def test_float_add_broadcast_exact() -> None:
    rng = np.random.default_rng(3)
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 4, 4, 3], "float32")
    c = b.add_const("c", rng.normal(size=(1, 1, 1, 3)).astype(np.float32))
    y = b.add_tensor("y", [1, 4, 4, 3], "float32")
    b.add_operator("ADD", [x, c], [y])
    b.set_io([x], [y])
    xv = rng.normal(size=(1, 4, 4, 3)).astype(np.float32)
    (got,) = run_litert(b.build(), [xv])
    np.testing.assert_array_equal(got, xv + _read_const(b, "c"))


def test_model_layout_matches_converter_conventions() -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", [2], "int32")
    y = b.add_tensor("y", [2], "int32")
    b.add_operator("ABS", [x], [y])
    b.add_operator(tflite.BuiltinOperator.BROADCAST_ARGS, [x, x], [y])
    b.set_io([x], [y])
    m = tflite.Model.GetRootAsModel(b.build(), 0)
    assert tflite.Model.ModelBufferHasIdentifier(b.build(), 0)
    assert m.Version() == 3 and m.Buffers(0).DataLength() == 0
    codes = [(m.OperatorCodes(i).DeprecatedBuiltinCode(), m.OperatorCodes(i).BuiltinCode())
             for i in range(m.OperatorCodesLength())]
    big = tflite.BuiltinOperator.BROADCAST_ARGS
    assert codes == [(tflite.BuiltinOperator.ABS, tflite.BuiltinOperator.ABS), (127, big)]


def test_custom_op_is_written_and_unresolved_in_litert() -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 4], "float32")
    y = b.add_tensor("y", [1, 4], "float32")
    b.add_custom_operator("MyCustomOp", [x], [y], custom_options=b"\x01\x02")
    b.set_io([x], [y])
    model = b.build()
    m = tflite.Model.GetRootAsModel(model, 0)
    code = m.OperatorCodes(0)
    assert code.BuiltinCode() == tflite.BuiltinOperator.CUSTOM and code.CustomCode() == b"MyCustomOp"
    assert bytes(m.Subgraphs(0).Operators(0).CustomOptionsAsNumpy()) == b"\x01\x02"
    with pytest.raises(RuntimeError, match="MyCustomOp"):
        make_interpreter(model)


@pytest.mark.parametrize("name,dtype", [("small_int8.tflite", np.int8), ("small_uint8.tflite", np.uint8)])
def test_bundled_models_load_and_run(name: str, dtype: type) -> None:
    model = (MODELS / name).read_bytes()
    interp = make_interpreter(model)
    (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
    assert list(inp["shape"]) == [1, 24, 24, 3] and inp["dtype"] == dtype
    assert list(out["shape"]) == [1, 10] and out["dtype"] == dtype
    assert inp["quantization"][0] > 0 and out["quantization"][0] > 0
    info = np.iinfo(dtype)
    rng = np.random.default_rng(4)
    outs = [run_litert(model, [rng.integers(info.min, info.max + 1, size=(1, 24, 24, 3)).astype(dtype)])[0]
            for _ in range(8)]
    q = np.concatenate(outs).astype(np.int64)
    assert q.max() - q.min() >= 64 and len(np.unique(q)) >= 20


@pytest.mark.parametrize("dtype,ttype", [
    (np.int8, "INT8"), (np.uint8, "UINT8"), (np.int16, "INT16"), (np.int32, "INT32"),
    (np.int64, "INT64"), (np.float32, "FLOAT32"), (np.bool_, "BOOL"),
])
def test_constant_of_every_type_round_trips(dtype: type, ttype: str) -> None:
    data = (np.arange(12).reshape(3, 4) % 5 - 2).astype(dtype)
    b = TFLiteBuilder()
    idx = b.add_const("c", data, scale=[0.5, 0.25, 0.125], zero_point=[0, 1, 2], quantized_dimension=0)
    m = tflite.Model.GetRootAsModel(b.build(), 0)
    t = m.Subgraphs(0).Tensors(idx)
    assert t.Type() == getattr(tflite.TensorType, ttype) and list(t.ShapeAsNumpy()) == [3, 4]
    raw = m.Buffers(t.Buffer()).DataAsNumpy().tobytes()
    np.testing.assert_array_equal(np.frombuffer(raw, dtype).reshape(3, 4), data)
    q = t.Quantization()
    assert list(q.ScaleAsNumpy()) == [0.5, 0.25, 0.125] and list(q.ZeroPointAsNumpy()) == [0, 1, 2]
    assert q.QuantizedDimension() == 0
