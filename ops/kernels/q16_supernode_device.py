"""Supernode_u16x16p32to16_d32 as hexagon_nn's device code computes it (op_supernode_16b.c, the v60 path: no VTCM).

Followed, in order (nnlib df7ad3c):

* ``supernode_u16b_check``: the weight zero ``filt_offset = fast_roundf(-wmin / (wmax - wmin) * 65536)``, the
  level ``(wmax - wmin) / 65536`` (float32), the per-channel weight sums ``gemsumb`` over the depth padded to 32
  (padding weights = ``filt_offset``; output channels padded to 32 with all-``filt_offset`` filters, bias 0), and
  ``setup_initial_output_range`` (min <= 0, max >= max(0, min + 2**-7); -inf / +inf start at 0 / 0.5;
  ``adjust_minmax_for_zero_16b`` in float32 when the min is negative). The range persists in the node's state.
* ``fill_info_minmax_basics``: ``in_max = fmaxf(in_max, in_min + 1e-18f)``, ``in_offset = quantize_uint16(0, ..)``,
  ``prod = (in range / 65536) * (w range / 65536)``, ``maxsum = fast_roundf(out range / 65536 / prod)``,
  ``recip_shamt = min(61 - normamt(maxsum), 46)``, ``recip_val = (int32)(2**recip_shamt / maxsum)``.
* ``fill_bias_buf`` (bias32): ``(-gemsumb * in_offset + (int64)(bias * (bias_level / prod) - out_min / prod
  +- 0.5f) + in_depth_total * in_offset * filt_offset * fw * fh) >> 16``, the float parts in float32.
* The kernel (asm_src/gvconv2db2b2b2_d32_h_v60.S): byte-half products summed as ``(sum x*w + 0x8000) >> 16``
  (the two ``vasr 8`` with the 0x80 seed), plus the bias word, plus the activation sum of gvint16_h.S /
  gvsuma_16b_h.S ``(-(window sum of x) * filt_offset) >> 16``; ``s = wrap32(acc << (47 - recip_shamt))``, the
  ``vmpye`` / ``vmpyo:<<1:rnd:sat`` pair ``(s * recip_val + 2**30) >> 31``, ``vpack:sat`` to 0..65535. The
  word min / max of ``acc`` over every computed channel (the padded ones too) drive the retries.
* ``supernode_execute_workitem_check_for_retry`` / ``supernode_execute_16b_hvx``: an automatic end whose extreme
  word leaves ``0 .. maxsum`` moves to ``to_next_power_of_two(max(ext, 1/16))`` (max) or of ``min(ext, -1/256)``
  (min), ``ext = word * prod * 65536 + out_min``; both automatic: ``adjust_minmax_for_zero_16b``; the node runs
  again, at most 3 times in all (the third run's codes stand, with the range it moved to).

Exact integer sums (int64; the float64 matmul is exact below 2**53: :func:`~.q16_conv.check_exact16`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.conv_core import ConvGeometry, centered_padded, im2col
from hexnn_import.ops.nnlib_f32 import fast_roundf, roundf
from hexnn_import.ops.registry import KernelContext

F = np.float32
_MASK23 = np.uint32((1 << 23) - 1)


def adjust_minmax_for_zero_16b(mn: F, mx: F) -> tuple[F, F]:
    """``adjust_minmax_for_zero_16b`` (src/quantize.c), float32: the zero point within 2**-6 of an integer code
    in 0..65535 keeps the range, else one end moves (the max when ``zi > 65534`` or by the ``zf`` rule)."""
    mn, mx = F(mn), F(mx)
    dif = F(mx - mn)
    if not dif >= F(1e-6) or mn == 0:
        return mn, mx
    z = F(F(F(-65536.0) * mn) / dif)
    zi = F(np.floor(z))
    zf = F(z - zi)
    if (zf <= F(0.015625) or zf >= F(0.984375)) and F(-0.02) <= z <= F(65535.02):
        return mn, mx
    if zi > 0 and (zi > F(65534) or F(F(zf - F(1)) * mn) >= F(zf * mx)):
        zi = min(zi, F(65535))
        return mn, F(mn - F(F(F(65536) * mn) / zi))
    zi = max(F(zi + F(1)), F(1))
    return F(F(mx * zi) / F(zi - F(65536))), mx


def to_next_power_of_two(x: F) -> F:
    """``to_next_power_of_two`` (include/supernode_utils.h): the float32 bit pattern rounded up to a zero
    mantissa (sign kept)."""
    u = np.array([x], F).view(np.uint32)
    return F(((u + _MASK23) & ~_MASK23).view(F)[0])


def quantize_uint16_zero(mn: F, mx: F) -> int:
    """``quantize_uint16(0.0f, min, max)`` (include/quantize.h)."""
    amt = F(F(65536) / max(F(1e-18), F(mx - mn)))
    return int(np.clip(roundf(F(F(-mn) * amt)), 0, 65535))


@dataclass
class OutRange:
    """The node's output range as ``sn16b_info`` keeps it between runs."""

    lo: F
    hi: F
    lo_fixed: bool
    hi_fixed: bool


def initial_range(o_min: float, o_max: float) -> OutRange:
    """``setup_initial_output_range(info, min, max, 0.0f, 0.5f)``."""
    smn = min(F(o_min), F(0))
    smx = max(max(F(o_max), F(0)), F(smn + F(2.0 ** -7)))
    r = OutRange(smn if smn != -np.inf else F(0), smx if smx != np.inf else F(0.5), smn != -np.inf, smx != np.inf)
    if r.lo < 0:
        r.lo, r.hi = adjust_minmax_for_zero_16b(r.lo, r.hi)
    return r


