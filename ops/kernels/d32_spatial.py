"""Spatial _d32 ops: QuantizedMaxPool/AvgPool/L2Pool_8_d32, QuantizedResizeBilinear_8_d32,
QuantizedConcat_8_d32 (SEMANTICS.md §3, §6, §7; op texts).

Max / L2 pools are their flat twins (``kernels/pool.py``, ``kernels/l2pool.py``) on the
logical data, padding (NN_PAD_*) from the node as for the flat ops; AvgPool and
ResizeBilinear follow their device code (op_avgpool_d32.c, op_resizebilinear_d32.c; issue 36:
:mod:`hexnn_import.ops.nnlib_avgpool_d32`, :mod:`hexnn_import.ops.nnlib_resize_d32`), within one
code of the flat ops. Concat joins along any dimension 0..3, as its d32
text says, with the device's own range and requantization (op_concat_d32.c,
``nnlib_concat_d32.py``), not the flat QuantizedConcat_8's.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from hexnn_import.ops.d32 import D32Tensor
from hexnn_import.ops.d32_io import D32Twin, d32_output, logical_input, run_flat
from hexnn_import.ops.int_params import int_values
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.kernels.pool import _Pool
from hexnn_import.ops.movement_io import check_out_shape, dim_param
from hexnn_import.ops.nnlib_avgpool_d32 import (
    PlanAxis,
    integral_codes,
    padding_is_enough_to_zap,
    plan_axis,
    zapped_3x3_codes,
)
from hexnn_import.ops.nnlib_concat_d32 import concat_d32_range, concat_d32_requantize
from hexnn_import.ops.nnlib_f32 import F
from hexnn_import.ops.nnlib_f32_nonlin import read_any_range
from hexnn_import.ops.nnlib_maxpool_d32 import (
    collapse,
    defect_reason,
    device_codes,
    path_shift,
)
from hexnn_import.ops.nnlib_reduce_device import (
    avgpool_1x1_codes,
    avgpool_1x1_scaling,
    avgpool_1x1_zero_lane,
)
from hexnn_import.ops.nnlib_resize_d32 import general_codes, x2_codes
from hexnn_import.ops.registry import PAD_VALID, Kernel, KernelContext, register
from hexnn_import.ops.windows import Axis

from hexnn_import.errors import DeviceDefectWarning


@register("QuantizedMaxPool_8_d32")
class QuantizedMaxPool8D32(D32Twin):
    """QuantizedMaxPool_8 on d32 data; the range passes through. On an input whose left padding is not 4, as
    the device computes it (:mod:`hexnn_import.ops.nnlib_maxpool_d32`, issue 36): the 2x2 / 2, 3x3 / 1 and 3x3 /
    2 asm slices' windows moved by whole columns, SAME's zap of the wrong left columns; a DeviceDefectWarning
    where that differs from the pool."""

    FLAT_OP = "QuantizedMaxPool_8"

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        """The flat twin, or the device's reading of the padded buffer on a left padding other than 4."""
        src = inputs[0]
        if not isinstance(src, D32Tensor) or src.left == 4:
            return super().compute(ctx, *inputs)
        flat = self.flat_inputs(ctx, inputs)
        x, mn, mx, rows, cols = _Pool.geometry(self, ctx, tuple(flat))  # type: ignore[arg-type]
        if 0 in x.shape:
            return super().compute(ctx, *inputs)
        if src.left < collapse(cols).before or src.left + src.right < collapse(cols).after:
            raise ctx.fail(f"input left / right padding {src.left} / {src.right} is short of the window's "
                           f"{cols.before} / {cols.after} columns (maxpool_execute: insufficient width padding)")
        path = path_shift(rows, cols, src)
        if path is None:
            return super().compute(ctx, *inputs)
        codes = device_codes(src, rows, cols, ctx.padding != PAD_VALID, path)
        if codes is None:
            raise ctx.fail(f"on left padding {src.left} the device's {cols.window}x{rows.window} window reads "
                           "outside the input's buffer (op_maxpool_d32.c)")
        outs = run_flat(ctx, self.FLAT_OP, flat)
        if np.array_equal(codes, outs[0]):
            return (d32_output(outs[0]), *outs[1:])
        same = ctx.padding != PAD_VALID
        warnings.warn(f"{ctx.node} ({ctx.op}): on an input left padding of {src.left} (not 4) "
                      f"{defect_reason(path, src.left, same)} (op_maxpool_d32.c), as here", DeviceDefectWarning,
                      stacklevel=2)
        return (d32_output(codes), *range_out(mn, mx))


