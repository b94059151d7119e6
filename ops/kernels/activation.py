"""Unary quint8 activations: QuantizedClamp_8 (hexagon_nn op_relu.c), QuantizedNeg_8, QuantizedPRelu_8,
QuantizedPRelu_8_V2 (SEMANTICS.md §1, §6).

Where the documents fix no arithmetic these compute the real result of each
input code and quantize it with round-half-away onto the output range:
exactly (rational tables of :mod:`hexnn_import.ops.exact_q8`) where the
result depends on quint8 codes only. QuantizedPRelu_8 follows hexagon_nn's
device code (ops/src/op_prelu.c ``prelu_execute_hvx``) bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.broadcast import broadcast_onto
from hexnn_import.ops.exact_q8 import code_values, code_values_f64, quantize_approx, quantize_values
from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.kernels.add8 import requested_ends
from hexnn_import.ops.quant import sat_u8
from hexnn_import.ops.nnlib_f32 import F, adjust_minmax_for_zero, f32, quantize_uint8
from hexnn_import.ops.nnlib_f32_nonlin import read_any_range
from hexnn_import.ops.nnlib_prelu_v2 import prelu_v2_table
from hexnn_import.ops import table_store
from hexnn_import.ops.compiled import channel_pair_lookup
from hexnn_import.ops.node_cache import replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: ctx.state key: the alpha shape PRelu_8_V2 saw first (later executions must keep it).
ALPHA_SHAPE_KEY = "prelu_alpha_shape"


@register("QuantizedClamp_8")
class QuantizedClamp8(Kernel):
    """``min(max(x, quantize_uint8(clamp_min)), quantize_uint8(clamp_max))``; range passes through.

    hexagon_nn's ``ops/src/op_relu.c: clamp_execute`` (the ``reluX_kernel``
    assembly: ``vmax`` then ``vmin``): both bounds are quantized with
    ``quantize_uint8`` (float32) over the input range, which is copied to
    the output unchanged. Any finite input range with min <= max is accepted
    (0 need not be inside); ``clamp_min > clamp_max`` gives the code of
    ``clamp_max`` everywhere, as the C. A NaN bound is an error; an infinite
    one saturates to code 0 / 255.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(codes, out_min, out_max)``."""
        data, in_mn, in_mx, c_mn, c_mx = inputs
        in_min, in_max = ctx.finite_range(in_mn, in_mx, "input")
        c_lo, c_hi = ctx.scalar(c_mn, "clamp min"), ctx.scalar(c_mx, "clamp max")
        if math.isnan(c_lo) or math.isnan(c_hi):
            raise ctx.fail(f"clamp range [{c_lo}, {c_hi}] has a NaN end")
        x = u8_codes(ctx, data, "input data")
        with np.errstate(over="ignore", invalid="ignore"):   # an infinite bound saturates
            q_lo, q_hi = quantize_uint8(c_lo, in_min, in_max), quantize_uint8(c_hi, in_min, in_max)
        return (np.minimum(np.maximum(x, q_lo), q_hi), *range_out(in_min, in_max))


@register("QuantizedNeg_8")
class QuantizedNeg8(Kernel):
    """``-x`` on quint8: op_neg.c ``unary_op_execute`` (HVX ``vnot``: each code becomes ``255 - x``) with the
    output range ``(-in_max, -in_min)`` (float32 negation). Any finite input range is accepted, as in the C.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, in_mn, in_mx = inputs
        in_min, in_max = read_any_range(ctx, in_mn, in_mx, "input")
        x = u8_codes(ctx, data, "input data")
        return ((255 - x).astype(np.uint8), *range_out(-in_max, -in_min))


def prelu_range(in_min: float, in_max: float, alpha_lo: float, alpha_hi: float) -> tuple[float, float]:
    """Exact range of ``x if x >= 0 else alpha * x`` for x in ``[in_min, in_max]``, alpha in ``[alpha_lo, alpha_hi]``."""
    return min(0.0, alpha_hi * in_min), max(in_max, alpha_lo * in_min)


def prelu_v2_range(in_min: float, in_max: float, al_range: tuple[float, float], lo: float,
                   hi: float) -> tuple[float, float]:
    """QuantizedPRelu_8_V2's output range as the device sets it (op_prelu_v2_d32.c ``prelu_opt_execute``, float32):
    by default ``in_min * alpha_max`` and ``fmaxf(in_max, in_min * alpha_min)`` with the alphas' range ends (inputs
    4 / 5, not the alpha values present), a requested end (inputs 6 / 7) as given, then ``adjust_minmax_for_zero``.
    An infinite requested end takes the default."""
    a_lo, a_hi, x_lo = F(al_range[0]), F(al_range[1]), F(in_min)
    mn = F(x_lo * a_hi) if lo == -math.inf else F(lo)
    mx = F(np.fmax(F(in_max), F(x_lo * a_lo))) if hi == math.inf else F(hi)
    _, mn, mx = adjust_minmax_for_zero(mn, mx)
    return float(mn), float(mx)


