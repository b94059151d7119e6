"""Colour conversions: RgbaToRgb_8, Argb32ToRgb_8, Nv21ToRgb_8 (hexagon_nn_ops.txt).

RgbaToRgb_8 / Argb32ToRgb_8 move bytes; the range passes through (the
Argb32 text: "same as input min/max"), and must be sane (SEMANTICS §1).
``mode`` 0 keeps the colour order, 1 reverses it: RGBA -> RGB or BGR, ARGB
-> RGB or BGR (the Argb32 text's "last 4 channels" means the three colour
channels after A). Other modes are errors.

Nv21ToRgb_8: the NV21 image of an ``h x w`` picture is ``h`` rows of Y
followed by ``h/2`` rows of interleaved V,U pairs (one pair per 2x2 block),
so the input is taken as a tall single-channel image ``[b, 3h/2, w, 1]``
(uint8; ``w`` even; the rows must be a multiple of 3). The output is
``[b, h, w, 3]`` quint8 over ``[0, 255]``. The conversion is hexagon_nn's
integer BT.601 formula (the Wikipedia NV21 page the text links):
``C = Y, D = U - 128, E = V - 128``;
``R = clip(256C + 359E + 128, 0, 65535) >> 8``,
``G = clip(256C - 88D - 183E + 128, 0, 65535) >> 8``,
``B = clip(256C + 454D + 128, 0, 65535) >> 8``. Mode 1 writes B, G, R.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.registry import Kernel, KernelContext, register


def colour_mode(ctx: KernelContext, arr: np.ndarray) -> int:
    """The 0 / 1 mode input."""
    mode = int_param(ctx, arr, "mode")
    if mode not in (0, 1):
        raise ctx.fail(f"mode is {mode}, expected 0 (keep the colour order) or 1 (reverse it)")
    return mode


class _FourToThree(Kernel):
    """Shared body: pick 3 of 4 channels in the order of the mode."""

    #: channel picks for mode 0 and mode 1
    picks: tuple[tuple[int, int, int], tuple[int, int, int]] = ((0, 1, 2), (2, 1, 0))

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mode_arr, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        if x.shape[3] != 4:
            raise ctx.fail(f"input data has shape {list(x.shape)}: depth must be 4 (four bytes per pixel)")
        pick = list(self.picks[colour_mode(ctx, mode_arr)])
        return (np.ascontiguousarray(x[..., pick]), *range_out(mn, mx))


@register("RgbaToRgb_8")
class RgbaToRgb8(_FourToThree):
    """RGBA -> RGB (mode 0: channels 0,1,2) or BGR (mode 1: channels 2,1,0)."""

    picks = ((0, 1, 2), (2, 1, 0))


@register("Argb32ToRgb_8")
class Argb32ToRgb8(_FourToThree):
    """ARGB -> RGB (mode 0: channels 1,2,3) or BGR (mode 1: channels 3,2,1)."""

    picks = ((1, 2, 3), (3, 2, 1))


def nv21_to_rgb(y: np.ndarray, vu: np.ndarray) -> np.ndarray:
    """Integer BT.601 conversion; ``y [b, h, w]``, ``vu [b, h/2, w]`` (V, U interleaved) -> ``[b, h, w, 3]`` RGB."""
    c = y.astype(np.int32)
    v = np.repeat(np.repeat(vu[:, :, 0::2], 2, axis=1), 2, axis=2).astype(np.int32) - 128
    u = np.repeat(np.repeat(vu[:, :, 1::2], 2, axis=1), 2, axis=2).astype(np.int32) - 128
    r = 256 * c + 359 * v + 128
    g = 256 * c - 88 * u - 183 * v + 128
    b = 256 * c + 454 * u + 128
    rgb = np.stack([r, g, b], axis=-1)
    return (np.clip(rgb, 0, 65535) >> 8).astype(np.uint8)


@register("Nv21ToRgb_8")
class Nv21ToRgb8(Kernel):
    """NV21 ``[b, 3h/2, w, 1]`` -> RGB (mode 0) or BGR (mode 1) ``[b, h, w, 3]``, range ``[0, 255]``."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mode_arr = inputs
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        mode = colour_mode(ctx, mode_arr)
        _, rows, w, d = x.shape
        if d != 1 or rows % 3 or w % 2 or rows == 0 or w == 0:
            raise ctx.fail(f"input data has shape {list(x.shape)}: expected an NV21 image [b, 3h/2, w, 1] "
                           "with w even and rows a multiple of 3")
        h = rows // 3 * 2
        rgb = nv21_to_rgb(x[:, :h, :, 0], x[:, h:, :, 0])
        if mode == 1:
            rgb = rgb[..., ::-1]
        return (np.ascontiguousarray(rgb), *range_out(0.0, 255.0))