@register("QuantizedAvgPool_8_d32")
class QuantizedAvgPool8D32(D32Twin):
    """QuantizedAvgPool_8 on d32 data as the device computes it (op_avgpool_d32.c, issue 36); the range passes
    through, but where the output is 1x1 (``avgpool_special_reduce_to_1x1``): the sum of the window's in-bounds
    taps per batch and channel, an output range made from the least and largest sum (``quantize_adjust_range``;
    depth-padding lanes count as the zero sum, as the C means: its byte mask lets the padding's own sums through
    on the device, which the engine does not model) and the sums scaled to it
    (:mod:`hexnn_import.ops.nnlib_reduce_device`). Other outputs: the asm 3x3 / stride 1 path with its edge zaps,
    the 2x2 / stride-w 2 path (the flat twin's bytes) or the integral buffer
    (:mod:`hexnn_import.ops.nnlib_avgpool_d32`)."""

    FLAT_OP = "QuantizedAvgPool_8"

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        """The device's path for the output's shape (the 2x2 one as the flat twin)."""
        flat = self.flat_inputs(ctx, inputs)
        x, mn, mx, rows, cols = _Pool.geometry(self, ctx, tuple(flat))  # type: ignore[arg-type]
        codes = None if 0 in x.shape or min(rows.out, cols.out) < 1 or (rows.out, cols.out) == (1, 1) \
            else _device_codes(x, rows, cols, inputs[0])
        if codes is not None:
            return (d32_output(codes), *range_out(mn, mx))
        if (rows.out, cols.out) != (1, 1) or 0 in x.shape:
            outs = run_flat(ctx, self.FLAT_OP, flat)
            return (d32_output(outs[0]), *outs[1:])
        (r0, r1), (c0, c1) = _span(rows), _span(cols)
        sums = x[:, r0:r1, c0:c1, :].sum(axis=(1, 2), keepdims=True, dtype=np.int64)
        count = (r1 - r0) * (c1 - c0)
        lo, hi = F(mn), F(mx)
        s_min, s_max = int(sums.min()), int(sums.max())
        src = inputs[0]
        if isinstance(src, D32Tensor) and (src.before or (src.before + src.shape[3]) % 32):
            zero_lane = avgpool_1x1_zero_lane(count, lo, hi)
            s_min, s_max = min(s_min, zero_lane), max(s_max, zero_lane)
        out_min, out_max, offset, scale_fac, rsh = avgpool_1x1_scaling(s_min, s_max, count, lo, hi)
        codes = avgpool_1x1_codes(sums, offset, scale_fac, rsh)
        return (d32_output(codes), *range_out(float(out_min), float(out_max)))


def _plan(axis: Axis) -> PlanAxis:
    return plan_axis(axis.size, axis.window, axis.stride, axis.out, axis.before, axis.after)


def _device_codes(x: np.ndarray, rows: Axis, cols: Axis, src: Any) -> np.ndarray | None:
    """The codes of ``avgpool_execute``'s path for an output that is not 1x1 (op_avgpool_d32.c): the asm 3x3 /
    stride 1 slice where the input's d32 padding leaves room for its zaps, else None for the 2x2 / stride-w 2
    path (the flat twin's bytes), else the integral buffer."""
    pr, pc = _plan(rows), _plan(cols)
    pads = src.padding[:4] if isinstance(src, D32Tensor) else (4, 4, 4, 4)
    if ((pr.window, pc.window, pr.stride, pc.stride) == (3, 3, 1, 1) and min(pr.size, pc.size) > 1
            and padding_is_enough_to_zap(pr, pc, *pads)):
        return zapped_3x3_codes(x, bool(pr.before or pr.after), bool(pc.before or pc.after))
    if (pr.window, pc.window, pc.stride) == (2, 2, 2):
        return None
    return integral_codes(x, pr, pc)


def _span(axis: Axis) -> tuple[int, int]:
    """The in-bounds taps ``[lo, hi)`` of the one output position along ``axis`` (what the device's plan sums
    there: setup_integral_buffer_plan trims the input to the window when an output dimension is 1)."""
    start = -axis.before
    return max(start, 0), min(start + axis.window, axis.size)


