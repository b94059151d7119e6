"""Write the example models ``small_int8.tflite``, ``small_uint8.tflite`` and ``small_float.tflite``.

Run ``python models/make_models.py`` from the repository root (numpy and
``hexnn_import.testing`` only, no TensorFlow).  The network is described in
``float_net.py``; its weights are seeded He-normal (untrained).  Both files
are quantized the way the TFLite converter does it after calibration:

* every activation's (scale, zero_point) comes from the min/max observed on
  32 seeded random inputs (after the fused activation), widened to contain 0
  (``choose_params``); MAX_POOL_2D, AVERAGE_POOL_2D and RESHAPE reuse their
  input's parameters, as the converter (and TFLite's int8 pool kernels) require;
* ``small_int8``: full-integer int8 with int8 input/output, conv filters
  symmetric per channel (quantized_dimension 0), FC weights symmetric per
  tensor, int32 biases with scale s_in * s_w and zero point 0;
* ``small_uint8``: the legacy uint8 scheme, everything per tensor, uint8
  weights with asymmetric zero points, int32 biases.

After writing, ``check_models.check`` runs both files in LiteRT against the
float reference and fails if the outputs are far off or degenerate.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from float_net import (  # noqa: E402
    ACTIVATIONS, INPUT_SHAPE, NUM_CLASSES, FloatNet, calibrate, make_weights, random_inputs,
)

from hexnn_import.testing import (  # noqa: E402
    TFLiteBuilder, choose_params, quantize_bias, quantize_per_channel, quantize_per_tensor,
)

SEED = 20240611
CALIBRATION_COUNT = 32
MODELS_DIR = Path(__file__).resolve().parent
# Activations that reuse another tensor's quantization (pools, reshape).
SHARED_PARAMS = {"pool1": "conv1/relu", "pool2": "conv2/relu6", "flatten": "conv2/relu6"}
# Operator versions the converter writes for these ops and types.
OP_VERSIONS = {"int8": {"CONV_2D": 3, "MAX_POOL_2D": 2, "AVERAGE_POOL_2D": 2,
                        "RESHAPE": 1, "FULLY_CONNECTED": 4},
               "uint8": {"CONV_2D": 1, "MAX_POOL_2D": 1, "AVERAGE_POOL_2D": 1,
                         "RESHAPE": 1, "FULLY_CONNECTED": 1}}

# A weight quantizer returns (q, scales, zero_points, quantized_dimension).
WeightQuantizer = Callable[[np.ndarray, bool], tuple[np.ndarray, np.ndarray, np.ndarray, int]]


def int8_weights(w: np.ndarray, per_channel: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Symmetric int8 weights: per output channel (axis 0) or per tensor, zero point 0."""
    if per_channel:
        q, scales = quantize_per_channel(w, axis=0)
    else:
        scale, _ = choose_params(-np.abs(w).max(), np.abs(w).max(), np.int8, symmetric=True)
        q, scales = quantize_per_tensor(w, scale, 0, np.int8), np.array([scale], np.float32)
        q = np.clip(q, -127, 127).astype(np.int8)
    return q, scales, np.zeros(len(scales), np.int64), 0


