"""Legalize: rewrite a replaced layer's weights into its kernel's layout and compute its BSO.

The second visible step of the lowering (tflite2xcore). The result, a
:class:`LoweredLayer`, holds exactly the arrays the device would get (kernel
-layout weights, the packed BSO tensor) and runs them through the simulated
kernel: the simulation reads its parameters back from the packed BSO, so
what is exported is what is checked.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from hexnn_import.xs3.bso import HEADROOM_8, BSOParams, bso_params, pack_bso
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_conv import (conv1x1_weights, conv2d_1x1, conv2d_deep, conv2d_shallowin, deep_weights,
                                           shallowin_weights)
from hexnn_import.xs3.kernels_depthwise import conv2d_depthwise, depthwise_weights
from hexnn_import.xs3.kernels_fc import fc_weights, fully_connected_16, fully_connected_8, pad_inputs
from hexnn_import.xs3.replace import XS3Op, pad_axis
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions, vdepth8

#: kernel -> weights in kernel layout from the XS3Op's canonical weights
LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "conv2d_deep": deep_weights, "conv2d_shallowin": shallowin_weights, "conv2d_1x1": conv1x1_weights,
    "conv2d_depthwise": depthwise_weights, "fully_connected_8": fc_weights, "fully_connected_16": fc_weights,
}


@dataclass
class LoweredLayer:
    """A layer after Legalize: kernel-layout weights, BSO tensor, and the simulated kernel call."""

    op: XS3Op
    weights: np.ndarray
    bso: np.ndarray
    params: BSOParams

    @property
    def kernel(self) -> str:
        return self.op.kernel

    def describe(self) -> dict[str, Any]:
        """Kernel name, shapes and window as plain JSON-ready values (manifest, npz, C header)."""
        d: dict[str, Any] = {"kernel": self.kernel, "input_shape": list(self.op.x_shape),
                             "output_shape": list(self.op.y_shape), "weights_shape": list(self.weights.shape),
                             "bso_shape": list(self.bso.shape), "zero_point": self.op.zero_point,
                             "output_dtype": "int16" if self.op.out_bits == 16 else "int8"}
        w = self.op.window
        if w is not None:
            d["window"] = {"shape": [w.k_h, w.k_w], "start": [w.start_row, w.start_col],
                           "stride": [w.stride_v, w.stride_h]}
        return d

    def run_native(self, x: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
        """A fully-connected layer's int8 output ``[R, M]``; fully_connected_16's int16 output reduced by VDEPTH8."""
        if self.op.kernel == "fully_connected_16":
            lo, hi = options.output_bounds
            return np.clip(vdepth8(self.run16(x, options)), lo, hi).astype(np.int8)
        xk = pad_inputs(np.asarray(x).reshape(-1, self.op.x_shape[1]), self.weights.shape[1])
        return fully_connected_8(xk, self.weights, self.bso, options)

    def run16(self, x: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
        """fully_connected_16's own int16 output ``[R, M]`` (output scale / 256, zero point x 256)."""
        op = self.op
        if op.kernel != "fully_connected_16":
            raise XS3Error(f"layer {op.layer.name}: {op.kernel} has no 16-bit output")
        xk = pad_inputs(np.asarray(x).reshape(-1, op.x_shape[1]), self.weights.shape[1])
        return fully_connected_16(xk, self.weights, self.bso, options)

    def run(self, x: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
        """The layer on the simulated VPU: ``x`` int8 in the TFLite input's shape -> the TFLite output."""
        op = self.op
        x = np.asarray(x)
        if x.dtype != np.int8 or x.size != int(np.prod(op.layer.x.shape)):
            raise XS3Error(f"layer {op.layer.name}: expected int8 input of shape {list(op.layer.x.shape)}, "
                           f"got {x.dtype} {list(x.shape)}")
        if op.kernel.startswith("fully_connected"):
            return self.run_native(x, options).reshape(op.layer.y.shape)
        xk = pad_axis(x.reshape(op.layer.x.shape), 3, op.x_shape[3])
        out_hw = (op.y_shape[1], op.y_shape[2])
        win = op.window
        assert win is not None
        if op.kernel == "conv2d_1x1":
            y = conv2d_1x1(xk, self.weights, self.bso, options)
        elif op.kernel == "conv2d_depthwise":
            y = conv2d_depthwise(xk, self.weights, self.bso, op.zero_point, win, out_hw, options)
        elif op.kernel == "conv2d_shallowin":
            y = conv2d_shallowin(xk, self.weights, self.bso, op.zero_point, win, out_hw, options)
        else:
            y = conv2d_deep(xk, self.weights, self.bso, op.zero_point, win, out_hw, options)
        return y[..., :op.layer.y.shape[3]].reshape(op.layer.y.shape)


def weight_sums(op: XS3Op) -> np.ndarray:
    """Sum of each output channel's int8 weights (the input zero point's share of the bias)."""
    w = op.weights.astype(np.int64)
    if op.kernel == "conv2d_depthwise":
        return w[0].sum(axis=(0, 1))
    return w.reshape(w.shape[0], -1).sum(axis=1)


def layer_bso(op: XS3Op) -> BSOParams:
    """BSO parameters of the layer's real output channels, zero-extended to the kernel's padded channels."""
    layer = op.layer
    assert layer.bias is not None and layer.w_scales is not None
    n_real = layer.y.shape[-1]
    sums = weight_sums(op)[:n_real]
    s_out, zp_out = op.out_quant
    p = bso_params(layer.bias, sums, float(layer.x.scale), int(layer.x.zero_point or 0), layer.w_scales,  # type: ignore[arg-type]
                   s_out, zp_out, op.out_bits)
    n_kernel = op.y_shape[-1]
    if n_kernel > n_real:  # padded depthwise channels: scale 0 (outputs 0, then dropped), a valid shift2
        extra = n_kernel - n_real
        p = BSOParams(*(np.pad(getattr(p, f), (0, extra)) for f in
                        ("bias", "shift1", "scale", "offset_scale", "offset")),
                      np.pad(p.shift2, (0, extra), constant_values=14 + HEADROOM_8))
    return p


def legalize(op: XS3Op) -> LoweredLayer:
    """Kernel-layout weights and the packed BSO of a replaced layer (XS3Error / BSOError when impossible)."""
    weights = LAYOUTS[op.kernel](op.weights)
    params = layer_bso(op)
    return LoweredLayer(op, weights, pack_bso(params), params)
