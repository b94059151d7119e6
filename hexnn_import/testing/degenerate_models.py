"""Tiny int8 TFLite models whose results tell nothing, and one regression model, for the tests of
:mod:`hexnn_import.compare.degenerate` and :mod:`hexnn_import.probe_outputs` (issue 34, finding 4).

Built with :class:`hexnn_import.testing.TFLiteBuilder` as the TFLite converter writes int8 models (weights
symmetric per tensor, int32 bias on ``s_in * s_w``, softmax output on scale 1/256, zero point -128).

* :func:`tiny_weight_classifier`: FULLY_CONNECTED then SOFTMAX over many classes with weights so small
  that every logit stays within a few hundredths of the others: each probability is about 1/C, well under
  one output step from its neighbours, so every code is the same on every input (the randomly initialised
  keras classifier of the issue).
* :func:`one_class_classifier`: logits that vary with the input, but one class's bias outweighs any input,
  so the top class is the same for every sample.
* :func:`landmark_model`: a keras-style regression ``Identity`` of shape [1, 63] (21 points x 3), trained
  weights' size: its values vary, and it is no classifier.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.testing import TFLiteBuilder, quantize_bias

S_IN, ZP_IN = 0.02, -3  # int8 inputs cover about [-2.5, 2.6]


def _fc(b: TFLiteBuilder, x: int, w: np.ndarray, bias: np.ndarray, name: str, s_out: float, zp_out: int) -> int:
    """A per-tensor int8 FULLY_CONNECTED ``x -> name`` (``w``: [n_out, n_in])."""
    s_w = np.float32(max(float(np.abs(w).max()), 1e-12) / 127)
    qw = np.clip(np.round(w / s_w), -127, 127).astype(np.int8)
    wt = b.add_const(f"{name}/w", qw, scale=np.array([s_w], np.float32), zero_point=np.zeros(1, np.int64))
    qb, bs = quantize_bias(bias, S_IN, np.array([s_w], np.float32))
    bt = b.add_const(f"{name}/b", qb, scale=bs, zero_point=np.zeros(1, np.int64))
    y = b.add_tensor(name, (1, w.shape[0]), np.int8, scale=s_out, zero_point=zp_out)
    b.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], {"keep_num_dims": False}, version=4)
    return y


def _input(b: TFLiteBuilder, n_in: int) -> int:
    return b.add_tensor("input", (1, n_in), np.int8, scale=S_IN, zero_point=ZP_IN)


def tiny_weight_classifier(classes: int = 300, n_in: int = 32, weight_std: float = 1e-3, seed: int = 0) -> bytes:
    """``input [1, n_in] -> logits -> probabilities [1, classes]``: one constant code everywhere."""
    rng = np.random.default_rng(seed)
    b = TFLiteBuilder()
    x = _input(b, n_in)
    logits = _fc(b, x, rng.normal(0, weight_std, (classes, n_in)), np.zeros(classes), "logits", 0.01, 0)
    probs = b.add_tensor("probabilities", (1, classes), np.int8, scale=1 / 256, zero_point=-128)
    b.add_operator("SOFTMAX", [logits], [probs], {"beta": 1.0})
    b.set_io([x], [probs])
    return b.build()


def one_class_classifier(classes: int = 10, n_in: int = 16, seed: int = 0) -> bytes:
    """``input [1, n_in] -> logits [1, classes]``: varied logits, class 3 always on top."""
    rng = np.random.default_rng(seed)
    b = TFLiteBuilder()
    x = _input(b, n_in)
    bias = np.zeros(classes)
    bias[3] = 20.0  # the other logits stay within about +-5 of zero for every input
    y = _fc(b, x, rng.normal(0, 0.3, (classes, n_in)), bias, "logits", 0.1, -28)
    b.set_io([x], [y])
    return b.build()


def landmark_model(n_in: int = 16, seed: int = 0) -> bytes:
    """``input [1, n_in] -> Identity [1, 63]``: 21 landmarks x (x, y, z), values that vary with the input."""
    rng = np.random.default_rng(seed)
    b = TFLiteBuilder()
    x = _input(b, n_in)
    y = _fc(b, x, rng.normal(0, 0.3, (63, n_in)), rng.normal(0, 0.3, 63), "Identity", 0.05, 0)
    b.set_io([x], [y])
    return b.build()
