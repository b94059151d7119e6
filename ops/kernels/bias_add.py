"""QuantizedBiasAdd_8p8to32 and QuantizedBiasAdd_32p32to32, as hexagon_nn computes them.

Followed (SEMANTICS §0: the C code wins): ``ops/src/op_biasadd.c:
biasadd_8p8to32_execute`` and ``biasadd_32p32to32_execute``. Ranges are read
as the C reads them: finite with min <= max, 0 need not be inside. The bias
holds exactly ``d`` values (one per channel of the data's last axis, any
shape, e.g. ``[1,1,1,d]``) broadcast over b, h, w. Outputs are min then max
(catalog note).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import i32_codes, range_out, u8_codes
from hexnn_import.ops.nnlib_f32 import F, f32, fmaf, quantize_uint8
from hexnn_import.ops.nnlib_f32_conv import quantize_int
from hexnn_import.ops.node_cache import node_cached, replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register

_TWO32 = F(2.0 ** 32)


def sf2w(v: np.ndarray, chop: bool) -> np.ndarray:
    """Hexagon float32 -> int32 (``convert_sf2w``, ``:chop`` truncates, else round half even), saturating; NaN -> -1.

    The NaN result follows the oracle harness's model of the device (shim ``fast_roundf``).
    """
    v = np.asarray(v, dtype=np.float32).astype(np.float64)
    r = np.trunc(v) if chop else np.rint(v)
    out = np.clip(np.nan_to_num(r, nan=-1.0), -2.0 ** 31, 2.0 ** 31 - 1)
    return out.astype(np.int64)


def _bias_values(ctx: KernelContext, x: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The bias flattened to ``d`` values (error naming the shapes otherwise)."""
    if x.ndim < 1:
        raise ctx.fail("input data is a 0-d array, expected [b,h,w,d]")
    if b.size != x.shape[-1]:
        raise ctx.fail(f"bias has shape {list(b.shape)} ({b.size} values), expected {x.shape[-1]} "
                       f"values, one per channel of input shape {list(x.shape)}")
    return b.reshape(-1)


def bias_add_8p8(x: np.ndarray, in_range: tuple[float, float], b: np.ndarray,
                 b_range: tuple[float, float]) -> tuple[np.ndarray, np.float32]:
    """``(acc, M)`` of ``biasadd_8p8to32_execute``: int32 sums, output range ``(-M, M)``.

    All float32: ``M = fmaxf(fmaxf(|in_min|, in_max), fmaxf(|b_min|, b_max)) * 2**17``,
    ``one = (M - -M) / 2**32``, gains ``in_step / one`` and ``b_step / one``
    (steps ``(max - min) / 255``), offsets ``quantize_uint8(0, in)`` and
    ``quantize_uint(0, bias)`` (clamped at 0 only), and per element
    ``(int)((x - x_off) * g_x + (b - b_off) * g_b + 0.5f)`` (truncating) as the device computes it (issue 36,
    tools/hvx/op_biasadd8.py): clang for Hexagon contracts the first sum to one ``sfmpyacc``,
    ``fmaf(x - x_off, g_x, (b - b_off) * g_b)``, then adds ``0.5f``; the portable C's two roundings differ by
    one on 21 of 366 device nodes.
    """
    in_min, in_max = f32(in_range[0]), f32(in_range[1])
    b_min, b_max = f32(b_range[0]), f32(b_range[1])
    m = F(max(max(abs(in_min), in_max), max(abs(b_min), b_max)) * F(1 << 17))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        one = F(F(m - F(-m)) / _TWO32)
        gx = F(F(F(in_max - in_min) / F(255.0)) / one)
        gb = F(F(F(b_max - b_min) / F(255.0)) / one)
        x_off = int(quantize_uint8(0.0, in_min, in_max))
        b_off = max(0, quantize_int(0.0, b_min, b_max))
        bs = (b.astype(np.int64) - b_off).astype(np.float32) * gb
        xd = (x.astype(np.int32) - x_off).astype(np.float32)
        xs = fmaf(xd, np.full(xd.shape, gx, F), np.broadcast_to(bs, xd.shape).astype(F))
        xs += F(0.5)
    return sf2w(xs, chop=True).astype(np.int32), m


@register("QuantizedBiasAdd_8p8to32")
class QuantizedBiasAdd8p8to32(Kernel):
    """Add a quint8 bias along the depth axis to quint8 data, qint32 result (``biasadd_8p8to32_execute``)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        data, bias, in_mn, in_mx, b_mn, b_mx = inputs
        in_range = ctx.finite_range(in_mn, in_mx, "input")
        b_range = ctx.finite_range(b_mn, b_mx, "bias")
        x = u8_codes(ctx, data, "input data")
        b = _bias_values(ctx, x, u8_codes(ctx, bias, "bias data"))
        acc, m = bias_add_8p8(x, in_range, b, b_range)
        return (acc, *range_out(-m, m))


def rescale_bias32(b: np.ndarray, in_range: tuple[float, float], b_range: tuple[float, float]) -> np.ndarray:
    """``fast_roundf(bias * bias_to_in)`` (int32), ``bias_to_in = ((b_max - b_min) / 2**32) / ((in_max - in_min) / 2**32)``.

    float32 throughout; the bias is converted to float32 first (rounded to
    nearest); ``fast_roundf`` is Hexagon ``convert_sf2w`` (round half even,
    saturating). A zero-width data range gives an infinite (or NaN) factor,
    computed as the C does.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        in_lvl = F(F(f32(in_range[1]) - f32(in_range[0])) / _TWO32)
        b_lvl = F(F(f32(b_range[1]) - f32(b_range[0])) / _TWO32)
        ratio = F(b_lvl / in_lvl)
        return sf2w(b.astype(np.float32) * ratio, chop=False).astype(np.int32)


@register("QuantizedBiasAdd_32p32to32")
class QuantizedBiasAdd32p32to32(Kernel):
    """qint32 data + qint32 per-channel bias -> qint32 (``biasadd_32p32to32_execute``).

    The output range is the INPUT range (copied); the bias is rescaled to the
    input's code size (:func:`rescale_bias32`) and added with 32-bit
    wrap-around (``Q6_P_vaddw_PP``), never saturated.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, bias, in_mn, in_mx, b_mn, b_mx = inputs
        in_range = ctx.finite_range(in_mn, in_mx, "input")
        b_range = ctx.finite_range(b_mn, b_mx, "bias")
        x = i32_codes(ctx, data, "input data")
        b = _bias_values(ctx, x, i32_codes(ctx, bias, "bias data"))
        bs = node_cached(ctx.state, "bias32_ref", (bias,), (in_range, b_range),
                         lambda: rescale_bias32(b, in_range, b_range))
        mn, mx = range_out(*in_range)

        def run(x_new: np.ndarray) -> tuple[np.ndarray, ...]:
            return np.add(x_new, bs, dtype=np.int32), mn, mx   # int32 addition wraps modulo 2**32

        if x is data:  # int32 data: later runs with the same other inputs redo only the addition
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), run)
        return run(x)

