"""Reductions of quint8 data over a set of axes: QuantizedSum_8to32, QuantizedMean_8,
Moments_8to32 (hexagon_nn_ops.txt; codes and ranges per SEMANTICS.md §1).

Shared choices where the documents are silent:

- the axes input lists 1..4 axes of the 4-D ``[b, h, w, d]`` tensor; each
  may also be given pythonically as -4..-1; repeats name the same axis once
  (as TensorFlow's reductions treat them); any other value, an empty list or
  more than four entries is an error;
- reduced axes keep size 1 (outputs stay 4-D, as the op texts' output
  shapes ``[b, h, w, d]`` say); the input range must be sane;
- reducing over an axis of size 0 is an error (an empty mean has no value).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.nnlib_f32 import F, adjust_minmax_for_zero, quantize_uint8
from hexnn_import.ops.nnlib_reduce_device import mean_codes
from hexnn_import.ops.nnlib_reduce_passes import device_sums, needs_replay
from hexnn_import.ops.node_cache import replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Moments_8to32 variance codes carry this many fraction bits of a code-unit variance.
VAR_FRACTION_BITS = 17
#: Most elements one Moments_8to32 output may reduce: keeps its int64 arithmetic exact.
MAX_MOMENT_COUNT = 2 ** 22


def reduce_axes(ctx: KernelContext, arr: np.ndarray, what: str = "axes") -> tuple[int, ...]:
    """The sorted, distinct axes (0..3) named by an axes input (see the module docstring)."""
    a = np.asarray(arr)
    if a.dtype.kind not in "biuf":
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected integers")
    vals = a.reshape(-1)
    if not 1 <= vals.size <= 4:
        raise ctx.fail(f"{what} lists {vals.size} axes, the op takes 1 to 4")
    if not np.all(np.isfinite(vals)) or not np.all(vals == np.trunc(vals)):
        raise ctx.fail(f"{what} {vals.tolist()} holds non-integer values")
    axes = set()
    for v in vals.tolist():
        if not -4 <= int(v) <= 3:
            raise ctx.fail(f"{what} {vals.tolist()}: axis {int(v)} is outside -4..3 of a 4-D tensor")
        axes.add(int(v) % 4)
    return tuple(sorted(axes))


def code_sums(ctx: KernelContext, x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """``(sum of codes over axes with kept dims as int64, element count per output)``."""
    n = int(np.prod([x.shape[a] for a in axes]))
    if n == 0:
        raise ctx.fail(f"input data has shape {list(x.shape)}, with nothing to reduce over axes {list(axes)}")
    return x.sum(axis=axes, keepdims=True, dtype=np.int64), n


def rounded_mean_codes(total: np.ndarray, n: int) -> np.ndarray:
    """``round_half_up(total / n)`` exactly for int64 ``total >= 0``: ``(2*total + n) // (2*n)``."""
    return (2 * total + n) // (2 * n)


def read_input(ctx: KernelContext, data: np.ndarray, mn_arr: np.ndarray, mx_arr: np.ndarray
               ) -> tuple[np.ndarray, float, float]:
    """quint8 4-D codes and their sane range."""
    mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
    x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
    return x, mn, mx


