"""Input readers and 16-bit box codes shared by the vision and detection kernels.

quint16 (SEMANTICS.md §1 carried to 16 bits, as the q8q16 op texts use it):
codes 0..65535 with ``step = (max - min) / 65535`` and
``zero = round_away(-min / step)``, so ``real = (q - zero) * step``. With the
range ``[0, 8191.875]`` that hexagon_nn gives its box outputs this is the
nominal box quantization of the op texts ("zero = 0, step = 0.125"). Box
tensors that come with no min/max input (QuantizedHeatmapMaxKP_8's
rectangles, QuantizedRoiAlignV2_8's RoIs, AxisAlignedBBoxTransform_q8q16's
boxes) use that nominal quantization, :data:`BOX_STEP` per code.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.quant import round_away
from hexnn_import.ops.registry import KernelContext

#: Real size of one quint16 box code when a box tensor has no min/max ("step = 0.125").
BOX_STEP = 0.125
#: The range of hexagon_nn's quint16 box outputs: ``[0, 65535 * 0.125]``.
BOX_RANGE = (0.0, 65535 * BOX_STEP)
U16_MAX = 65535


def q16_step_zero(mn: float, mx: float) -> tuple[float, int]:
    """``(step, zero)`` of a quint16 range (module docstring)."""
    step = (float(mx) - float(mn)) / U16_MAX
    if step <= 0:
        return step, 0
    return step, int(min(U16_MAX, max(0.0, round_away(-float(mn) / step))))


def dequantize_u16(q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    """``real = (q - zero) * step`` in float64."""
    step, zero = q16_step_zero(mn, mx)
    return (np.asarray(q, dtype=np.float64) - zero) * step


def quantize_u16(x: np.ndarray, mn: float, mx: float) -> np.ndarray:
    """``q = clip(round_away(x / step) + zero, 0, 65535)`` as uint16."""
    step, zero = q16_step_zero(mn, mx)
    return np.clip(round_away(np.asarray(x, dtype=np.float64) / step) + zero, 0, U16_MAX).astype(np.uint16)


def u16_codes(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """quint16 codes as uint16; other integral arrays are accepted when every value is in 0..65535."""
    a = np.asarray(arr)
    if a.dtype == np.uint16:
        return a
    if a.dtype.kind not in "biuf":
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected quint16 codes")
    if a.size:
        if a.dtype.kind == "f" and not (np.all(np.isfinite(a)) and np.all(a == np.trunc(a))):
            raise ctx.fail(f"{what} holds non-integer values, expected quint16 codes")
        if a.min() < 0 or a.max() > U16_MAX:
            raise ctx.fail(f"{what} holds values in [{a.min()}, {a.max()}], outside the code range [0, 65535]")
    return a.astype(np.uint16)


def finite_scalar(ctx: KernelContext, arr: np.ndarray, what: str) -> float:
    """A float scalar input that must be finite."""
    v = ctx.scalar(arr, what)
    if not math.isfinite(v):
        raise ctx.fail(f"{what} is {v}, expected a finite number")
    return v


def positive_scalar(ctx: KernelContext, arr: np.ndarray, what: str) -> float:
    """A finite float scalar input that must be > 0."""
    v = finite_scalar(ctx, arr, what)
    if v <= 0:
        raise ctx.fail(f"{what} is {v}, it must be > 0")
    return v


def int_in(ctx: KernelContext, arr: np.ndarray, what: str, lo: int, hi: int | None = None) -> int:
    """An int32 scalar parameter within ``lo..hi`` (``hi`` None: no upper bound)."""
    v = int_param(ctx, arr, what)
    if v < lo or (hi is not None and v > hi):
        bound = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ctx.fail(f"{what} is {v}, it must be {bound}")
    return v


def batch_indices(ctx: KernelContext, arr: np.ndarray, what: str, count: int, batches: int) -> np.ndarray:
    """Per-box batch indices (int32, ``count`` of them), each in ``0..batches-1``."""
    a = np.asarray(arr)
    if a.dtype.kind not in "iu" and not (a.dtype.kind == "f" and np.all(a == np.trunc(a))):
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected int32 batch indices")
    idx = a.reshape(-1).astype(np.int64)
    if idx.size != count:
        raise ctx.fail(f"{what} has {idx.size} entries for {count} boxes")
    if idx.size and (idx.min() < 0 or idx.max() >= batches):
        bad = int(idx[(idx < 0) | (idx >= batches)][0])
        raise ctx.fail(f"{what} holds batch index {bad}, outside 0..{batches - 1}")
    return idx
