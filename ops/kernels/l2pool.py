"""QuantizedL2Pool_8 on flat quint8 tensors (SEMANTICS.md §3 geometry; §6 is silent on L2).

hexagon_nn_ops.txt names the op beside Max and Avg pooling ("Max Pool,
Average Pool, L2Pool operations on qu8") and gives it the same five inputs,
so window, stride and padding are read exactly as the other pools read them
(:class:`hexnn_import.ops.kernels.pool._Pool`, :mod:`hexnn_import.ops.windows`).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.kernels.pool import _Pool
from hexnn_import.ops.quant import sat_u8, step_zero
from hexnn_import.ops.registry import KernelContext, register
from hexnn_import.ops.windows import window_view


def round_sqrt_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``round_half_up(sqrt(num / den))`` exactly, for int64 ``num >= 0`` and ``den >= 1``.

    The float64 estimate is off by at most one near a half-way point; it is
    corrected with the exact integer test ``n - 1/2 <= sqrt(num/den) < n + 1/2``
    i.e. ``(2n - 1)**2 * den <= 4 * num < (2n + 1)**2 * den``.
    """
    n = np.floor(np.sqrt(num / den) + 0.5).astype(np.int64)
    four = 4 * num
    n = np.where((2 * n + 1) ** 2 * den <= four, n + 1, n)
    n = np.where((n > 0) & ((2 * n - 1) ** 2 * den > four), n - 1, n)
    return n


@register("QuantizedL2Pool_8")
class QuantizedL2Pool8(_Pool):
    """Root mean square over each window's in-bounds taps (padding not counted).

    Choices where the documents are silent (SEMANTICS §6 names Max and Avg
    pooling only):

    - real result ``sqrt(mean(real**2))`` with ``real = (q - zero) * step``
      (TFLite's L2_POOL_2D, which also averages over in-bounds taps only);
    - output range ``[0, in_max - in_min]``: the result is never negative and
      never exceeds ``max(-in_min, in_max)``, and this range keeps the input's
      step with zero at code 0, so ``out = round_half_up(sqrt(S / cnt))``
      where ``S = sum((q - zero)**2)`` over the ``cnt`` in-bounds taps, an
      exact integer rounding (no fixed-point reciprocal, unlike AvgPool);
    - out-of-bounds taps are filled with the zero code, so they add 0 to S.

    Window, stride and padding as QuantizedMaxPool_8 (input range must be sane).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x, mn, mx, rows, cols = self.geometry(ctx, inputs)
        _, zero = step_zero(mn, mx)
        cnt = rows.tap_counts()[:, None] * cols.tap_counts()[None, :]  # [out_h, out_w], each >= 1
        dev = x.astype(np.int64) - zero
        total = window_view(dev * dev, rows, cols, fill=0).sum(axis=(-2, -1), dtype=np.int64)
        out = round_sqrt_ratio(total, np.maximum(cnt, 1)[None, :, :, None])
        return (sat_u8(out), *range_out(0.0, mx - mn))
