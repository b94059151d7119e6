"""16-bit data movement: Transpose_16, AxisShuffle_16, SpaceToDepth_16, DepthToSpace_16,
QuantizedPad_16, QuantizedPad_u16 (op texts; SEMANTICS.md §6: data moves, the range passes through).

Each op is its 8-bit sibling on wider elements: "Same as AxisShuffle_8, but
for 16-bit data", "Same operation as SpaceToDepth_f", and so on. Rather than
re-writing the index arithmetic, the 8-bit kernels do the moving: a 16-bit
tensor is split into its low and high byte planes, each plane is moved by
the quint8 kernel (Transpose_8, AxisShuffle_8, SpaceToDepth_8,
DepthToSpace_8, and :func:`pad.constant_pad` for the pads) with the same
parameters, and the planes are joined again. Data movement never mixes
bytes of different elements, so the result is exactly the 16-bit move, and
every parameter rule and error of the 8-bit op applies unchanged (the error
names this node and op). quint8 data (allowed by Transpose_16 and the
Space/Depth ops) goes straight to the 8-bit kernel. The output has the
input's type; the input range must be sane (qint16: also symmetric,
:mod:`q16_common`) and passes through.

Pads (text of QuantizedPad_16/_u16): the pad value (input 4, default 0.0)
becomes the code ``round_away((value - min) / step)`` of the input range
(qint16: ``round_away(value / step)``); a code at most 1536 codes outside
the type's range is clipped into it, further out is an error; -inf / +inf
give the lowest / highest code, and so does NaN (as the device: the lowest). The pads tensor is read as
op_pad.c's ``pad_generic_execute`` reads it for every pad op
(:func:`pad.nnlib_pad_pairs`: n rows pad the LAST n of b, h, w, d), which
nnlib's device code confirms under emulation (issue 36,
``tests/ops/test_hvx_pad.py``); the op text's "the first n" is not what runs.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.kernels.pad import constant_pad, nnlib_pad_pairs
from hexnn_import.ops.kernels.q16_common import (I16_HI, I16_LO, U16_HI, U16_LO, data16, kind_of, range_for,
                                                 s16_range, u16_range)
from hexnn_import.ops.kernels.shuffle import AxisShuffle8
from hexnn_import.ops.kernels.space_depth import DepthToSpace8, SpaceToDepth8
from hexnn_import.ops.kernels.transpose_tile import Transpose8
from hexnn_import.ops.quant import round_away
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: A finite pad value may quantize this many codes outside the type's range and still be clipped (op text).
PAD_CODE_SLACK = 1536

Plane8 = Callable[[np.ndarray], np.ndarray]


def split_planes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Low and high byte planes (uint8) of 16-bit data."""
    u = x.view(np.uint16)
    return (u & 0xFF).astype(np.uint8), (u >> 8).astype(np.uint8)