@register("QuantizedSum_8to32")
class QuantizedSum8to32(Kernel):
    """``sum(q - zero)`` over the axes as the device computes it (op_reducing_sum.c ``reducing_sum_execute``,
    issue 36; tools/hvx/op_sum.py).

    The input range (any finite one) is zero-fixed as the C does (``adjust_minmax_for_zero``, src/quantize.c) and
    ``zero`` is ``quantize_uint8(0.0f, min, max)`` on it; the output range is ``+-2**31 * ((max - min) / 255)``
    in float32, so one qint32 code is one input step. The axes are summed one listed entry at a time, the later
    passes misplacing sums where a non-reduced axis comes before theirs (include/nn_reduce_utils.h, followed by
    :func:`~hexnn_import.ops.nnlib_reduce_passes.device_sums`); an output of one element, or four listed axes,
    is the plain sum of every code. ``zero`` is taken ``elems`` times, the product of the listed axes' sizes: a
    repeated axis counts again, as on the device. Refused: four entries naming fewer than four axes (the device
    sums everything into the first output word and leaves the others as the scratch held them), more than
    ``2**31 / 255`` elements per output (the device's int32 sums would wrap), a range that is not finite or has
    min > max. Negative axes, which the device uses to index a local array out of bounds, count from the end.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, axes_arr = inputs
        mn, mx = ctx.finite_range(mn_arr, mx_arr, "input")
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        axes = reduce_axes(ctx, axes_arr)
        listed = [int(v) % 4 for v in np.asarray(axes_arr).reshape(-1)]   # the device's passes, in order
        if len(listed) == 4 and len(axes) < 4:
            raise ctx.fail(f"axes {listed} repeat an axis in four entries: hexagon_nn's device code then sums every "
                           f"element into the first output only")
        total, n = code_sums(ctx, x, axes)
        if n * 255 >= 2 ** 31:
            raise ctx.fail(f"sum over axes {list(axes)} of {n} elements may leave int32 (the device's sums wrap)")
        if total.size > 1 and len(listed) < 4 and needs_replay(x.shape, listed):
            total = device_sums(x, listed)
        _, lo, hi = adjust_minmax_for_zero(mn, mx)
        zero = int(quantize_uint8(0.0, lo, hi))
        elems = int(np.prod([x.shape[a] for a in listed], dtype=np.int64))
        out = np.clip(total - np.int64(elems * zero), -2 ** 31, 2 ** 31 - 1)
        out_max = F(F(2.0 ** 31) * F(F(hi - lo) / F(255.0)))
        return (out.astype(np.int32), *range_out(-out_max, out_max))


@register("QuantizedMean_8")
class QuantizedMean8(Kernel):
    """Mean over the axes as the device computes it (op_reducing_mean.c ``reducing_mean_execute``, issue 36).

    The input range (any finite one, 0 inside or not) is zero-fixed as the C does (``adjust_minmax_for_zero``,
    src/quantize.c); without inputs 4-5 that is also the output range. The codes are
    :func:`~hexnn_import.ops.nnlib_reduce_device.mean_codes`: the zero-based sum of the codes times the
    31-bit fixed-point multiplier of ``fminf(0.99999f, in_step / (out_step * n))``, plus the output offset
    (not the exact rounding of ``sum / n``: a code apart on a few percent of values when ``n`` is not a
    power of two). A given output range (input 4 min, input 5 max; a missing max stays the zero-fixed input
    max) is used as given, as the device does (it must be finite; a min above the max runs too: a negative
    multiplier, which ``QuantizeMultiplierSmallerThanOne`` refuses, so every code is the output offset). Where a later pass has a
    non-reduced axis before its own (``reduction_batches > 1``), the device's 32-bit pass misplaces sums
    (include/nn_reduce_utils.h ``reduce_sum_single_axis_hvx_32``): followed by
    :func:`~hexnn_import.ops.nnlib_reduce_passes.device_sums` (tools/hvx/op_mean.py). A choice of the engine:
    repeated axes count once.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, mn_arr, mx_arr, axes_arr = inputs[:4]
        mn, mx = ctx.finite_range(mn_arr, mx_arr, "input")   # the device zero-fixes any range (issue 36)
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        axes = reduce_axes(ctx, axes_arr)
        total, n = code_sums(ctx, x, axes)
        order = list(dict.fromkeys(int(v) % 4 for v in np.asarray(axes_arr).reshape(-1)))   # the device's pass order
        replayed = len(order) < 4 and total.size > 1 and needs_replay(x.shape, order)
        if replayed:   # later passes with several reduction batches misplace sums on the device: followed (issue 36)
            device = device_sums(x, order)
            if not np.array_equal(device, total) and not ctx.state.get("mean_misplaced_told"):
                ctx.state["mean_misplaced_told"] = True
                warnings.warn(f"{ctx.node} ({ctx.op}): hexagon_nn's device code stores this mean's later-axis sums "
                              f"misplaced (include/nn_reduce_utils.h reduce_sum_single_axis_hvx_32): "
                              f"{int(np.count_nonzero(device != total))} of {total.size} sums differ from the true "
                              f"sums on the DSP, as here", DeviceDefectWarning, stacklevel=2)
            total = device
        _, in_lo, in_hi = adjust_minmax_for_zero(mn, mx)
        out_min, out_max = self.output_range(ctx, inputs, float(in_lo), float(in_hi))
        o_lo, o_hi = F(out_min), F(out_max)

        def codes(tot: np.ndarray) -> np.ndarray:
            return mean_codes(tot, n, in_lo, in_hi, o_lo, o_hi)

        out_mn, out_mx = range_out(out_min, out_max)
        if x is data and not replayed:   # later runs with the same other inputs redo only the sums (node_cache; issue 37)
            out_mn.flags.writeable = out_mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda x_new: (
                codes(x_new.sum(axis=axes, keepdims=True, dtype=np.int64)), out_mn, out_mx))
        return (codes(total), out_mn, out_mx)

    @staticmethod
    def output_range(ctx: KernelContext, inputs: tuple[np.ndarray, ...], mn: float, mx: float
                     ) -> tuple[float, float]:
        """The input range, or the given output range of inputs 4-5 as given (the device neither zero-fixes nor
        checks it, a min above the max included: tools/hvx/op_mean.py, issue 36; the engine keeps finite ends)."""
        if len(inputs) < 5:
            return mn, mx
        max_arr = inputs[5] if len(inputs) > 5 else np.float32(mx)   # the C: the zero-fixed input max
        lo, hi = ctx.scalar(inputs[4], "requested output min"), ctx.scalar(max_arr, "requested output max")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ctx.fail(f"requested output range [{lo}, {hi}] is not finite")
        return lo, hi


