"""QuantizedBiasAdd_8p8to32: quint8 data + quint8 per-channel bias -> qint32 (SEMANTICS.md §3)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.quant import step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register


def bias_add_8p8(x: np.ndarray, in_range: tuple[float, float], b: np.ndarray,
                 b_range: tuple[float, float]) -> tuple[np.ndarray, float]:
    """``(acc, M)``: qint32 sum of ``x`` and the depth-broadcast ``b``, output range ``(-M, M)``.

    ``M = max(|in_min|, in_max, |b_min|, b_max) * 2**17``, ``one = 2*M / 2**32``,
    ``acc = trunc((x - x_zero) * (in_step/one) + (b - b_zero) * (b_step/one) + 0.5)``
    evaluated in float32 (SEMANTICS §3). The two gains are computed in
    float64 and rounded once to float32; everything per element is float32.
    """
    in_step, x_zero = step_zero(*in_range)
    b_step, b_zero = step_zero(*b_range)
    m = max(abs(in_range[0]), in_range[1], abs(b_range[0]), b_range[1]) * 2.0 ** 17
    one = 2.0 * m / 2.0 ** 32
    gx = np.float32(in_step / one)
    gb = np.float32(b_step / one)
    xs = (x.astype(np.float32) - np.float32(x_zero)) * gx
    bs = (b.astype(np.float32) - np.float32(b_zero)) * gb
    acc = np.trunc(xs + bs + np.float32(0.5))
    return acc.astype(np.int32), m


@register("QuantizedBiasAdd_8p8to32")
class QuantizedBiasAdd8p8to32(Kernel):
    """Add a quint8 bias along the depth axis to quint8 data, qint32 result (SEMANTICS §3).

    Choices where the documents are silent: the bias is one value per depth
    channel - it must hold exactly ``d`` values (any shape, e.g. ``[1,1,1,d]``)
    where ``d`` is the data's last axis - and is broadcast over ``b, h, w``.
    Both ranges must be sane. Outputs are min then max (catalog note).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, bias, in_mn, in_mx, b_mn, b_mx = inputs
        in_range = ctx.sane_range(in_mn, in_mx, "input")
        b_range = ctx.sane_range(b_mn, b_mx, "bias")
        x = u8_codes(ctx, data, "input data")
        b = u8_codes(ctx, bias, "bias data")
        if x.ndim < 1:
            raise ctx.fail("input data is a 0-d array, expected [b,h,w,d]")
        depth = x.shape[-1]
        if b.size != depth:
            raise ctx.fail(f"bias has shape {list(b.shape)} ({b.size} values), "
                           f"expected {depth} values, one per channel of input shape {list(x.shape)}")
        acc, m = bias_add_8p8(x, in_range, b.reshape(-1), b_range)
        return (acc, *range_out(-m, m))