def _splat_bytes(v: int) -> np.ndarray:
    """The 4 byte lanes (little-endian) of op_prelu.c's ``v = v << 8 | v; v = v << 16 | v`` on a uint32."""
    v = ((v << 8) | v) & 0xFFFFFFFF
    v = ((v << 16) | v) & 0xFFFFFFFF
    return np.array([(v >> (8 * k)) & 0xFF for k in range(4)], np.int32)


def prelu_below_zero(x: np.ndarray, alpha: np.ndarray, qz: int) -> np.ndarray:
    """The codes op_prelu.c ``prelu_execute_hvx`` (the registered device path) gives the elements below ``qz``
    (all elements computed; the caller keeps the others), int32, flat C order of ``x``.

    - One alpha (``hvx_prelu_scalar_alpha``): ``frac = (uint32)(65536f * alpha)``, ``offset = qz - ((qz * frac
      + 0x8000) >> 16)``; the whole 128-byte vectors multiply by the bytes of ``frac >> 8`` splatted to a word
      (``(x * f8 + 0x80) >> 8``, ``+ offset`` as a byte); alpha = 1 gives ``frac >> 8 = 256``, whose splat
      holds bytes 0, 1, 1, 1; the scalar tail uses the 16-bit ``((x * frac + 0x8000) >> 16) + offset``.
    - One alpha per channel (``prelu_1D_alpha``): ``t = (uint16)(alpha * 65536)`` (alpha = 1 wraps to 0),
      ``f8 = t >> 8``, ``offset = qz - ((qz * t + 0x8000) >> 16)``, every element by the 8-bit formula
      (``hvx_intr_prelu_circ``, its last partial vector too)."""
    xi = x.reshape(-1).astype(np.int32)
    if alpha.size == 1:
        frac = int(np.float32(alpha[0]) * np.float32(65536.0))
        offset = (qz - ((qz * frac + 0x8000) >> 16)) & 0xFFFFFFFF
        n_vec = xi.size // 128 * 128
        f8 = np.resize(_splat_bytes(frac >> 8), n_vec)
        o8 = np.resize(_splat_bytes(offset), n_vec)
        head = (((xi[:n_vec] * f8 + 0x80) >> 8) + o8) & 0xFF
        tail = (((xi[n_vec:].astype(np.int64) * frac + 0x8000) >> 16) + offset) & 0xFF
        return np.concatenate([head, tail.astype(np.int32)])
    t16 = (alpha.astype(np.float32) * np.float32(65536.0)).astype(np.int64) & 0xFFFF
    f8 = (t16 >> 8).astype(np.int32)
    o8 = ((qz - ((qz * t16 + 0x8000) >> 16)) & 0xFF).astype(np.int32)
    xd = xi.reshape(-1, alpha.size)
    return ((((xd * f8 + 0x80) >> 8) + o8) & 0xFF).reshape(-1)


