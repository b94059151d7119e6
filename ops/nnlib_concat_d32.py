"""QuantizedConcat_8_d32's range and requantization as hexagon_nn's device code computes them (op_concat_d32.c
``concat_execute`` with ``concat_execute_hvx``'s copy functions; issue 36), which differ from the flat
QuantizedConcat_8's (op_concat.c):

- output range: ``fminf`` / ``fmaxf`` over every input's range; a minimum above 0 becomes 0, one below 0 is
  zero-fixed by ``adjust_minmax_for_zero`` (src/quantize.c) where that moves an end;
- per input, in float32: ``in_level = (in_max - in_min) / 255``, ``offset = (int)((in_min - out_min) *
  out_level_recip * 128)`` (an offset in 1/128 codes, truncated, the input's own minimum as given),
  ``gain = (int)(out_level_recip * in_level * 32768)``, 32767 where it is not in 0..32767; packed as
  ``gain + (offset << 16)`` in 32 bits, so the offset the copy reads is its low 16 bits, signed;
- the copy (``scaled_copy_d32_hvx``'s ``do_scale_ub``, the same arithmetic as the asm ``scalemem_d32_hvx`` of
  aligned rows): unchanged bytes where the offset is 0 and the gain >= 32704, else
  ``usat8((sat16(((x * gain) >> 8) + offset) + 64) >> 7)``: the reference's ``(x * gain + offset * 256 + 2**14) >>
  15`` wherever the offset sum does not saturate 16 bits. The codes differ from op_concat.c's by the truncated
  gain and offset (op_concat.c rounds both, the offset in whole codes of the input's step, its minimum clamped to
  0): e.g. [0, 127] onto [-128, 127], code 254 (126.50) becomes 254, op_concat.c's 255.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from hexnn_import.ops.nnlib_f32 import adjust_minmax_for_zero

F = np.float32
#: Gains at or above this with a zero offset copy the bytes unchanged (``needs_scale`` 0).
COPY_GAIN = 32704


def f2i_chop(v: np.float32) -> int:
    """C ``(int)`` of a float32 as Hexagon's ``convert_sf2w:chop`` does it: toward zero, saturated to int32 (a NaN,
    which the kernel's range checks keep out, as 0 here)."""
    if np.isnan(v):
        return 0
    return int(np.clip(np.trunc(np.float64(v)), -2 ** 31, 2 ** 31 - 1))


def concat_d32_range(ranges: Sequence[tuple[float, float]]) -> tuple[np.float32, np.float32]:
    """The output range ``concat_execute`` sets (module doc)."""
    out_min, out_max = F(ranges[0][0]), F(ranges[0][1])
    for mn, mx in ranges:
        out_min, out_max = F(np.fmin(out_min, F(mn))), F(np.fmax(out_max, F(mx)))
    if out_min > 0:
        return F(0.0), out_max
    if out_min < 0:
        rc, lo, hi = adjust_minmax_for_zero(out_min, out_max)
        if rc > 0:
            return lo, hi
    return out_min, out_max


def concat_d32_scaling(in_min: float, in_max: float, out_min: float, out_max: float) -> tuple[int, int]:
    """``(offset, gain)`` as the copy reads them from ``scl_off`` (module doc): the offset in 1/128 codes, signed
    16-bit, the gain 0..32767."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        recip = F(F(255.0) / F(F(out_max) - F(out_min)))
        in_level = F(F(F(in_max) - F(in_min)) / F(255.0))
        offset = f2i_chop(F(F(F(F(in_min) - F(out_min)) * recip) * F(128.0)))
        gain = f2i_chop(F(F(recip * in_level) * F(32768.0)))
    gain = gain if 0 <= gain <= 32767 else 32767
    offset16 = (offset + 2 ** 15) % 2 ** 16 - 2 ** 15
    return offset16, gain


def concat_d32_codes(x: np.ndarray, offset: int, gain: int) -> np.ndarray:
    """One input's codes on the output range (``do_scale_ub`` / ``scalemem_d32_hvx``, module doc)."""
    if offset == 0 and gain >= COPY_GAIN:
        return np.array(x, np.uint8, copy=True)
    prod = (x.astype(np.int32) * gain) >> 8
    p2 = np.clip(prod + offset, -32768, 32767)
    return np.clip((p2 + 64) >> 7, 0, 255).astype(np.uint8)


def concat_d32_requantize(x: np.ndarray, in_min: float, in_max: float, out_min: float,
                          out_max: float) -> np.ndarray:
    """One input moved onto ``[out_min, out_max]`` as the device's concat moves it."""
    return concat_d32_codes(x, *concat_d32_scaling(in_min, in_max, out_min, out_max))
