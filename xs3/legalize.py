"""Legalize: rewrite a replaced layer's weights into its kernel's layout and compute its BSO.

The second visible step of the lowering (tflite2xcore). The result, a
:class:`LoweredLayer`, holds exactly the arrays the device would get (kernel
-layout weights, the packed BSO tensor) and runs them through the simulated
kernel: the simulation reads its parameters back from the packed BSO, so
what is exported is what is checked.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from hexnn_import.xs3.bso import HEADROOM_8, BSOParams, bso_params, pack_bso
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernel_table import KernelCall, kernel_desc, run_fc16_native, run_literal
from hexnn_import.xs3.replace import XS3Op
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions


@dataclass
class LoweredLayer:
    """A layer after Legalize: kernel-layout weights, BSO tensor, and the simulated kernel call."""

    op: XS3Op
    weights: np.ndarray | None
    bso: np.ndarray | None
    params: BSOParams | None

    @property
    def kernel(self) -> str:
        return self.op.kernel

    def describe(self) -> dict[str, Any]:
        """Kernel name, shapes and window as plain JSON-ready values (manifest, npz, C header)."""
        d: dict[str, Any] = {"kernel": self.kernel, "input_shape": list(self.op.x_shape),
                             "output_shape": list(self.op.y_shape),
                             "weights_shape": list(self.weights.shape) if self.weights is not None else [],
                             "bso_shape": list(self.bso.shape) if self.bso is not None else [],
                             "zero_point": self.op.zero_point,
                             "output_dtype": "int16" if self.op.out_bits == 16 else "int8"}
        desc = kernel_desc(self.kernel)
        if self.op.params:
            d["params"] = dict(zip(desc.fields, self.op.params))
        if self.op.clamp is not None:
            d["clamp"] = list(self.op.clamp)
        w = self.op.window
        if w is not None:
            d["window"] = {"shape": [w.k_h, w.k_w], "start": [w.start_row, w.start_col],
                           "stride": [w.stride_v, w.stride_h]}
        return d

    @property
    def n_inputs(self) -> int:
        """Activation inputs the layer's kernel reads."""
        return kernel_desc(self.kernel).n_inputs

    def calls(self) -> list[tuple[KernelCall, str]]:
        """The kernel calls of the layer in order, with a label each: the kernel, then a clamp's lookup8."""
        out = [(self.call(), self.kernel)]
        if self.op.clamp is not None:
            from hexnn_import.xs3.kernels_misc import clamp_lut

            y = tuple(self.op.layer.y.shape)
            out.append((KernelCall("lookup8", None, None, 0, None, y, y, table=clamp_lut(*self.op.clamp)), "clamp"))
        return out

    def call(self) -> KernelCall:
        """The kernel call this layer makes (the kernel's descriptor runs it: :mod:`.kernel_table`)."""
        op = self.op
        return KernelCall(op.kernel, self.weights, self.bso, op.zero_point, op.window, tuple(op.layer.x.shape),
                          tuple(op.layer.y.shape), op.x_shape[0], op.out_bits, op.params, op.table)

    def run16(self, x: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
        """fully_connected_16's own int16 output ``[R, M]`` (output scale / 256, zero point x 256)."""
        if self.op.out_bits != 16:
            raise XS3Error(f"layer {self.op.layer.name}: {self.op.kernel} has no 16-bit output")
        return run_fc16_native(self.call(), x, options)

    def run(self, x: np.ndarray | Sequence[np.ndarray], options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
        """The layer on the simulated VPU (its kernel, then a clamp's lookup8): ``x`` int8 in the source input's
        shape (a list of them for a kernel with several inputs) -> the source output."""
        op = self.op
        xs = [np.asarray(v) for v in (x if isinstance(x, (list, tuple)) else [x])]
        for v, t in zip(xs, op.layer.inputs):
            if v.dtype != np.int8 or v.size != math.prod(t.shape):
                raise XS3Error(f"layer {op.layer.name}: expected int8 input of shape {list(t.shape)}, "
                               f"got {v.dtype} {list(v.shape)}")
        y = run_literal(self.call(), xs, options)
        if op.clamp is not None:  # the calls after the kernel's own (a clamp's lookup8)
            for call, _ in self.calls()[1:]:
                y = run_literal(call, [y], options)
        return y

    def kernels(self) -> list[str]:
        """The kernel of each of :meth:`calls`, without building the calls."""
        return [self.kernel] if self.op.clamp is None else [self.kernel, "lookup8"]


def weight_sums(op: XS3Op) -> np.ndarray:
    """Sum of each output channel's int8 weights (the input zero point's share of the bias)."""
    sums = kernel_desc(op.kernel).weight_sums
    assert sums is not None
    return sums(op.weights)


def layer_bso(op: XS3Op) -> BSOParams:
    """BSO parameters of the layer's real output channels, zero-extended to the kernel's padded channels."""
    layer = op.layer
    assert layer.bias is not None and layer.w_scales is not None
    n_real = layer.y.shape[-1]
    sums = weight_sums(op)[:n_real]
    s_out, zp_out = op.out_quant
    p = bso_params(layer.bias, sums, float(layer.x.scale), layer.x.int8_zero_point, layer.w_scales,  # type: ignore[arg-type]
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
    layout = kernel_desc(op.kernel).layout
    if layout is None:  # no weights: the parameters came from the quantization at Replace
        return LoweredLayer(op, None, None, None)
    assert op.weights is not None
    weights = layout(op.weights)
    params = layer_bso(op)
    return LoweredLayer(op, weights, pack_bso(params), params)
