"""float <-> quint16 (``nodes.int16`` module doc): Quantize and Dequantize take quint8 only, so a 16-bit code
is carried in three 8-bit pieces, ``n = 257 h + l + f``: a high piece on step ``257 s`` (zero code
``round(zero / 257)``, 128 on a symmetric range), a low piece on step ``s`` (zero code 128, ``l`` in
``[-128, 127]``), and a fix on step ``s`` for what the low piece's clip and the rounding of a tie on the
remainder leave (``f`` in ``{-1, 0, 1}``). Two rounded 8-bit pieces cannot cover 65536 codes (256 x 256
leave no room for the rounding); the third makes the split exact (to float32 arithmetic).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.graph import OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import node3
from hexnn_import.importers.nodes.int16 import Range, binary16, range16, step16, to16
from hexnn_import.importers.nodes.values import Value

#: the high piece's step in 16-bit steps
HI_STEPS = 257.0


def pieces(step: float, zero: int = 32768) -> tuple[Range, Range]:
    """The ranges of the high piece and of the low / fix pieces of a 16-bit value (module doc)."""
    zh = int(np.floor(zero / HI_STEPS + 0.5))
    return (-zh * HI_STEPS * step, (255 - zh) * HI_STEPS * step), (-128.0 * step, 127.0 * step)


def _float(b: GraphBuilder, op: str, refs: list[Ref], shape: tuple[int, int, int, int], name: str) -> Ref:
    return Ref(b.graph.append(op, refs, [OutputDef(shape, "float")], name=name).node_id, 0)


def quantize16(b: GraphBuilder, x: Ref, shape: tuple[int, int, int, int], scale: float, name: str) -> Value:
    """float -> quint16 on ``range16(scale)`` (TFLite QUANTIZE to int16): Quantize the high piece, then the
    low and the fix piece from the float remainders (Dequantize, Sub_f), Convert_8_u16 each and sum them
    with QuantizedAdd_u16 (gain 1 onto ``range16(scale)``, integer)."""
    hi_r, lo_r = pieces(scale)
    out = range16(scale)
    rest, total = x, None
    for k, rng in enumerate((hi_r, lo_r, lo_r)):
        q = node3(b, "Quantize", [rest, *b.range_consts(rng, f"{name}/piece{k}")], shape, f"{name}/piece{k}", rng)
        if k < 2:
            rest = _float(b, "Sub_f", [rest, _float(b, "Dequantize", q.triple(), shape, f"{name}/real{k}")],
                          shape, f"{name}/rest{k}")
        q16 = to16(b, q, f"{name}/piece{k}")
        total = q16 if total is None else binary16(b, "QuantizedAdd_u16", total, q16, out, shape, f"{name}/sum{k}")
    assert total is not None
    return total


def dequantize16(b: GraphBuilder, v: Value, name: str) -> Ref:
    """quint16 -> float (TFLite DEQUANTIZE of int16): each piece by Convert_u16_8 (step at least twice the
    input's, as the op requires), the remainder by QuantizedSub_u16 on a range 128x finer than ``s``; the
    pieces Dequantized and summed by Add_f."""
    assert v.range is not None
    s = step16(v.range)
    hi_r, lo_r = pieces(s, int(np.clip(np.round(-v.range[0] / s), 0, 65535)))
    rest_r = (-256.0 * s, 256.0 * s)
    rest, total = v, None
    for k, rng in enumerate((hi_r, lo_r, lo_r)):
        q = node3(b, "Convert_u16_8", rest.triple() + list(b.range_consts(rng, f"{name}/piece{k}")), v.shape,
                  f"{name}/piece{k}", rng)
        if k < 2:
            rest = binary16(b, "QuantizedSub_u16", rest, to16(b, q, f"{name}/piece{k}"), rest_r, v.shape,
                            f"{name}/rest{k}")
        real = _float(b, "Dequantize", q.triple(), v.shape, f"{name}/real{k}")
        total = real if total is None else _float(b, "Add_f", [total, real], v.shape, f"{name}/sum{k}")
    assert total is not None
    return total


def float_map16(b: GraphBuilder, v: Value, build: Callable[[Ref], Ref], out_scale: float, name: str) -> Value:
    """Float ops between :func:`dequantize16` and :func:`quantize16` (``build`` appends them to the float
    input and returns their result): the 16-bit input and output each exact, the ops in float32, where
    going through 8 bits would round both to 1/255 of their range."""
    return quantize16(b, build(dequantize16(b, v, f"{name}/in")), v.shape, out_scale, f"{name}/out")


def float_unary16(b: GraphBuilder, v: Value, op: str, out_scale: float, name: str, beta: float = 1.0) -> Value:
    """One float op (Softmax_f, Sigmoid_f, Tanh_f) by :func:`float_map16`; ``beta`` scales the input first
    (Mul_f)."""
    def build(x: Ref) -> Ref:
        if beta != 1.0:
            x = _float(b, "Mul_f", [x, b.float_const(beta, f"{name}/beta")], v.shape, f"{name}/beta")
        return _float(b, op, [x], v.shape, f"{name}/{op}")

    return float_map16(b, v, build, out_scale, name)


def leaky_relu16(b: GraphBuilder, v: Value, alpha: float, out_scale: float, name: str) -> Value:
    """``max(x, alpha x)`` (``alpha <= 1``) in float (Mul_f, Maximum_f) by :func:`float_map16`."""
    def build(x: Ref) -> Ref:
        ax = _float(b, "Mul_f", [x, b.float_const(alpha, f"{name}/alpha")], v.shape, f"{name}/scaled")
        return _float(b, "Maximum_f", [x, ax], v.shape, f"{name}/leaky")

    return float_map16(b, v, build, out_scale, name)
