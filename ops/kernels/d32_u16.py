"""The 16-bit d32 family prepare.c makes of u16 ops: Convert_to_d32_16b, Convert_from_d32_16b,
QuantizedAdd_u16_d32, QuantizedSub_u16_d32, QuantizedPad_u16_d32 (hexagon_nn 2.14.1 prepare.c
``depth32_replacement_op`` and ``need_convert_to_d32``; the ops are in nnlib's op table, not in the op
documents: see their catalog notes).

The 16-bit d32 layout is the 8-bit one with uint16 elements (:mod:`hexnn_import.ops.d32`; nnlib
ops/src/op_convert_d32.c ``convert_to_d32_16b`` copies 32 lanes of 2 bytes per pixel of a slice, the
depth padding written as 0). Its width padding (:func:`width_padding_16b`) is the 8-bit rule for the
default inputs, which is what prepare.c's converts use.

- the converts move data only;
- QuantizedAdd_u16_d32 / QuantizedSub_u16_d32 compute what nnlib's device code computes
  (op_addsubmul16_d32.c, :mod:`hexnn_import.ops.nnlib_u16_d32`; checked under qemu-hexagon,
  tests/ops/test_hvx_add_u16_d32.py): 15-bit fixed-point gains, where the flat QuantizedAdd_u16 /
  QuantizedSub_u16 of the engine round the exact float64 sum (one code apart on some elements); the device
  refuses no input range (a range without 0 takes a saturated zero code);
- QuantizedPad_u16_d32 follows op_pad_d32.c (``pad32_build_strategy``, ``pad32_setup_scaling`` with
  ``elbytes`` 2): the 8-bit op's pads rules (:func:`~hexnn_import.ops.kernels.d32_pad.d32_pad_pairs`) and the
  fill code ``saturate_u16(roundf_i32((value - in_min) * 65536 / (in_max - in_min)))`` in float32, +-inf
  giving 65535 / 0.
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from hexnn_import.ops.d32 import MAX_RIGHT, to_d32
from hexnn_import.ops.d32_io import d32_input, d32_output, flat_input, logical_input
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import range_out, require_4d
from hexnn_import.ops.kernels.d32_pad import d32_pad_code, d32_pad_pairs
from hexnn_import.ops.nnlib_f32 import F
from hexnn_import.ops.nnlib_u16_d32 import BroadcastError, addsub_u16_d32
from hexnn_import.ops.registry import Kernel, KernelContext, register

logger = logging.getLogger(__name__)
#: MAX_PADDING_HEIGHT of include/nn_graph_types.h (get_option's bound on the top / bottom padding)
MAX_PADDING_HEIGHT = 8
#: the 16-bit element types the converts carry (the data's own: quint16, or qint16 propagated as op_convert_d32.c does)
DTYPES16 = (np.dtype(np.uint16), np.dtype(np.int16))


def width_padding_16b(width: int, left: int, min_right: int) -> int:
    """convert_to_d32_16b's right padding: the width total rounded up to 4 from ``left + width + min_right``,
    raised by 2 or 4 when the padding is under 3 (``k = w + 4 - wtotal``), lowered by 2 when above 7."""
    total = (left + width + min_right + 3) & ~3
    k = width + 4 - total
    if k >= 2:
        total += k & ~1
    right = total - (left + width)
    return right - 2 if right > MAX_RIGHT else right


def _option(ctx: KernelContext, inputs: tuple[Any, ...], idx: int, default: int, top: int, what: str) -> int:
    """op_convert_d32.c ``get_option``: the int input ``idx`` if present and within 0..``top``, else (logged, as the
    device logs it) the default."""
    if idx >= len(inputs):
        return default
    v = int_param(ctx, inputs[idx], what)
    if not 0 <= v <= top:
        logger.info("node %s (%s): %s %d out of range (0..%d); using the default %d", ctx.node, ctx.op, what, v, top,
                    default)
        return default
    return v


@register("Convert_to_d32_16b")
class ConvertToD32x16(Kernel):
    """flat 16-bit ``[b,h,w,d]`` -> 16-bit d32 (op_convert_d32.c ``convert_to_d32_16b``).

    Inputs: data (quint16 or qint16), then optional ints: input 1 ignored (depth before is always 0), width
    left (default 4, 0..7), minimum width right (default 0, 0..7), top/bottom (default 4, 0..8); a value out of
    its range takes the default (``get_option``). With a left + right padding under 3 the C makes a width total
    of 2 mod 4 (two 16-bit positions per 128-byte vector: :func:`hexnn_import.ops.d32.width_align`).
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        x = require_4d(ctx, flat_input(ctx, inputs[0], "input data"), "input data")
        if x.dtype not in DTYPES16:
            raise ctx.fail(f"input data has dtype {x.dtype}, expected uint16 (quint16) or int16 (qint16)")
        left = _option(ctx, inputs, 2, 4, MAX_RIGHT, "width padding (left)")
        min_right = _option(ctx, inputs, 3, 0, MAX_RIGHT, "width padding (min right)")
        top = _option(ctx, inputs, 4, 4, MAX_PADDING_HEIGHT, "height padding")
        right = width_padding_16b(x.shape[2], left, min_right)
        if (left, min_right, top) == (4, 0, 4):
            return (d32_output(x),)
        return (to_d32(x, top=top, bottom=top, left=left, right=right, before=0, lazy=True),)


