"""Small lib_nn operators: ``lookup8``, ``requantize_16_to_8`` (``src/c/nn_operator.c``), ``pad_ref``
(``src/c/pad.c``), plus :func:`clamp_lut`, the lookup table of a fused activation clamp.

- ``lookup8_ref``: ``Y[i] = lut[X[i]]`` on bytes: an int8 code ``x`` indexes
  the table at ``x & 0xFF`` (``uint8`` reinterpretation: -1 -> 255).
- ``requantize_16_to_8_ref``: ``x < -0x7F80 ? -128 : vdepth8_single_s16(x)``,
  i.e. ``clamp((x + 128) >> 8, -127, 127)`` (round half up, the VPU's
  symmetric low end) except that inputs below -32640 give -128.
- ``pad_ref``: ``vpu_memset_32`` of the whole output with the 32-bit
  ``pad_value``, then every input pixel copied in. An int8 pad value ``v``
  is the word ``0x01010101 * (v & 0xFF)``. Byte ``j`` of the output gets
  byte ``j % 4`` of the word, and a byte count that is not a multiple of 4
  leaves the output's last bytes unwritten: :func:`pad` requires the channel
  count to be a multiple of 4 (``pad_prepare`` asserts ``bytes_per_pixel % 4 == 0``).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions


def lookup8(x: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """``lookup8_ref``: ``lut[x as uint8]`` for int8 (or uint8) ``x`` of any shape, a 256-entry byte ``lut``.

    Returns the table's dtype (int8 or uint8), shaped like ``x``.
    """
    x, lut = np.asarray(x), np.asarray(lut)
    if x.dtype not in (np.int8, np.uint8):
        raise XS3Error(f"lookup8 takes 8-bit inputs, not {x.dtype}")
    if lut.shape != (256,) or lut.dtype not in (np.int8, np.uint8):
        raise XS3Error(f"lookup8: the table must be 256 bytes (int8/uint8), not {lut.dtype} {lut.shape}")
    return lut[x.view(np.uint8)]


def clamp_lut(lo: int, hi: int) -> np.ndarray:
    """The int8 ``lookup8`` table that clamps int8 codes to ``[lo, hi]``: entry ``b`` is ``clip(int8(b), lo, hi)``.

    Indexed by the code's byte (``x & 0xFF``), as :func:`lookup8` reads it:
    a fused RELU / RELU6 / RELU_N1_TO_1 whose range the output quantization
    does not already imply.
    """
    if not -128 <= lo <= hi <= 127:
        raise XS3Error(f"clamp_lut: [{lo}, {hi}] is not an int8 interval")
    codes = np.arange(256, dtype=np.uint8).view(np.int8)
    return np.clip(codes, lo, hi).astype(np.int8)


def requantize_16_to_8(x: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """``requantize_16_to_8_ref`` (nn_operator.c) of int16 ``x`` (any shape) -> int8.

    ``x < -0x7F80``: -128 (-127 with ``options.symmetric_output``, i.e.
    ``CONFIG_SYMMETRIC_SATURATION_requantize_16_to_8``), else
    ``clamp((x + 128) >> 8, -127, 127)``.
    """
    x = np.asarray(x)
    if x.dtype != np.int16:
        raise XS3Error(f"requantize_16_to_8 takes int16, not {x.dtype}")
    xi = x.astype(np.int32)
    y = np.clip(np.right_shift(xi + 128, 8), -127, 127)
    low = options.output_bounds[0]
    return np.where(xi < -0x7F80, low, y).astype(np.int8)


def pad(x: np.ndarray, top: int, bottom: int, left: int, right: int, pad_value: int) -> np.ndarray:
    """``pad_ref`` (pad.c) of an int8 image with an int8 ``pad_value`` -> int8.

    ``x``: ``[H, W, C]`` or ``[1, H, W, C]`` (the output keeps the rank),
    C a multiple of 4 (``bytes_per_pixel``); the pad word is
    ``0x01010101 * (pad_value & 0xFF)``, so every padding byte is ``pad_value``.
    """
    x = np.asarray(x)
    if x.dtype != np.int8:
        raise XS3Error(f"pad takes int8, not {x.dtype}")
    batched = x.ndim == 4
    if batched and x.shape[0] != 1 or x.ndim not in (3, 4):
        raise XS3Error(f"pad: shape {x.shape} is not [H, W, C] or [1, H, W, C]")
    xi = x[0] if batched else x
    if xi.shape[2] % 4:
        raise XS3Error(f"pad: {xi.shape[2]} bytes per pixel; lib_nn's pad writes whole words (a multiple of 4)")
    if min(top, bottom, left, right) < 0:
        raise XS3Error(f"pad: negative padding ({top}, {bottom}, {left}, {right})")
    if not -128 <= pad_value <= 127:
        raise XS3Error(f"pad: pad value {pad_value} is not int8")
    y = np.pad(xi, ((top, bottom), (left, right), (0, 0)), constant_values=np.int8(pad_value))
    return y[None] if batched else y
