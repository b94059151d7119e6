"""QuantizedChannelScale_32xf: scale each channel of qint32 data by a float, as hexagon_nn computes it.

Followed (SEMANTICS §0: the C code wins): ``ops/src/op_channelscale.c:
channelscale_32xf_execute``.

- The range passes through (output min/max = input min/max, copied).
- Each float32 scale becomes a 28-fraction-bit integer
  ``m = roundf_i32(k * 2**28)`` (the float32 product, then ``(int)(v +
  0.5f)`` with a float32 addition; Hexagon's conversion saturates).
- ``out = sat_i32((q * m + 2**27) >> 28)`` (``Q6_P_mpy_RR``,
  ``Q6_P_asrrnd_PI(prod, 28)``: round half up, ``Q6_R_sat_P``).
- The C counts scales outside (0, 1] ("any_bad_ones") but never refuses
  them: any finite scale is used as it is (NaN / Inf are errors here).
  A single scale applies to every channel (a single 1.0 copies the input).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.compiled import scale_q28
from hexnn_import.ops.kernel_io import float_data, i32_codes, range_out, require_4d
from hexnn_import.ops.nnlib_f32 import F, roundf_i32
from hexnn_import.ops.node_cache import node_cached, replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register

_I32_MIN, _I32_MAX = -2 ** 31, 2 ** 31 - 1
#: ``(float)(1 << 28)``.
_ONE_Q28 = F(2.0 ** 28)


def q28_scales(k: np.ndarray) -> np.ndarray:
    """``roundf_i32(k * (float)(1<<28))`` per float32 scale, int64 (saturated to int32 as Hexagon converts)."""
    with np.errstate(over="ignore"):
        v = k.astype(np.float32) * _ONE_Q28
    v = np.clip(v.astype(np.float64), -2.0 ** 31, 2.0 ** 31 - 1).astype(np.float32)  # keeps trunc in range
    return np.clip(roundf_i32(v), _I32_MIN, _I32_MAX).astype(np.int64)


def scale_codes(q: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``sat_i32((q * m + 2**27) >> 28)`` for int32 ``q`` and int64 Q28 scales ``m`` (last-axis broadcast).

    ``|q * m| <= 2**62``, so the int64 product and rounding term never overflow.
    """
    clip = bool(q.size) and int(np.abs(m).max()) > 1 << 28   # |scale| above 1 can leave int32
    fast = scale_q28(q, m, clip)   # the same int64 steps in one compiled pass
    if fast is not None:
        return fast
    v = np.multiply(q, m, dtype=np.int64)
    v += 1 << 27
    v >>= 28
    if clip:
        np.clip(v, _I32_MIN, _I32_MAX, out=v)
    return v.astype(np.int32)


@register("QuantizedChannelScale_32xf")
class QuantizedChannelScale32xf(Kernel):
    """``out[..., d] = sat_i32((q * round(scale[d] * 2**28) + 2**27) >> 28)``, range passed through (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(out, in_min, in_max)``."""
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, scale, mn_arr, mx_arr = inputs
        q = i32_codes(ctx, require_4d(ctx, data, "input data"), "input data")
        in_min, in_max = ctx.finite_range(mn_arr, mx_arr, "input")
        depth = q.shape[3]

        def build() -> np.ndarray:
            k = float_data(ctx, scale, "scale").astype(np.float32).reshape(-1)
            if k.size not in (1, depth):
                raise ctx.fail(f"scale has {k.size} elements (shape {list(np.shape(scale))}), expected "
                               f"[1,1,1,{depth}] (one per channel of input shape {list(q.shape)}) or [1,1,1,1]")
            return q28_scales(k)

        # the Q28 scales are kept per scale array and input depth (speed, issue 11)
        m = node_cached(ctx.state, "channel_scale_q28", (scale,), (depth,), build)
        mn, mx = range_out(in_min, in_max)
        if q is data:  # int32 data: later runs with the same other inputs redo only the arithmetic (node_cache)
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda q_new: (scale_codes(q_new, m), mn, mx))
        return (scale_codes(q, m), mn, mx)
