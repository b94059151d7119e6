"""Tiny int8 TFLite models (one conv-like layer each) for the XS3 tests and examples.

Built with :class:`hexnn_import.testing.TFLiteBuilder` as the converter
writes them: int8 activations per tensor, weights symmetric int8 (per
channel by default), int32 bias on ``s_in * s_w``. The output scale is set
from the layer's expected spread (four standard deviations each side for
inputs uniform over the int8 range), so the outputs use most of the codes.
"""
from __future__ import annotations

import numpy as np
import tflite

from hexnn_import.testing import TFLiteBuilder, quantize_bias, quantize_per_channel

S_IN, ZP_IN = 0.02, -3
X_STD = 128 / np.sqrt(3) * S_IN  # real std of inputs uniform over the int8 codes


def _weights(b: TFLiteBuilder, w: np.ndarray, axis: int, per_channel: bool) -> tuple[int, np.ndarray]:
    if per_channel:
        q, scales = quantize_per_channel(w, axis=axis)
    else:
        scales = np.array([np.float32(np.abs(w).max() / 127)], np.float32)
        q = np.clip(np.round(w / scales[0]), -127, 127).astype(np.int8)
    wt = b.add_const("w", q, scale=scales, zero_point=np.zeros(len(scales), np.int64), quantized_dimension=axis)
    return wt, scales


def _out_params(taps: int, w_std: float, act: str, zp: int) -> tuple[float, int]:
    std = float(np.sqrt(taps) * w_std * X_STD)
    if act in ("RELU", "RELU6"):
        return 4 * std / 255, -128
    return 8 * std / 255, zp


def conv_model(x_shape: tuple[int, int, int, int], c_out: int, k: tuple[int, int], stride: int = 1,
               padding: str = "SAME", act: str = "NONE", per_channel: bool = True, dilation: int = 1,
               seed: int = 0, zp_out: int = 5, out_scale: float | None = None) -> bytes:
    """A CONV_2D layer ``x -> y`` (filters OHWI)."""
    rng = np.random.default_rng(seed)
    b = TFLiteBuilder()
    _, h, w, c = x_shape
    x = b.add_tensor("x", x_shape, np.int8, scale=S_IN, zero_point=ZP_IN)
    wf = rng.normal(0, 0.3, size=(c_out, k[0], k[1], c))
    wt, scales = _weights(b, wf, 0, per_channel)
    qb, bs = quantize_bias(rng.normal(0, 0.3, size=c_out), S_IN, scales)
    bt = b.add_const("b", qb, scale=bs, zero_point=np.zeros(len(bs), np.int64))
    eff = [(kk - 1) * dilation + 1 for kk in k]
    oh, ow = [(-(-n // stride) if padding == "SAME" else (n - e) // stride + 1) for n, e in zip((h, w), eff)]
    s_out, zp = _out_params(k[0] * k[1] * c, 0.3, act, zp_out)
    y = b.add_tensor("y", (x_shape[0], oh, ow, c_out), np.int8, scale=out_scale or s_out, zero_point=zp)
    b.add_operator("CONV_2D", [x, wt, bt], [y], {"padding": padding, "stride_w": stride, "stride_h": stride,
                                                 "dilation_w_factor": dilation, "dilation_h_factor": dilation},
                   fused_activation=act, version=3)
    b.set_io([x], [y])
    return b.build()


def depthwise_model(x_shape: tuple[int, int, int, int], k: tuple[int, int], stride: int = 1, padding: str = "SAME",
                    act: str = "NONE", mult: int = 1, seed: int = 0, zp_out: int = 5) -> bytes:
    """A DEPTHWISE_CONV_2D layer (weights ``[1, K_h, K_w, C * mult]``, per channel on axis 3)."""
    rng = np.random.default_rng(seed)
    b = TFLiteBuilder()
    _, h, w, c = x_shape
    x = b.add_tensor("x", x_shape, np.int8, scale=S_IN, zero_point=ZP_IN)
    wt, scales = _weights(b, rng.normal(0, 0.4, size=(1, k[0], k[1], c * mult)), 3, True)
    qb, bs = quantize_bias(rng.normal(0, 0.3, size=c * mult), S_IN, scales)
    bt = b.add_const("b", qb, scale=bs, zero_point=np.zeros(len(bs), np.int64))
    oh, ow = [(-(-n // stride) if padding == "SAME" else (n - kk) // stride + 1) for n, kk in zip((h, w), k)]
    s_out, zp = _out_params(k[0] * k[1], 0.4, act, zp_out)
    y = b.add_tensor("y", (x_shape[0], oh, ow, c * mult), np.int8, scale=s_out, zero_point=zp)
    b.add_operator("DEPTHWISE_CONV_2D", [x, wt, bt], [y],
                   {"padding": padding, "stride_w": stride, "stride_h": stride, "depth_multiplier": mult},
                   fused_activation=act, version=3)
    b.set_io([x], [y])
    return b.build()


def fc_model(n_in: int, n_out: int, rows: int = 1, act: str = "NONE", per_channel: bool = False,
             bias: bool = True, argmax: bool = False, seed: int = 0, zp_out: int = 5) -> bytes:
    """A FULLY_CONNECTED layer ``[rows, n_in] -> [rows, n_out]``, optionally read by an ARG_MAX (the model's output)."""
    rng = np.random.default_rng(seed)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (rows, n_in), np.int8, scale=S_IN, zero_point=ZP_IN)
    wt, scales = _weights(b, rng.normal(0, 0.2, size=(n_out, n_in)), 0, per_channel)
    ins = [x, wt]
    if bias:
        qb, bs = quantize_bias(rng.normal(0, 0.3, size=n_out), S_IN, scales)
        ins.append(b.add_const("b", qb, scale=bs, zero_point=np.zeros(len(bs), np.int64)))
    else:
        ins.append(-1)
    s_out, zp = _out_params(n_in, 0.2, act, zp_out)
    y = b.add_tensor("y", (rows, n_out), np.int8, scale=s_out, zero_point=zp)
    b.add_operator("FULLY_CONNECTED", ins, [y], {"keep_num_dims": False}, fused_activation=act, version=4)
    if argmax:
        axis = b.add_const("axis", np.array([1], np.int32))
        idx = b.add_tensor("index", (rows,), np.int32)
        b.add_operator("ARG_MAX", [y, axis], [idx], {"output_type": tflite.TensorType.INT32}, version=2)
        b.set_io([x], [idx])
    else:
        b.set_io([x], [y])
    return b.build()
