"""Supernode_16x16p32to16 and Supernode_u16x16p32to16_d32: the 16-bit supernodes prepare.c makes of a
QuantizedTransposeConv2d_16x16p32to16 (hexagon_nn 2.14.1 prepare.c ``create_transpose_conv_nodes`` ->
``make_supernodes`` with ``ReplaceConv16_SuperNode`` -> ``convert_to_depth32``; both ops are in nnlib's op table,
not in the op documents: see their catalog notes).

Inputs as the 8-bit Supernode_8x8p32to8: quint16 data, quint16 weights ``[fh, fw, din, dout]``, their ranges,
stride, qint32 bias (one per output channel, zero code 0, one code ``(bias_max - bias_min) / 2**32``), output
min / max (-inf / +inf: auto). Both follow nnlib's device code:

* Supernode_u16x16p32to16_d32 with VALID padding (the form prepare makes) follows op_supernode_16b.c (byte-half
  sums, bias words, fixed-point scale, float32 zero adjustment, automatic range retries:
  :mod:`.q16_supernode_device`); other paddings (whose d32 padding the device would read) run the flat
  arithmetic of QuantizedTransposeConv2d_16x16p32to16 (:mod:`.q16_conv`, whose expansion this node is) on the
  logical data: exact sums, ``real = acc * in_step * w_step + bias``, ``q = clip(zero + round_away(real / step))``.
* The flat Supernode_16x16p32to16 follows op_supernode.c ``supernode_execute_ref``, the op nnlib registers for it:
  the 8-bit supernode's output stage on 16-bit codes (its codes span 0..255 of the range, with a
  DeviceDefectWarning: :mod:`.q16_supernode_flat_device`). prepare.c converts every 12-input one to the _d32 op,
  so only a graph prepared in part (``--passes``) runs it.

Channel scales (a 13th input, which prepare.c may fuse): the flat op ignores them as the device does
(op_supernode.c ``supernode_check_ref``, :func:`.q16_supernode_flat_device.ignored_channel_scales`); the _d32 op
refuses them.
"""
from __future__ import annotations

import numpy as np
from hexnn_import.ops.conv_core import (
    centered_padded,
    centered_weights,
    conv_geometry,
    exact_product,
    im2col,
    read_stride,
)
from hexnn_import.ops.d32_io import D32Twin, d32_output
from hexnn_import.ops.kernel_io import i32_codes, range_out
from hexnn_import.ops.kernels.q16_common import (
    STEPS16,
    data16,
    quantize_u16,
    range_for,
    u16_zero,
)
from hexnn_import.ops.kernels.q16_conv import (
    check_exact16,
    filter4,
    output_ends,
    u16_output_range,
)
from hexnn_import.ops.kernels.q16_supernode_device import device_supernode
from hexnn_import.ops.kernels.q16_supernode_flat_device import flat_device_supernode, ignored_channel_scales
from hexnn_import.ops.quant import qint32_one
from hexnn_import.ops.registry import PAD_VALID, Kernel, KernelContext, register