@register("QuantizedL2Pool_8_d32")
class QuantizedL2Pool8D32(D32Twin):
    """QuantizedL2Pool_8 on d32 data (output range ``[0, in_max - in_min]``)."""

    FLAT_OP = "QuantizedL2Pool_8"


@register("QuantizedResizeBilinear_8_d32")
class QuantizedResizeBilinear8D32(D32Twin):
    """QuantizedResizeBilinear_8 on d32 data (size ``{h_out, w_out}``, optional align_corners) as the device
    computes it (op_resizebilinear_d32.c, issue 36; :mod:`hexnn_import.ops.nnlib_resize_d32`): the same size
    copied, an exact 2x without align corners on an even left padding by the asm's truncating averages, any
    other size by the HVX general path's fixed-point steps; the range passes through."""

    FLAT_OP = "QuantizedResizeBilinear_8"

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        """``(d32 data, min, max)``."""
        flat = self.flat_inputs(ctx, inputs)
        x = flat[0]
        h_out, w_out = int_values(ctx, flat[1], "output size {h_out, w_out}", (2,))
        b, h, w, d = np.shape(x)
        if (h_out, w_out) == (h, w) or h_out < 1 or w_out < 1 or min(b, h, w, d) < 1:
            outs = run_flat(ctx, self.FLAT_OP, flat)
            return (d32_output(outs[0]), *outs[1:])
        mn, mx = ctx.scalar(flat[2], "input min"), ctx.scalar(flat[3], "input max")
        align = False
        if len(flat) > 4:
            raw = np.ascontiguousarray(flat[4])
            align = bool(raw.view(np.uint8)[:4].any()) if raw.nbytes >= 4 else bool(raw.any())
        left = inputs[0].left if isinstance(inputs[0], D32Tensor) else 4
        codes = np.asarray(x, np.uint8)
        if not align and (h_out, w_out) == (2 * h, 2 * w) and left % 2 == 0:
            out = x2_codes(codes, left)
        else:
            out = general_codes(codes, h_out, w_out, align)
        return (d32_output(out), *range_out(mn, mx))


@register("QuantizedConcat_8_d32")
class QuantizedConcat8D32(Kernel):
    """Concatenate n d32 quint8 tensors along dimension 0..3, requantized to the merged range.

    Inputs (3n+1): dimension, n d32 data tensors, n mins, n maxes (op text).
    Output range and each input's requantization as the device computes them
    (op_concat_d32.c, :mod:`hexnn_import.ops.nnlib_concat_d32`: the merged range
    zero-fixed, an offset in 1/128 codes, a product floored at 1/256 - not
    QuantizedConcat_8's arithmetic); an input whose range maps unchanged is
    copied. The inputs may have any padding (alignment) each: only their logical
    data is read. All other dimensions must match; ranges are read as given (finite).
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        if (len(inputs) - 1) % 3 or len(inputs) < 4:
            raise ctx.fail(f"got {len(inputs)} inputs, expected 3n+1 (dimension, n data, n mins, n maxes)")
        n = (len(inputs) - 1) // 3
        dim = dim_param(ctx, inputs[0], "dimension")
        datas = [logical_input(ctx, inputs[1 + i], f"input data {i}") for i in range(n)]
        # the device reads any finite ranges as given (op_concat_d32.c checks none)
        ranges = [read_any_range(ctx, inputs[1 + n + i], inputs[1 + 2 * n + i], f"input {i}") for i in range(n)]
        others = [ax for ax in range(4) if ax != dim]
        for i, x in enumerate(datas):
            if [x.shape[ax] for ax in others] != [datas[0].shape[ax] for ax in others]:
                raise ctx.fail(f"input data {i} has shape {list(x.shape)}, input data 0 has "
                               f"{list(datas[0].shape)}: all dimensions but {dim} must match")
        out_min, out_max = (float(v) for v in concat_d32_range(ranges))
        if not math.isfinite(out_max - out_min):
            raise ctx.fail(f"merged range [{out_min}, {out_max}] is too wide to represent")
        shape = list(datas[0].shape)
        shape[dim] = sum(x.shape[dim] for x in datas)
        check_out_shape(ctx, tuple(shape))
        parts = [concat_d32_requantize(x, mn, mx, out_min, out_max) for x, (mn, mx) in zip(datas, ranges)]
        return (d32_output(np.concatenate(parts, axis=dim)), *range_out(out_min, out_max))
