"""QuantizedInstanceNorm_8 as hexagon_nn computes it: ops/src/op_instancenorm.c ``execute_qinstancenorm_ref``
(the execute function of both QuantizedInstanceNorm_8 and its _ref op), step for step.

The C reads only the input codes (the input range is never read). Per batch ``b`` and channel ``d`` over
the ``wh = h*w`` codes: integer sum ``sm``, sum of squares ``ssq``, min and max; where ``max > min``
``xmean = (float)sm / wh`` and ``inv = wh / (sqrtf((float)(ssq*wh - sm*sm)) + 1e-5f*wh)``, and
``((float)min - xmean) * inv`` / ``((float)max - xmean) * inv`` widen the output range (which starts at
``[0, 0]``); constant channels get ``xmean = inv = 0``. Then ``max = fmaxf(max, min + 1e-5f)``,
``adjust_minmax_for_zero``, ``scl = 255 / (max - min)``, and per channel ``scale = roundf_i32(1024*inv*scl)``,
``offs = roundf_i32(1024*(xmean*inv + min)*scl)``, code ``= saturate_u8((x*scale - offs + 512) >> 10)``.

Scratch layout, modelled because it changes results for batch > 1: ``mean`` and ``invsqrt_variance``
are ``float[depth*batches]`` arrays followed by ``int32 out_scale[depth], out_offs[depth]`` in one
scratch block, but are indexed ``[b*batches + d]`` (not ``b*depth``), and the first pass also stores
``invsqrt_variance[d]``. Later batches therefore overwrite earlier batches' slots, and reads may land on
another slot or on the int32 scale/offset words (reinterpreted as float). The model replays the C's
writes on one word array in the C's order, so every read sees what the C reads.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.nnlib_f32 import F, adjust_minmax_for_zero

_I32_MIN = -2 ** 31


def roundf_i32_x86(x: np.ndarray) -> np.ndarray:
    """``roundf_i32`` (``(int)(x + copysignf(0.5f, x))``, float32 sum) with the x86 cast of the oracle build:
    NaN and out-of-range values give INT_MIN. int64 result."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        t = (x + np.copysign(F(0.5), x)).astype(np.float64)
        ok = np.isfinite(t) & (t > -2.0 ** 31 - 1) & (t < 2.0 ** 31)
        return np.where(ok, np.trunc(np.where(ok, t, 0.0)), _I32_MIN).astype(np.int64)


def _wrap32(v: np.ndarray) -> np.ndarray:
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def instancenorm_q8(x: np.ndarray) -> tuple[np.ndarray, np.float32, np.float32]:
    """``(codes, out_min, out_max)`` of ``execute_qinstancenorm_ref`` for quint8 codes ``x`` of shape [b,h,w,d]."""
    nb, h, w, nd = x.shape
    wh = h * w
    xs = x.reshape(nb, wh, nd)
    xmin = xs.min(axis=1).astype(np.int64)
    xmax = xs.max(axis=1).astype(np.int64)
    sm = xs.sum(axis=1, dtype=np.int64)
    ssq = (xs.astype(np.int64) ** 2).sum(axis=1)
    var = xmax > xmin
    dl = ssq * wh - sm * sm
    with np.errstate(divide="ignore", invalid="ignore"):
        xmean = np.where(var, sm.astype(np.float32) / F(wh), F(0.0)).astype(np.float32)
        inv = np.where(var, F(wh) / (np.sqrt(dl.astype(np.float32)) + F(F(1e-5) * F(wh))), F(0.0)).astype(np.float32)
    out_min, out_max = F(0.0), F(0.0)
    if var.any():
        ymin = (xmin.astype(np.float32) - xmean) * inv
        ymax = (xmax.astype(np.float32) - xmean) * inv
        out_min = min(out_min, F(ymin[var].min()))
        out_max = max(out_max, F(ymax[var].max()))
    out_max = max(out_max, F(out_min + F(1e-5)))
    _, out_min, out_max = adjust_minmax_for_zero(out_min, out_max)
    scl = F(F(255.0) / F(out_max - out_min))
    # the scratch words after the integer accumulators: mean[.], invsqrt_variance[.], out_scale[d], out_offs[d]
    db = nd * nb
    words = np.zeros(2 * db + 2 * nd + nb * nb + nd, np.float32)
    bits = words.view(np.int32)
    d = np.arange(nd)
    # first pass writes, in the C's order: per b, per d: [invsqrt[d]], mean[b*B+d], invsqrt[b*B+d]
    idx = np.stack([np.where(var, db + d, -1), np.broadcast_to(np.arange(nb)[:, None] * nb + d, (nb, nd)),
                    db + np.arange(nb)[:, None] * nb + d], axis=-1).reshape(-1)
    val = np.stack([inv, xmean, inv], axis=-1).reshape(-1)
    keep = idx >= 0
    idx, val = idx[keep], val[keep]
    last = len(idx) - 1 - np.unique(idx[::-1], return_index=True)[1]
    words[idx[last]] = val[last]
    out = np.empty(xs.shape, np.uint8)
    for b in range(nb):
        mean_b = words[b * nb + d].copy()
        norm_b = words[db + b * nb + d].copy()
        with np.errstate(invalid="ignore", over="ignore"):
            scale = roundf_i32_x86(F(1024.0) * norm_b * scl)
            offs = roundf_i32_x86(F(1024.0) * (mean_b * norm_b + out_min) * scl)
        bits[2 * db + d] = scale.astype(np.int32)
        bits[2 * db + nd + d] = offs.astype(np.int32)
        val32 = _wrap32(_wrap32(xs[b].astype(np.int64) * scale) - offs)
        out[b] = np.clip(_wrap32(val32 + 512) >> 10, 0, 255).astype(np.uint8)
    return out.reshape(x.shape), out_min, out_max