def recip_of(ctx: KernelContext, maxsum: int) -> tuple[int, int]:
    """``(recip_val, recip_shamt)`` of ``fill_info_minmax_basics`` (the int32 cast wraps 2**31)."""
    if maxsum <= 0:
        raise ctx.fail(f"output step is {maxsum} product units: the device divides by it "
                       "(fill_info_minmax_basics)")
    shamt = min(61 - (31 - maxsum.bit_length()), 46)
    val = (1 << shamt) // maxsum
    return (val + 2 ** 31) % 2 ** 32 - 2 ** 31, shamt


def bias_words(bias: np.ndarray, gemsumb: np.ndarray, in_off: int, extra: int, ratio: F, lo: F, prod: F) -> np.ndarray:
    """``fill_bias_buf`` for a qint32 bias: int64 words ``>> 16``."""
    mf = (bias.astype(F) * ratio).astype(F) + F(F(-lo) / prod)
    t = np.trunc((mf + np.where(mf >= 0, F(0.5), F(-0.5))).astype(F)).astype(np.int64)
    return (-gemsumb * in_off + t + extra) >> 16


def scale_words(acc: np.ndarray, recip: int, shamt: int) -> np.ndarray:
    """The kernel's output stage: ``sat_u16((wrap32(acc << (47 - shamt)) * recip + 2**30) >> 31)``."""
    s = ((acc << (47 - shamt)) + 2 ** 31) % 2 ** 32 - 2 ** 31
    return np.clip((s * recip + 2 ** 30) >> 31, 0, 65535).astype(np.uint16)


def _moved(r: OutRange, word_min: int, word_max: int, maxsum: int, prod: F) -> bool:
    """``supernode_execute_workitem_check_for_retry``: move the automatic ends the words overflowed."""
    if r.lo_fixed and r.hi_fixed:
        return False
    moved = False
    if not r.hi_fixed and word_max > maxsum:
        ext = F(F(F(F(word_max) * prod) * F(65536)) + r.lo)
        r.hi, moved = to_next_power_of_two(max(ext, F(2.0 ** -4))), True
    if not r.lo_fixed and word_min < 0:
        ext = F(F(F(F(word_min) * prod) * F(65536)) + r.lo)
        r.lo, moved = to_next_power_of_two(min(ext, F(-(2.0 ** -8)))), True
    if moved and not r.lo_fixed and not r.hi_fixed:
        r.lo, r.hi = adjust_minmax_for_zero_16b(r.lo, r.hi)
    return moved


def device_supernode(ctx: KernelContext, x: np.ndarray, w: np.ndarray, ranges: list[F], bias: np.ndarray,
                     g: ConvGeometry) -> tuple[np.ndarray, F, F]:
    """(uint16 codes, out_min, out_max) of one execute (module doc); ``ranges`` = in, weight, bias, out ends."""
    imn, imx, fmn, fmx, bmn, bmx, omn, omx = (F(v) for v in ranges)
    imx = max(imx, F(imn + F(1e-18)))
    if not (np.isfinite(imn) and np.isfinite(imx)):
        raise ctx.fail(f"input range [{imn}, {imx}] is not finite (fill_info_minmax_basics)")
    in_off = quantize_uint16_zero(imn, imx)
    f_off = int(fast_roundf(F(F(F(-fmn) / F(fmx - fmn)) * F(65536))))
    prod = F(F(F(imx - imn) / F(65536)) * F(F(fmx - fmn) / F(65536)))
    r = ctx.state.get("sn16_range")
    if r is None:
        r = ctx.state["sn16_range"] = initial_range(float(omn), float(omx))
    fh, fw, din, dout = w.shape
    dtot = -(-din // 32) * 32
    dpad = dout + (dout % 32 != 0)  # the padded channels are all alike: one stands for them in the min / max
    wm = np.full((fh * fw * din, dpad), float(f_off))
    wm[:, :dout] = w.reshape(fh * fw * din, dout)
    cols = im2col(centered_padded(x, 0, g), fh, fw, g)
    sums = np.matmul(cols, wm).astype(np.int64).reshape(x.shape[0], g.out_h, g.out_w, dpad)
    suma = (-cols.sum(-1).astype(np.int64) * f_off >> 16).reshape(x.shape[0], g.out_h, g.out_w, 1)
    gemsumb = wm.sum(0).astype(np.int64) + (dtot - din) * fh * fw * f_off
    extra = dtot * in_off * f_off * fw * fh
    b64 = np.zeros(dpad, np.int64)
    b64[:dout] = bias
    ratio = F(F(F(bmx - bmn) / F(2.0 ** 32)) / prod)
    conv = ((sums + 32768) >> 16) + suma
    for _ in range(3):
        maxsum = int(fast_roundf(F(F(F(r.hi - r.lo) / F(65536)) / prod)))
        recip, shamt = recip_of(ctx, maxsum)
        if recip == -2 ** 31 and not ctx.state.get("sn16_wrap_told"):
            ctx.state["sn16_wrap_told"] = True
            warnings.warn(f"{ctx.node} ({ctx.op}): the output step is exactly {maxsum} (a power of two) products; "
                          f"hexagon_nn's device code wraps its reciprocal 2**31 to -2**31 (op_supernode_16b.c "
                          f"fill_info_minmax_basics) and its codes come out 0 on the DSP, as here",
                          DeviceDefectWarning, stacklevel=2)
        acc = conv + bias_words(b64, gemsumb, in_off, extra, ratio, r.lo, prod)
        q = scale_words(acc[..., :dout], recip, shamt)
        if not _moved(r, int(acc.min()), int(acc.max()), maxsum, prod):
            break
    return q, r.lo, r.hi
