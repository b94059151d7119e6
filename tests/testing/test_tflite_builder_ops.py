"""Each builtin op the builder knows gets its options written right: one-op float models vs numpy.

The cases are data: op name, graph inputs (fed at run time), constant inputs,
options, and the numpy result.  LiteRT runs with TFLite's builtin kernels.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder, quantize_per_tensor, run_litert

RNG = np.random.default_rng(11)
X = RNG.normal(size=(1, 5, 5, 2)).astype(np.float32)
Y = RNG.normal(size=(1, 5, 5, 2)).astype(np.float32)
DW = RNG.normal(size=(1, 3, 3, 4)).astype(np.float32)
DB = RNG.normal(size=(4,)).astype(np.float32)
PADS = np.array([[0, 0], [1, 2], [0, 1], [0, 0]], np.int32)


def _depthwise(x: np.ndarray, w: np.ndarray, b: np.ndarray, mult: int) -> np.ndarray:
    """VALID, stride 1: out[..., c*mult + m] = sum x[..., c] * w[0, :, :, c*mult + m] + b."""
    _, h, wd, _ = x.shape
    kh, kw = w.shape[1:3]
    xr = np.repeat(x.astype(np.float64), mult, axis=3)
    out = np.zeros((1, h - kh + 1, wd - kw + 1, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += xr[:, i:i + out.shape[1], j:j + out.shape[2]] * w[0, i, j]
    return out + b


def _avg_pool_same_2x2_s2(x: np.ndarray) -> np.ndarray:
    """SAME on 5 -> 3: windows start at 0, 2, 4; the last one holds one row/column."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=np.nan)
    win = xp.reshape(1, 3, 2, 3, 2, x.shape[3])
    return np.nanmean(win, axis=(2, 4))


def _softmax(x: np.ndarray, beta: float) -> np.ndarray:
    e = np.exp(beta * (x - x.max(axis=-1, keepdims=True)))
    return e / e.sum(axis=-1, keepdims=True)


# (id, op, runtime inputs, constant inputs, options, expected(numpy), output shape)
Case = tuple[str, str, list[np.ndarray], list[np.ndarray], dict[str, Any], Callable[[], np.ndarray]]
CASES: list[Case] = [
    ("depthwise", "DEPTHWISE_CONV_2D", [X], [DW, DB], {"padding": "VALID", "depth_multiplier": 2},
     lambda: _depthwise(X, DW, DB, 2)),
    ("avg_pool_same", "AVERAGE_POOL_2D", [X], [], {"padding": "SAME", "stride_w": 2, "stride_h": 2,
                                                   "filter_width": 2, "filter_height": 2},
     lambda: _avg_pool_same_2x2_s2(X)),
    ("reshape", "RESHAPE", [X], [np.array([5, 10], np.int32)], {"new_shape": [5, 10]},
     lambda: X.reshape(5, 10)),
    ("softmax_beta", "SOFTMAX", [X.reshape(5, 10)], [], {"beta": 0.5},
     lambda: _softmax(X.reshape(5, 10).astype(np.float64), 0.5)),
    ("mul_relu", "MUL", [X, Y], [], {"fused_activation_function": "RELU"}, lambda: np.maximum(X * Y, 0)),
    ("sub", "SUB", [X, Y], [], {}, lambda: X - Y),
    ("concat", "CONCATENATION", [X, Y], [], {"axis": 3}, lambda: np.concatenate([X, Y], axis=3)),
    ("pad", "PAD", [X], [PADS], {}, lambda: np.pad(X, PADS)),
    ("mean_keep", "MEAN", [X], [np.array([1, 2], np.int32)], {"keep_dims": True},
     lambda: X.astype(np.float64).mean(axis=(1, 2), keepdims=True)),
    ("mean_drop", "MEAN", [X], [np.array([1, 2], np.int32)], {"keep_dims": False},
     lambda: X.astype(np.float64).mean(axis=(1, 2))),
    ("relu", "RELU", [X], [], {}, lambda: np.maximum(X, 0)),
    ("relu6", "RELU6", [X * 4], [], {}, lambda: np.clip(X * 4, 0, 6)),
    ("logistic", "LOGISTIC", [X], [], {}, lambda: 1 / (1 + np.exp(-X.astype(np.float64)))),
    ("tanh", "TANH", [X], [], {}, lambda: np.tanh(X.astype(np.float64))),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_float_op_matches_numpy(case: Case) -> None:
    _, op, feeds, consts, options, expected = case
    want = np.asarray(expected())
    b = TFLiteBuilder()
    ins = [b.add_tensor(f"in{i}", a.shape, a.dtype) for i, a in enumerate(feeds)]
    ins += [b.add_const(f"const{i}", c) for i, c in enumerate(consts)]
    out = b.add_tensor("out", want.shape, np.float32)
    b.add_operator(op, ins, [out], options)
    b.set_io(ins[:len(feeds)], [out])
    (got,) = run_litert(b.build(), feeds)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


def test_quantize_dequantize_round_trip() -> None:
    x = (RNG.normal(size=(1, 4, 4, 3)) * 3).astype(np.float32)
    b = TFLiteBuilder()
    xt = b.add_tensor("x", x.shape, np.float32)
    qt = b.add_tensor("q", x.shape, np.int8, scale=0.05, zero_point=3)
    yt = b.add_tensor("y", x.shape, np.float32)
    b.add_operator("QUANTIZE", [xt], [qt], version=2)
    b.add_operator("DEQUANTIZE", [qt], [yt], version=2)
    b.set_io([xt], [qt, yt])
    got = run_litert(b.build(), {"x": x}, as_dict=True)
    q = quantize_per_tensor(x, np.float32(0.05), 3, np.int8)
    np.testing.assert_array_equal(got["q"], q)
    np.testing.assert_allclose(got["y"], (q.astype(np.float32) - 3) * np.float32(0.05), rtol=1e-6)


def test_unknown_option_field_is_rejected() -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 2], np.float32)
    with pytest.raises(ValueError, match="no field 'strides'"):
        b.add_operator("SOFTMAX", [x], [x], {"strides": 2})
    with pytest.raises(ValueError, match="no options table"):
        b.add_operator("RELU", [x], [x], {"beta": 1.0})
