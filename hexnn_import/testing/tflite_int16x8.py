"""Build int16x8 TFLite models as TFLiteConverter's 16x8 mode writes them (tests only).

``EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8``: int16 activations with zero point 0 and
``scale = max|x| / 32767`` over a calibration batch (``tflite_quant.choose_params(..., symmetric=True)``),
int8 weights symmetric per output channel, int64 biases on ``s_in * s_w[c]``. Every layer is run in float
numpy on the calibration batch to fix its output scale, as the converter's calibration does::

    net = Int16x8Net(x_cal, float_io=True)
    y = net.conv(net.input, w, b, act="RELU")
    net.output(net.fc(net.reshape(y, [1, -1]), w2, b2))
    model = net.build()
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from hexnn_import.testing.tflite_builder import TFLiteBuilder
from hexnn_import.testing.tflite_quant import choose_params, quantize_per_channel, round_half_away

ACTS = {None: (-np.inf, np.inf), "RELU": (0.0, np.inf), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}


@dataclass
class T:
    """A tensor of the model being built: its index, float calibration values and int16 scale."""

    index: int
    real: np.ndarray
    scale: float


def _pad_same(x: np.ndarray, kh: int, kw: int, s: int = 1) -> np.ndarray:
    """TFLite's SAME padding for stride ``s``: ``max((ceil(n / s) - 1) s + k - n, 0)``, the smaller half first."""
    th, tw = (max((-(-n // s) - 1) * s + k - n, 0) for n, k in ((x.shape[1], kh), (x.shape[2], kw)))
    return np.pad(x, ((0, 0), (th // 2, th - th // 2), (tw // 2, tw - tw // 2), (0, 0)))


def conv_float(x: np.ndarray, w: np.ndarray, padding: str, depthwise: bool = False, stride: int = 1) -> np.ndarray:
    """NHWC correlation; ``w`` ``[O, H, W, I]`` (depthwise: ``[1, H, W, C * mult]``)."""
    kh, kw = w.shape[1], w.shape[2]
    xp = _pad_same(x, kh, kw, stride) if padding == "SAME" else x
    win = sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]  # [N, Ho, Wo, C, kh, kw]
    if depthwise:
        mult = w.shape[3] // x.shape[3]
        rep = np.repeat(win, mult, axis=3)
        return np.einsum("nhwcij,ijc->nhwc", rep, w[0])
    return np.einsum("nhwcij,oijc->nhwo", win, w)


class Int16x8Net:
    """A one-subgraph int16x8 model built layer by layer (module doc)."""

    def __init__(self, x_cal: np.ndarray, float_io: bool = False, name: str = "x") -> None:
        self.b = TFLiteBuilder("hexnn_import.testing.tflite_int16x8")
        self.n = 0
        self.float_io = float_io
        x_cal = np.asarray(x_cal, np.float64)
        shape = [1, *x_cal.shape[1:]]
        s = self._scale(x_cal)
        if float_io:
            self.float_in = self.b.add_tensor(name, shape, "float32")
            q = self.b.add_tensor(f"{name}_int16", shape, "int16", scale=s, zero_point=0)
            self.b.add_operator("QUANTIZE", [self.float_in], [q])
            self.in_index = self.float_in
        else:
            q = self.b.add_tensor(name, shape, "int16", scale=s, zero_point=0)
            self.in_index = q
        self.input = T(q, x_cal, s)
        self.outputs: list[int] = []

    @staticmethod
    def _scale(real: np.ndarray) -> float:
        return choose_params(float(real.min()), float(real.max()), np.int16, symmetric=True)[0]

    def _name(self, kind: str) -> str:
        self.n += 1
        return f"{kind}{self.n}"

    def _act(self, name: str, real: np.ndarray, scale: float | None = None) -> T:
        s = scale if scale is not None else self._scale(real)
        shape = [1, *real.shape[1:]]
        return T(self.b.add_tensor(name, shape, "int16", scale=s, zero_point=0), real, s)

    def _weights(self, name: str, w: np.ndarray, axis: int, x: T, b: np.ndarray) -> tuple[int, int, np.ndarray]:
        q, ws = quantize_per_channel(w, axis=axis)
        wi = self.b.add_const(f"{name}/w", q, np.int8, scale=ws, zero_point=np.zeros(ws.size, np.int64),
                              quantized_dimension=axis)
        bs = ws.astype(np.float64) * x.scale
        bq = round_half_away(np.asarray(b, np.float64) / bs).astype(np.int64)
        bi = self.b.add_const(f"{name}/b", bq, np.int64, scale=bs, zero_point=np.zeros(bs.size, np.int64))
        return wi, bi, q.astype(np.float64) * ws.reshape([-1 if i == axis else 1 for i in range(w.ndim)])

    def conv(self, x: T, w: np.ndarray, b: np.ndarray, padding: str = "SAME", act: str | None = None,
             depthwise: bool = False, stride: int = 1) -> T:
        name = self._name("dwconv" if depthwise else "conv")
        wi, bi, wq = self._weights(name, w, 3 if depthwise else 0, x, b)
        real = np.clip(conv_float(x.real, wq, padding, depthwise, stride) + b, *ACTS[act])
        y = self._act(name, real)
        opts = {"padding": padding, "stride_h": stride, "stride_w": stride}
        if depthwise:
            opts["depth_multiplier"] = w.shape[3] // x.real.shape[3]
        self.b.add_operator("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x.index, wi, bi], [y.index], opts,
                            fused_activation=act)
        return y

    def fc(self, x: T, w: np.ndarray, b: np.ndarray, act: str | None = None) -> T:
        name = self._name("fc")
        wi, bi, wq = self._weights(name, w, 0, x, b)
        real = np.clip(x.real.reshape(x.real.shape[0], -1) @ wq.T + b, *ACTS[act])
        y = self._act(name, real)
        self.b.add_operator("FULLY_CONNECTED", [x.index, wi, bi], [y.index], fused_activation=act)
        return y

    def pool(self, x: T, kind: str, k: int | tuple[int, int], stride: int | tuple[int, int],
             padding: str = "VALID") -> T:
        name = self._name(kind.lower())
        (kh, kw), (sh, sw) = ((k, k) if isinstance(k, int) else k), ((stride, stride) if isinstance(stride, int)
                                                                        else stride)
        src = _pad_same(x.real, kh, kw) if padding == "SAME" else x.real
        win = sliding_window_view(src, (kh, kw), axis=(1, 2))[:, ::sh, ::sw]
        real = win.max(axis=(4, 5)) if kind == "MAX_POOL_2D" else win.mean(axis=(4, 5))
        y = self._act(name, real, x.scale)
        self.b.add_operator(kind, [x.index], [y.index], {"padding": padding, "stride_h": sh, "stride_w": sw,
                                                          "filter_height": kh, "filter_width": kw})
        return y

    def reshape(self, x: T, shape: list[int]) -> T:
        name = self._name("reshape")
        real = x.real.reshape(x.real.shape[0], *shape[1:])
        y = self._act(name, real, x.scale)
        si = self.b.add_const(f"{name}/shape", np.asarray(shape, np.int32))
        self.b.add_operator("RESHAPE", [x.index, si], [y.index], {"new_shape": list(shape)})
        return y

    def pad(self, x: T, rows: list[tuple[int, int]]) -> T:
        name = self._name("pad")
        y = self._act(name, np.pad(x.real, [(0, 0)] + list(rows)), x.scale)
        pi = self.b.add_const(f"{name}/paddings", np.asarray([(0, 0)] + list(rows), np.int32))
        self.b.add_operator("PAD", [x.index, pi], [y.index])
        return y

    def expand_squeeze(self, x: T, axis: int) -> T:
        """EXPAND_DIMS at ``axis`` then SQUEEZE of it: the same values, through two shape ops."""
        name = self._name("expand")
        wide = self._act(name, np.expand_dims(x.real, axis), x.scale)
        ai = self.b.add_const(f"{name}/axis", np.asarray(axis, np.int32))
        self.b.add_operator("EXPAND_DIMS", [x.index, ai], [wide.index])
        y = self._act(self._name("squeeze"), x.real, x.scale)
        self.b.add_operator("SQUEEZE", [wide.index], [y.index], {"squeeze_dims": [axis]})
        return y

    def transpose(self, x: T, perm: list[int]) -> T:
        name = self._name("transpose")
        y = self._act(name, np.transpose(x.real, perm), x.scale)
        pi = self.b.add_const(f"{name}/perm", np.asarray(perm, np.int32))
        self.b.add_operator("TRANSPOSE", [x.index, pi], [y.index])
        return y

    def concat(self, xs: list[T], axis: int) -> T:
        name = self._name("concat")
        y = self._act(name, np.concatenate([x.real for x in xs], axis=axis))
        self.b.add_operator("CONCATENATION", [x.index for x in xs], [y.index], {"axis": axis})
        return y

    def binary(self, kind: str, a: T, c: T, act: str | None = None) -> T:
        name = self._name(kind.lower())
        real = np.clip(a.real + c.real if kind == "ADD" else a.real * c.real, *ACTS[act])
        y = self._act(name, real)
        opts = {"pot_scale_int16": False} if kind == "ADD" else None
        self.b.add_operator(kind, [a.index, c.index], [y.index], opts, fused_activation=act)
        return y

    def unary(self, kind: str, x: T) -> T:
        name = self._name(kind.lower())
        if kind == "SOFTMAX":
            e = np.exp(x.real - x.real.max(axis=-1, keepdims=True))
            return self._add_unary(kind, x, name, e / e.sum(axis=-1, keepdims=True), 1.0 / 32768)
        if kind == "MEAN":
            y = self._act(name, x.real.mean(axis=(1, 2), keepdims=True))
            ax = self.b.add_const(f"{name}/axes", np.asarray([1, 2], np.int32))
            self.b.add_operator("MEAN", [x.index, ax], [y.index], {"keep_dims": True})
            return y
        if kind in ("LOGISTIC", "TANH"):  # LiteRT's int16 kernels take the fixed output scale 1/32768
            real = 1.0 / (1.0 + np.exp(-x.real)) if kind == "LOGISTIC" else np.tanh(x.real)
            return self._add_unary(kind, x, name, real, 1.0 / 32768)
        if kind == "LEAKY_RELU":
            y = self._act(name, np.maximum(x.real, 0.2 * x.real))
            self.b.add_operator(kind, [x.index], [y.index], {"alpha": 0.2})
            return y
        return self._add_unary(kind, x, name, np.clip(x.real, *ACTS[kind]), None)

    def _add_unary(self, kind: str, x: T, name: str, real: np.ndarray, scale: float | None) -> T:
        y = self._act(name, real, scale)
        self.b.add_operator(kind, [x.index], [y.index])
        return y

    def output(self, y: T) -> None:
        """Mark ``y`` a model output (dequantized to float32 first with float I/O)."""
        if self.float_io:
            f = self.b.add_tensor(f"out{len(self.outputs)}", [1, *y.real.shape[1:]], "float32")
            self.b.add_operator("DEQUANTIZE", [y.index], [f])
            self.outputs.append(f)
        else:
            self.outputs.append(y.index)

    def build(self) -> bytes:
        self.b.set_io([self.in_index], self.outputs)
        return self.b.build()