@register("Convert_from_d32_16b")
class ConvertFromD32x16(Kernel):
    """16-bit d32 -> flat ``[b,h,w,d]``: the logical data (op_convert_d32.c ``convert_from_d32_16b``)."""

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        t = d32_input(ctx, inputs[0], "input data")
        if t.dtype not in DTYPES16:
            raise ctx.fail(f"input data is a {t.dtype} d32 tensor, expected 16-bit elements")
        return (t.logical_view(),)


class _AddSubU16D32(Kernel):
    """The device's 16-bit d32 add / subtract (:mod:`hexnn_import.ops.nnlib_u16_d32`)."""

    SUBTRACT = False

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        """``(codes as 16-bit d32, out_min, out_max)``."""
        a = logical_input(ctx, inputs[0], "input 0 (a)")
        b = logical_input(ctx, inputs[1], "input 1 (b)")
        for x, what in ((a, "a"), (b, "b")):
            if x.dtype != np.uint16:
                raise ctx.fail(f"input {what} is a {x.dtype} d32 tensor, expected quint16 (uint16) elements")
        names = ("a min", "a max", "b min", "b max", "output min", "output max")
        ranges = tuple(float(F(ctx.scalar(v, n))) for v, n in zip(inputs[2:8], names))
        try:
            codes, lo, hi = addsub_u16_d32(a, b, ranges, self.SUBTRACT)
        except BroadcastError as e:
            raise ctx.fail(f"shapes {list(a.shape)} and {list(b.shape)}: {e}") from None
        return (d32_output(codes), *range_out(lo, hi))


@register("QuantizedAdd_u16_d32")
class QuantizedAddU16D32(_AddSubU16D32):
    """``a + b`` of 16-bit d32 quint16 tensors as nnlib's device code computes it (module doc)."""

    SUBTRACT = False


@register("QuantizedSub_u16_d32")
class QuantizedSubU16D32(_AddSubU16D32):
    """``a - b`` of 16-bit d32 quint16 tensors as nnlib's device code computes it (module doc)."""

    SUBTRACT = True


def d32_pad_code16(value: float, in_min: float, in_max: float) -> int:
    """pad32_setup_scaling's u16 fill code of ``value`` on ``[in_min, in_max]`` (float32, saturated)."""
    return d32_pad_code(value, in_min, in_max, steps=65536.0, top=0xFFFF)


@register("QuantizedPad_u16_d32")
class QuantizedPadU16D32(Kernel):
    """Pad 16-bit d32 quint16 data in batches, height and width with the code of a float pad value (module doc).

    Inputs: d32 data, in_min, in_max, pads, optional pad value (default 0.0), optional input 5 (non-zero: the
    pad value must lie inside ``[in_min, in_max]``). Outputs: the padded d32 data, in_min, in_max.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        x = logical_input(ctx, inputs[0], "input 0 (data)")
        in_min, in_max = F(ctx.scalar(inputs[1], "input min")), F(ctx.scalar(inputs[2], "input max"))
        pairs = d32_pad_pairs(ctx, inputs[3], x.shape)
        value = F(ctx.scalar(inputs[4], "pad value")) if len(inputs) > 4 else F(0.0)
        if len(inputs) > 5 and int_param(ctx, inputs[5], "input 5 (in-range flag)") != 0 \
                and (value < in_min or value > in_max):
            raise ctx.fail(f"Pad value ({value}) is outside the range of inputs ({in_min}, {in_max})")
        code = d32_pad_code16(value, in_min, in_max)
        out = np.pad(x, pairs, mode="constant", constant_values=np.uint16(code).astype(x.dtype))
        return (d32_output(out), *range_out(in_min, in_max))


