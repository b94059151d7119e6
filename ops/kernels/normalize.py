"""QuantizedLRN_8, L2Normalize_8, QuantizedInstanceNorm_8, QuantizedInstanceNormBG_8.

QuantizedLRN_8 and QuantizedInstanceNorm_8 follow hexagon_nn's C (op_lrn.c, op_instancenorm.c) bit for
bit, L2Normalize_8 its device code (op_l2normalize_8.c, issue 36: ops/nnlib_l2norm.py). For
QuantizedInstanceNormBG_8 the op text (hexagon_nn_ops.txt) gives the formula; the bits follow the
recipe SEMANTICS.md §6 states for softmax/sigmoid/tanh: compute in float64
from the dequantized inputs (§1) and quantize with round-half-away onto the
output range (§2), which follows the observed result by AutoQuantize's rule (§2), as
hexagon_nn's reference kernels span the values they produce.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.float_ref import finite_extent, quantize_auto, real_input
from hexnn_import.ops.kernel_io import range_out, require_4d, shape4, u8_codes
from hexnn_import.ops.nnlib_f32 import F, quantize_uint8
from hexnn_import.ops.nnlib_instancenorm import instancenorm_q8
from hexnn_import.ops.nnlib_l2norm import MAX_SLICE, l2normalize_codes, negated_rows
from hexnn_import.ops.registry import Kernel, KernelContext, register



def _box_sum(v: np.ndarray, axis: int, size: int) -> np.ndarray:
    """Sum of ``v`` over a window of ``size`` taps along ``axis``, zeros outside (used by LRN_f).

    The window around index i covers ``i - (size-1)//2 .. i + size//2`` (centred;
    an even size reaches one further after).
    """
    if size == 1:
        return v
    before = (size - 1) // 2
    pad = [(0, 0)] * v.ndim
    pad[axis] = (before, size - 1 - before)
    padded = np.pad(v, pad)
    n = v.shape[axis]
    total = np.zeros_like(v)
    for k in range(size):  # loop over window taps, not over data
        total += np.take(padded, np.arange(k, k + n), axis=axis)
    return total


def window_size_value(ctx: KernelContext, window: np.ndarray) -> int:
    """``(int32_t) tensor_get_float(window, 0)``: the first 4 bytes of input 3's data read as a float32.

    Float data is taken as its float32 value; other data as its raw bytes
    (what the C reads), so a "shape" tensor of zeros gives window size 0.
    Non-finite or out-of-int32 values count as 0 (x86 gives INT_MIN: rejected).
    """
    a = np.ascontiguousarray(window)
    if a.dtype.kind == "f":
        v = F(a.reshape(-1)[0]) if a.size else F(0.0)
    else:
        raw = a.view(np.uint8).reshape(-1)[:4]
        v = np.concatenate([raw, np.zeros(4 - raw.size, np.uint8)]).view(np.float32)[0]
    if not np.isfinite(v) or abs(float(v)) >= 2.0 ** 31:
        return 0
    return int(np.trunc(v))


def _lrn_window_sum(sq: np.ndarray, half: tuple[int, int, int]) -> np.ndarray:
    """float32 sum of ``sq`` over the taps ``-e..+e`` of h, w, d, in the C loop order (y, then x, then z).

    Taps outside the tensor are skipped (a float32 ``+ 0.0`` on a sum >= 0).
    """
    eh, ew, ed = half
    b, h, w, d = sq.shape
    padded = np.zeros((b, h + 2 * eh, w + 2 * ew, d + 2 * ed), np.float32)
    padded[:, eh:eh + h, ew:ew + w, ed:ed + d] = sq
    acc = np.zeros(sq.shape, np.float32)
    for dy in range(2 * eh + 1):                  # loops over window taps, never over data
        for dx in range(2 * ew + 1):
            for dz in range(2 * ed + 1):
                acc += padded[:, dy:dy + h, dx:dx + w, dz:dz + d]
    return acc


@register("QuantizedLRN_8")
class QuantizedLRN8(Kernel):
    """LRN as hexagon_nn's C computes it (ops/src/op_lrn.c ``lrn_check`` + ``lrn_8_execute_ref``).

    - ``window_size = (int) data[0]`` of input 3 (:func:`window_size_value`);
      the check rejects ``window_size < 1``, ``bias < 1``, ``alpha < 0``,
      ``beta < 0``; input 3's *shape* ``[1, wh, ww, wd]`` (batch 1, else an
      error) gives the taps: ``e = (n - 1) / 2`` each side per axis (an even
      size reaches one tap less after: ``2e + 1`` taps);
    - float32: ``step = (max - min) / 255f``, ``v = min + step * q``;
      ``sum`` of ``v*v`` over the taps (C order), ``sum * (alpha /
      window_size) + bias``, ``m = expf(logf(.) * -beta)`` (here float64
      rounded to float32; glibc's expf/logf differ from that in ~1e-4 of
      arguments), ``out = m * v``;
    - the output range runs ``[fminf(0, ..), fmaxf(0, ..)]`` over the results
      *so far*: batch ``k`` is quantized (``quantize_uint8``) with the range
      of batches ``0..k``, and the last range is the output range.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, window, bias_arr, alpha_arr, beta_arr = inputs
        wsize = window_size_value(ctx, window)
        bias, alpha, beta = (F(ctx.scalar(a, n)) for a, n in ((bias_arr, "bias"), (alpha_arr, "alpha"),
                                                               (beta_arr, "beta")))
        if wsize < 1:
            raise ctx.fail(f"LRN invalid window size {wsize} (< 1; read from input 3's first value)")
        if bias < 1.0 or alpha < 0.0 or beta < 0.0:
            raise ctx.fail(f"LRN needs bias >= 1, alpha >= 0, beta >= 0 (got {bias}, {alpha}, {beta})")
        wb, wh, ww, wd = shape4(ctx, window, "window")
        if wb != 1:
            raise ctx.fail(f"window shape {[wb, wh, ww, wd]}: LRN by batches?")
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        mn, mx = F(ctx.scalar(mn_arr, "input min")), F(ctx.scalar(mx_arr, "input max"))
        step = F(F(mx - mn) / F(255.0))
        with np.errstate(all="ignore"):
            dq = (mn + step * np.arange(256, dtype=np.float32))[x]
            total = _lrn_window_sum(dq * dq, tuple(max(0, (n - 1) // 2) for n in (wh, ww, wd)))
            base = total * F(alpha / F(wsize)) + bias
            # expf's argument is the float32 product logf(.) * -beta
            arg = (np.log(base.astype(np.float64)).astype(np.float32) * F(-beta))
            mult = np.exp(arg.astype(np.float64)).astype(np.float32)
            y = mult * dq
        lo = np.minimum.accumulate(np.fmin(F(0.0), np.fmin.reduce(y.reshape(len(y), -1), axis=1, initial=F(0.0))))
        hi = np.maximum.accumulate(np.fmax(F(0.0), np.fmax.reduce(y.reshape(len(y), -1), axis=1, initial=F(0.0))))
        out = np.empty(x.shape, np.uint8)
        for k in range(x.shape[0]):                   # one quantization per batch (range so far)
            out[k] = quantize_uint8(y[k], lo[k], hi[k])
        return (out, *range_out(lo[-1] if len(lo) else F(0.0), hi[-1] if len(hi) else F(0.0)))


@register("L2Normalize_8")
class L2Normalize8(Kernel):
    """``x / sqrt(sum(x*x))`` along an axis (default depth, 3) as hexagon_nn's device code computes it
    (op_l2normalize_8.c ``l2normalize_execute_8_fast``, issue 36; tools/hvx/op_l2norm.py).

    The codes are :func:`~hexnn_import.ops.nnlib_l2norm.l2normalize_codes` (16-bit fixed-point reciprocals of the
    norms: within a few codes of the quotient, a norm whose integer part is a power of two along depth negates
    the row, as on the device); the range is the op's ``[-1, 1]`` as given (``OUT_MIN`` / ``OUT_MAX``, not
    zero-fixed), the input's zero code ``quantize_uint8(0.0f, min, max)``. The axis (input 3) is in ``-4..3``,
    negative counting from the end (``handle_negative_axes``). Refused: a slice of more than 33,025 elements
    (the device's int32 sum of squares would saturate).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs[:3]
        axis = ctx.int_scalar(inputs[3], "axis") if len(inputs) > 3 else 3
        if not -4 <= axis <= 3:
            raise ctx.fail(f"axis {axis} is out of range -4..3")
        mn, mx = ctx.finite_range(mn_arr, mx_arr, "input")
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        axis %= 4
        if x.shape[axis] > MAX_SLICE:
            raise ctx.fail(f"a slice of {x.shape[axis]} elements along axis {axis}: hexagon_nn's int32 sum of "
                           f"squares saturates past {MAX_SLICE}")
        zero = int(quantize_uint8(0.0, mn, mx))
        if axis == 3 and not ctx.state.get("l2norm_negated_told"):
            flipped = negated_rows(x, zero)
            if flipped:
                ctx.state["l2norm_negated_told"] = True
                warnings.warn(f"{ctx.node} ({ctx.op}): hexagon_nn's device code negates {flipped} row(s) whose norm "
                              f"has a power of two as integer part (op_l2normalize_8.c hvx_l2norm_in_rows: the "
                              f"reciprocal 32768 read as -32768), as here", DeviceDefectWarning, stacklevel=2)
        return (l2normalize_codes(x, zero, axis), *range_out(-1.0, 1.0))


def _instance_normalized(x: np.ndarray, epsilon: float) -> np.ndarray:
    """``(x - mean) / sqrt(var + epsilon)`` with mean/variance per ``[b, :, :, c]``.

    Population variance over the spatial axes (h, w). Where ``var + epsilon``
    is 0 (a constant channel and epsilon 0) the result is 0.
    """
    mean = x.mean(axis=(1, 2), keepdims=True)
    centred = x - mean
    denom = np.sqrt((centred * centred).mean(axis=(1, 2), keepdims=True) + epsilon)
    return np.divide(centred, denom, out=np.zeros_like(x), where=denom > 0)


@register("QuantizedInstanceNorm_8")
class QuantizedInstanceNorm8(Kernel):
    """``(x - mean) / stdev`` per batch and channel over h, w: op_instancenorm.c ``execute_qinstancenorm_ref``.

    Integer statistics of the codes (the input range is not read), epsilon ``1e-5*wh`` added to the
    square root, output range from the extreme results, 10-bit fixed-point requantization; for batch > 1
    the C's scratch indexing (``[b*batches + d]``) is reproduced (see :mod:`hexnn_import.ops.nnlib_instancenorm`).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data = inputs[0]
        for k, what in ((1, "input min"), (2, "input max")):
            ctx.scalar(inputs[k], what)
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        if x.size == 0:
            raise ctx.fail(f"input shape {list(x.shape)} is empty")
        codes, out_min, out_max = instancenorm_q8(x)
        return (codes, *range_out(out_min, out_max))


@register("QuantizedInstanceNormBG_8")
class QuantizedInstanceNormBG8(Kernel):
    """``(x - mean[b,c]) * gamma[c] / sqrt(var[b,c] + epsilon) + beta[c]`` (op text).

    Choices where the documents are silent: gamma and beta are quint8 tensors
    of shape ``[1,1,1,d]`` (or ``[1,1,1,1]``, broadcast over depth), each with
    its own sane range; epsilon must be finite and >= 0; where ``var +
    epsilon`` is 0 the normalized term is 0 (output = beta); output range: the
    observed result by AutoQuantize's rule (SEMANTICS §2). Float64 from the
    dequantized inputs, quantized with round-half-away.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, eps_arr, g_data, g_mn, g_mx, b_data, b_mn, b_mx = inputs
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        if x.shape[1] * x.shape[2] == 0:
            raise ctx.fail(f"input shape {list(x.shape)} has no spatial elements to normalize over")
        epsilon = ctx.scalar(eps_arr, "epsilon")
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise ctx.fail(f"epsilon {epsilon} must be finite and >= 0")
        gamma, _, _ = real_input(ctx, g_data, g_mn, g_mx, "gamma")
        beta, _, _ = real_input(ctx, b_data, b_mn, b_mx, "beta")
        depth = x.shape[3]
        for name, t in (("gamma", gamma), ("beta", beta)):
            if t.shape[:3] != (1, 1, 1) or t.shape[3] not in (1, depth):
                raise ctx.fail(f"{name} has shape {list(t.shape)}, expected [1,1,1,{depth}] or [1,1,1,1]")
        y = _instance_normalized(x, epsilon) * gamma + beta
        return quantize_auto(y, *finite_extent(y))