@register("QuantizedPRelu_8")
class QuantizedPRelu8(Kernel):
    """PReLU with float alphas as the device runs it: op_prelu.c ``prelu_execute_hvx`` (issue 36; the engine
    computes what the DSP computes), :func:`prelu_below_zero`.

    The C: ``qz = quantize_uint8(0, in_min, in_max)``; the alphas are the first ``d_a`` floats of input 3,
    ``d_a`` its depth (1, or the data's depth: else an error), each in ``[0, 1]`` (else an error); codes
    ``x >= qz`` pass, the others take the device's fixed point (8-bit ``frac >> 8`` in whole vectors: one
    code under the portable ``prelu_execute``'s 16-bit formula on ~8% of them; alpha = 1 overflows the
    device's ``frac``, so its codes are not ``x``: followed, it is deterministic). The output range is the
    input range, copied as given (any range, even one excluding 0).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, in_mn, in_mx, alpha_arr = inputs
        in_min, in_max = f32(ctx.scalar(in_mn, "input min")), f32(ctx.scalar(in_mx, "input max"))
        x = u8_codes(ctx, data, "input data")
        a = np.asarray(alpha_arr)
        depth_a = int(((1,) * (4 - a.ndim) + a.shape)[3]) if a.ndim <= 4 else 0
        depth = int(x.shape[-1]) if x.ndim else 1
        if depth_a < 1 or a.size < depth_a:
            raise ctx.fail(f"alphas tensor has shape {list(a.shape)}, expected [1,1,1,d] with d = 1 or {depth}")
        if depth_a > 1 and depth_a != depth:
            raise ctx.fail(f"alphas depth {depth_a} does not match the input depth {depth}")
        alpha = a.reshape(-1)[:depth_a].astype(np.float32)
        if np.isnan(alpha).any() or (alpha < 0).any() or (alpha > 1).any():
            raise ctx.fail(f"alphas must lie in [0, 1] (got {alpha.tolist()[:8]})")
        qz = int(quantize_uint8(F(0.0), in_min, in_max))
        neg = prelu_below_zero(x, alpha, qz).reshape(x.shape)
        out = np.where(x < qz, neg, x).astype(np.uint8)
        return (out, *range_out(in_min, in_max))


@register("QuantizedPRelu_8_V2")
class QuantizedPRelu8V2(Kernel):
    """PReLU with quint8 alphas (own range), optional output range (SEMANTICS §6 style).

    The alphas broadcast one way onto the data as for QuantizedPRelu_8. "Alpha
    values may change on each execute as long as the alpha tensor size
    remains the same": the alpha shape of the first execution is kept in
    ``ctx.state`` and a later different shape is an error. Output range:
    inputs 6/7 when given (an absent or infinite end takes the default),
    otherwise the device's (:func:`prelu_v2_range`: from the alphas' range ends,
    float32, zero-fixed by adjust_minmax_for_zero). Each result is the device's
    fixed-point code (:mod:`hexnn_import.ops.nnlib_prelu_v2`: op_prelu_v2_d32.c),
    from a 256x256 (x code, alpha code) table.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, in_mn, in_mx, alpha_arr, al_mn, al_mx = inputs[:6]
        in_min, in_max = ctx.sane_range(in_mn, in_mx, "input")
        al_range = ctx.sane_range(al_mn, al_mx, "alpha")
        x = u8_codes(ctx, data, "input data")
        alpha = u8_codes(ctx, alpha_arr, "alphas")
        if alpha.size == 0:
            raise ctx.fail("alphas tensor is empty")
        first = ctx.state.setdefault(ALPHA_SHAPE_KEY, tuple(alpha.shape))
        if tuple(alpha.shape) != first:
            raise ctx.fail(f"alphas shape changed from {list(first)} to {list(alpha.shape)} between executions")
        alpha_b = broadcast_onto(ctx, alpha, x.shape, "alphas")
        out = prelu_v2_range(in_min, in_max, al_range, *requested_ends(ctx, inputs))
        key = (float(in_min), float(in_max), tuple(map(float, al_range)), tuple(map(float, out)))
        codes = table_store.current().shared(("prelu_v2_device_table", key), 256 * 256,  # a function of the ranges
                                             lambda: sat_u8(prelu_v2_table((in_min, in_max), al_range, out)).reshape(-1),
                                             "the PRelu's 256x256 table")
        mn, mx = range_out(*out)
        if x is data:   # later runs with the same other inputs look the codes up alone (speed, issue 37)
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda x_new: (prelu_lookup(x_new, alpha_b, codes), mn, mx))
        return (prelu_lookup(x, alpha_b, codes), mn, mx)


def prelu_lookup(x: np.ndarray, alpha_b: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``codes[x * 256 + alpha]``, the alphas broadcast onto ``x``: one compiled pass where they are one per
    channel (or one) and numba is there (:func:`hexnn_import.ops.compiled.channel_pair_lookup`), else numpy's
    shift, or and take."""
    if x.ndim and alpha_b.shape == x.shape and not any(alpha_b.strides[:-1]):
        fast = channel_pair_lookup(x, alpha_b.reshape(-1, x.shape[-1])[0], codes)
        if fast is not None:
            return fast
    idx = np.left_shift(x, 8, dtype=np.uint16)        # the flat (x code, alpha code) index
    np.bitwise_or(idx, alpha_b, out=idx)
    return codes.take(idx)


def prelu_table(in_min: float, in_max: float, al_range: tuple[float, float],
                out: tuple[float, float]) -> np.ndarray:
    """Pre-saturation codes of PReLU for every (x code, alpha code): ``x`` where ``x >= 0``, else
    ``x * alpha``, each rounded exactly onto ``out`` (exact_q8.quantize_approx: float64 where it decides
    the rounding, exact rationals for the entries it cannot)."""
    xf, af = code_values_f64(in_min, in_max), code_values_f64(*al_range)
    keep = xf >= 0
    approx = np.where(keep[:, None], xf[:, None], np.multiply.outer(xf, af))

    def exact_at(idx: tuple[np.ndarray, ...]) -> np.ndarray:
        (xn, xd), (an, ad) = code_values(in_min, in_max), code_values(*al_range)
        i, j = idx
        nums = np.where(xn[i] >= 0, xn[i] * ad, xn[i] * an[j])
        return quantize_values((nums.astype(object), xd * ad), *out)

    return quantize_approx(approx, *out, exact_at)
