"""lib_nn's ``add_elementwise`` (``src/c/add_elementwise.c``, ``add_elementwise_ref``) and its parameters.

lib_nn's C, per element::

    acc = bias                                      (int64)
    acc += (int32)(x0 >> shr0 | x0 << -shr0) * m0   (int32 product, wraps with -fwrapv)
    acc += (int32)(x1 >> shr1 | x1 << -shr1) * m1
    y = clamp((acc + (1 << (out_shr - 1))) >> out_shr, -128, 127)

The rounding is half up (ties toward +inf). nn_layers.h documents ``sat16``
of the shifted input and ``sat32`` of the sum; the portable C has neither
(and sums in int64). :func:`add_params` keeps every parameter set inside the
range where those saturations could never act, so the C and the documented
VPU arithmetic give the same integers for its parameters.

``out_shr`` must be 1..31: for 0 the C's rounding term is ``1 << -1`` and for
32 and above ``1 << 31`` and beyond (undefined; gcc on x86 gives
``INT_MIN``), so :func:`add_elementwise` refuses them. Input shifts are
-24..31 (``x << 24`` still fits int32; beyond, the C shift overflows).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions

INT16_MIN, INT16_MAX = -(2 ** 15), 2 ** 15 - 1
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
#: input shifts the C defines for int8 inputs (``x << 24`` fits int32; right shifts up to 31)
INPUT_SHR_RANGE = (-24, 31)
#: output shifts whose rounding term ``1 << (shr - 1)`` the C defines
OUTPUT_SHR_RANGE = (1, 31)
#: largest left shift (``-shr``) add_params uses: ``x << 7`` stays inside the VPU's symmetric 16 bits
MAX_PARAM_LSHIFT = 7


@dataclass(frozen=True)
class AddParams:
    """``nn_add_params_t``: ``input[0].{shr, multiplier}``, ``input[1].{shr, multiplier}``, ``output.{bias, shr}``."""

    shr0: int
    m0: int
    shr1: int
    m1: int
    bias: int
    out_shr: int

    def check(self) -> None:
        """XS3Error unless every field fits its C type and the range where the C is defined."""
        for name in ("shr0", "shr1"):
            v = getattr(self, name)
            if not INPUT_SHR_RANGE[0] <= v <= INPUT_SHR_RANGE[1]:
                raise XS3Error(f"add_elementwise: {name}={v} outside {INPUT_SHR_RANGE} "
                               f"(the C's int shift is undefined)")
        for name in ("m0", "m1"):
            v = getattr(self, name)
            if not INT16_MIN <= v <= INT16_MAX:
                raise XS3Error(f"add_elementwise: {name}={v} does not fit int16_t")
        if not INT32_MIN <= self.bias <= INT32_MAX:
            raise XS3Error(f"add_elementwise: bias={self.bias} does not fit int32_t")
        if not OUTPUT_SHR_RANGE[0] <= self.out_shr <= OUTPUT_SHR_RANGE[1]:
            raise XS3Error(f"add_elementwise: out_shr={self.out_shr} outside {OUTPUT_SHR_RANGE}: the C's rounding "
                           f"term 1 << (out_shr - 1) is undefined there")

    def as_array(self) -> np.ndarray:
        """``[shr0, m0, shr1, m1, bias, out_shr]`` as int64 (the order of the struct's fields)."""
        return np.array([self.shr0, self.m0, self.shr1, self.m1, self.bias, self.out_shr], dtype=np.int64)


def _wrap32(v: np.ndarray) -> np.ndarray:
    """Two's complement wrap of int64 values to int32 (the C's ``-fwrapv`` int multiply)."""
    return ((v + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31


def _scaled(x: np.ndarray, shr: int, m: int) -> np.ndarray:
    xi = x.astype(np.int64)
    shifted = np.right_shift(xi, shr) if shr >= 0 else np.left_shift(xi, -shr)
    return _wrap32(shifted * np.int64(m))


def add_elementwise(x0: np.ndarray, x1: np.ndarray, p: AddParams,
                    options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """``add_elementwise_ref`` over whole tensors: int8 ``x0``, ``x1`` of equal shape (any shape) -> int8.

    The C walks a flat vector; any array shape works here (``[H, W, C]``,
    ``[1, H, W, C]``, ...) and the output has the inputs' shape.
    ``options.symmetric_output`` gives ``CONFIG_SYMMETRIC_SATURATION_add_elementwise`` ([-127, 127]).
    """
    x0, x1 = np.asarray(x0), np.asarray(x1)
    if x0.dtype != np.int8 or x1.dtype != np.int8:
        raise XS3Error(f"add_elementwise takes int8 inputs, not {x0.dtype} and {x1.dtype}")
    if x0.shape != x1.shape:
        raise XS3Error(f"add_elementwise: input shapes differ ({x0.shape} vs {x1.shape}); lib_nn does not broadcast")
    p.check()
    acc = np.int64(p.bias) + _scaled(x0, p.shr0, p.m0) + _scaled(x1, p.shr1, p.m1)
    acc = np.right_shift(acc + (np.int64(1) << (p.out_shr - 1)), p.out_shr)
    lo, hi = options.output_bounds
    return np.minimum(np.maximum(acc, lo), hi).astype(np.int8)  # np.clip's result, without its dispatch


def _round_half_up(v: float) -> int:
    return int(math.floor(v + 0.5))


def _check_quant(name: str, scale: float, zp: int) -> None:
    if not (math.isfinite(scale) and scale > 0):
        raise XS3Error(f"add_params: {name} scale {scale} is not a positive finite number")
    if not -128 <= int(zp) <= 127 or int(zp) != zp:
        raise XS3Error(f"add_params: {name} zero point {zp} is not an int8 value")


@functools.lru_cache(maxsize=4096)  # a pure function of six numbers: a chain of equal ADDs searches once
def add_params(s0: float, z0: int, s1: float, z1: int, s_out: float, z_out: int) -> AddParams:
    """``nn_add_params_t`` for TFLite int8 ADD: ``y = z_out + round((s0 (x0 - z0) + s1 (x1 - z1)) / s_out)``.

    Zero points are in the int8 domain. With ``r_i = s_i / s_out`` and an
    output shift ``S`` the effective multipliers are ``M_i = m_i * 2**k_i``
    (``shr_i = -k_i``, ``0 <= k_i <= 7``: the smallest ``k_i`` that puts
    ``round(r_i 2**S / 2**k_i)`` into int16). The bias carries the zero
    points exactly, with fractional precision::

        bias = round(2**S (z_out - r0 z0 - r1 z1) + c sum_i (r_i 2**S - M_i)),   c = -1/2

    ``c`` centres the multipliers' rounding error on the int8 range, so that
    for every input the sum before the final shift is within
    ``E = (sum_i |M_i - r_i 2**S| * 127.5 + 1/2) / 2**S`` output codes of the
    exact real value. Every ``S`` in 1..31 is tried and the one with the
    smallest ``E`` kept (ties: the larger ``S``), among those where the bias
    fits int32, ``|bias| + 128 sum |M_i| < 2**31`` (the documented ``sat32``
    never acts) and ``|x << k_i| < 2**15`` (the documented ``sat16`` never
    acts). XMOS's converter (ai_tools ``ReplaceAddPass``) fixes ``shr_i = -6``
    and ``S = 20 - floor(log2 max r_i)`` with the bias from the rounded
    multipliers; the search here is at least as precise.

    XS3Error when no ``S`` fits (a scale ratio above about ``2**21``, or zero
    points whose bias overflows) or when ``E > 1/2`` (a ratio so small that
    its multiplier rounds away: outputs could be more than one code from
    exact).
    """
    _check_quant("input 0", s0, z0)
    _check_quant("input 1", s1, z1)
    _check_quant("output", s_out, z_out)
    r = (float(s0) / float(s_out), float(s1) / float(s_out))
    best: tuple[float, int, AddParams] | None = None
    for S in range(OUTPUT_SHR_RANGE[1], OUTPUT_SHR_RANGE[0] - 1, -1):
        ks, ms = [], []
        for ri in r:
            k = 0
            while k <= MAX_PARAM_LSHIFT and _round_half_up(ri * 2.0 ** (S - k)) > INT16_MAX:
                k += 1
            if k > MAX_PARAM_LSHIFT:
                break
            ks.append(k)
            ms.append(_round_half_up(ri * 2.0 ** (S - k)))
        if len(ms) < 2:
            continue
        eff = [m * 2 ** k for m, k in zip(ms, ks)]
        c = -0.5
        bias = _round_half_up(2.0 ** S * (z_out - r[0] * z0 - r[1] * z1)
                              + c * sum(ri * 2.0 ** S - M for ri, M in zip(r, eff)))
        if not INT32_MIN < bias <= INT32_MAX or abs(bias) + 128 * sum(abs(M) for M in eff) > INT32_MAX:
            continue
        err = (sum(abs(M - ri * 2.0 ** S) for ri, M in zip(r, eff)) * 127.5 + 0.5) / 2.0 ** S
        params = AddParams(-ks[0], ms[0], -ks[1], ms[1], bias, S)
        if best is None or err < best[0]:
            best = (err, S, params)
    if best is None:
        raise XS3Error(f"add_params: scale ratios s0/s_out={r[0]:.6g}, s1/s_out={r[1]:.6g} with zero points "
                       f"({z0}, {z1}, {z_out}) fit no output shift 1..31 (int16 multipliers after at most "
                       f"{MAX_PARAM_LSHIFT} bits of input left shift, int32 bias)")
    err, _, params = best
    if err > 0.5:
        raise XS3Error(f"add_params: scale ratios s0/s_out={r[0]:.6g}, s1/s_out={r[1]:.6g} are too far apart or "
                       f"too small for int16 multipliers: worst-case error {err:.3g} output codes (> 0.5)")
    params.check()
    return params
