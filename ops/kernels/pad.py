"""QuantizedPad_8, QuantizedPad_V2_8 and MirrorPad_8 on flat quint8 tensors (op texts; SEMANTICS.md §6)."""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import kept_range_out, range_out, u8_codes
from hexnn_import.ops.movement_io import check_out_shape, int_list, u8_tensor
from hexnn_import.ops.nnlib_f32 import F, roundf_i32
from hexnn_import.ops.node_cache import node_memo
from hexnn_import.ops.registry import PAD_MIRROR_REFLECT, PAD_MIRROR_SYMMETRIC, Kernel, KernelContext, register

#: Codes a finite pad value may quantize to; inside this band it is clipped to 0..255 (op text).
PAD_CODE_SLACK = (-2, 257)


def pad_table(ctx: KernelContext, arr: np.ndarray, shape: tuple[int, ...]) -> list[tuple[int, int]]:
    """The ``[1,1,n,2]`` padding tensor as 4 ``(before, after)`` pairs for b, h, w, d.

    Op text: n = 1..4 rows; "if n < 4, only the first n of b,h,w,d are set,
    and the rest assumed to be zero". The last axis must hold the 2 values
    of a row; every value must be >= 0, and the padded ``shape`` must stay
    within :data:`~hexnn_import.ops.movement_io.MAX_ELEMENTS`.
    """
    a = np.asarray(arr)
    if a.ndim == 0 or a.shape[-1] != 2:
        raise ctx.fail(f"padding tensor has shape {list(a.shape)}, expected [1,1,n,2] with n = 1..4")
    values = int_list(ctx, a, "padding", 2, 8)
    if any(v < 0 for v in values):
        raise ctx.fail(f"padding {values} holds negative values")
    pairs = [(values[i], values[i + 1]) for i in range(0, len(values), 2)]
    pairs += [(0, 0)] * (4 - len(pairs))
    check_out_shape(ctx, tuple(n + lo + hi for n, (lo, hi) in zip(shape, pairs)))
    return pairs


def nnlib_pad_pairs(ctx: KernelContext, arr: np.ndarray, shape: tuple[int, ...]) -> list[tuple[int, int]]:
    """The pads tensor read as hexagon_nn reads it (ops/src/op_pad.c ``pad_generic_execute``).

    Its 4-D shape must have depth 2; its width ``n`` (at most 4 rows are
    read; more are ignored) gives n ``(before, after)`` rows taken flat from
    the data, and they are *backfilled*: the rows pad the LAST n of b,h,w,d
    (``n = 2`` pads w and d). Negative values are an error, as is an output
    with no element or more than :data:`~hexnn_import.ops.movement_io.MAX_ELEMENTS`.
    """
    a = np.asarray(arr)
    sh = (1,) * (4 - a.ndim) + tuple(a.shape) if a.ndim <= 4 else ()
    if len(sh) != 4 or sh[3] != 2:
        raise ctx.fail(f"padding tensor has shape {list(a.shape)}, expected [1,1,n,2] (depth 2)")
    n = min(int(sh[2]), 4)
    values = [int(v) for v in a.reshape(-1)[: 2 * n]]
    if any(v < 0 for v in values):
        raise ctx.fail(f"padding {values} holds negative values")
    pairs = [(0, 0)] * (4 - n) + [(values[2 * i], values[2 * i + 1]) for i in range(n)]
    out = tuple(d + lo + hi for d, (lo, hi) in zip(shape, pairs))
    if 0 in out:
        raise ctx.fail(f"padded shape {list(out)} has no elements")
    check_out_shape(ctx, out)
    return pairs


def constant_pad(x: np.ndarray, pairs: list[tuple[int, int]], code: int) -> np.ndarray:
    """``x`` surrounded by ``code`` as ``pairs`` say."""
    shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pairs))
    if (len(pairs) == x.ndim and x.size and x.dtype == np.uint8 and x.flags.c_contiguous
            and all(b == a == 0 for b, a in pairs[:-1])):
        # channels only: each pixel's channels move as one void block (speed, issue 37: ~5x)
        out = np.full(shape, code, dtype=np.uint8)
        before, d = pairs[-1][0], x.shape[-1]
        blk = np.dtype(f"V{d}")
        out.reshape(-1, shape[-1])[:, before:before + d].view(blk)[:, 0] = x.reshape(-1, d).view(blk)[:, 0]
        return out
    out = np.full(shape, code, dtype=np.uint8)
    out[tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, pairs))] = x
    return out


