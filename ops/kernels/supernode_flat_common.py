"""What the flat 8-bit supernode's device code (:mod:`.supernode_flat_device`, op_supernode.c) and its HVX /
assembly path (:mod:`.supernode_flat_hvx`) share: the int32 wrap, the window sums, the float32 levels, include/
quantize.h ``quantize_uint`` and op_supernode.c ``bad_depth``."""
from __future__ import annotations

import numpy as np
from hexnn_import.ops.conv_core import ConvGeometry, centered_padded, im2col
from hexnn_import.ops.nnlib_f32 import trunc_i32
from hexnn_import.ops.registry import KernelContext

F = np.float32
MAX_DOUBLINGS = 512
RECIP_NUM = 0x00FF0000
PAD_SAME_CAFFE = 3


def wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values wrapped to int32 (two's complement)."""
    return (np.asarray(v, np.int64) + 2 ** 31) % 2 ** 32 - 2 ** 31


def conv_sums(x: np.ndarray, w: np.ndarray, in_off: int, f_off: int, g: ConvGeometry) -> np.ndarray:
    """``sum((x - in_off) * (w - f_off))`` over the taps inside the input, int64 wrapped to int32,
    ``[b, oh, ow, dout]``."""
    fh, fw, din, dout = w.shape
    if g.out_h <= 0 or g.out_w <= 0:
        return np.zeros((x.shape[0], max(g.out_h, 0), max(g.out_w, 0), dout), np.int64)
    cols = im2col(centered_padded(x, in_off, g), fh, fw, g)
    wm = w.astype(np.float64).reshape(fh * fw * din, dout) - f_off
    return wrap32(np.matmul(cols, wm).astype(np.int64)).reshape(x.shape[0], g.out_h, g.out_w, dout)


def level(ctx: KernelContext, mn: F, mx: F, div: F, what: str) -> F:
    """``(max - min) / div`` in float32, refused unless positive and finite (the device divides by it)."""
    lv = F(F(mx - mn) / div)
    if not (np.isfinite(lv) and lv > 0):
        raise ctx.fail(f"{what} range [{mn}, {mx}] gives a level of {lv} (op_supernode.c divides by it)")
    return lv


def quantize_uint(val: float, mn: F, mx: F) -> int:
    """include/quantize.h ``quantize_uint``: ``max(0, roundf((val - min) * (255 / fmaxf(1e-18f, max - min))))``."""
    rng = max(F(1e-18), F(mx - mn))
    v = F(F(F(val) - mn) * F(F(255.0) / rng))
    r = np.floor(np.abs(np.float64(v)) + 0.5) * np.sign(np.float64(v))
    return max(0, int(trunc_i32(F(r))))


def bad_depth(fh: int, fw: int, din: int, padding: int) -> bool:
    """op_supernode.c ``bad_depth``: ``filt_h * filt_w * depth`` not a multiple of 16 (HPAD), or SAME_CAFFE."""
    return (fh * fw * din) % 16 != 0 or padding == PAD_SAME_CAFFE
