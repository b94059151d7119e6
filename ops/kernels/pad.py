"""QuantizedPad_8, QuantizedPad_V2_8 and MirrorPad_8 on flat quint8 tensors (op texts; SEMANTICS.md §6)."""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.movement_io import check_out_shape, int_list, u8_tensor
from hexnn_import.ops.quant import round_away
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


def constant_pad(x: np.ndarray, pairs: list[tuple[int, int]], code: int) -> np.ndarray:
    """``x`` surrounded by ``code`` as ``pairs`` say."""
    shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pairs))
    out = np.full(shape, code, dtype=np.uint8)
    out[tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, pairs))] = x
    return out


def pad_value_code(ctx: KernelContext, value: float, mn: float, mx: float, strict: bool) -> int:
    """The code of a float pad value in the input range (SEMANTICS §6 "pad code = the code of the pad value").

    ``round_away((value - min) / step)`` with ``step = (max - min) / 255``
    (as Quantize, §2); -inf / +inf give code 0 / 255; a code within
    -2..257 is clipped to 0..255, beyond that is an error (op text). NaN is
    an error. ``strict``: the value must lie inside [min, max].
    """
    if math.isnan(value):
        raise ctx.fail("pad value is NaN")
    if strict and not mn <= value <= mx:
        raise ctx.fail(f"pad value {value} is outside the input range [{mn}, {mx}] (input 5 asks for it inside)")
    if math.isinf(value):
        return 0 if value < 0 else 255
    if mx - mn <= 0.0:
        return 0  # a zero-width range holds only 0.0 (code 0) whatever the pad value (SEMANTICS §1)
    raw = int(round_away((value - mn) / ((mx - mn) / 255.0)))
    lo, hi = PAD_CODE_SLACK
    if not lo <= raw <= hi:
        raise ctx.fail(f"pad value {value} quantizes to code {raw}, too far outside the input range "
                       f"[{mn}, {mx}] (codes {lo}..{hi} are clipped to 0..255)")
    return min(255, max(0, raw))


@register("QuantizedPad_8")
class QuantizedPad8(Kernel):
    """Pad quint8 data with the code of a float pad value; the range passes through.

    Inputs: data, min, max, padding ``[1,1,n,2]`` (:func:`pad_table`: the
    first n of b,h,w,d), optional pad value (float scalar, default 0.0, so
    the pad code is then the zero code), optional input 5. The pad code is
    :func:`pad_value_code`. Choices where the text is vague: input 5
    ("Supplied value (int32 tensor)") is read as a flag - non-zero requires
    the pad value to lie inside [min, max] - which is what hexagon_nn's
    implementation does with it; it is not a pad code. The input range must
    be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, pads_arr = inputs[:4]
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_tensor(ctx, data, "input data")
        pairs = pad_table(ctx, pads_arr, x.shape)
        value = ctx.scalar(inputs[4], "pad value") if len(inputs) > 4 else 0.0
        strict = len(inputs) > 5 and int_param(ctx, inputs[5], "input 5 (in-range flag)") != 0
        code = pad_value_code(ctx, value, mn, mx, strict)
        return (constant_pad(x, pairs, code), *range_out(mn, mx))


@register("QuantizedPad_V2_8")
class QuantizedPadV28(Kernel):
    """Pad quint8 data with a pad value given as a quint8 code; the range passes through.

    Inputs: data, min, max, padding (as QuantizedPad_8), pad value (quint8
    scalar, required). The pad value has no range of its own, so it is a
    code of the input's range and is used as is (SEMANTICS §6: the pad code
    is the code of the pad value); it must be a single integer 0..255. The
    input range must be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, pads_arr, value_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_tensor(ctx, data, "input data")
        pairs = pad_table(ctx, pads_arr, x.shape)
        codes = u8_codes(ctx, value_arr, "pad value")
        if codes.size != 1:
            raise ctx.fail(f"pad value has {codes.size} elements, expected a quint8 scalar")
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
    """Mirror-pad quint8 data; the range passes through.

    Inputs: data, padding (:func:`pad_table`: the first n of b,h,w,d), min,
    max. The node's padding must be NN_PAD_MIRROR_REFLECT or
    NN_PAD_MIRROR_SYMMETRIC (op text); :func:`mirror_index` gives the
    mirrored positions. The text allows padding in any dimension; where it is
    silent the limits are those of TF's MirrorPad: REFLECT pads at most
    size-1 on each side, SYMMETRIC at most size (one mirror image, never a
    repeated fold). The input range must be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, pads_arr, mn_arr, mx_arr = inputs
        if ctx.padding not in (PAD_MIRROR_REFLECT, PAD_MIRROR_SYMMETRIC):
            raise ctx.fail(f"padding is NN_PAD value {ctx.padding}; MirrorPad_8 needs NN_PAD_MIRROR_REFLECT "
                           f"({PAD_MIRROR_REFLECT}) or NN_PAD_MIRROR_SYMMETRIC ({PAD_MIRROR_SYMMETRIC})")
        reflect = ctx.padding == PAD_MIRROR_REFLECT
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_tensor(ctx, data, "input data")
        pairs = pad_table(ctx, pads_arr, x.shape)
        index = []
        for axis, (n, (before, after)) in enumerate(zip(x.shape, pairs)):
            limit = n - 1 if reflect else n
            if before > limit or after > limit:
                mode = "REFLECT" if reflect else "SYMMETRIC"
                raise ctx.fail(f"padding ({before}, {after}) on {'BHWD'[axis]} exceeds {limit}, the most "
                               f"{mode} can mirror from a size of {n} (input shape {list(x.shape)})")
            index.append(mirror_index(n, before, after, reflect))
        return (x[np.ix_(*index)], *range_out(mn, mx))