def pad_value_code(ctx: KernelContext, value: float, mn: float, mx: float, strict: bool) -> int:
    """The pad code of a float pad value, as ops/src/op_pad.c ``pad_q_execute`` computes it.

    ``strict`` (input 5 non-zero): a value outside ``[min, max]`` is an error.
    +-inf give code 255 / 0; otherwise ``roundf_i32(255f * (value - min) /
    (max - min))`` in float32, converted as the device does (NaN, from 0/0 on
    a zero-width range, gives -1; an infinite quotient saturates); a result
    outside -2..257 is an error, else it is saturated to 0..255. The range is
    used as given (it need not contain 0).
    """
    v, lo, hi = F(value), F(mn), F(mx)
    if strict and (v < lo or v > hi):
        raise ctx.fail(f"pad value {value} is outside the input range [{mn}, {mx}] (input 5 asks for it inside)")
    if np.isinf(v):
        return 0 if v < 0 else 255
    with np.errstate(all="ignore"):
        q = F(F(F(255.0) * F(v - lo)) / F(hi - lo))
    # Hexagon's convert_sf2w: NaN (0/0 on a zero-width range) -> -1, +-inf saturate (then outside the band)
    raw = int(roundf_i32(q)) if np.isfinite(q) else (-1 if np.isnan(q) else None)
    low, high = PAD_CODE_SLACK
    if raw is None or not low <= raw <= high:
        rng = f"{'zero-width ' if lo == hi else ''}input range [{mn}, {mx}]"
        got = f"gives code {raw if raw is not None else float(q)}"
        raise ctx.fail(f"pad value {value} on the {rng}: 255 * (value - min) / (max - min) {got}, outside the codes "
                       f"{low}..{high} (that band is clipped to 0..255; op_pad.c: "
                       f"\"Pad value outside the range of inputs\")")
    return min(255, max(0, raw))


@register("QuantizedPad_8")
class QuantizedPad8(Kernel):
    """Pad quint8 data with the code of a float pad value (ops/src/op_pad.c ``pad_q_execute``).

    Inputs: data, min, max, pads (:func:`nnlib_pad_pairs`: n rows pad the
    last n of b,h,w,d), optional pad value (float, default 0.0), optional
    input 5 (int32 flag: non-zero requires the pad value inside [min, max]).
    The pad code is :func:`pad_value_code`; the output range is the input
    range copied as given (nnlib does not require it to contain 0). Batches
    may be padded too (the device path fills whole batches).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, pads_arr = inputs[:4]
        mn, mx = ctx.scalar(mn_arr, "input min"), ctx.scalar(mx_arr, "input max")
        value = ctx.scalar(inputs[4], "pad value") if len(inputs) > 4 else 0.0
        strict = len(inputs) > 5 and int_param(ctx, inputs[5], "input 5 (in-range flag)") != 0
        # a pure function of these values (signs of zeros included), kept per node (speed, issue 37)
        key = (value, mn, mx, strict, *(math.copysign(1.0, v) for v in (value, mn, mx)))
        code = node_memo(ctx.state, "pad_code", key, lambda: pad_value_code(ctx, value, mn, mx, strict))
        x = u8_tensor(ctx, data, "input data")
        pairs = nnlib_pad_pairs(ctx, pads_arr, x.shape)
        return (constant_pad(x, pairs, code), *kept_range_out(ctx.state, mn, mx))


@register("QuantizedPad_V2_8")
class QuantizedPadV28(Kernel):
    """Pad quint8 data with a pad value given as a quint8 code (ops/src/op_pad.c ``pad_q_v2_execute``).

    Inputs: data, min, max, pads (as QuantizedPad_8), pad value: the first
    byte of input 4, a code of the input range used as is. The output range
    is the input range copied as given.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, pads_arr, value_arr = inputs
        mn, mx = ctx.scalar(mn_arr, "input min"), ctx.scalar(mx_arr, "input max")
        x = u8_tensor(ctx, data, "input data")
        pairs = nnlib_pad_pairs(ctx, pads_arr, x.shape)
        codes = u8_codes(ctx, value_arr, "pad value")
        if codes.size < 1:
            raise ctx.fail("pad value is empty, expected a quint8 scalar")
        return (constant_pad(x, pairs, int(codes.reshape(-1)[0])), *range_out(mn, mx))