def join_planes(lo: np.ndarray, hi: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The 16-bit tensor of two moved byte planes, in the original dtype."""
    u = (hi.astype(np.uint16) << np.uint16(8)) | lo.astype(np.uint16)
    return np.ascontiguousarray(u).view(dtype)


def move16(x: np.ndarray, move8: Plane8) -> np.ndarray:
    """Apply an 8-bit data movement to 8- or 16-bit data (module doc)."""
    if x.dtype == np.uint8:
        return move8(x)
    lo, hi = split_planes(x)
    return join_planes(move8(lo), move8(hi), x.dtype)


class _Move16(Kernel):
    """A 16-bit op whose inputs are the 8-bit kernel's, data first and min/max at ``RANGE_AT``."""

    KINDS: tuple[str, ...] = ("quint8", "quint16", "qint16")
    KERNEL8: type[Kernel] = Transpose8
    OP8 = "Transpose_8"
    RANGE_AT = 2

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(moved data, min, max)``."""
        x = data16(ctx, inputs[0], "input data", self.KINDS)
        at = self.RANGE_AT
        r = range_for(ctx, kind_of(x), inputs[at], inputs[at + 1], "input")
        kernel8 = self.KERNEL8(self.OP8)
        rest: Sequence[np.ndarray] = inputs[1:]
        out = move16(x, lambda plane: kernel8.compute(ctx, plane, *rest)[0])
        return (out, *range_out(r.mn, r.mx))


@register("Transpose_16")
class Transpose16(_Move16):
    """Reorder the last k axes of 8/16-bit data (Transpose_8's rules); inputs data, control, min, max."""

    KERNEL8, OP8, RANGE_AT = Transpose8, "Transpose_8", 2


@register("AxisShuffle_16")
class AxisShuffle16(_Move16):
    """Group-transpose 16-bit data along an axis (AxisShuffle_8's rules); inputs data, axis, groups, min, max."""

    KINDS = ("quint16", "qint16")
    KERNEL8, OP8, RANGE_AT = AxisShuffle8, "AxisShuffle_8", 3


@register("SpaceToDepth_16")
class SpaceToDepth16(_Move16):
    """SpaceToDepth of 8/16-bit data (SpaceToDepth_8's rules); inputs data, block, min, max."""

    KERNEL8, OP8, RANGE_AT = SpaceToDepth8, "SpaceToDepth_8", 2


@register("DepthToSpace_16")
class DepthToSpace16(_Move16):
    """DepthToSpace of 8/16-bit data, optional crops (DepthToSpace_8's rules); inputs data, block, min, max[, crops]."""

    KERNEL8, OP8, RANGE_AT = DepthToSpace8, "DepthToSpace_8", 2


def pad_code16(ctx: KernelContext, value: float, mn: float, step: float, signed: bool) -> int:
    """The 16-bit code of a pad value (module doc)."""
    lo, hi = (I16_LO, I16_HI) if signed else (U16_LO, U16_HI)
    if math.isnan(value):
        # op_pad.c pad_q16_execute: roundf_i32(NaN) is -1 on Hexagon (convert_sf2w), clipped to u16 code 0, then
        # shifted for qint16: the lowest code (the device under emulation, issue 36)
        return lo
    if math.isinf(value):
        return lo if value < 0 else hi
    if step <= 0.0:
        return 0  # a zero-width range holds only 0.0 (code 0) whatever the pad value (SEMANTICS §1)
    raw = int(round_away(value / step)) if signed else int(round_away((value - mn) / step))
    if not lo - PAD_CODE_SLACK <= raw <= hi + PAD_CODE_SLACK:
        raise ctx.fail(f"pad value {value} quantizes to code {raw}, more than {PAD_CODE_SLACK} codes outside "
                       f"{lo}..{hi} (input range [{mn}, {mn + (hi - lo + 1) * step}])")
    return min(hi, max(lo, raw))


class _Pad16(Kernel):
    """Shared body of QuantizedPad_16 and QuantizedPad_u16 (module doc)."""

    SIGNED = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(padded, min, max)``."""
        data, mn_arr, mx_arr, pads_arr = inputs[:4]
        kind = "qint16" if self.SIGNED else "quint16"
        x = data16(ctx, data, "input data", (kind,))
        r = (s16_range if self.SIGNED else u16_range)(ctx, mn_arr, mx_arr, "input")
        pairs = nnlib_pad_pairs(ctx, pads_arr, x.shape)
        value = ctx.scalar(inputs[4], "pad value") if len(inputs) > 4 else 0.0
        code = pad_code16(ctx, value, r.mn, r.step, self.SIGNED) & 0xFFFF   # as the uint16 bit pattern
        lo, hi = split_planes(x)
        out = join_planes(constant_pad(lo, pairs, code & 0xFF), constant_pad(hi, pairs, code >> 8), x.dtype)
        return (out, *range_out(r.mn, r.mx))


@register("QuantizedPad_16")
class QuantizedPad16(_Pad16):
    """Pad qint16 data with the code of a float value; the range passes through (module doc)."""

    SIGNED = True


@register("QuantizedPad_u16")
class QuantizedPadU16(_Pad16):
    """Pad quint16 data with the code of a float value; the range passes through (module doc)."""

    SIGNED = False