@register("Moments_8to32")
class Moments8to32(Kernel):
    """Mean (quint8) and population variance (qint32) over the axes (op text "Moments_8to32").

    Mean: as QuantizedMean_8 without an output range: ``round_half_up(sum(q)/n)``,
    the input range passes through (outputs 2, 3). Variance (divided by n, as
    TensorFlow's ``tf.nn.moments``): of the reals it is ``step**2 * V`` with
    ``V = (n*sum(q**2) - sum(q)**2) / n**2`` the variance of the codes, which
    never exceeds ``127.5**2 < 2**14``. Choice where the documents are silent:
    the qint32 code is ``round_half_up(V * 2**17)`` (exact integer
    arithmetic) and the variance range is ``[-2**14 * step**2, 2**14 * step**2]``,
    so one code is ``step**2 / 2**17`` and every possible variance fits.
    More than 2**22 elements per output is an error (int64 exactness).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axes_arr, mn_arr, mx_arr = inputs
        x, mn, mx = read_input(ctx, data, mn_arr, mx_arr)
        axes = reduce_axes(ctx, axes_arr)
        s1, n = code_sums(ctx, x, axes)
        if n > MAX_MOMENT_COUNT:
            raise ctx.fail(f"axes {list(axes)} reduce {n} elements per output, more than {MAX_MOMENT_COUNT}")
        x64 = x.astype(np.int64)
        s2 = (x64 * x64).sum(axis=axes, keepdims=True)
        nn = np.int64(n) * np.int64(n)
        num = np.int64(n) * s2 - s1 * s1                        # n**2 * V, exact, >= 0
        whole, rest = num // nn, num % nn
        frac = (rest * 2 ** (VAR_FRACTION_BITS + 1) + nn) // (2 * nn)  # round_half_up(rest * 2**17 / n**2)
        var = whole * 2 ** VAR_FRACTION_BITS + frac
        step = (mx - mn) / 255.0
        var_max = 2.0 ** (31 - VAR_FRACTION_BITS) * step * step
        mean = rounded_mean_codes(s1, n).astype(np.uint8)
        return (mean, var.astype(np.int32), *range_out(mn, mx), *range_out(-var_max, var_max))
