"""The dense 2-D convolutions of lib_nn: conv2d_deep, conv2d_shallowin, conv2d_1x1 (nn_conv2d_int8.h).

Each kernel takes its weights in its own layout, a BSO tensor (note 5), the
input zero point for implied padding and the window, and computes what
lib_nn's C computes: the accumulators start at the bias, take one step at a
time in the C's order (saturating after each), then the BSO output stage
(:func:`hexnn_import.xs3.vpu.bso_output_stage`).

- conv2d_deep (``src/c/conv2d_deep.c``, ``util/deep/nn_conv2d_hstrip_deep.c``):
  ``VLMACCR`` steps of the 32-channel chunks of each tap; in a padded window
  the rows above and below the image come first (:mod:`.order`);
- conv2d_shallowin (``src/c/conv2d_shallowin.c``,
  ``util/shallow/nn_conv2d_hstrip_shallowin.c``): one 32-byte ``VLMACCR``
  step per kernel row, padded rows first as for conv2d_deep;
- conv2d_1x1 (``src/c/conv2d_1x1.c``, ``conv2d_1x1_ext_ref``): the C
  saturates after every single product (``sat_s32``), input channels in order.

Layouts and constraints (lib_nn's documentation of each function):

- conv2d_deep: ``K[Y_c, K_h, K_w, X_c]``; X_c, Y_c multiples of 4; steps are
  the 32-channel chunks of each tap, taps row by row;
- conv2d_shallowin: ``K[Y_c, K_h, 32 / X_c, X_c]`` (the augmented width; taps
  ``k >= K_w`` are zero) so one kernel row is one 32-byte VLMACCR step; X_c
  in {4, 8, 16, 32}, Y_c a multiple of 4;
- conv2d_1x1: ``K[Y_c, X_c]``; 1x1 window, stride 1, no padding.

Windows must never lie wholly in padding.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.xs3.bso import unpack_bso
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.order import row_order_groups
from hexnn_import.xs3.vpu import (DEFAULT_OPTIONS, VPU_INT8_EPV, VPUOptions, bso_output_stage, can_saturate,
                                  chunked_steps, step_bounds, vlmaccr)
from hexnn_import.xs3.window import Window, patches


def _check_image(name: str, x: np.ndarray, channels: int) -> None:
    if x.dtype != np.int8 or x.ndim != 4:
        raise XS3Error(f"{name}: input must be int8 [B, H, W, C], got {x.dtype} {list(x.shape)}")
    if x.shape[3] != channels:
        raise XS3Error(f"{name}: input has {x.shape[3]} channels, the kernel tensor {channels}")


def _check_mult4(name: str, **counts: int) -> None:
    for label, n in counts.items():
        if n % 4:
            raise XS3Error(f"{name}: {label} = {n} must be a multiple of 4 (word-aligned pixels)")


def _finish(acc: np.ndarray, bso: np.ndarray, shape: tuple[int, ...], options: VPUOptions) -> np.ndarray:
    p = unpack_bso(bso, acc.shape[-1])
    y = bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2, options)
    return y.reshape(shape)


def accumulate_rows(x: np.ndarray, win: Window, out_hw: tuple[int, int], zero_point: int, bias: np.ndarray,
                    w_rows: np.ndarray, steps: list[tuple[int, int]]) -> np.ndarray:
    """``[B * Y_h * Y_w, Y_c]`` accumulators of a dense convolution in lib_nn's order (:mod:`.order`).

    ``w_rows``: ``[Y_c, K_h, R]``, the weights of each window row (``R``
    elements: ``K_w`` taps of ``X_c`` channels); ``steps`` cover one window
    (every row has the same steps, so a reordering of rows keeps them).
    """
    y_c, k_h, row = w_rows.shape
    p = patches(x, win, out_hw, zero_point)  # [B, Y_h, Y_w, K_h, K_w, X_c]
    b, oh, ow = p.shape[:3]
    p = p.reshape(b, oh, ow, k_h, row)
    if not can_saturate(bias, w_rows.reshape(y_c, -1), axis=1):  # any order gives the plain sum
        return vlmaccr(bias, p.reshape(-1, k_h * row), w_rows.reshape(y_c, -1).T, steps)
    acc = np.empty((b, oh, ow, y_c), dtype=np.int64)
    for rows, order in row_order_groups(win, x.shape[1], oh):
        cols = p[:, rows][:, :, :, order].reshape(-1, k_h * row)
        acc[:, rows] = vlmaccr(bias, cols, w_rows[:, order].reshape(y_c, -1).T, steps).reshape(b, len(rows), ow, y_c)
    return acc.reshape(-1, y_c)


def deep_weights(ohwi: np.ndarray) -> np.ndarray:
    """conv2d_deep layout: the TFLite ``[O, H, W, I]`` tensor as it is (standard layout)."""
    return np.ascontiguousarray(ohwi, dtype=np.int8)


def conv2d_deep(x: np.ndarray, k: np.ndarray, bso: np.ndarray, zero_point: int, win: Window,
                out_hw: tuple[int, int], options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """conv2d_deep: ``Y[B, Y_h, Y_w, Y_c]`` int8 from ``X[B, X_h, X_w, X_c]`` and ``K[Y_c, K_h, K_w, X_c]``."""
    y_c, k_h, k_w, x_c = k.shape
    _check_image("conv2d_deep", x, x_c)
    _check_mult4("conv2d_deep", X_c=x_c, Y_c=y_c)
    if (k_h, k_w) != (win.k_h, win.k_w):
        raise XS3Error(f"conv2d_deep: kernel {k_h}x{k_w} differs from the window {win.k_h}x{win.k_w}")
    win.check_overlap(x.shape[1:3], out_hw)
    w_rows = k.reshape(y_c, k_h, k_w * x_c)
    acc = accumulate_rows(x, win, out_hw, zero_point, _bias(bso, y_c), w_rows, chunked_steps([x_c] * (k_h * k_w)))
    return _finish(acc, bso, (x.shape[0], *out_hw, y_c), options)


def shallowin_weights(ohwi: np.ndarray) -> np.ndarray:
    """conv2d_shallowin layout: ``[O, K_h, 32 / X_c, X_c]``, taps past K_w zero (lib_nn's augmented width)."""
    o, kh, kw, c = ohwi.shape
    if c == 0 or VPU_INT8_EPV % c or c % 4:
        raise XS3Error(f"conv2d_shallowin: X_c = {c} must be 4, 8, 16 or 32")
    kw_hat = VPU_INT8_EPV // c
    if kw > kw_hat:
        raise XS3Error(f"conv2d_shallowin: K_w * X_c = {kw * c} must be <= 32")
    out = np.zeros((o, kh, kw_hat, c), dtype=np.int8)
    out[:, :, :kw] = ohwi
    return out


def conv2d_shallowin(x: np.ndarray, k: np.ndarray, bso: np.ndarray, zero_point: int, win: Window,
                     out_hw: tuple[int, int], options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """conv2d_shallowin: ``K[Y_c, K_h, 32 / X_c, X_c]``; one VLMACCR step per kernel row.

    The VPU reads 32 bytes per row (``32 / X_c`` pixels); the augmented taps
    past ``K_w`` carry zero weights, so only the window's ``K_w`` taps add to
    the step's sum.
    """
    y_c, k_h, kw_hat, x_c = k.shape
    _check_image("conv2d_shallowin", x, x_c)
    _check_mult4("conv2d_shallowin", X_c=x_c, Y_c=y_c)
    if kw_hat * x_c != VPU_INT8_EPV:
        raise XS3Error(f"conv2d_shallowin: kernel rows must be 32 bytes (32 / X_c taps), got {kw_hat} x {x_c}")
    if win.k_h != k_h or win.k_w > kw_hat:
        raise XS3Error(f"conv2d_shallowin: window {win.k_h}x{win.k_w} does not fit the kernel {k_h}x{kw_hat}")
    if np.any(k[:, :, win.k_w:]):
        raise XS3Error("conv2d_shallowin: kernel taps past K_w must be zero")
    win.check_overlap(x.shape[1:3], out_hw)
    w_rows = k[:, :, :win.k_w].reshape(y_c, k_h, win.k_w * x_c)
    acc = accumulate_rows(x, win, out_hw, zero_point, _bias(bso, y_c), w_rows, step_bounds([win.k_w * x_c] * k_h))
    return _finish(acc, bso, (x.shape[0], *out_hw, y_c), options)


def conv1x1_weights(ohwi: np.ndarray) -> np.ndarray:
    """conv2d_1x1 layout: ``[Y_c, X_c]`` (the 1x1 TFLite filter without its unit axes)."""
    o, kh, kw, c = ohwi.shape
    if (kh, kw) != (1, 1):
        raise XS3Error(f"conv2d_1x1: the filter is {kh}x{kw}, not 1x1")
    return np.ascontiguousarray(ohwi.reshape(o, c), dtype=np.int8)


def conv2d_1x1(x: np.ndarray, k: np.ndarray, bso: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """conv2d_1x1: ``K[Y_c, X_c]``; window 1x1 at X[0, 0], stride 1, no padding.

    ``conv2d_1x1_ext_ref`` saturates the accumulator after every product
    (``acc64[k] = sat_s32(acc64[k] + X[cin] * K[cin])``), input channels in
    order, so each product is one step.
    """
    y_c, x_c = k.shape
    _check_image("conv2d_1x1", x, x_c)
    _check_mult4("conv2d_1x1", X_c=x_c, Y_c=y_c)
    acc = vlmaccr(_bias(bso, y_c), x.reshape(-1, x_c), k.T, step_bounds([1] * x_c))
    return _finish(acc, bso, (*x.shape[:3], y_c), options)


def _bias(bso: np.ndarray, channels: int) -> np.ndarray:
    return unpack_bso(bso, channels).bias
