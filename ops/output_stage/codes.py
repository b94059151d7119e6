"""From exact product sums to quint8 codes, one output range's constants given (SEMANTICS.md §5).

Shared by both stages of :mod:`hexnn_import.ops.output_stage`: the specified one
(:func:`~.spec_stage.requantize_auto`) and hexagon_nn's (:func:`~.nnlib_execute.run_exact`). The
constants and the formula are :mod:`.requant`'s: :func:`presat` gives the pre-saturation codes (int64,
or float64 values whose floor is the code where a :class:`~.requant.FloatStage` is exact),
:func:`saturated` the codes, :func:`final_codes` both in one compiled pass where numba is installed.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.compiled import stage_u8
from hexnn_import.ops.output_stage.requant import FloatStage, Requant, presat_codes, saturate
from hexnn_import.ops.quant import fast_clip


def presat(sums: np.ndarray, rq: Requant, fs: FloatStage | None) -> np.ndarray:
    """Pre-saturation codes: float64 values whose floor is the code (``fs``, or the bias-only codes of
    ``rq.fixed``), or int64 codes."""
    if rq.fixed is not None:
        return np.broadcast_to(rq.fixed, sums.shape).copy()
    if fs is not None:
        if not sums.size:  # an empty output (a batch of 0): no codes
            return np.zeros(sums.shape, np.float64)
        width = sums.shape[-2] if sums.ndim >= 2 and sums.flags.c_contiguous else 1
        mm, off = fs.row(width)
        rows = sums.reshape(-1, mm.size)
        # a same-dtype multiply is ~2x faster than numpy's mixed float32 x float64 loop
        y = rows.astype(np.float64) if rows.dtype != np.float64 else rows.copy()
        y *= mm
        y += off
        return y.reshape(sums.shape)
    return presat_codes(sums if sums.dtype == np.int64 else sums.astype(np.int64), rq)


def presat_extremes(codes: np.ndarray) -> tuple[int, int]:
    """Smallest and largest pre-saturation code of :func:`presat`'s result."""
    lo, hi = codes.min(), codes.max()
    if codes.dtype.kind == "f":
        return math.floor(lo), math.floor(hi)
    return int(lo), int(hi)


def saturated(codes: np.ndarray) -> np.ndarray:
    """``sat_u8`` of :func:`presat`'s result; for floats one clipping pass whose truncating cast to
    uint8 is the floor on [0, 255]."""
    if codes.dtype.kind == "f":
        q = np.empty(codes.shape, dtype=np.uint8)
        fast_clip(codes, 0.0, 255.0, out=q, casting="unsafe")
        return q
    return saturate(codes)


def final_codes(sums: np.ndarray, rq: Requant, fs: FloatStage | None) -> np.ndarray:
    """quint8 codes ``saturated(presat(sums, rq, fs))``; with a :class:`FloatStage` in one compiled
    pass where numba is installed (:func:`hexnn_import.ops.compiled.stage_u8`, the same operations)."""
    if fs is not None and rq.fixed is None:
        q = stage_u8(sums, fs)
        if q is not None:
            return q
    return saturated(presat(sums, rq, fs))


def requantize_fixed(sums: np.ndarray, rq: Requant, fs: FloatStage | None) -> np.ndarray:
    """quint8 codes of the §5 stage on a fixed output range (the constants of a plan's ``stage``:
    :meth:`~.spec_stage.OutputPlan.stage`, :meth:`~.nnlib_execute.ExactPlan.stage`)."""
    return final_codes(sums, rq, fs)
