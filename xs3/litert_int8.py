"""LiteRT's int8 arithmetic of the activations that are one function of the int8 code, as 256-entry tables.

A per-tensor int8 activation maps each of the 256 input codes to one output code, so lib_nn's ``lookup8``
runs it exactly when its table holds, for every code, what LiteRT's int8 kernel computes
(tensorflow/lite/kernels/activations.cc, gelu.cc, prelu's reference_ops):

- LOGISTIC, TANH, ELU, GELU: LiteRT builds a table itself (``LUTPopulate``, kernels/internal/common.h):
  ``dequantized = s_in * (q - z_in)``, the function in float32, ``round(f * (1 / s_out))`` half away from
  zero, ``+ z_out``, saturated; :func:`lut_populate`;
- HARD_SWISH: reference_ops ``HardSwish`` with 16-bit fixed-point multipliers (``HardSwishPrepare``);
  :func:`hard_swish_codes`;
- LEAKY_RELU, PRELU with one alpha: ``MultiplyByQuantizedMultiplier`` of ``q - z_in`` by the identity or the
  alpha multiplier (``QuantizeLeakyRelu``, ``BroadcastPrelu4DSlow``); :func:`leaky_codes`, :func:`prelu_codes`;
- RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1: ``ReluX``: rescale by ``s_in / s_out`` and clamp to the output codes of
  the bounds (a plain clamp when input and output quantization are equal); :func:`relu_codes`.

Every function takes the input codes (int8, any shape) and returns int8 codes; a table is the function of
``arange(256)`` read as int8 (:func:`table_of`, indexed by the code's byte as ``lookup8`` reads it).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

F32 = np.float32
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def table_of(fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The lookup8 table of a code function: entry ``b`` is ``fn(int8(b))``."""
    return np.asarray(fn(np.arange(256, dtype=np.uint8).view(np.int8)), dtype=np.int8)


def _round_away(v: np.ndarray) -> np.ndarray:
    """TfLiteRound / std::round: half away from zero."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def lut_populate(fn: Callable[[np.ndarray], np.ndarray], s_in: float, z_in: int, s_out: float,
                 z_out: int) -> Callable[[np.ndarray], np.ndarray]:
    """``LUTPopulate<int8_t>``'s arithmetic (float32 throughout, module doc) for a float32 ``fn``."""
    inv = F32(1.0) / F32(s_out)

    def codes(q: np.ndarray) -> np.ndarray:
        deq = F32(s_in) * (q.astype(np.int32) - np.int32(z_in)).astype(F32)
        with np.errstate(over="ignore", invalid="ignore"):
            y = np.asarray(fn(deq.astype(F32)), dtype=F32) * inv
        y = np.nan_to_num(_round_away(y.astype(np.float64)), nan=0.0, posinf=1e9, neginf=-1e9)
        return np.clip(y + z_out, -128, 127).astype(np.int8)
    return codes


