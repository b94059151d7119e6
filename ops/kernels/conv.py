"""QuantizedConv2d_8x8to32 and QuantizedMatMul_8x8to32: exact 8x8 -> 32 products (SEMANTICS.md §3).

``acc = sum((x - x_zero) * (w - w_zero))`` with both zero points from the
given (sane, not zero-fixed) ranges; output range ``one = in_step * w_step``,
``out_min = -2**31 * one``, ``out_max = 2**31 * one``.

§3 says the sum is exact in int32. A sum that does not fit int32 cannot be
given exactly, so it is an error naming the node (rather than a silent
wrap); it needs more than 33025 taps at extreme codes to happen.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.conv_core import (check_exact, conv_sum, exact_product, read_stride,
                                        u8_tensor)
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.quant import step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register

_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


def to_qint32(ctx: KernelContext, acc: np.ndarray) -> np.ndarray:
    """The int64 sums as int32; error when one does not fit (it could not be exact)."""
    if acc.size and (acc.min() < _INT32_MIN or acc.max() > _INT32_MAX):
        raise ctx.fail(f"accumulator range [{acc.min()}, {acc.max()}] does not fit qint32")
    return acc.astype(np.int32)


def product_range(in_step: float, w_step: float) -> tuple[np.ndarray, np.ndarray]:
    """``(-2**31 * one, 2**31 * one)`` with ``one = in_step * w_step`` (SEMANTICS §3)."""
    one = in_step * w_step
    return range_out(-2.0 ** 31 * one, 2.0 ** 31 * one)


@register("QuantizedConv2d_8x8to32")
class QuantizedConv2d8x8to32(Kernel):
    """2-D convolution of quint8 data with an HWIO quint8 filter to qint32 (SEMANTICS §3).

    Inputs: data ``[b,h,w,din]``, filter ``[fh,fw,din,dout]``, in_min, in_max,
    filter_min, filter_max, stride shape ``[1,sh,sw,1]``. Padding from the
    node (SAME / VALID / SAME_CAFFE; NA is an error); padded taps add 0.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride = inputs
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "filter")
        in_step, in_zero = step_zero(*ctx.sane_range(in_min, in_max, "input"))
        w_step, w_zero = step_zero(*ctx.sane_range(w_min, w_max, "filter"))
        sh, sw = read_stride(ctx, stride)
        acc = conv_sum(ctx, x, in_zero, w, w_zero, sh, sw)
        return (to_qint32(ctx, acc), *product_range(in_step, w_step))


@register("QuantizedMatMul_8x8to32")
class QuantizedMatMul8x8to32(Kernel):
    """Matrix product of quint8 A ``[1,1,M,K]`` and B ``[1,1,K,N]`` to qint32 ``[1,1,M,N]`` (SEMANTICS §3).

    Both matrices lie in the W and D dimensions; batch and height must be 1
    (the op text: "2D matrix in W and D dimensions"). Outputs are min then max
    (catalog note: the document's max/min order is an erratum).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        a_arr, b_arr, a_min, a_max, b_min, b_max = inputs
        a = u8_tensor(ctx, a_arr, "input A")
        b = u8_tensor(ctx, b_arr, "input B")
        for what, t in (("input A", a), ("input B", b)):
            if t.shape[0] != 1 or t.shape[1] != 1:
                raise ctx.fail(f"{what} has shape {list(t.shape)}, expected [1,1,rows,cols] (batch and height 1)")
        if a.shape[3] != b.shape[2]:
            raise ctx.fail(f"inner dimensions differ: A {list(a.shape)} has {a.shape[3]} columns, "
                           f"B {list(b.shape)} has {b.shape[2]} rows")
        a_step, a_zero = step_zero(*ctx.sane_range(a_min, a_max, "input A"))
        b_step, b_zero = step_zero(*ctx.sane_range(b_min, b_max, "input B"))
        check_exact(ctx, a.shape[3])
        acc = exact_product(a[0, 0].astype(np.float64) - a_zero, b[0, 0].astype(np.float64) - b_zero)
        return (to_qint32(ctx, acc.reshape(1, 1, a.shape[2], b.shape[3])), *product_range(a_step, b_step))
