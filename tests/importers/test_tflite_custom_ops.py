"""MediaPipe custom ops (Convolution2DTransposeBias, MaxPoolingWithArgmax2D, MaxUnpooling2D) against numpy.

The references here are numpy transcriptions of MediaPipe's C++ kernels
(google-ai-edge/mediapipe ``mediapipe/util/tflite/operations/``:
``transpose_conv_bias.cc`` TransposeConvBias + Prepare's output size,
``max_pool_argmax.cc`` MaxPoolArgmax, ``max_unpooling.cc`` MaxUnpooling),
run on one-op models made with the project's builder (the transposed
convolution also against LiteRT, whose default resolver carries MediaPipe's
kernel); the options are the raw C structs those kernels read. Inputs lie on an exact quint8 grid (the
engine's float input is quantized), so pooling and unpooling are exact;
the transposed convolution is checked by SQNR. The real MediaPipe models
are run against LiteRT in ``tests/real/test_real_models.py``.
"""
from __future__ import annotations

import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.litert import run_litert

SAME, VALID = 1, 2  # TfLitePadding


# ---- numpy references (MediaPipe's loops) -------------------------------------------------------------
def transpose_conv_bias_ref(x: np.ndarray, w: np.ndarray, bias: np.ndarray, padding: int, sw: int,
                            sh: int) -> np.ndarray:
    """transpose_conv_bias.cc: output starts at the bias; every input scatters ``x * w`` (OHWI weights)."""
    n, h, wd, _ = x.shape
    o, fh, fw, _ = w.shape
    ph = max(0, fh - (h - 1) % sh - 1) if padding == SAME else 0
    pw = max(0, fw - (wd - 1) % sw - 1) if padding == SAME else 0
    oh, ow = sh * (h - 1) + fh - ph, sw * (wd - 1) + fw - pw
    out = np.broadcast_to(bias.astype(np.float64), (n, oh, ow, o)).copy()
    for iy in range(h):
        for ix in range(wd):
            for fy in range(fh):
                for fx in range(fw):
                    oy, ox = iy * sh - ph // 2 + fy, ix * sw - pw // 2 + fx
                    if 0 <= oy < oh and 0 <= ox < ow:
                        out[:, oy, ox, :] += x[:, iy, ix, :].astype(np.float64) @ w[:, fy, fx, :].T
    return out