def mirror_index(n: int, before: int, after: int, reflect: bool) -> np.ndarray:
    """Input index of every output position of one mirror-padded axis.

    REFLECT mirrors about the edge element (``[a b c] -> b | a b c | b``),
    SYMMETRIC repeats it (``[a b c] -> a | a b c | c``).
    """
    i = np.arange(-before, n + after)
    edge = 0 if reflect else 1
    i = np.where(i < 0, -i - edge, i)
    return np.where(i >= n, 2 * n - 2 + edge - i, i)


@register("MirrorPad_8")
class MirrorPad8(Kernel):
    """Mirror-pad quint8 data: op_mirrorpad.c ``mirrorpad_check`` + ``mirrorpad_execute_8``.

    Inputs: data, padding, min, max. The node's padding must be NN_PAD_MIRROR_REFLECT or
    NN_PAD_MIRROR_SYMMETRIC. As the C (:func:`nnlib_mirror_pad`): the padding tensor must have depth 2 and
    exactly 4 rows (b, h, w, d; no backfilling), values >= 0, and every pad smaller than its dimension in
    both modes (so SYMMETRIC too pads at most size-1); :func:`mirror_index` gives the mirrored positions.
    The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, pads_arr, mn_arr, mx_arr = inputs
        x = u8_tensor(ctx, data, "input data")
        out = nnlib_mirror_pad(ctx, x, pads_arr)
        mn, mx = np.float32(ctx.scalar(mn_arr, "input min")), np.float32(ctx.scalar(mx_arr, "input max"))
        return (out, *range_out(mn, mx))


def nnlib_mirror_pad(ctx: KernelContext, x: np.ndarray, pads_arr: np.ndarray) -> np.ndarray:
    """op_mirrorpad.c ``mirrorpad_check`` + ``mirrorpad_execute`` on 4-D data of any element type (MirrorPad_8,
    MirrorPad_f): the node's padding NN_PAD_MIRROR_REFLECT or NN_PAD_MIRROR_SYMMETRIC; the padding tensor of
    depth 2 and exactly 4 rows (b, h, w, d), values >= 0; every pad below its dimension in both modes."""
    if ctx.padding not in (PAD_MIRROR_REFLECT, PAD_MIRROR_SYMMETRIC):
        raise ctx.fail(f"bad mirror pad type: padding is NN_PAD value {ctx.padding}; {ctx.op} needs "
                       f"NN_PAD_MIRROR_REFLECT ({PAD_MIRROR_REFLECT}) or NN_PAD_MIRROR_SYMMETRIC ({PAD_MIRROR_SYMMETRIC})")
    a = np.asarray(pads_arr)
    sh = (1,) * (4 - a.ndim) + tuple(a.shape) if a.ndim <= 4 else (0, 0, 0, 0)
    if sh[3] != 2:
        raise ctx.fail(f"bad pad tensor: shape {list(a.shape)}, expected [1,1,4,2]")
    vals = [int(v) for v in a.reshape(-1)[: 2 * min(int(sh[2]), 4)]]
    if any(v < 0 for v in vals):
        raise ctx.fail(f"pad bad tensor: negative padding {vals}")
    if sh[2] != 4:
        raise ctx.fail(f"bad pad shape: {list(a.shape)}, {ctx.op} needs exactly 4 rows [1,1,4,2]")
    pairs = [(vals[2 * i], vals[2 * i + 1]) for i in range(4)]
    check_out_shape(ctx, tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, pairs)))
    for axis, (n, (before, after)) in enumerate(zip(x.shape, pairs)):
        if before >= n or after >= n:
            raise ctx.fail(f"{'BHWD'[axis]} too small: padding ({before}, {after}) exceeds {n - 1}, it must be "
                           f"below the size {n} in both modes (input shape {list(x.shape)})")
    reflect = ctx.padding == PAD_MIRROR_REFLECT
    index = [mirror_index(n, lo, hi, reflect) for n, (lo, hi) in zip(x.shape, pairs)]
    return x[np.ix_(*index)]
