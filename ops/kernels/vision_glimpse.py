"""QuantizedExtractGlimpse_8: windows of a quint8 image at given offsets (hexagon_nn_ops.txt).

TensorFlow's ``extract_glimpse`` on quint8 codes. Offsets hold one
``(y, x)`` pair per batch (``2 * b`` floats). Position of the window centre:
normalized offsets are multiplied by the image height/width; centered
offsets are relative to the image centre (normalized and centered:
``x = (ox + 1) * W / 2``; centered only: ``x = ox + W / 2``); the window's
top-left is ``trunc(x - width / 2)`` (likewise y), as TensorFlow computes it.
Window pixels inside the image are copied; when the window leaves the image
the outside pixels are noise, drawn per batch from numpy's PCG64 generator
seeded ``(GLIMPSE_NOISE_SEED, batch)`` - the op has no seed input, so the
seed is this documented default and the output is reproducible run to run:
uniform noise (``uniform_noise != 0``) is uniform over the codes
``[min, max]`` of that batch's image; otherwise Gaussian with the mean and
(population) standard deviation of that batch's codes, clipped to 0..255 and
rounded half away from zero. The range passes through. Output
``[b, height, width, d]``. (hexagon_nn adds 0.5 before truncating and
computes a centered, non-normalized offset as ``(ox + W) / 2``; this kernel
keeps TensorFlow's definition.)
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.detect_io import int_in
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import float_data, range_out, require_4d, u8_codes
from hexnn_import.ops.quant import round_away
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Default seed of the glimpse noise (the op has no seed input).
GLIMPSE_NOISE_SEED = 0


def window_origin(oy: float, ox: float, h: int, w: int, gh: int, gw: int, centered: bool,
                  normalized: bool) -> tuple[int, int]:
    """Top-left ``(y, x)`` of a glimpse window in image pixels (TensorFlow's rule)."""
    if normalized:
        oy, ox = oy * h, ox * w
        if centered:
            oy, ox = oy / 2 + h / 2, ox / 2 + w / 2
    elif centered:
        oy, ox = oy + h / 2, ox + w / 2
    return math.trunc(oy - gh / 2), math.trunc(ox - gw / 2)


def noise(image: np.ndarray, shape: tuple[int, ...], uniform: bool, batch: int) -> np.ndarray:
    """Seeded noise codes for one batch (module docstring)."""
    rng = np.random.default_rng((GLIMPSE_NOISE_SEED, batch))
    if uniform:
        return rng.integers(int(image.min()), int(image.max()) + 1, size=shape).astype(np.uint8)
    vals = rng.normal(float(image.mean()), float(image.std()), size=shape)
    return round_away(np.clip(vals, 0.0, 255.0)).astype(np.uint8)


@register("QuantizedExtractGlimpse_8")
class QuantizedExtractGlimpse8(Kernel):
    """Glimpse windows with seeded noise outside the image."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, off_arr, mn_arr, mx_arr, w_arr, h_arr, c_arr, n_arr, u_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        q = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        b, h, w, d = q.shape
        offsets = float_data(ctx, off_arr, "offsets").reshape(-1)
        if offsets.size != 2 * b:
            raise ctx.fail(f"offsets hold {offsets.size} values, expected one (y, x) pair per batch ({2 * b})")
        gw, gh = int_in(ctx, w_arr, "glimpse width", 1), int_in(ctx, h_arr, "glimpse height", 1)
        centered, normalized = int_param(ctx, c_arr, "centered") != 0, int_param(ctx, n_arr, "normalized") != 0
        uniform = int_param(ctx, u_arr, "uniform noise") != 0
        if q.size == 0:
            raise ctx.fail(f"input data has shape {list(q.shape)}: there is no image to take glimpses of")
        out = np.empty((b, gh, gw, d), dtype=np.uint8)
        for i in range(b):
            y0, x0 = window_origin(offsets[2 * i], offsets[2 * i + 1], h, w, gh, gw, centered, normalized)
            ys, xs = np.arange(gh) + y0, np.arange(gw) + x0
            iny, inx = (ys >= 0) & (ys < h), (xs >= 0) & (xs < w)
            inside = iny[:, None] & inx[None, :]
            patch = q[i][np.clip(ys, 0, h - 1)[:, None], np.clip(xs, 0, w - 1)[None, :]]
            if inside.all():
                out[i] = patch
            else:
                out[i] = np.where(inside[..., None], patch, noise(q[i], (gh, gw, d), uniform, i))
        return (out, *range_out(mn, mx))