def _windowed(n: int, f: int, s: int, padding: int) -> tuple[int, int]:
    out = (n + s - 1) // s if padding == SAME else (n - f + s) // s
    return out, max(((out - 1) * s + f - n) // 2, 0)


def max_pool_argmax_ref(x: np.ndarray, fh: int, fw: int, sh: int, sw: int,
                        padding: int) -> tuple[np.ndarray, np.ndarray]:
    """max_pool_argmax.cc: per window the first strict maximum and ``fy * fw + fx + 0.1``."""
    n, h, w, c = x.shape
    (oh, pt), (ow, pl) = _windowed(h, fh, sh, padding), _windowed(w, fw, sw, padding)
    vals, idx = np.zeros((n, oh, ow, c), np.float32), np.zeros((n, oh, ow, c), np.float32)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for ch in range(c):
                    y0, x0 = oy * sh - pt, ox * sw - pl
                    best, by, bx = -np.inf, 0, 0
                    for fy in range(max(0, -y0), min(fh, h - y0)):
                        for fx in range(max(0, -x0), min(fw, w - x0)):
                            if x[b, y0 + fy, x0 + fx, ch] > best:
                                best, by, bx = x[b, y0 + fy, x0 + fx, ch], fy, fx
                    vals[b, oy, ox, ch], idx[b, oy, ox, ch] = best, by * fw + bx + np.float32(0.1)
    return vals, idx


def max_unpool_ref(x: np.ndarray, ind: np.ndarray, fh: int, fw: int, sh: int, sw: int) -> np.ndarray:
    """max_unpooling.cc: zeros, then each value written at its decoded window tap (in bounds only)."""
    n, h, w, c = x.shape
    oh, ow = h * fh, w * fw
    pt, pl = max(((h - 1) * sh + fh - oh) // 2, 0), max(((w - 1) * sw + fw - ow) // 2, 0)
    out = np.zeros((n, oh, ow, c), np.float32)
    for b in range(n):
        for iy in range(h):
            for ix in range(w):
                for ch in range(c):
                    k = int(ind[b, iy, ix, ch])
                    oy, ox = iy * sh - pt + k // fw, ix * sw - pl + k % fw
                    if 0 <= oy < oh and 0 <= ox < ow:
                        out[b, oy, ox, ch] = x[b, iy, ix, ch]
    return out


# ---- running builder-made models --------------------------------------------------------------------
def pool_params(padding: int, sw: int, sh: int, fw: int, fh: int) -> bytes:
    """A raw TfLitePoolParams (padding, strides, filter, activation NONE, computed padding 0)."""
    return struct.pack("<10i", padding, sw, sh, fw, fh, 0, 0, 0, 0, 0)


def run(model: bytes, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Import (no flags), prepare and run on the engine."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.tflite"
        path.write_bytes(model)
        g = hx.prepare(hx.import_model(path))
    return hx.Runner(g).run(feed)


def grid(rng: np.random.Generator, shape: tuple[int, ...], step: float = 0.05) -> np.ndarray:
    """Floats on an exact quint8 grid ``[0, 255 * step]`` (both ends present, so AutoQuantize keeps it)."""
    codes = rng.integers(0, 256, size=shape)
    codes.reshape(-1)[:2] = (0, 255)
    return (codes * step).astype(np.float32)


def sqnr(ref: np.ndarray, got: np.ndarray) -> float:
    noise = float(np.sum((ref - got) ** 2))
    return float("inf") if noise == 0 else 10 * np.log10(float(np.sum(ref ** 2)) / noise)


@pytest.mark.parametrize("padding,stride,f,hw", [(SAME, 2, 2, 8), (VALID, 2, 3, 5), (SAME, 2, 3, 6),
                                                 (SAME, 1, 3, 4), (VALID, 1, 2, 4)])
def test_convolution_2d_transpose_bias(padding: int, stride: int, f: int, hw: int) -> None:
    rng = np.random.default_rng(f * 10 + hw)
    x = rng.normal(size=(1, hw, hw, 4)).astype(np.float32)
    w = rng.normal(0, 0.3, size=(3, f, f, 4)).astype(np.float32)
    bias = rng.normal(0, 0.3, size=3).astype(np.float32)
    ref = transpose_conv_bias_ref(x, w, bias, padding, stride, stride)
    b = TFLiteBuilder()
    xi = b.add_tensor("x", x.shape, np.float32)
    y = b.add_tensor("y", ref.shape, np.float32)
    b.add_custom_operator("Convolution2DTransposeBias", [xi, b.add_const("w", w), b.add_const("b", bias)], [y],
                          struct.pack("<3i", padding, stride, stride))
    b.set_io([xi], [y])
    model = b.build()
    got = run(model, {"x": x})["y"]
    assert got.shape == ref.shape
    assert sqnr(ref, got) >= 30.0, sqnr(ref, got)
    # LiteRT's default resolver carries MediaPipe's kernel: it checks the numpy transcription too
    lite = run_litert(model, {"x": x}, kernels="auto")[0]
    np.testing.assert_allclose(lite, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("padding,f,s,hw", [(VALID, 2, 2, 8), (SAME, 2, 2, 7), (VALID, 3, 2, 9), (SAME, 3, 2, 8)])
def test_max_pooling_with_argmax_2d(padding: int, f: int, s: int, hw: int) -> None:
    rng = np.random.default_rng(hw)
    x = grid(rng, (1, hw, hw, 3))
    x[0, :2, :2, 0] = x[0, 0, 0, 0]  # a tie: the first tap in scan order wins
    vals, idx = max_pool_argmax_ref(x, f, f, s, s, padding)
    b = TFLiteBuilder()
    xi = b.add_tensor("x", x.shape, np.float32)
    vo, io = b.add_tensor("values", vals.shape, np.float32), b.add_tensor("indices", idx.shape, np.float32)
    b.add_custom_operator("MaxPoolingWithArgmax2D", [xi], [vo, io], pool_params(padding, s, s, f, f))
    b.set_io([xi], [vo, io])
    got = run(b.build(), {"x": x})
    np.testing.assert_allclose(got["values"], vals, atol=1e-5)
    np.testing.assert_allclose(got["indices"], idx, atol=1e-6)


def test_max_unpooling_2d() -> None:
    rng = np.random.default_rng(3)
    x = grid(rng, (1, 4, 5, 3))
    ind = (rng.integers(0, 4, size=x.shape) + 0.1).astype(np.float32)
    ref = max_unpool_ref(x, ind, 2, 2, 2, 2)
    b = TFLiteBuilder()
    xi, ii = b.add_tensor("x", x.shape, np.float32), b.add_tensor("ind", ind.shape, np.float32)
    y = b.add_tensor("y", ref.shape, np.float32)
    b.add_custom_operator("MaxUnpooling2D", [xi, ii], [y], pool_params(SAME, 2, 2, 2, 2))
    b.set_io([xi, ii], [y])
    got = run(b.build(), {"x": x, "ind": ind})["y"]
    np.testing.assert_allclose(got, ref, atol=1e-5)


def test_argmax_pool_then_unpool() -> None:
    """The pair as MediaPipe's segmentation models use it: pool with indices, unpool with them."""
    rng = np.random.default_rng(4)
    x = grid(rng, (1, 6, 8, 2))
    vals, idx = max_pool_argmax_ref(x, 2, 2, 2, 2, SAME)
    ref = max_unpool_ref(vals, idx, 2, 2, 2, 2)
    b = TFLiteBuilder()
    xi = b.add_tensor("x", x.shape, np.float32)
    vo, io = b.add_tensor("values", vals.shape, np.float32), b.add_tensor("indices", idx.shape, np.float32)
    y = b.add_tensor("y", ref.shape, np.float32)
    b.add_custom_operator("MaxPoolingWithArgmax2D", [xi], [vo, io], pool_params(SAME, 2, 2, 2, 2))
    b.add_custom_operator("MaxUnpooling2D", [vo, io], [y], pool_params(SAME, 2, 2, 2, 2))
    b.set_io([xi], [y])
    np.testing.assert_allclose(run(b.build(), {"x": x})["y"], ref, atol=1e-5)


def test_refusals_name_the_reason() -> None:
    """Overlapping unpooling windows and unparsable options are refused with the reason, not mis-mapped."""
    from hexnn_import.errors import UnsupportedOpsError

    b = TFLiteBuilder()
    xi, ii = b.add_tensor("x", (1, 4, 4, 1), np.float32), b.add_tensor("ind", (1, 4, 4, 1), np.float32)
    y = b.add_tensor("y", (1, 12, 12, 1), np.float32)
    b.add_custom_operator("MaxUnpooling2D", [xi, ii], [y], pool_params(SAME, 2, 2, 3, 3))
    z = b.add_tensor("z", (1, 8, 8, 1), np.float32)
    b.add_custom_operator("Convolution2DTransposeBias", [xi, b.add_const("w", np.ones((1, 2, 2, 1), np.float32)),
                                                         b.add_const("b", np.zeros(1, np.float32))], [z], b"\x01")
    b.set_io([xi, ii], [y, z])
    with pytest.raises(UnsupportedOpsError, match="stride = filter") as e:
        run(b.build(), {})
    assert "TfLiteTransposeConvParams" in str(e.value)
