"""Supernode_16x16p32to16 and Supernode_u16x16p32to16_d32: the 16-bit supernodes prepare.c makes of a
QuantizedTransposeConv2d_16x16p32to16 (hexagon_nn 2.14.1 prepare.c ``create_transpose_conv_nodes`` ->
``make_supernodes`` with ``ReplaceConv16_SuperNode`` -> ``convert_to_depth32``; both ops are in nnlib's op table,
not in the op documents: see their catalog notes).

Inputs as the 8-bit Supernode_8x8p32to8: quint16 data, quint16 weights ``[fh, fw, din, dout]``, their ranges,
stride, qint32 bias (one per output channel, zero code 0, one code ``(bias_max - bias_min) / 2**32``), output
min / max (-inf / +inf: auto). The arithmetic is the one of the engine's QuantizedTransposeConv2d_16x16p32to16
(:mod:`.q16_conv`), whose expansion this node is: the exact product sums ``acc`` of the zero-centred codes
(float64, exact below 2**53: :func:`~.q16_conv.check_exact16`), ``real = acc * in_step * w_step + bias``, the
output range from the requested ends (auto ends from the data, zero-fixed for quint16,
:func:`~.q16_conv.u16_output_range`), ``q = clip(zero + round_away(real / step), 0, 65535)``. The expansion pads
the input with its own zero code and rotates the filter, so the sums are the transposed convolution's sums and
the prepared graph computes what the unprepared one does, code for code.

Supernode_u16x16p32to16_d32 with VALID padding (the form prepare makes) follows nnlib's device code instead
(op_supernode_16b.c: byte-half sums, bias words, fixed-point scale, float32 zero adjustment, automatic range
retries: :mod:`.q16_supernode_device`); other paddings (whose d32 padding the device would read) stay the flat op
on the logical data. The flat Supernode_16x16p32to16 is nnlib's reference C (op_supernode.c), a different output
stage: it keeps the exact arithmetic above. Channel scales (a 13th input, which prepare.c may fuse) are refused.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.conv_core import (centered_padded, centered_weights, conv_geometry, exact_product, im2col,
                                        read_stride)
from hexnn_import.ops.d32_io import D32Twin, d32_output
from hexnn_import.ops.kernel_io import i32_codes, range_out
from hexnn_import.ops.kernels.q16_common import STEPS16, data16, quantize_u16, range_for, u16_zero
from hexnn_import.ops.kernels.q16_conv import check_exact16, filter4, output_ends, u16_output_range
from hexnn_import.ops.kernels.q16_supernode_device import device_supernode
from hexnn_import.ops.kernels.q16_supernode_flat_device import flat_device_supernode
from hexnn_import.ops.quant import qint32_one
from hexnn_import.ops.registry import PAD_VALID, Kernel, KernelContext, register


@register("Supernode_16x16p32to16")
class Supernode16x16p32to16(Kernel):
    """Convolve quint16 data, add a qint32 bias, requantize as nnlib's device code does (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q16, out_min, out_max)``: op_supernode.c ``supernode_execute_ref`` (:mod:`.q16_supernode_flat_device`)."""
        if len(inputs) > 12:
            raise ctx.fail("channel scales (input 12) are not supported on the 16-bit supernode")
        x_arr, w_arr, *rng, stride, b_arr, b_min, b_max, o_min, o_max = inputs
        x = data16(ctx, x_arr, "input data", ("quint16",))
        w = data16(ctx, w_arr, "weights", ("quint16",))
        fh, fw, din, dout = filter4(ctx, w, "[fh,fw,din,dout]")
        if din != x.shape[3]:
            raise ctx.fail(f"weights depth {din} (shape {list(w.shape)}) does not match input depth {x.shape[3]}")
        check_exact16(ctx, fh * fw * din)
        bias = i32_codes(ctx, b_arr, "bias").reshape(-1)
        if bias.size != dout:
            raise ctx.fail(f"bias has {bias.size} elements (shape {list(np.shape(b_arr))}), expected {dout}")
        ends = [ctx.scalar(v, n) for v, n in zip((*rng, b_min, b_max, o_min, o_max), (
            "input min", "input max", "weights min", "weights max", "bias min", "bias max", "output min", "output max"))]
        q, lo, hi = flat_device_supernode(ctx, x, w, ends, bias, read_stride(ctx, stride))
        return (q, *range_out(lo, hi))


@register("Supernode_u16x16p32to16_d32")
class SupernodeU16x16p32to16D32(D32Twin):
    """Supernode_16x16p32to16 on 16-bit d32 data (module doc)."""

    FLAT_OP = "Supernode_16x16p32to16"

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """VALID: nnlib's device arithmetic (module doc); other paddings: the flat twin."""
        if ctx.padding != PAD_VALID or len(inputs) != 12:
            return super().compute(ctx, *inputs)
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