def conv16_operands(ctx: KernelContext, x_arr: np.ndarray, w_arr: np.ndarray, b_arr: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 16-bit supernode's quint16 data, ``[fh, fw, din, dout]`` weights and ``dout`` qint32 bias words, checked
    against each other (depths, bias count, sums exact in the engine's arithmetic)."""
    x = data16(ctx, x_arr, "input data", ("quint16",))
    w = data16(ctx, w_arr, "weights", ("quint16",))
    fh, fw, din, dout = filter4(ctx, w, "[fh,fw,din,dout]")
    if din != x.shape[3]:
        raise ctx.fail(f"weights depth {din} (shape {list(w.shape)}) does not match input depth {x.shape[3]}")
    check_exact16(ctx, fh * fw * din)
    bias = i32_codes(ctx, b_arr, "bias").reshape(-1)
    if bias.size != dout:
        raise ctx.fail(f"bias has {bias.size} elements (shape {list(np.shape(b_arr))}), expected {dout}")
    return x, w, bias


def exact_supernode16(ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
    """The transposed conv's exact arithmetic on plain data (module doc): ``(q16, out_min, out_max)``."""
    x_arr, w_arr, in_min, in_max, w_min, w_max, stride, b_arr, b_min, b_max, o_min, o_max = inputs
    x, w, bias = conv16_operands(ctx, x_arr, w_arr, b_arr)
    fh, fw, _, dout = w.shape
    xr = range_for(ctx, "quint16", in_min, in_max, "input")
    wr = range_for(ctx, "quint16", w_min, w_max, "weights")
    b_one = qint32_one(*ctx.sane_range(b_min, b_max, "bias"))
    lo, hi = output_ends(ctx, o_min, o_max)
    g = conv_geometry(ctx, x.shape, w.shape, *read_stride(ctx, stride))
    cols = im2col(centered_padded(x, xr.zero, g), fh, fw, g)
    acc = exact_product(cols, centered_weights(w, wr.zero)).reshape(x.shape[0], g.out_h, g.out_w, dout)
    real = acc.astype(np.float64) * (xr.step * wr.step) + bias.astype(np.float64) * b_one
    lo, hi = u16_output_range(ctx, real, lo, hi)
    step = (hi - lo) / STEPS16
    return (quantize_u16(real, step, u16_zero(lo, step)), *range_out(lo, hi))


@register("Supernode_16x16p32to16")
class Supernode16x16p32to16(Kernel):
    """Convolve quint16 data, add a qint32 bias, requantize as nnlib's device code does (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q16, out_min, out_max)``: op_supernode.c ``supernode_execute_ref`` (:mod:`.q16_supernode_flat_device`)."""
        x_arr, w_arr, *rng, stride, b_arr, b_min, b_max, o_min, o_max = ignored_channel_scales(ctx, inputs)
        x, w, bias = conv16_operands(ctx, x_arr, w_arr, b_arr)
        ends = [ctx.scalar(v, n) for v, n in zip((*rng, b_min, b_max, o_min, o_max), (
            "input min", "input max", "weights min", "weights max", "bias min", "bias max", "output min", "output max"))]
        q, lo, hi = flat_device_supernode(ctx, x, w, ends, bias, read_stride(ctx, stride))
        return (q, *range_out(lo, hi))


@register("Supernode_u16x16p32to16_d32")
class SupernodeU16x16p32to16D32(D32Twin):
    """Supernode_16x16p32to16 on 16-bit d32 data (module doc)."""

    FLAT_OP = "Supernode_16x16p32to16"

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """VALID: nnlib's device arithmetic (module doc); other paddings: the exact arithmetic."""
        if len(inputs) != 12:
            raise ctx.fail(f"{len(inputs)} inputs: the _d32 op takes 12 (no channel scales)")
        if ctx.padding != PAD_VALID:
            q, *ends = exact_supernode16(ctx, *self.flat_inputs(ctx, inputs))
            return (d32_output(q), *ends)
        x_arr, w_arr, *rng, stride, b_arr, b_min, b_max, o_min, o_max = self.flat_inputs(ctx, inputs)
        x = data16(ctx, x_arr, "input data", ("quint16",))
        w = data16(ctx, w_arr, "weights", ("quint16",))
        fh, fw, din, dout = filter4(ctx, w, "[fh,fw,din,dout]")
        if din != x.shape[3]:
            raise ctx.fail(f"weights depth {din} (shape {list(w.shape)}) does not match input depth {x.shape[3]}")
        if fh * fw * din >= 2 ** 53 // 65535 ** 2:
            raise ctx.fail(f"reduction over {fh * fw * din} taps is too long to be summed exactly")
        bias = i32_codes(ctx, b_arr, "bias").reshape(-1)
        if bias.size != dout:
            raise ctx.fail(f"bias has {bias.size} elements (shape {list(np.shape(b_arr))}), expected {dout}")
        ends = [ctx.scalar(v, n) for v, n in zip((*rng, b_min, b_max), ("input min", "input max", "weights min",
                                                                         "weights max", "bias min", "bias max"))]
        g = conv_geometry(ctx, x.shape, w.shape, *read_stride(ctx, stride))
        q, lo, hi = device_supernode(ctx, x, w, [*ends, *output_ends(ctx, o_min, o_max)], bias, g)
        return (d32_output(q), *range_out(lo, hi))
