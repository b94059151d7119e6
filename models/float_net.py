"""Float64 numpy reference of the small example network in ``make_models.py``.

    input [1,24,24,3]
    -> CONV_2D 3x3 s1 SAME, 8 filters, RELU       [1,24,24,8]
    -> MAX_POOL_2D 2x2 s2 VALID                    [1,12,12,8]
    -> CONV_2D 3x3 s2 VALID, 32 filters, RELU6     [1,5,5,32]
    -> AVERAGE_POOL_2D 5x5 VALID (global average)  [1,1,1,32]
    -> RESHAPE [1,32]
    -> FULLY_CONNECTED 10                          [1,10]

Layouts are TFLite's: activations NHWC, conv filters OHWI, FC weights
[out, in].  Padding follows TFLite's SAME rule (output = ceil(in / stride),
extra pad at the end) and AVERAGE_POOL_2D divides by the number of
in-image elements only, as TFLite does.  The batch dimension may be > 1 so
that a whole calibration set runs in one call.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

INPUT_SHAPE = (1, 24, 24, 3)
NUM_CLASSES = 10
# Tensor names of the activations, in graph order (the .tflite files use them too).
ACTIVATIONS = ("input", "conv1/relu", "pool1", "conv2/relu6", "pool2", "flatten", "logits")


@dataclass
class FloatNet:
    """The float weights of the network (filters OHWI, FC weights [out, in])."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    wfc: np.ndarray
    bfc: np.ndarray


def make_weights(rng: np.random.Generator) -> FloatNet:
    """He-normal weights (std = sqrt(2 / fan_in)) and small normal biases; no training."""
    def he(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return rng.normal(0.0, np.sqrt(2.0 / fan_in), size=shape)

    return FloatNet(
        w1=he((8, 3, 3, 3), 27), b1=rng.normal(0.0, 0.1, size=8),
        w2=he((32, 3, 3, 8), 72), b2=rng.normal(0.0, 0.1, size=32),
        wfc=he((NUM_CLASSES, 32), 32), bfc=rng.normal(0.0, 0.1, size=NUM_CLASSES),
    )


def _pads(size: int, k: int, stride: int, padding: str) -> tuple[int, int, int]:
    """Return (out, pad_before, pad_after) along one spatial axis, TFLite rule."""
    if padding == "VALID":
        return (size - k) // stride + 1, 0, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + k - size, 0)
    return out, total // 2, total - total // 2


def _windows(x: np.ndarray, k: int, stride: int, padding: str, fill: float) -> np.ndarray:
    """Return the [n, oh, ow, c, k, k] windows of NHWC ``x``, padded with ``fill``."""
    _, h, w, _ = x.shape
    oh, pt, pb = _pads(h, k, stride, padding)
    ow, pl, pr = _pads(w, k, stride, padding)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    win = sliding_window_view(xp, (k, k), axis=(1, 2))
    return win[:, ::stride, ::stride][:, :oh, :ow]


def conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, padding: str) -> np.ndarray:
    """NHWC convolution with OHWI filters and a bias (no activation)."""
    win = _windows(x, w.shape[1], stride, padding, 0.0)  # n, oh, ow, ci, kh, kw
    return np.einsum("nhwcij,oijc->nhwo", win, w) + b


def max_pool(x: np.ndarray, k: int, stride: int, padding: str) -> np.ndarray:
    """Max pool; padded elements never win."""
    return _windows(x, k, stride, padding, -np.inf).max(axis=(4, 5))


def avg_pool(x: np.ndarray, k: int, stride: int, padding: str) -> np.ndarray:
    """Average pool dividing by the count of in-image elements, as TFLite does."""
    sums = _windows(x, k, stride, padding, 0.0).sum(axis=(4, 5))
    counts = _windows(np.ones_like(x[:1, ..., :1]), k, stride, padding, 0.0).sum(axis=(4, 5))
    return sums / counts


def forward(net: FloatNet, x: np.ndarray) -> dict[str, np.ndarray]:
    """Run the float network and return every activation by tensor name (``ACTIVATIONS``)."""
    acts = {"input": x}
    acts["conv1/relu"] = np.maximum(conv2d(x, net.w1, net.b1, 1, "SAME"), 0.0)
    acts["pool1"] = max_pool(acts["conv1/relu"], 2, 2, "VALID")
    acts["conv2/relu6"] = np.clip(conv2d(acts["pool1"], net.w2, net.b2, 2, "VALID"), 0.0, 6.0)
    acts["pool2"] = avg_pool(acts["conv2/relu6"], 5, 1, "VALID")
    acts["flatten"] = acts["pool2"].reshape(x.shape[0], -1)
    acts["logits"] = acts["flatten"] @ net.wfc.T + net.bfc
    return acts


def random_inputs(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` inputs uniform in [-1, 1) (a normalized image's range), stacked on axis 0."""
    return rng.uniform(-1.0, 1.0, size=(count,) + INPUT_SHAPE[1:])


def calibrate(net: FloatNet, xs: np.ndarray) -> dict[str, tuple[float, float]]:
    """Observed (min, max) of every activation over the calibration set ``xs``.

    Fused activations are part of the layer, so ranges are taken after them
    (RELU outputs start at 0, RELU6 outputs end at 6 at most), as the
    converter's calibrator records them.
    """
    acts = forward(net, xs)
    return {name: (float(a.min()), float(a.max())) for name, a in acts.items()}
