"""QuantizedConv2d_8x8to32 and QuantizedMatMul_8x8to32: 8x8 -> 32 products as hexagon_nn computes them.

Followed (SEMANTICS §0: the C code wins): ``ops/src/op_conv2d.c:
conv2d_execute_ref`` and ``ops/src/op_matmul.c: matmul_execute`` /
``matmul_ref``.

- ``acc = sum((x - x_off) * (w - w_off))`` accumulated in int32: a sum past
  int32 wraps modulo 2**32 (never an error). The convolution's offsets are
  ``quantize_int(0, min, max)`` (unclamped, so a range that excludes 0 is
  accepted and its offset lies outside 0..255); the matrix multiply's are
  ``quantize_uint8(0, min, max)`` (clamped to 0..255).
- output range ``((float)INT32_MIN * lvl, (float)INT32_MAX * lvl)`` with
  ``lvl = (in_max - in_min) / 255 * (w_max - w_min) / 255`` all in float32
  (:func:`hexnn_import.ops.nnlib_f32_conv.product_range_f32`).
- ranges must be finite with min <= max (the C would compute garbage).

MatMul: B must be ``[1, 1, K, N]`` (the C refuses B batches or height > 1);
A is read flat, as ``M = A.size // K`` rows of ``K`` (any shape; trailing
elements beyond ``M * K`` are ignored); the output is ``[1, 1, M, N]``.

QuantizedMatMul_8x8to32's assembly path with K <= 16 and N > 32 (issue 36, :func:`asm_block_defect`): followed,
with a :class:`~hexnn_import.errors.DeviceDefectWarning` (:func:`asm_block_columns`).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.conv_core import check_filter, read_stride, u8_tensor
from hexnn_import.ops.conv_ref_core import ref_conv_plan, ref_conv_sums, ref_geometry
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.node_cache import node_cached
from hexnn_import.ops.nnlib_f32 import quantize_uint8
from hexnn_import.ops.nnlib_f32_conv import product_range_f32, quantize_int, wrap_i32
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: float64 sums of at most this many 8-bit taps (|tap| <= 255 * 255) are exact.
_F64_TAPS = (2 ** 53) // (255 * 255)


def ref_ranges(ctx: KernelContext, a_min: np.ndarray, a_max: np.ndarray, b_min: np.ndarray, b_max: np.ndarray,
               a_what: str, b_what: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """The two input ranges as read by the C (finite, min <= max; 0 need not be inside)."""
    return ctx.finite_range(a_min, a_max, a_what), ctx.finite_range(b_min, b_max, b_what)


def ref_range_out(a: tuple[float, float], b: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """The float32 output ``(min, max)`` of the 8x8->32 reference ops as ``[1,1,1,1]`` tensors."""
    mn, mx = product_range_f32(a[0], a[1], b[0], b[1])
    return range_out(mn, mx)


@register("QuantizedConv2d_8x8to32")
class QuantizedConv2d8x8to32(Kernel):
    """2-D convolution of quint8 data with an HWIO quint8 filter to qint32 (``conv2d_execute_ref``).

    Inputs: data ``[b,h,w,din]``, filter ``[fh,fw,din,dout]``, in_min, in_max,
    filter_min, filter_max, stride shape ``[1,sh,sw,1]``. Padding from the
    node (``nn_pad_compute_outsize_and_padbefore``: a VALID window larger than
    the input gives an empty output); taps outside the input are skipped.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride = inputs
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "filter")
        rin, rw = ref_ranges(ctx, in_min, in_max, w_min, w_max, "input", "filter")
        check_filter(ctx, x.shape, w.shape)
        sh, sw = read_stride(ctx, stride)
        # the plan is kept per filter (by identity) and ranges (speed, issue 37: a first layer after AutoQuantize)
        signs = tuple(math.copysign(1.0, v) for v in (*rin, *rw))   # a key by value tells -0.0 from 0.0 too
        plan = node_cached(ctx.state, "conv_ref", (w_arr,), (rin, rw, signs),
                           lambda: ref_conv_plan(w, quantize_int(0.0, *rw), quantize_int(0.0, *rin)))
        g = ref_geometry(ctx, x.shape, w.shape[0], w.shape[1], sh, sw)
        return (ref_conv_sums(x, plan, g), *ref_range_out(rin, rw))


def matmul_sums(a: np.ndarray, b: np.ndarray, a_off: int, b_off: int) -> np.ndarray:
    """``matmul_ref``: ``sum_i (a[y, i] - a_off) * (b[i, x] - b_off)`` as int32 (wrapping), ``[M, N]``."""
    k = a.shape[1]
    if k <= _F64_TAPS:   # every partial sum is an integer float64 holds exactly
        acc = np.matmul(a.astype(np.float64) - a_off, b.astype(np.float64) - b_off)
        if k * 255 * 255 < 2 ** 31:
            return acc.astype(np.int32)
        return wrap_i32(acc)
    return wrap_i32(np.matmul(a.astype(np.int64) - a_off, b.astype(np.int64) - b_off))


