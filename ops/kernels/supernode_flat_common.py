"""What the flat 8-bit supernode's device code (:mod:`.supernode_flat_device`, op_supernode.c) and its HVX /
assembly path (:mod:`.supernode_flat_hvx`) share: the int32 wrap, the window sums, the float32 levels, include/
quantize.h ``quantize_uint``, op_supernode.c ``bad_depth``, ``supernode_check_ref``'s starting range and
``supernode_execute_ref``'s window geometry, retries and reciprocal (the flat 16-bit supernode,
:mod:`.q16_supernode_flat_device`, runs the same C)."""
from __future__ import annotations

import numpy as np
from hexnn_import.ops.conv_core import ConvGeometry, centered_padded, im2col
from hexnn_import.ops.nnlib_f32 import trunc_i32
from hexnn_import.ops.padding import nn_outsize_padding
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


def ref_geometry(h: int, w: int, fh: int, fw: int, sh: int, sw: int, padding: int) -> ConvGeometry:
    """Output size ``nn_pad_compute_outsize`` of the input, window start ``nn_pad_compute_before`` of the output
    size (as op_supernode.c calls it); the trailing padding covers every window's reach."""
    oh, ow = nn_outsize_padding(h, fh, sh, padding)[0], nn_outsize_padding(w, fw, sw, padding)[0]
    top, left = nn_outsize_padding(oh, fh, sh, padding)[1], nn_outsize_padding(ow, fw, sw, padding)[1]
    bottom = max(0, (oh - 1) * sh + fh - top - h)
    right = max(0, (ow - 1) * sw + fw - left - w)
    return ConvGeometry(oh, ow, top, bottom, left, right, sh, sw)


def initial_range(o_min: F, o_max: F) -> list:
    """``supernode_check_ref``: ``[min, max, min fixed, max fixed]``."""
    mx, hi_fixed = (F(1.0 / 128.0), False) if o_max == np.inf else (F(o_max), True)
    mn, lo_fixed = (F(-mx), False) if o_min == -np.inf else (F(o_min), True)
    return [mn, mx, lo_fixed, hi_fixed]


def settle_ref(ctx: KernelContext, r: list, sums_max: int, sums_min: int, lvl: F) -> F:
    """``supernode_execute_ref``'s retries on the node's range ``r`` (in place); returns ``minval_offset``."""
    for _ in range(MAX_DOUBLINGS):
        off = F(F(-r[0]) / lvl)
        maxsum, minsum = int(trunc_i32(F(F(sums_max) + off))), int(trunc_i32(F(F(sums_min) + off)))
        if not r[3] and F(F(maxsum) * lvl) > F(r[1] - r[0]):
            while F(r[1] - r[0]) < F(F(maxsum) * lvl):
                r[1] = F(r[1] * F(2))
            continue
        if not r[2] and F(F(minsum) * lvl) < 0:
            for _ in range(MAX_DOUBLINGS):
                r[0] = F(r[0] * F(2))
                minsum = int(trunc_i32(F(F(minsum) - off)))
                off = F(F(-r[0]) / lvl)
                minsum = int(trunc_i32(F(F(minsum) + off)))
                if not F(F(minsum) * lvl) < 0:
                    break
            else:
                break
            continue
        return off
    raise ctx.fail(f"output range [{r[0]}, {r[1]}] never settles: the device's retries would not end")


def recip_ref(ctx: KernelContext, r: list, lvl: F) -> int:
    """``0x00ff0000 / maxrange`` (int division, ``USE_16BITS_RECIP``) as uint32."""
    maxrange = int(trunc_i32(F(F(F(r[1] - r[0]) / lvl) + F(0.5))))
    if maxrange == 0:
        raise ctx.fail(f"output range [{r[0]}, {r[1]}] is below one product level {lvl}: the device divides by 0")
    q = RECIP_NUM // abs(maxrange) * (1 if maxrange > 0 else -1)
    return q % 2 ** 32