def sigmoid(v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return F32(1.0) / (F32(1.0) + np.exp(-v))


def elu(v: np.ndarray) -> np.ndarray:
    return np.where(v < 0, np.expm1(np.minimum(v, F32(0))), v).astype(F32)


def gelu(approximate: bool) -> Callable[[np.ndarray], np.ndarray]:
    """gelu.cc's GeluTransform (erf) / GeluTransformApproximate (tanh): the importer's float form
    (:func:`hexnn_import.importers.nodes.norm.gelu_fn`), rounded to float32."""
    from hexnn_import.importers.nodes.norm import gelu_fn

    fn = gelu_fn(approximate)
    return lambda v: np.asarray(fn(v.astype(np.float64)), dtype=F32)


# ---- fixed-point helpers (kernels/internal/common.h, gemmlowp) ----------------------------------------------
def quantize_multiplier(m: float) -> tuple[int, int]:
    """``QuantizeMultiplier(double)``: (int32 fixed-point multiplier, shift), ``m = q * 2**shift``."""
    if m == 0.0:
        return 0, 0
    q, shift = math.frexp(m)
    q_fixed = int(_round_away(np.float64(q * (1 << 31))))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def _srdhm32(a: np.ndarray, b: int) -> np.ndarray:
    ab = a.astype(np.int64) * np.int64(b)
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    out = np.trunc((ab + nudge) / float(1 << 31)).astype(np.int64)  # exact: |ab + nudge| < 2**62
    return np.where((a == I32_MIN) & (b == I32_MIN), I32_MAX, out)


def _rdbpot(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT (round half away from zero)."""
    if exponent == 0:
        return x
    mask = (1 << exponent) - 1
    rem = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (rem > threshold)


def mbqm(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """``MultiplyByQuantizedMultiplier`` (int32; double rounding)."""
    left, right = max(shift, 0), max(-shift, 0)
    v = np.clip(x.astype(np.int64) * (1 << left), I32_MIN, I32_MAX)
    return _rdbpot(_srdhm32(v, multiplier), right)


def relu_codes(s_in: float, z_in: int, s_out: float, z_out: int, lo: float | None,
               hi: float | None) -> Callable[[np.ndarray], np.ndarray]:
    """``ReluX`` / ``QuantizedReluX`` for int8: bounds ``roundf(bound / s_out) + z_out`` (None: unbounded)."""
    m, sh = quantize_multiplier(float(F32(s_in) / F32(s_out)))
    q_lo = -128 if lo is None else max(-128, z_out + int(_round_away(F32(lo) / F32(s_out))))
    q_hi = 127 if hi is None else min(127, z_out + int(_round_away(F32(hi) / F32(s_out))))
    return lambda q: np.clip(z_out + mbqm(q.astype(np.int64) - z_in, m, sh), q_lo, q_hi).astype(np.int8)


def leaky_codes(s_in: float, z_in: int, s_out: float, z_out: int, alpha: float) -> Callable[[np.ndarray], np.ndarray]:
    """``QuantizeLeakyRelu``: identity multiplier ``s_in / s_out`` for ``q >= z_in``, else ``s_in alpha / s_out``."""
    m_id, sh_id = quantize_multiplier(float(F32(s_in) / F32(s_out)))
    m_a, sh_a = quantize_multiplier(float(F32(s_in) * F32(alpha) / F32(s_out)))

    def codes(q: np.ndarray) -> np.ndarray:
        v = q.astype(np.int64) - z_in
        y = np.where(v >= 0, mbqm(v, m_id, sh_id), mbqm(v, m_a, sh_a)) + z_out
        return np.clip(y, -128, 127).astype(np.int8)
    return codes


def prelu_codes(s_in: float, z_in: int, s_alpha: float, z_alpha: int, alpha_code: int, s_out: float,
                z_out: int) -> Callable[[np.ndarray], np.ndarray]:
    """``BroadcastPrelu4DSlow`` with one alpha code: ``q - z_in`` times ``s_in / s_out`` where it is >= 0,
    else ``(q - z_in)(alpha - z_alpha)`` times ``s_in s_alpha / s_out``."""
    m1, sh1 = quantize_multiplier(float(F32(s_in) / F32(s_out)))
    m2, sh2 = quantize_multiplier(float(F32(s_in) * F32(s_alpha) / F32(s_out)))
    a = int(alpha_code) - int(z_alpha)

    def codes(q: np.ndarray) -> np.ndarray:
        v = q.astype(np.int64) - z_in
        y = np.where(v >= 0, mbqm(v, m1, sh1), mbqm(v * a, m2, sh2)) + z_out
        return np.clip(y, -128, 127).astype(np.int8)
    return codes


# ---- HARD_SWISH (int16 fixed point) ---------------------------------------------------------------------
def _to_i16(x: np.ndarray) -> np.ndarray:
    return ((x + (1 << 15)) & 0xFFFF) - (1 << 15)


def _srdhm16(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    ab = a.astype(np.int64) * np.asarray(b, np.int64)
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    out = np.trunc((ab + nudge) / float(1 << 15)).astype(np.int64)
    return np.where((a == -32768) & (np.asarray(b) == -32768), 32767, _to_i16(out))


def _sat_shl16(x: np.ndarray, shift: int) -> np.ndarray:
    return np.clip(x.astype(np.int64) * (1 << shift), -32768, 32767)


def _down16(m32: int) -> int:
    """``DownScaleInt32ToInt16Multiplier``."""
    if m32 >= I32_MAX - (1 << 15):
        return 32767
    return (m32 + (1 << 15)) >> 16


def hard_swish_codes(s_in: float, z_in: int, s_out: float, z_out: int) -> Callable[[np.ndarray], np.ndarray]:
    """reference_ops ``HardSwish<int8_t>`` with ``HardSwishPrepare``'s parameters (float32 scales)."""
    hires = F32(1.0 / 128.0) * F32(s_in)
    out_m32, out_exp = quantize_multiplier(float(hires / F32(s_out)))
    rel_m32, rel_exp = quantize_multiplier(float(hires / F32(3.0 / 32768.0)))
    out_m, rel_m = _down16(out_m32), _down16(rel_m32)
    if out_exp > 0:
        raise ValueError(f"HARD_SWISH: output multiplier exponent {out_exp} > 0 (LiteRT refuses the model)")

    def codes(q: np.ndarray) -> np.ndarray:
        x = _to_i16(q.astype(np.int64) - z_in)
        hires_x = _to_i16(x * 128)
        pre_out = _srdhm16(hires_x, out_m)
        r = hires_x
        if rel_exp > 0:
            r = _sat_shl16(r, rel_exp - 1)
        r = _srdhm16(r, rel_m)
        if rel_exp > 0:
            r = _sat_shl16(r, 1)
        if rel_exp < 0:
            r = _rdbpot(r, -rel_exp)
        r = (r + (1 << 15)) >> 1
        prod = r.astype(np.int64) * pre_out  # SaturatingDoublingHighMul (truncating), no overflow: r >= 0
        pre = _to_i16(np.trunc(prod / float(1 << 15)).astype(np.int64))
        y = _rdbpot(pre, -out_exp) + z_out
        return np.clip(y, -128, 127).astype(np.int8)
    return codes


# ---- ADD / MUL with one constant scalar operand --------------------------------------------------------
def add_codes(s_x: float, z_x: int, s_c: float, z_c: int, c_code: int, s_out: float, z_out: int, q_lo: int,
              q_hi: int) -> Callable[[np.ndarray], np.ndarray]:
    """int8 ``ADD`` (add.cc's general rescaling, ``left_shift`` 20) of ``x`` and the constant code ``c_code``:
    both on twice the larger input scale, summed, rescaled to the output, clamped to ``[q_lo, q_hi]``."""
    twice_max = float(F32(2) * max(F32(s_x), F32(s_c)))
    m_x, sh_x = quantize_multiplier(float(F32(s_x)) / twice_max)
    m_c, sh_c = quantize_multiplier(float(F32(s_c)) / twice_max)
    m_o, sh_o = quantize_multiplier(twice_max / float(F32(1 << 20) * F32(s_out)))
    c_scaled = mbqm(np.array([(int(c_code) - z_c) << 20], np.int64), m_c, sh_c)[0]

    def codes(q: np.ndarray) -> np.ndarray:
        x_scaled = mbqm((q.astype(np.int64) - z_x) << 20, m_x, sh_x)
        return np.clip(mbqm(x_scaled + c_scaled, m_o, sh_o) + z_out, q_lo, q_hi).astype(np.int8)
    return codes


def mul_codes(s_x: float, z_x: int, s_c: float, z_c: int, c_code: int, s_out: float, z_out: int, q_lo: int,
              q_hi: int) -> Callable[[np.ndarray], np.ndarray]:
    """int8 ``MUL`` (mul.cc) of ``x`` and the constant code ``c_code``: ``(q - z_x)(c - z_c)`` times
    ``s_x s_c / s_out``, clamped to ``[q_lo, q_hi]``."""
    m, sh = quantize_multiplier(float(F32(s_x) * F32(s_c) / F32(s_out)))
    c = int(c_code) - int(z_c)
    return lambda q: np.clip(mbqm((q.astype(np.int64) - z_x) * c, m, sh) + z_out, q_lo, q_hi).astype(np.int8)
