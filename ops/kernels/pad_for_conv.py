"""QuantizedPadForConv_8_d32: zero-pad d32 data so that a VALID convolution gives what a padded one would
(hexagon_nn 2.14.1 ops/src/op_pad_d32.c, ``is_padforconv``; prepare_utils.c handle_oversize_d32_supernode
inserts it in front of a d32 supernode whose filter is too large for the d32 padding).

Inputs: data (d32), in_min, in_max, the convolution's weights (only ``filt_height``, ``filt_width`` =
dims 0, 1 of its shape are read) and stride (dims 1, 2 of its shape). The node's padding (SAME,
SAME_CAFFE, NA, VALID) decides the amounts: per spatial axis ``nn_pad_compute_outsize_and_pad``
(include/nn_graph_padding.h), an output size below 1 an error, a negative after-padding (windows that
leave input unused) taken as 0. VALID pads nothing: the device copies the input (checked under emulation,
issue 36), though prepare.c only puts the op before padded convolutions. The fill code is quantized 0.0 on
the input range (``pad32_setup_scaling``): ``saturate_u8(roundf_i32((0 - in_min) * 255 / (in_max -
in_min)))`` in float32. Outputs: the padded data, then in_min and in_max copied.

The kernel works on the logical data (nnlib's copy is the memcpy manager's 2-D copies and fills, no
arithmetic besides the fill code) and lays the result out with the default d32 padding; the output
padding op_pad_d32.c asks for (4 left, 4 top/bottom, right to a multiple of 4) is the default too.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.ops.d32_io import d32_output, logical_input
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.nnlib_f32 import F, roundf_i32
from hexnn_import.ops.padding import nn_outsize_padding
from hexnn_import.ops.registry import Kernel, KernelContext, register


#: ``ctx.state`` key of the node's plan: (key, the inputs it was made from, plan)
_PLAN_KEY = "_cache.pad_for_conv"


def pad_for_conv_amounts(ctx: KernelContext, size: int, filt: int, stride: int) -> tuple[int, int]:
    """``(before, after)`` along one axis (pad32_build_strategy's PadForConv branch)."""
    if stride < 1 or filt < 1:
        raise ctx.fail(f"filter size {filt} and stride {stride} must be >= 1")
    out, before, after = nn_outsize_padding(size, filt, stride, ctx.padding)
    if out < 1:
        raise ctx.fail(f"invalid size/filter/padding: input {size}, filter {filt}, stride {stride}, "
                       f"padding {ctx.padding} give no output")
    return before, max(after, 0)


def zero_code(in_min: float, in_max: float) -> int:
    """pad32_setup_scaling for an 8-bit pad value of 0.0: ``saturate_u8(roundf_i32((0 - min) * 255 / range))``
    with float32 arithmetic."""
    mn, mx = F(in_min), F(in_max)
    with np.errstate(divide="ignore", invalid="ignore"):  # an empty range: the C's division gives inf/NaN too
        q = F(F(F(F(0.0) - mn) * F(255.0)) / F(mx - mn))
    return int(np.clip(roundf_i32(q), 0, 255)) if np.isfinite(q) else (255 if q > 0 else 0)


def _dims(ctx: KernelContext, arr: Any, what: str) -> tuple[int, ...]:
    shape = tuple(int(d) for d in np.shape(arr))
    if len(shape) != 4:
        raise ctx.fail(f"{what} has shape {list(shape)}, expected 4 dimensions")
    return shape


@register("QuantizedPadForConv_8_d32")
class QuantizedPadForConv8D32(Kernel):
    """Pad d32 quint8 data in height and width for a VALID convolution with this filter and stride."""

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        x = logical_input(ctx, inputs[0], "input 0 (data)")
        kept = ctx.state.get(_PLAN_KEY)
        if kept is not None and kept[0] == (x.shape, tuple(map(id, inputs[1:]))):
            return self.padded(x, *kept[2])
        plan = self.plan(ctx, x, inputs)
        # the very same other inputs (held, so their ids stay theirs) give the same plan (speed, issue 37); the
        # range outputs are then the same read-only arrays on every run, as a replayed node's (node_cache.Replay)
        plan[-2].flags.writeable = plan[-1].flags.writeable = False
        ctx.state[_PLAN_KEY] = ((x.shape, tuple(map(id, inputs[1:]))), tuple(inputs[1:]), plan)
        return self.padded(x, *plan)

    @staticmethod
    def padded(x: np.ndarray, top: int, bottom: int, left: int, right: int, code: int, mn: np.ndarray,
               mx: np.ndarray) -> tuple[Any, ...]:
        """The fill, then the data in one strided copy (np.pad does the same in several), laid out as d32."""
        b, h, w, d = x.shape
        out = np.full((b, top + h + bottom, left + w + right, d), code, np.uint8)
        out[:, top:top + h, left:left + w] = x
        return (d32_output(out), mn, mx)

    def plan(self, ctx: KernelContext, x: np.ndarray, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """``(top, bottom, left, right, fill code, out min, out max)`` from the inputs but the data (checked)."""
        _, mn_arr, mx_arr, weights, stride = inputs
        in_min, in_max = ctx.scalar(mn_arr, "input min"), ctx.scalar(mx_arr, "input max")
        fh, fw = _dims(ctx, weights, "weights")[:2]
        sh, sw = _dims(ctx, stride, "stride")[1:3]
        top, bottom = pad_for_conv_amounts(ctx, x.shape[1], fh, sh)
        left, right = pad_for_conv_amounts(ctx, x.shape[2], fw, sw)
        return (top, bottom, left, right, zero_code(in_min, in_max), *range_out(in_min, in_max))