def uint8_weights(w: np.ndarray, per_channel: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Legacy uint8 weights: per tensor, asymmetric over the weights' own min/max."""
    scale, zp = choose_params(w.min(), w.max(), np.uint8)
    return quantize_per_tensor(w, scale, zp, np.uint8), np.array([scale], np.float32), np.array([zp]), 0


def activation_params(ranges: dict[str, tuple[float, float]], dtype: type) -> dict[str, tuple[float, int]]:
    """(scale, zero_point) per activation tensor from calibrated ranges."""
    params = {name: choose_params(lo, hi, dtype) for name, (lo, hi) in ranges.items()}
    for name, source in SHARED_PARAMS.items():
        params[name] = params[source]
    return params


def build_model(net: FloatNet, ranges: dict[str, tuple[float, float]], dtype: type) -> bytes:
    """Build the quantized network as TFLite flatbuffer bytes (int8 or legacy uint8)."""
    kind = np.dtype(dtype).name
    quantize_weights: WeightQuantizer = int8_weights if kind == "int8" else uint8_weights
    versions = OP_VERSIONS[kind]
    params = activation_params(ranges, dtype)
    b = TFLiteBuilder(description=f"hexnn-import example model small_{kind} (models/make_models.py)")

    def act(name: str, shape: tuple[int, ...]) -> int:
        scale, zp = params[name]
        return b.add_tensor(name, shape, dtype, scale=scale, zero_point=zp)

    def weights(prefix: str, w: np.ndarray, bias: np.ndarray, in_name: str,
                per_channel: bool) -> tuple[int, int]:
        q, scales, zps, dim = quantize_weights(w, per_channel)
        wt = b.add_const(f"{prefix}/weights", q, scale=scales, zero_point=zps, quantized_dimension=dim)
        qb, bscales = quantize_bias(bias, params[in_name][0], scales)
        bt = b.add_const(f"{prefix}/bias", qb, scale=bscales, zero_point=np.zeros(len(bscales), np.int64))
        return wt, bt

    x = act("input", INPUT_SHAPE)
    w1, b1 = weights("conv1", net.w1, net.b1, "input", per_channel=True)
    c1 = act("conv1/relu", (1, 24, 24, 8))
    b.add_operator("CONV_2D", [x, w1, b1], [c1], {"padding": "SAME", "stride_w": 1, "stride_h": 1},
                   fused_activation="RELU", version=versions["CONV_2D"])
    p1 = act("pool1", (1, 12, 12, 8))
    b.add_operator("MAX_POOL_2D", [c1], [p1], {"padding": "VALID", "stride_w": 2, "stride_h": 2,
                                              "filter_width": 2, "filter_height": 2},
                   version=versions["MAX_POOL_2D"])
    w2, b2 = weights("conv2", net.w2, net.b2, "pool1", per_channel=True)
    c2 = act("conv2/relu6", (1, 5, 5, 32))
    b.add_operator("CONV_2D", [p1, w2, b2], [c2], {"padding": "VALID", "stride_w": 2, "stride_h": 2},
                   fused_activation="RELU6", version=versions["CONV_2D"])
    p2 = act("pool2", (1, 1, 1, 32))
    b.add_operator("AVERAGE_POOL_2D", [c2], [p2], {"padding": "VALID", "stride_w": 1, "stride_h": 1,
                                                  "filter_width": 5, "filter_height": 5},
                   version=versions["AVERAGE_POOL_2D"])
    shape = b.add_const("flatten/shape", np.array([1, 32], np.int32))
    flat = act("flatten", (1, 32))
    b.add_operator("RESHAPE", [p2, shape], [flat], {"new_shape": [1, 32]}, version=versions["RESHAPE"])
    wf, bf = weights("fc", net.wfc, net.bfc, "flatten", per_channel=False)
    out = act("logits", (1, NUM_CLASSES))
    b.add_operator("FULLY_CONNECTED", [flat, wf, bf], [out], {"keep_num_dims": False},
                   version=versions["FULLY_CONNECTED"])
    b.set_io([x], [out])
    return b.build()


def build_float_model(net: FloatNet) -> bytes:
    """The same network in float32 (the float twin: weights and activations float, no quantization)."""
    b = TFLiteBuilder(description="hexnn-import example model small_float (models/make_models.py)")
    f32 = np.float32

    def act(name: str, shape: tuple[int, ...]) -> int:
        return b.add_tensor(name, shape, f32)

    x = act("input", INPUT_SHAPE)
    w1, b1 = b.add_const("conv1/weights", net.w1.astype(f32)), b.add_const("conv1/bias", net.b1.astype(f32))
    c1 = act("conv1/relu", (1, 24, 24, 8))
    b.add_operator("CONV_2D", [x, w1, b1], [c1], {"padding": "SAME", "stride_w": 1, "stride_h": 1},
                   fused_activation="RELU")
    p1 = act("pool1", (1, 12, 12, 8))
    b.add_operator("MAX_POOL_2D", [c1], [p1], {"padding": "VALID", "stride_w": 2, "stride_h": 2,
                                              "filter_width": 2, "filter_height": 2})
    w2, b2 = b.add_const("conv2/weights", net.w2.astype(f32)), b.add_const("conv2/bias", net.b2.astype(f32))
    c2 = act("conv2/relu6", (1, 5, 5, 32))
    b.add_operator("CONV_2D", [p1, w2, b2], [c2], {"padding": "VALID", "stride_w": 2, "stride_h": 2},
                   fused_activation="RELU6")
    p2 = act("pool2", (1, 1, 1, 32))
    b.add_operator("AVERAGE_POOL_2D", [c2], [p2], {"padding": "VALID", "stride_w": 1, "stride_h": 1,
                                                  "filter_width": 5, "filter_height": 5})
    shape = b.add_const("flatten/shape", np.array([1, 32], np.int32))
    flat = act("flatten", (1, 32))
    b.add_operator("RESHAPE", [p2, shape], [flat], {"new_shape": [1, 32]})
    wf, bf = b.add_const("fc/weights", net.wfc.astype(f32)), b.add_const("fc/bias", net.bfc.astype(f32))
    out = act("logits", (1, NUM_CLASSES))
    b.add_operator("FULLY_CONNECTED", [flat, wf, bf], [out], {"keep_num_dims": False})
    b.set_io([x], [out])
    return b.build()


def make_all() -> tuple[FloatNet, dict[str, bytes]]:
    """Seeded weights + calibration; return the float net and both models' bytes by file name."""
    rng = np.random.default_rng(SEED)
    net = make_weights(rng)
    ranges = calibrate(net, random_inputs(rng, CALIBRATION_COUNT))
    assert set(ranges) == set(ACTIVATIONS)
    return net, {"small_int8.tflite": build_model(net, ranges, np.int8),
                 "small_uint8.tflite": build_model(net, ranges, np.uint8),
                 "small_float.tflite": build_float_model(net)}


def main() -> int:
    """Write both models into ``models/``, then check them in LiteRT; return the exit code."""
    from check_models import check

    net, models = make_all()
    ok = True
    for name, data in models.items():
        (MODELS_DIR / name).write_bytes(data)
        print(f"wrote {MODELS_DIR / name} ({len(data)} bytes)")
        ok &= check(name, data, net)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
