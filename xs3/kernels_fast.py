"""The exact fast forms of the XS3 kernels: a lowered layer in a few BLAS / integer passes (issue 11), same integers.

The literal kernels (:mod:`.kernels_conv`, :mod:`.kernels_depthwise`,
:mod:`.kernels_fc`) walk the VPU's steps: int8 patches, per-step
saturating accumulation, the output stage one VPU instruction at a time.
:class:`FastLayer` gets the same integers with less work wherever the
documents allow it:

- No step can saturate when ``|bias| + sum|w| * 128 <= 2**31 - 1`` for every
  channel (the check :func:`hexnn_import.xs3.vpu.vlmaccr` makes, lib_nn
  note 3), and then the accumulator is just ``bias + sum(x * w)`` in any
  order. It is computed as ``bias + zp * sum(w) + sum((x - zp) * w)``
  (``zp``: the input zero point, the value of implied padding taps), whose
  last term is the engine's exact centred product
  (:func:`hexnn_import.ops.conv_core.conv_sum_at`,
  :func:`hexnn_import.ops.depthwise_core.depthwise_sum_at`: float32 BLAS
  where the bound proves it exact, float64 otherwise) read straight from the
  graph's quint8 values (``x_u = x + 128``, ``zp_u = zp + 128``);
- the output stage is :class:`hexnn_import.xs3.fused_stage.FusedStage`,
  which writes quint8 codes directly.

Input channels the kernels pad to a multiple of 4 read zeros and carry zero
weights, so they are left out (checked when the plan is built); so are padded
output channels, which are dropped anyway. A layer whose accumulation can
saturate (then lib_nn's step order decides the result), whose window starts
inside the input, or whose output stage cannot be fused gets no FastLayer
(:func:`fast_layer` returns None) and runs through the literal kernels.

:class:`KernelCall` is what the fast form needs of one kernel call, so that
a lowered layer (:func:`fast_layer`) and a bare kernel call
(:func:`fast_call`, e.g. a golden case of lib_nn's C) get the same code.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.compiled import conv_sums, depthwise_sums
from hexnn_import.ops.conv_core import ConvGeometry, conv_plan, conv_sum_at
from hexnn_import.ops.depthwise_core import depthwise_plan, depthwise_sum_at
from hexnn_import.xs3.bso import unpack_bso
from hexnn_import.xs3.fused_stage import FusedStage, fused_stage
from hexnn_import.xs3.kernel_table import KernelCall
from hexnn_import.xs3.legalize import LoweredLayer
from hexnn_import.xs3.vpu import VPU_INT32_MAX, VPUOptions
from hexnn_import.xs3.window import Window

#: quint8 code = int8 code + 128
_Q_OFFSET = 128


def window_geometry(win: Window, x_hw: tuple[int, int], out_hw: tuple[int, int]) -> ConvGeometry | None:
    """The engine's :class:`ConvGeometry` of a lib_nn window (None for a window starting inside the input)."""
    if win.start_row > 0 or win.start_col > 0:
        return None
    top, left = -win.start_row, -win.start_col
    bottom = max(win.start_row + (out_hw[0] - 1) * win.stride_v + win.k_h - x_hw[0], 0)
    right = max(win.start_col + (out_hw[1] - 1) * win.stride_h + win.k_w - x_hw[1], 0)
    return ConvGeometry(out_hw[0], out_hw[1], top, bottom, left, right, win.stride_v, win.stride_h)


class FastLayer:
    """One kernel call as exact centred products plus the fused output stage, on quint8 graph values."""

    def __init__(self, call: KernelCall, hwio: np.ndarray, stage: FusedStage, geometry: ConvGeometry):
        self.call = call
        self.depthwise = call.desc.form == "depthwise"
        zp_u = call.zero_point + _Q_OFFSET
        self.plan = (depthwise_plan(hwio, 0, zp_u) if self.depthwise else conv_plan(hwio, 0, zp_u))
        self.stage = stage
        self.geometry = geometry
        self.fc = call.desc.form == "fc"
        self.in_shape = (call.rows, 1, 1, hwio.shape[2]) if self.fc else tuple(call.x_shape)
        self.out_shape = tuple(call.y_shape)

    def run_quint8(self, x_u8: np.ndarray) -> np.ndarray:
        """The layer's output as quint8 codes (int8 + 128) in the TFLite output shape, from quint8 input."""
        x = np.asarray(x_u8).reshape(self.in_shape)
        # the compiled exact sums where they apply (hexnn_import.ops.compiled), else numpy's
        if self.depthwise:
            sums = depthwise_sums(x, self.plan, self.geometry)  # type: ignore[arg-type]
            if sums is None:
                sums = depthwise_sum_at(x, self.plan, self.geometry)  # type: ignore[arg-type]
        else:
            sums = conv_sums(x, self.plan, self.geometry)  # type: ignore[arg-type]
            if sums is None:
                sums = conv_sum_at(x, self.plan, self.geometry)  # type: ignore[arg-type]
        return self.stage.apply(sums).reshape(self.out_shape)

    def run(self, x: np.ndarray) -> np.ndarray:
        """As the literal kernel (:meth:`LoweredLayer.run`): int8 in, int8 out."""
        x_u8 = np.asarray(x, dtype=np.int8).view(np.uint8) ^ np.uint8(_Q_OFFSET)
        return (self.run_quint8(x_u8) ^ np.uint8(_Q_OFFSET)).view(np.int8)


def fast_layer(lowered: LoweredLayer, options: VPUOptions) -> FastLayer | None:
    """The :class:`FastLayer` of a lowered 8-bit layer, or None when the literal kernel must run (module doc)."""
    return fast_call(lowered.call(), options)


def fast_call(call: KernelCall, options: VPUOptions) -> FastLayer | None:
    """The :class:`FastLayer` of one 8-bit kernel call, or None when the literal kernel must run (module doc)."""
    desc = call.desc
    if desc.hwio is None or call.out_bits != 8 or call.weights is None or call.bso is None:
        return None
    hwio, pad = desc.hwio(call)
    if np.any(pad):  # a padded input channel with a non-zero weight: the padding is not inert
        return None
    hwio = np.ascontiguousarray(hwio)
    y_real = hwio.shape[-1] if desc.form != "depthwise" else hwio.shape[2]
    p = unpack_bso(call.bso, y_real)
    bias = p.bias
    w64 = hwio.astype(np.int64)
    if desc.form == "depthwise":  # [K_h, K_w, C, 1]: one filter per channel
        w64, axes = w64[..., 0], (0, 1)
    else:  # HWIO: output channels last
        axes = (0, 1, 2)
    wsum = w64.sum(axis=axes)
    bound = np.abs(bias) + np.abs(w64).sum(axis=axes) * 128
    if np.any(bound > VPU_INT32_MAX):
        return None  # a step may saturate: only lib_nn's step-by-step accumulation is exact
    if desc.form == "fc":
        geometry: ConvGeometry | None = ConvGeometry(1, 1, 0, 0, 0, 0, 1, 1)
    else:
        assert call.window is not None
        geometry = window_geometry(call.window, tuple(call.x_shape[1:3]), tuple(call.y_shape[1:3]))
    if geometry is None:
        return None
    stage = fused_stage(p, bound, call.zero_point * wsum, options, out_offset=_Q_OFFSET)
    if stage is None:
        return None
    return FastLayer(call, hwio, stage, geometry)
