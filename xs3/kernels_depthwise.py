"""conv2d_depthwise of lib_nn (nn_conv2d_int8.h): one filter per channel, no depth multiplier.

Layout: ``K[K_h, K_w, X_c]`` (standard layout), Y_c == X_c, X_c a multiple
of 4. The VPU works 16 channels at a time with VLMACC (elementwise 8-bit
products into 32-bit accumulators): every tap is one step and the
accumulators saturate after each tap, taps row by row. lib_nn's C
(``src/c/conv2d_depthwise.c``, ``util/depthwise/nn_conv2d_hstrip_depthwise.c``)
takes the taps in the same order (padded windows too) and has the same
output stage (``vlsat_single_s16``, then ``vlsat_single_s8`` by shift2); it
does not saturate its int32 accumulators, see
:func:`hexnn_import.xs3.vpu.vlmacc_taps`.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.xs3.bso import unpack_bso
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions, bso_output_stage, vlmacc_taps
from hexnn_import.xs3.window import Window, patches


def depthwise_weights(tflite_w: np.ndarray) -> np.ndarray:
    """conv2d_depthwise layout from TFLite's ``[1, K_h, K_w, C]`` (depth multiplier 1): ``[K_h, K_w, C]``."""
    if tflite_w.ndim != 4 or tflite_w.shape[0] != 1:
        raise XS3Error(f"conv2d_depthwise: expected TFLite weights [1, K_h, K_w, C], got {list(tflite_w.shape)}")
    return np.ascontiguousarray(tflite_w[0], dtype=np.int8)


def conv2d_depthwise(x: np.ndarray, k: np.ndarray, bso: np.ndarray, zero_point: int, win: Window,
                     out_hw: tuple[int, int], options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """``Y[B, Y_h, Y_w, X_c]`` int8 from ``X[B, X_h, X_w, X_c]`` and ``K[K_h, K_w, X_c]``."""
    k_h, k_w, c = k.shape
    if x.dtype != np.int8 or x.ndim != 4 or x.shape[3] != c:
        raise XS3Error(f"conv2d_depthwise: input must be int8 [B, H, W, {c}], got {x.dtype} {list(x.shape)}")
    if c % 4:
        raise XS3Error(f"conv2d_depthwise: X_c = {c} must be a multiple of 4")
    if (k_h, k_w) != (win.k_h, win.k_w):
        raise XS3Error(f"conv2d_depthwise: kernel {k_h}x{k_w} differs from the window {win.k_h}x{win.k_w}")
    win.check_overlap(x.shape[1:3], out_hw)
    taps = patches(x, win, out_hw, zero_point).reshape(-1, k_h * k_w, c)
    p = unpack_bso(bso, c)
    acc = vlmacc_taps(p.bias, taps, k.reshape(k_h * k_w, c))
    y = bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2, options)
    return y.reshape(x.shape[0], *out_hw, c)
