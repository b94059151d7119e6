"""Helpers for tests and model scripts: build TFLite models without TensorFlow, run them in LiteRT.

* :class:`TFLiteBuilder` (``tflite_builder``) writes TFLite flatbuffers;
* ``tflite_quant`` reproduces the converter's quantization formulas;
* :func:`run_litert` (``litert``) runs a model in ``ai_edge_litert`` as the reference.
"""
from __future__ import annotations

from hexnn_import.testing.litert import make_interpreter, run_litert
from hexnn_import.testing.tflite_builder import TFLiteBuilder
from hexnn_import.testing.tflite_quant import (
    choose_params, dequantize, quantize_bias, quantize_per_channel, quantize_per_tensor,
    round_half_away,
)

__all__ = [
    "TFLiteBuilder", "run_litert", "make_interpreter", "choose_params", "dequantize",
    "quantize_bias", "quantize_per_channel", "quantize_per_tensor", "round_half_away",
]
