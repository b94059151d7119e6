"""Layout conversions of the d32 family: Convert_to_d32, Convert_from_d32, Convert_to_aix_d32,
FillPadding_8_d32 (SEMANTICS.md §7, op texts).

The document swaps the descriptions of Convert_to_d32 and Convert_from_d32;
they are implemented by NAME: Convert_to_d32 takes a flat quint8 tensor (and
the four optional padding inputs) and gives d32, Convert_from_d32 takes d32
and gives flat.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from hexnn_import.ops.d32 import LANES
from hexnn_import.ops.d32_io import d32_input, d32_output, flat_input
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: FillPadding_8_d32's default spatial fill byte (op text).
DEFAULT_FILL = 0xFF
#: Fill value meaning "random bytes" (op text).
RANDOM_FILL = -1


#: op_convert_d32.c ``convert_to_d32_execute``'s options: (default, largest) per input 1..4 (nn_graph_types.h
#: MAX_PADDING_DEPTH / _WIDTH / _WIDTH / _HEIGHT)
TO_D32_OPTIONS = ((0, 31), (4, 7), (0, 7), (4, 8))


def to_d32_padding(ctx: KernelContext, inputs: tuple[Any, ...]) -> tuple[int, int, int, int]:
    """``(before, left, min_right, top_bottom)`` as op_convert_d32.c ``convert_to_d32_execute`` takes them: each
    option through ``get_option`` (a value outside 0..largest logs and takes the default), then the depth-before
    option dropped (``d_pad_before = 0``: "ignored"). Checked on the device under emulation (issue 36,
    ``tests/ops/test_hvx_convert_d32.py``)."""
    vals = []
    for i, (default, top) in enumerate(TO_D32_OPTIONS):
        v = int_param(ctx, inputs[1 + i], f"padding option (input {1 + i})") if 1 + i < len(inputs) else default
        vals.append(v if 0 <= v <= top else default)
    return 0, vals[1], vals[2], vals[3]


@register("Convert_to_d32")
class ConvertToD32(Kernel):
    """flat quint8 ``[b,h,w,d]`` -> d32 (SEMANTICS §7), padding from inputs 1..4 (:func:`to_d32_padding`).

    Inputs: data, optional depth-before (read, then ignored as the device does), width-left (0..7, default 4),
    minimum width-right (0..7, default 0; rounded up so the width total is a multiple of 4, reduced by 4 if above
    7), top/bottom (0..8, default 4); an option out of its range takes its default. Padding bytes are written as 0
    (they are garbage to every reader).
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        x = u8_codes(ctx, require_4d(ctx, flat_input(ctx, inputs[0], "input data"), "input data"), "input data")
        return (d32_output(x, to_d32_padding(ctx, inputs)),)


@register("Convert_from_d32")
class ConvertFromD32(Kernel):
    """d32 -> flat ``[b,h,w,d]``: the logical data, padding dropped (SEMANTICS §7).

    As op_convert_d32.c ``convert_from_d32_execute``, an input with depth padding before the data is refused
    ("unsupported: input tensor has depth_before !=0"; checked on the device, issue 36); the engine's _d32 ops
    never make one. The result is read-only (often the very array a _d32 op laid out, see
    :meth:`D32Tensor.keep_flat`); kernels never write their inputs, and the
    engine copies a read-only graph output before handing it out.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        t = d32_input(ctx, inputs[0], "input data")
        if t.before:
            raise ctx.fail(f"unsupported: the d32 input has {t.before} depth padding before the data "
                           f"(op_convert_d32.c takes depth_before = 0 only)")
        return (t.logical_view(),)


@register("Convert_to_aix_d32")
class ConvertToAixD32(Kernel):
    """Re-lay d32 data in the 'aix d32' byte order; min/max pass through (op text).

    The op text only says the output format is "aix d32". Choices: aix d32 is
    the d32 arrangement ``[b][h][d_total/32][w][32]`` with no spatial padding
    and depth padded only after the data (to a multiple of 32; pad bytes 0).
    With input 3 (flag) = 0 the input is a d32 tensor and the output is a
    uint8 array of shape ``[b, h, w, d_total]`` (the shape hexagon_nn reports)
    whose C-order bytes are in aix order - NOT the flat order. With the flag
    non-zero the input is such an aix array (depth a multiple of 32) and the
    output is a d32 tensor with the default padding whose logical depth is
    ``d_total`` (the aix bytes do not record the true depth). The range must
    be sane and passes through.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        data, mn_arr, mx_arr, flag_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        if int_param(ctx, flag_arr, "from-aix flag") == 0:
            return (to_aix(d32_input(ctx, data, "input data").logical()), *range_out(mn, mx))
        raw = u8_codes(ctx, require_4d(ctx, flat_input(ctx, data, "input data"), "input data"), "input data")
        if raw.shape[3] % LANES:
            raise ctx.fail(f"aix d32 input has shape {list(raw.shape)}: depth must be a multiple of {LANES}")
        return (d32_output(from_aix(raw)), *range_out(mn, mx))


def to_aix(x: np.ndarray) -> np.ndarray:
    """Flat ``[b,h,w,d]`` -> ``[b,h,w,d_total]`` array holding the aix bytes ``[b][h][d_total/32][w][32]``."""
    b, h, w, d = x.shape
    deep = np.zeros((b, h, w, d + (-d) % LANES), dtype=x.dtype)
    deep[..., :d] = x
    slices = deep.reshape(b, h, w, -1, LANES).transpose(0, 1, 3, 2, 4)
    return np.ascontiguousarray(slices).reshape(deep.shape)


def from_aix(raw: np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_aix`: the flat ``[b,h,w,d_total]`` data of an aix byte array."""
    b, h, w, d_total = raw.shape
    slices = raw.reshape(b, h, d_total // LANES, w, LANES).transpose(0, 1, 3, 2, 4)
    return np.ascontiguousarray(slices).reshape(raw.shape)


@register("FillPadding_8_d32")
class FillPadding8D32(Kernel):
    """A copy of the input with its padding filled (test aid: no _d32 op may read padding).

    Inputs: d32 data, optional spatial fill byte (0..255, or -1 for random;
    default 0xFF), optional depth fill byte (same values; default = spatial).
    Top/bottom/left/right areas get the spatial fill, the before/after
    channels the depth fill. Random bytes come from a generator kept on the
    node (seeded from the node's name), so a run is reproducible and each
    execution draws new bytes. The text's "up to 4 additional rows after the
    last batch" lie outside a tensor's own storage and are not modelled.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        t = d32_input(ctx, inputs[0], "input data")
        spatial = self._fill(ctx, inputs, 1, DEFAULT_FILL)
        depth = self._fill(ctx, inputs, 2, spatial) if len(inputs) > 2 else spatial
        return (t.copy().fill_padding(spatial, depth),)

    @staticmethod
    def _fill(ctx: KernelContext, inputs: tuple[Any, ...], idx: int, default: Any) -> Any:
        if idx >= len(inputs):
            return default
        v = int_param(ctx, inputs[idx], "fill byte")
        if v == RANDOM_FILL:
            return ctx.state.setdefault("rng", np.random.default_rng(zlib.crc32(ctx.node.encode())))
        if not 0 <= v <= 255:
            raise ctx.fail(f"fill byte (input {idx}) is {v}, expected 0..255 or -1 (random)")
        return v

