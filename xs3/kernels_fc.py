"""Fully-connected kernels of lib_nn (nn_fully_connected.h, ``src/c/fully_connected.c``).

- fully_connected_8 / fully_connected_16: ``W[M, N]`` in standard layout, N
  a multiple of 4 (rows zero-padded at the end), BSO output stage to int8 /
  int16; steps are the 32-element ``VLMACCR`` chunks of a row. Where no
  accumulator saturates this is exactly ``fully_connected_8_ref`` /
  ``fully_connected_16_ref``. Those C references sum every product in
  int64 and saturate once at the end ("for VERY deep inputs, it is possible
  that this doesn't match the assembly"); the steps here are the VPU's.
- fc_deepin_shallowout_16: the older kernel with a plain int32 bias, per
  channel shifts and Q1.14 scales (the BSS stage), N a multiple of 32;
  ``fc_deepin_shallowout_16_ref`` saturates after each 32-element step too.

Each takes ``X[R, N]`` (R input vectors, one kernel call per row on the device).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.xs3.bso import BSSParams, unpack_bso
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.vpu import (DEFAULT_OPTIONS, VPUOptions, bso_output_stage, bso_output_stage16,
                                  bss_output_stage, chunked_steps, vlmaccr)


def fc_weights(w: np.ndarray) -> np.ndarray:
    """fully_connected_8 / _16 layout: ``W[M, N]`` with each row zero-padded to a multiple of 4."""
    m, n = w.shape
    pad = -n % 4
    return np.ascontiguousarray(np.pad(w, ((0, 0), (0, pad))), dtype=np.int8)


def pad_inputs(x: np.ndarray, n: int) -> np.ndarray:
    """``X[R, N0]`` zero-padded to ``N`` columns (the padded rows of W are zero)."""
    return np.pad(x, ((0, 0), (0, n - x.shape[1]))) if x.shape[1] < n else x


def _accumulate(name: str, x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    m, n = w.shape
    if n % 4:
        raise XS3Error(f"{name}: N = {n} must be a multiple of 4 (pad the rows of W with zeros)")
    if x.dtype != np.int8 or x.ndim != 2 or x.shape[1] != n:
        raise XS3Error(f"{name}: input must be int8 [R, {n}], got {x.dtype} {list(x.shape)}")
    return vlmaccr(bias, x, w.T, chunked_steps([n]))


def fully_connected_8(x: np.ndarray, w: np.ndarray, bso: np.ndarray,
                      options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """``y[R, M]`` int8 = BSO stage of ``bias + W x`` (fully_connected_8)."""
    p = unpack_bso(bso, w.shape[0])
    acc = _accumulate("fully_connected_8", x, w, p.bias)
    return bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2, options)


def fully_connected_16(x: np.ndarray, w: np.ndarray, bso: np.ndarray,
                       options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """``y[R, M]`` int16 = BSO stage without the 8-bit reduction (fully_connected_16)."""
    p = unpack_bso(bso, w.shape[0])
    acc = _accumulate("fully_connected_16", x, w, p.bias)
    return bso_output_stage16(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2, options)


def fc_deepin_shallowout_16(x: np.ndarray, w: np.ndarray, bss: BSSParams) -> np.ndarray:
    """``y[R, M]`` int16 = ``sat16(((bias + W x) >> shift) * scale >> 14)`` with rounding (BSS stage)."""
    m, n = w.shape
    if n % 32:
        raise XS3Error(f"fc_deepin_shallowout_16: C_in = {n} must be a multiple of 32")
    acc = _accumulate("fc_deepin_shallowout_16", x, w, np.asarray(bss.bias, dtype=np.int64))
    return bss_output_stage(acc, bss.shift.astype(np.int64), bss.scale.astype(np.int64))
