"""Convolution window geometry of lib_nn (``nn_window_params_t``) and patch extraction.

A window has a shape ``(K_h, K_w)``, a start ``(W_r0, W_c0)`` (the top-left
tap of the first output pixel in the input's coordinates; negative = implied
padding) and strides ``(W_vert, W_hori)``. Implied padding taps read the
input zero point (``zero_point`` of the conv2d kernels).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.xs3.errors import XS3Error


@dataclass(frozen=True)
class Window:
    """``nn_window_params_t``: shape, start and stride of a convolution window."""

    k_h: int
    k_w: int
    start_row: int = 0
    start_col: int = 0
    stride_v: int = 1
    stride_h: int = 1

    def rows_cols(self, out_h: int, out_w: int) -> tuple[np.ndarray, np.ndarray]:
        """First input row / column of each output row / column."""
        return (self.start_row + self.stride_v * np.arange(out_h), self.start_col + self.stride_h * np.arange(out_w))

    def check_overlap(self, x_hw: tuple[int, int], y_hw: tuple[int, int]) -> None:
        """XS3Error when some output pixel's window lies wholly in padding (unsupported by lib_nn)."""
        rows, cols = self.rows_cols(*y_hw)
        bad_r = (rows + self.k_h <= 0) | (rows >= x_hw[0])
        bad_c = (cols + self.k_w <= 0) | (cols >= x_hw[1])
        if bad_r.any() or bad_c.any():
            raise XS3Error(f"window {self} lies wholly in padding for some output pixel of {y_hw} over input {x_hw}")


def tflite_window(x_hw: tuple[int, int], y_hw: tuple[int, int], k_hw: tuple[int, int], stride: tuple[int, int],
                  same: bool) -> Window:
    """The lib_nn window of a TFLite conv: SAME pads ``total // 2`` before (TFLite's ComputePadding)."""
    starts = []
    for x, y, k, s in zip(x_hw, y_hw, k_hw, stride):
        total = max((y - 1) * s + k - x, 0) if same else 0
        starts.append(-(total // 2))
    return Window(k_hw[0], k_hw[1], starts[0], starts[1], stride[0], stride[1])


def patches(x: np.ndarray, win: Window, out_hw: tuple[int, int], zero_point: int) -> np.ndarray:
    """``[B, Y_h, Y_w, K_h, K_w, C]`` windows of ``x`` ``[B, H, W, C]``; padding taps hold ``zero_point``."""
    b, h, w, c = x.shape
    oh, ow = out_hw
    top, left = max(-win.start_row, 0), max(-win.start_col, 0)
    need_h = win.start_row + (oh - 1) * win.stride_v + win.k_h
    need_w = win.start_col + (ow - 1) * win.stride_h + win.k_w
    bottom, right = max(need_h - h, 0), max(need_w - w, 0)
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=zero_point)
    r0, c0 = win.start_row + top, win.start_col + left
    view = np.lib.stride_tricks.sliding_window_view(xp, (win.k_h, win.k_w), axis=(1, 2))
    view = view[:, r0:r0 + (oh - 1) * win.stride_v + 1:win.stride_v, c0:c0 + (ow - 1) * win.stride_h + 1:win.stride_h]
    return np.ascontiguousarray(view.transpose(0, 1, 2, 4, 5, 3))
