"""Resampling float images: ResizeBilinear_f and ImageTransform_f (hexagon_nn_ops.txt).

Both interpolate bilinearly; the interpolation itself runs in float64 and is
rounded once to float32 (the device interpolates in float32 and may differ
in the last bits). Where source coordinates come from integers they are
exact rationals; ImageTransform_f's come from float parameters and are
evaluated in float32 in the device's order, so the floor of a coordinate -
which picks the source pixels - matches the device.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import flag_param
from hexnn_import.ops.kernels.float_common import f32_out, f32_tensor
from hexnn_import.ops.kernels.resize import out_size, source_coords
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: ImageTransform_f reads eight parameters per image: a0 a1 a2 b0 b1 b2 c0 c1.
TRANSFORM_PARAMS = 8


def lerp(a: np.ndarray, b: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``a * (1 - f) + b * f`` in float64; exactly ``a`` where ``f == 0`` (so Inf in ``b`` stays out)."""
    with np.errstate(invalid="ignore"):
        return np.where(f == 0, a, a * (1.0 - f) + b * f)


@register("ResizeBilinear_f")
class ResizeBilinearF(Kernel):
    """Bilinear resize in h and w to ``{h_out, w_out}`` (input 1, int32 ``[1,1,1,2]``).

    Source coordinates are TensorFlow's legacy ones, as for
    QuantizedResizeBilinear_8 (:mod:`hexnn_import.ops.kernels.resize`): with
    align_corners (optional input 2, 0 / non-zero, default 0) and ``out > 1``
    ``src = y * (in - 1) / (out - 1)``, otherwise ``src = y * in / out``. The
    text documents no half-pixel mode, so none is offered. Per axis
    ``i0 = floor(src)``, ``i1 = min(i0 + 1, in - 1)``, ``f = src - i0``;
    ``out = lerp(lerp(x00, x01, fx), lerp(x10, x11, fx), fy)`` in float64,
    rounded once to float32.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x32 = f32_tensor(ctx, inputs[0], "input data")
        h_out, w_out = out_size(ctx, inputs[1])
        align = flag_param(ctx, inputs[2], "align_corners") if len(inputs) > 2 else False
        _, h, w, _ = x32.shape
        if h < 1 or w < 1:
            raise ctx.fail(f"input data has shape {list(x32.shape)}, with no pixels to resample")
        ny, dy = source_coords(h, h_out, align)
        nx, dx = source_coords(w, w_out, align)
        y0, fy = ny // dy, ((ny % dy) / dy)[None, :, None, None]
        x0, fx = nx // dx, ((nx % dx) / dx)[None, None, :, None]
        y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
        x = x32.astype(np.float64)
        rows0, rows1 = x[:, y0], x[:, y1]
        top = lerp(rows0[:, :, x0], rows0[:, :, x1], fx)
        bottom = lerp(rows1[:, :, x0], rows1[:, :, x1], fx)
        return (f32_out(lerp(top, bottom, fy)),)


@register("ImageTransform_f")
class ImageTransformF(Kernel):
    """Projective transform of each image, bilinear, zeros outside (op text; TensorFlow's image transform).

    Input 1 holds eight float32 parameters per image, ``[a0 a1 a2 b0 b1 b2 c0
    c1]``, read flat (batch n uses values ``8n .. 8n+7``; the text requires
    "input batch == transform batch", so anything but ``8 * batches`` values is
    an error; every parameter must be finite). Output pixel (y, x) samples the
    input at ``x' = (a0 x + a1 y + a2) / k``, ``y' = (b0 x + b1 y + b2) / k``,
    ``k = c0 x + c1 y + 1`` (float32, in that order, as the device computes
    them); ``k == 0`` or a non-finite coordinate gives 0. With
    ``x0 = floor(x')``, ``fx = x' - x0`` (likewise y), the four neighbours
    ``(y0|y0+1, x0|x0+1)`` that lie outside the image count as 0.0 and
    ``out = lerp(lerp(v00, v01, fx), lerp(v10, v11, fx), fy)`` in float64,
    rounded once to float32. Output shape = input shape.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        img32 = f32_tensor(ctx, inputs[0], "input image")
        t = f32_tensor(ctx, inputs[1], "transform").reshape(-1)
        b, h, w, _ = img32.shape
        if t.size != TRANSFORM_PARAMS * b:
            raise ctx.fail(f"transform has {t.size} values; {b} image(s) need {TRANSFORM_PARAMS * b} "
                           f"({TRANSFORM_PARAMS} per image)")
        if not np.all(np.isfinite(t)):
            raise ctx.fail(f"transform holds non-finite values {t.tolist()}")
        if img32.size == 0:
            return (f32_out(img32),)
        p = [t.reshape(b, TRANSFORM_PARAMS)[:, i, None, None] for i in range(TRANSFORM_PARAMS)]
        a0, a1, a2, b0, b1, b2, c0, c1 = p  # each float32 [b, 1, 1]
        xo = np.arange(w, dtype=np.float32)[None, None, :]
        yo = np.arange(h, dtype=np.float32)[None, :, None]
        with np.errstate(all="ignore"):
            k = c0 * xo + c1 * yo + np.float32(1.0)
            xs = (a0 * xo + a1 * yo + a2) / k
            ys = (b0 * xo + b1 * yo + b2) / k
        valid = (k != 0) & np.isfinite(xs) & np.isfinite(ys)
        # Far-away coordinates only ever read zeros: clip before flooring so the indices stay small.
        xs = np.where(valid, np.clip(xs, -2, w + 1), 0).astype(np.float32)
        ys = np.where(valid, np.clip(ys, -2, h + 1), 0).astype(np.float32)
        xf, yf = np.floor(xs), np.floor(ys)
        fx = (xs - xf).astype(np.float64)[..., None]
        fy = (ys - yf).astype(np.float64)[..., None]
        ix, iy = xf.astype(np.int64), yf.astype(np.int64)
        img = img32.astype(np.float64)
        bidx = np.arange(b)[:, None, None]

        def pixel(yy: np.ndarray, xx: np.ndarray) -> np.ndarray:
            inside = valid & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            v = img[bidx, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
            return np.where(inside[..., None], v, 0.0)

        top = lerp(pixel(iy, ix), pixel(iy, ix + 1), fx)
        bottom = lerp(pixel(iy + 1, ix), pixel(iy + 1, ix + 1), fx)
        out = np.where(valid[..., None], lerp(top, bottom, fy), 0.0)
        return (f32_out(out),)
