"""QuantizedPad_8_d32: the _d32 form prepare.c makes of a QuantizedPad_8 whose input is already d32 and whose
paddings leave depth alone (hexagon_nn 2.14.1 prepare.c ``depth32_replacement_op``; the op is in nnlib's op table,
not in the op documents: see its catalog notes).

It follows the device code nnlib registers (XiaoMi/nnlib df7ad3c ops/src/op_pad_d32.c), checked under
qemu-hexagon (tests/ops/test_hvx_pad_d32.py):

- ``pad32_build_strategy``: the pads tensor's width ``n`` (1..4) rows of ``before, after`` (its depth must be 2),
  back-filled onto the last ``n`` of b, h, w, d; a negative value, depth padding or an output of 2**31 bytes or
  more is an error; batches, height and width may be padded;
- ``pad32_setup_scaling``: the fill code of the pad value (input 4, default 0.0; with a non-zero input 5 it must
  lie inside ``[in_min, in_max]``): +-inf give 255 / 0, any other value ``saturate_u8(roundf_i32((value - in_min)
  * 255 / (in_max - in_min)))`` in float32 - saturated, never refused (QuantizedPad_8's op_pad.c refuses a code
  outside -2..257; this one only logs one outside -4..259), NaN (a zero-width range) giving code 0;
- ``pad_d32_execute``: the input range copied to the output (float32, unchecked); the data copied, the rest
  filled with the code (the memcpy manager's 2-D copy and fills: no arithmetic).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.ops.d32_io import d32_output, logical_input
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.kernels.pad import constant_pad
from hexnn_import.ops.nnlib_f32 import F, roundf_i32_sat
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: pad32_build_strategy refuses a padded output of this many bytes or more
MAX_BYTES = 0x80000000


def d32_pad_pairs(ctx: KernelContext, arr: Any, shape: tuple[int, ...]) -> list[tuple[int, int]]:
    """The pads tensor as pad32_build_strategy reads it: ``[.., n, 2]`` (width n = 1..4, depth 2), rows back-filled
    onto b, h, w, d; no negative value, no depth padding, fewer than 2**31 output bytes."""
    a = np.asarray(arr)
    sh = (1,) * (4 - a.ndim) + tuple(a.shape) if a.ndim <= 4 else ()
    if len(sh) != 4 or not 1 <= sh[2] <= 4 or sh[3] != 2:
        raise ctx.fail(f"bad shape for dims tensor: {list(a.shape)}, expected [1,1,n,2] with n = 1..4")
    n = int(sh[2])
    values = [int(v) for v in a.reshape(-1)[:2 * n]]
    if any(v < 0 for v in values):
        raise ctx.fail(f"negative value in pads tensor {values}")
    pairs = [(0, 0)] * (4 - n) + [(values[2 * i], values[2 * i + 1]) for i in range(n)]
    if pairs[3] != (0, 0):
        raise ctx.fail(f"can't pad in depth dimension: pads {values} (the d32 pad pads batches, height, width only)")
    out = [d + lo + hi for d, (lo, hi) in zip(shape, pairs)]
    if int(np.prod(out, dtype=object)) >= MAX_BYTES:
        raise ctx.fail(f"insanely large padded size: output {out} is 2 GB or more")
    return pairs


def d32_pad_code(value: float, in_min: float, in_max: float, steps: float = 255.0, top: int = 255) -> int:
    """pad32_setup_scaling's fill code of ``value`` on ``[in_min, in_max]`` (float32, saturated to ``[0, top]``).

    8-bit data: ``(value - in_min) * 255 / (in_max - in_min)``; the 16-bit form (op_pad_d32.c's u16 path) scales
    by 65536 and saturates at 0xFFFF (:func:`hexnn_import.ops.kernels.d32_u16.d32_pad_code16`).
    """
    v, lo, hi = F(value), F(in_min), F(in_max)
    if np.isinf(v):
        return 0 if v < 0 else top
    with np.errstate(all="ignore"):  # a zero-width range divides by 0 as the device does
        q = F(F(F(v - lo) * F(steps)) / F(hi - lo))
    return int(np.clip(roundf_i32_sat(q), 0, top))


@register("QuantizedPad_8_d32")
class QuantizedPad8D32(Kernel):
    """Pad d32 quint8 data in batches, height and width with the code of a float pad value
    (op_pad_d32.c ``pad_d32_execute``).

    Inputs: d32 data, in_min, in_max, pads (:func:`d32_pad_pairs`), optional pad value (float, default 0.0),
    optional input 5 (int32: non-zero requires the pad value inside ``[in_min, in_max]``). Outputs: the padded
    d32 data (default padding; the op asks for the same: 4 left, 4 above and below), in_min, in_max.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        x = logical_input(ctx, inputs[0], "input 0 (data)")
        in_min, in_max = F(ctx.scalar(inputs[1], "input min")), F(ctx.scalar(inputs[2], "input max"))
        pairs = d32_pad_pairs(ctx, inputs[3], x.shape)
        value = F(ctx.scalar(inputs[4], "pad value")) if len(inputs) > 4 else F(0.0)
        if len(inputs) > 5 and int_param(ctx, inputs[5], "input 5 (in-range flag)") != 0 \
                and (value < in_min or value > in_max):
            raise ctx.fail(f"Pad value ({value}) is outside the range of inputs ({in_min}, {in_max})")
        code = d32_pad_code(value, in_min, in_max)
        return (d32_output(constant_pad(x, pairs, code)), *range_out(in_min, in_max))
