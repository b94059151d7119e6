"""hexagon_nn 2.14.1's supernode output-stage constants and output-range logic, in float32, step for step.

The C (include/supernode_utils.h, ops/src/op_supernode_new.c, ops/src/op_dwise_snode_8bit.c; the flat
supernodes run as their d32 twins after prepare.c) computes, per node:

- at check time: the weight level and zero (conv: ``get_qu8_level_size_zero``; depthwise:
  ``(max - min) / (255.0f * 1.0f)`` and ``quantize_uint8(0.0f, min, max)``), ``gemsumb`` (conv, V60
  unsigned weights: the sum of the u8 weights over ``fh * fw * roundup32(din)``, the depth padding
  being the weight zero; depthwise ``dwise_sumb``: the sum of ``w - w_zero``), the channel scales
  ``k`` and ``k_factor_recip`` (``find_k_kinv``: ``1.0f / k``; ``max_k_factor`` is 1.0 since V60 has
  no weight scales) and the initial output range (``setup_initial_output_range``: an infinite end is
  auto and starts at the op's default, ``(0, 0.5)`` conv, ``(-0.125, 0.125)`` depthwise; a specified
  range must satisfy ``min <= 0 <= max`` and ``min < max``, else an error);
- each time its strategy is (re)computed, ``fill_info_minmax_basics`` (input range floored to
  ``max(in_max, in_min + 1e-18f)``, ``prod = in_level * w_level``, ``final = prod / out_level``, the
  one-time "first guess" widening when ``final > 1.75``, ``recip_shamt``, ``recip[c]``) and
  ``fill_bias_buf`` (``biasbuf[c] = fast_i64_roundf(((b - b_off) * (b_level / prod) - out_min / prod)
  * kinv[c] - gemsumb[c] * in_zero)``, an error when it does not fit int32);
- after each computation ``supernode_execute_workitem_check_for_retry``: an auto end whose codes
  overflowed moves to ``round_up_quarter_octave`` of the real value of the extreme code, the range is
  zero-fixed with ``adjust_minmax_for_zero_with_constraints``, and the node is computed again.

The per-element arithmetic (modelled from asm_src gvconv2dbbb_d32_v60_h.S / dwconv2dbbb_*_h.S) is in
:mod:`.requant` (``presat_codes`` with ``Requant.c32``), the execute loop that uses both in
:mod:`.nnlib_execute`. ``fast_i64_roundf`` and
``roundf_u32`` follow the device (Hexagon ``convert_sf2d`` round-half-even; ``convert_sf2uw``
saturating); ``flt_div_255`` the non-Hexagon branch (:mod:`hexnn_import.ops.nnlib_f32`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hexnn_import.ops.nnlib_f32 import (EPS18, F, adjust_minmax_for_zero_with_constraints, flt_div_255, level_size_zero,
                                        quantize_uint8, roundf)

RECIP_MAX = 0x7FFFFFFF
#: Auto-range defaults of setup_initial_output_range: conv (op_supernode_new.c), depthwise (op_dwise_snode_8bit.c).
CONV_DEFAULT = (F(0.0), F(0.5))
DWISE_DEFAULT = (F(-0.125), F(0.125))
_FIRST_GUESS_MAX = F(1.75)


def getexp(x: np.float32) -> int:
    """``flt_getexp``: the biased exponent field minus 126 (frexp's exponent for normal numbers)."""
    return int((int(np.float32(x).view(np.uint32)) >> 23) & 0xFF) - 126


def power2(e: int) -> np.float32:
    """``flt_power2``: ``2**e`` from the exponent field ``saturate_u8(e + 127)``."""
    return np.uint32(min(255, max(0, e + 127)) << 23).view(np.float32)


def ldexp(x: np.float32, e: int) -> np.float32:
    """``flt_ldexp``: ``x * flt_power2(e)`` in float32."""
    return F(F(x) * power2(e))


def roundf_u32(x: np.ndarray) -> np.ndarray:
    """``roundf_u32`` on the device (``convert_sf2uw_chop(x + 0.5f)``): int64, 0 below 0.5, saturating."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        y = (x + F(0.5)).astype(np.float64)
        out = np.where(x < F(0.5), 0.0, np.minimum(np.trunc(np.nan_to_num(y, nan=0.0)), 2.0 ** 32 - 1))
    return out.astype(np.int64)


def fast_i64_roundf(x: np.ndarray) -> np.ndarray:
    """``fast_i64_roundf`` on the device (``Q6_P_convert_sf2d_R``): float32 to int64, half to even."""
    x = np.asarray(x, dtype=np.float32).astype(np.float64)
    return np.clip(np.rint(np.nan_to_num(x, nan=0.0)), -2.0 ** 63, 2.0 ** 63 - 1024).astype(np.int64)


def round_up_quarter_octave(x: np.float32) -> np.float32:
    """``round_up_quarter_octave``: the second power of 2**(1/4) above ``|x|`` (sign kept), float32."""
    x = F(x)
    xk = F(x * F(1.18920708))
    bits = int(xk.view(np.uint32))
    mant = abs(np.uint32((bits & 0x807FFFFF) | (126 << 23)).view(np.float32))
    if mant >= F(0.7071067691):
        mant = F(1.0) if mant >= F(0.8408964276) else F(0.8408964276)
    else:
        mant = F(0.7071067691) if mant >= F(0.594603539) else F(0.594603539)
    return F(np.copysign(ldexp(mant, getexp(xk)), x))


#: ``adjust_minmax_for_zero_with_constraints`` (src/quantize.c), shared with QuantizedAdd (ops/nnlib_f32.py).
adjust_with_constraints = adjust_minmax_for_zero_with_constraints


@dataclass(frozen=True)
class OutRangeC:
    """The node's output-range state (``supernode_info_new``: out_minval/maxval, the specified ends, the
    precalc flags - bit 0 min fixed, bit 1 max fixed - and whether the first guess is still pending)."""

    lo: np.float32
    hi: np.float32
    spec_lo: np.float32
    spec_hi: np.float32
    flags: int
    firstguess: bool

    @property
    def auto(self) -> bool:
        """True when either end is auto."""
        return self.flags != 3


def setup_range(spec_min: float, spec_max: float, default: tuple[np.float32, np.float32]) -> OutRangeC | str:
    """``setup_initial_output_range``: the initial state, or the error text of the C."""
    smn, smx = F(spec_min), F(spec_max)
    if smn > 0 or smx < 0 or smn >= smx:
        return "supernode: invalid input min/max"
    mnp, mxp = int(smn != -np.inf), int(smx != np.inf)
    lo = smn if mnp else default[0]
    hi = smx if mxp else default[1]
    flags = 2 * mxp + mnp
    if lo < 0:
        lo, hi = adjust_with_constraints(lo, hi, flags)
    return OutRangeC(lo, hi, smn, smx, flags, flags != 3)


@dataclass(frozen=True)
class SnConst:
    """What a supernode derives from its constant inputs and input range (check + fill_info's first part)."""

    in_zero: int
    w_zero: int
    prod: np.float32
    bias_f: np.ndarray        # float32 [dout]: (float)(bias - bias_offset)
    ratio: np.float32         # bias_level / prod
    k: np.ndarray | None      # float32 [dout] channel scales (None: all 1)
    kinv: np.ndarray | None   # float32 [dout] k_factor_recip
    gx: np.ndarray            # int64 [dout]: gemsumb * in_zero (the conv adds it back as suma)


def input_level_zero(in_min: float, in_max: float) -> tuple[np.float32, int] | None:
    """``(in_level, in_zero)`` of fill_info_minmax_basics (max floored to ``in_min + 1e-18f``); None when
    an end is not finite (the C's error)."""
    mn = F(in_min)
    mx = max(F(in_max), F(mn + EPS18))
    if not (np.isfinite(mn) and np.isfinite(mx)):
        return None
    return level_size_zero(mn, mx)


def weight_level_zero(w_min: float, w_max: float, dwise: bool) -> tuple[np.float32, int]:
    """``(w_level, w_zero)`` as supernode_check (conv) or dwise_supernode_check (depthwise) find them."""
    if dwise:
        return F(F(F(w_max) - F(w_min)) / F(255.0)), int(quantize_uint8(0.0, w_min, w_max))
    return level_size_zero(w_min, w_max)


def gemsumb(w: np.ndarray, w_zero: int, dwise: bool) -> np.ndarray:
    """int64 ``gemsumb[dout]`` (module doc); ``w`` is ``[fh, fw, din, dout]`` (depthwise: ``[fh, fw, din, dmul]``)."""
    w64 = w.astype(np.int64)
    if dwise:
        return (w64 - w_zero).sum(axis=(0, 1)).reshape(-1)
    fh, fw, din, _ = w.shape
    pad = ((din + 31) // 32 * 32 - din) * fh * fw * w_zero
    return w64.sum(axis=(0, 1, 2)) + pad


def bias_parts(bias: np.ndarray, b_min: float, b_max: float, bias32: bool, prod: np.float32
               ) -> tuple[np.ndarray, np.float32]:
    """``((float)(b - bias_offset), bias_level / prod)`` of fill_bias_buf, float32."""
    bmn, bmx = F(b_min), F(b_max)
    if bias32:
        off, denom = 0, F(2.0 ** 32)
    else:   # quantize_uint(0.0f, min, max): roundf((0 - min) * (255 / max(1e-18, max - min))), >= 0
        off = max(0, int(roundf(F(F(F(0.0) - bmn) * F(F(255.0) / max(EPS18, F(bmx - bmn)))))))
        denom = F(255.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = F(F(F(bmx - bmn) / denom) / prod)
    b = np.asarray(bias).reshape(-1).astype(np.int64)
    return (b - off).astype(np.int32).astype(np.float32), ratio


def minmax_basics(sc: SnConst, rng: OutRangeC) -> tuple[OutRangeC, np.float32, int, int, np.ndarray]:
    """fill_info_minmax_basics: ``(range, out_level, recip_shamt, recip_val, recip[dout])`` (int64 recip)."""
    prod = sc.prod
    ols = flt_div_255(F(rng.hi - rng.lo))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        final = F(prod / ols)
        if rng.firstguess:
            if final > _FIRST_GUESS_MAX:
                ols = F(prod / _FIRST_GUESS_MAX)
                lo, hi, adjust = rng.lo, rng.hi, False
                if rng.flags == 1:
                    hi = F(lo + F(F(255.0) * ols))
                    adjust = bool(lo < 0)
                elif rng.flags == 2:
                    lo = F(hi - F(F(255.0) * ols))
                    adjust = True
                else:
                    lo, hi = F(F(-63.0) * ols), F(F(192.0) * ols)
                final = _FIRST_GUESS_MAX
                if adjust:
                    lo, hi = adjust_with_constraints(lo, hi, rng.flags)
                    ols = flt_div_255(F(hi - lo))
                    final = F(prod / ols)
                rng = replace(rng, lo=lo, hi=hi)
            rng = replace(rng, firstguess=False)
        shamt = 0 if final <= F(1.0) else getexp(final)
        recip_val = min(int(roundf_u32(ldexp(final, 31 - shamt))), RECIP_MAX)
        if sc.k is None:
            recip = np.full(sc.gx.shape, recip_val, dtype=np.int64)
        else:
            common = ldexp(F(prod / ols), 31 - shamt)
            recip = np.minimum(roundf_u32(common * sc.k), RECIP_MAX)
    return rng, ols, shamt, recip_val, recip


def bias_buf(sc: SnConst, out_min: np.float32) -> np.ndarray | None:
    """fill_bias_buf's ``biasbuf[dout]`` plus ``gemsumb * in_zero`` (int64), or None ("Final too big")."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        offs = F(F(-out_min) / sc.prod)
        v = (sc.bias_f * sc.ratio) + offs
        if sc.kinv is not None:
            v = v * sc.kinv
        v = v - sc.gx.astype(np.int32).astype(np.float32)
    final = fast_i64_roundf(v)
    if not np.all(np.isfinite(v)) or np.any(final != final.astype(np.int32)):
        return None
    return final + sc.gx


def check_for_retry(rng: OutRangeC, ols: np.float32, vmin: int, vmax: int) -> OutRangeC | None:
    """supernode_execute_workitem_check_for_retry: the widened range, or None when nothing moves.

    ``vmin`` / ``vmax`` are the extreme pre-saturation codes (after ``max(-2**24, .)`` /
    ``min(2**24, .)``, the C's initial values)."""
    if rng.flags == 3:
        return None
    lo, hi, moved = rng.lo, rng.hi, False
    if not rng.flags & 2 and vmax > 255:
        ext = F(F(ols * F(F(vmax) + F(0.5))) + lo)
        hi = round_up_quarter_octave(max(ext, F(2.0 ** -4)))
        moved = True
    if not rng.flags & 1 and vmin < 0:
        ext = F(F(ols * F(F(vmin) - F(0.5))) + lo)
        lo = round_up_quarter_octave(min(ext, F(-(2.0 ** -8))))
        moved = True
    if not moved:
        return None
    if rng.flags & 1:
        lo = rng.spec_lo
    if rng.flags & 2:
        hi = rng.spec_hi
    lo, hi = adjust_with_constraints(lo, hi, rng.flags)
    return replace(rng, lo=lo, hi=hi)


def sn_const(in_min: float, in_max: float, w_min: float, w_max: float, w: np.ndarray, bias: np.ndarray,
             b_min: float, b_max: float, bias32: bool, dwise: bool, k: np.ndarray | None) -> SnConst | None:
    """The :class:`SnConst` of a node (None when the input range is not finite, the C's error)."""
    lz = input_level_zero(in_min, in_max)
    if lz is None:
        return None
    in_level, in_zero = lz
    w_level, w_zero = weight_level_zero(w_min, w_max, dwise)
    prod = F(in_level * w_level)
    bias_f, ratio = bias_parts(bias, b_min, b_max, bias32, prod)
    k32 = kinv = None
    if k is not None:
        k32 = np.asarray(k, dtype=np.float32).reshape(-1)
        with np.errstate(divide="ignore"):
            kinv = np.where(k32 == F(1.0), F(1.0), F(1.0) / k32).astype(np.float32)
    gx = gemsumb(w, w_zero, dwise) * in_zero
    return SnConst(in_zero, w_zero, prod, bias_f, ratio, k32, kinv, gx)


def debug_constants(in_min: float, in_max: float, w_min: float, w_max: float, w: np.ndarray, bias: np.ndarray,
                    b_min: float, b_max: float, bias32: bool, dwise: bool, k: np.ndarray | None,
                    spec_min: float, spec_max: float, lo: float, hi: float, firstguess: bool
                    ) -> tuple[np.ndarray, list[float]]:
    """The constants the harness compares (tools/nnlib_ext/ext_compare_supernode.py): int64
    ``[shamt, recip_val, in_zero, w_zero, recip[dout], biasbuf + gemsumb * in_zero [dout]]`` and
    ``[prod, out_level]`` for the range ``[lo, hi]`` a computation starts from."""
    sc = sn_const(in_min, in_max, w_min, w_max, w, bias, b_min, b_max, bias32, dwise, k)
    if sc is None:
        raise ValueError("input range not finite")
    init = setup_range(spec_min, spec_max, DWISE_DEFAULT if dwise else CONV_DEFAULT)
    if isinstance(init, str):
        raise ValueError(init)
    rng = replace(init, lo=F(lo), hi=F(hi), firstguess=firstguess)
    rng, ols, shamt, recip_val, recip = minmax_basics(sc, rng)
    bb = bias_buf(sc, rng.lo)
    if bb is None:
        raise ValueError("Final too big")
    prod = sc.prod
    head = np.array([shamt, recip_val, sc.in_zero, sc.w_zero], dtype=np.int64)
    return np.concatenate([head, recip, bb]), [float(prod), float(ols)]