def asm_block_defect(m: int, k: int, n: int) -> bool:
    """Whether QuantizedMatMul_8x8to32 (``op_matmul.c matmul_asm``) on ``[M, K] @ [K, N]`` misreads its packed B.

    ``matmul_check_ref`` pads B to ``Kp = max(32, K padded to 16)`` rows (l. 366-369) and ``Np = N padded to 32``
    columns with B's zero code (``pad2d``), then ``transpack`` stores each block of 32 columns as ``Kp * 32``
    bytes; ``matmul_asm`` takes the assembly path when ``M == 1`` or ``K % 16 == 0`` (l. 259) and starts output
    block ``b`` at ``b * 32 * a_depth_pad`` bytes with ``a_depth_pad = K padded to 16`` (l. 245, 312). The two
    strides differ only where ``K <= 16``, and only block 0 is read from its own place: N > 32 is needed.
    """
    return m >= 1 and k <= 16 and n > 32 and (m == 1 or k == 16)


def asm_block_columns(acc: np.ndarray) -> np.ndarray:
    """The device's ``[M, N]`` sums for :func:`asm_block_defect`'s shapes, from the true sums ``acc``.

    ``gemvmpybbw_asm`` (asm_src/gemvmpybbw_h.S) reads 16 packed rows (512 bytes) per 32 outputs: output block
    ``b`` reads bytes ``512 b`` on, i.e. rows 0-15 of packed block ``b / 2`` for even ``b`` (B's columns
    ``16 b + z``: the true sums there, 0 where that column is B's padding) and rows 16-31 of packed block
    ``(b - 1) / 2`` for odd ``b`` (all padding: 0). Every byte read is one ``matmul_check_ref`` wrote; A's bytes
    past K (read when M == 1) meet padding rows and cancel exactly in the kernel's ``sum + a_off * bsum +
    b_off * asum + K * a_off * b_off`` (mod 2**32), so the result is deterministic.
    """
    n = acc.shape[1]
    j = np.arange(n)
    blk = j // 32
    src = 16 * blk + j % 32
    keep = (blk % 2 == 0) & (src < n)
    out = np.zeros_like(acc)
    out[:, keep] = acc[:, src[keep]]
    return out


@register("QuantizedMatMul_8x8to32", "QuantizedMatMul_8x8to32_ref")
class QuantizedMatMul8x8to32(Kernel):
    """Matrix product of quint8 A (read flat as ``[M, K]``) and B ``[1,1,K,N]`` to qint32 ``[1,1,M,N]``.

    ``op_matmul.c: matmul_execute`` / ``matmul_ref``. Outputs are min then
    max (catalog note: the document's max/min order is an erratum). ``QuantizedMatMul_8x8to32_ref`` is the
    same arithmetic (``matmul_execute_ref``), reading B at execute rather than the copy packed at prepare.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        a_arr, b_arr, a_min, a_max, b_min, b_max = inputs
        a = u8_tensor(ctx, a_arr, "input A")
        b = u8_tensor(ctx, b_arr, "input B")
        if b.shape[0] != 1 or b.shape[1] != 1:
            raise ctx.fail(f"input B has shape {list(b.shape)}, expected [1,1,K,N] (batch and height 1)")
        k = b.shape[2]
        if k < 1:
            raise ctx.fail(f"input B has shape {list(b.shape)}: no rows (K = 0)")
        ra, rb = ref_ranges(ctx, a_min, a_max, b_min, b_max, "input A", "input B")
        m = a.size // k
        a_mat = a.reshape(-1)[:m * k].reshape(m, k)
        acc = matmul_sums(a_mat, b[0, 0], int(quantize_uint8(0.0, *ra)), int(quantize_uint8(0.0, *rb)))
        if ctx.op == "QuantizedMatMul_8x8to32" and asm_block_defect(m, k, b.shape[3]):
            acc = asm_block_columns(acc)
            if not ctx.state.get("matmul_asm_told"):
                ctx.state["matmul_asm_told"] = True
                warnings.warn(f"{ctx.node} ({ctx.op}): K = {k} <= 16 with N = {b.shape[3]} > 32: hexagon_nn's "
                              f"matmul_asm (op_matmul.c) steps through B's packed copy by K padded to 16 where "
                              f"matmul_check_ref packed it by 32 rows, so outputs from 32 on are wrong on the DSP "
                              f"(0, or columns 16 b + z for even blocks b), as here", DeviceDefectWarning,
                              stacklevel=2)
        return (acc.reshape(1, 1, m, b.shape[3]), *ref_range_out(ra, rb))
