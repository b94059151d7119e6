"""Generic emitters for activations and normalizations (any source format).

Functions take a GraphBuilder and quint8 Values and return the result's
Value; ``out`` is the result's fixed range or None (run-time). Where a
documented op has a fixed output range that differs from the source's,
the caller requantizes (``emit.requantize_to``); where a range *relabel*
is exact - the same codes read on another range, e.g. ``x/2`` is ``x``'s
codes on half its range - it is done by handing the next op other
min/max Consts, never by an invented op.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from hexnn_import.graph import OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import (ACT_CLIP, Range, apply_activation, clip_implied, node3, requantize_to, same_range,
                                        reshape_value, to_8bit)
from hexnn_import.importers.nodes.elementwise import emit_add, pair_refs, tile_to
from hexnn_import.importers.nodes.values import Value

#: activation ops whose output range is their input range
PASS_RANGE = ("QuantizedRelu_8", "QuantizedReluX_8")
#: QuantizedTanh_8's fixed output range (SEMANTICS §6; 0.992188 is 127/128).
TANH_RANGE = (-1.0, float(np.float32(128.0 / 127.0)))
#: QuantizedSigmoid_8 / QuantizedSoftmax_8's fixed output range (SEMANTICS §6).
UNIT_RANGE = (0.0, 1.0)


def quint8_const(b: GraphBuilder, codes: np.ndarray, rng: Range, name: str) -> Value:
    """A quint8 Const value (codes in 4-D) with its range Consts."""
    codes = np.asarray(codes, dtype=np.uint8)
    codes4 = codes.reshape((1,) * (4 - codes.ndim) + codes.shape)
    ref = b.graph.const_ref(codes4, name)
    return Value(ref, codes4.shape, "quint8", *b.range_consts(rng, name), rng)  # type: ignore[arg-type]


def relabel(b: GraphBuilder, v: Value, rng: Range, name: str) -> Value:
    """The codes of ``v`` read on the range ``rng`` (no node: other min/max Consts); ``v`` needs a fixed range."""
    assert v.range is not None
    return Value(v.data, v.shape, v.etype, *b.range_consts(rng, name), rng)


def emit_clip_activation(b: GraphBuilder, v: Value, act: int, out: Range | None, name: str) -> Value:
    """RELU / RELU6 / RELU_N1_TO_1 (emit.ACT_*) onto ``out``.

    When ``out`` lies inside the clip interval (``emit.clip_implied``) the Requantize_8to8 onto it
    saturates exactly as the clip does, so no activation node is needed;
    otherwise the activation op (range passes through) precedes it.
    """
    lo, hi = ACT_CLIP[act]
    if clip_implied(out, lo, hi):
        return requantize_to(b, v, out, name)
    a = apply_activation(b, v, act, name)
    if a is not v and b.graph.node(a.data.src_id).op in PASS_RANGE:
        a = replace(a, range=v.range)  # the relu ops pass the range through (SEMANTICS §6)
    return requantize_to(b, a, out, name)


def emit_prelu(b: GraphBuilder, x: Value, alpha: Value, out: Range | None, name: str,
               shape: tuple[int, int, int, int] | None = None) -> Value:
    """``x if x >= 0 else alpha * x`` with QuantizedPRelu_8_V2 (quint8 alphas, exact rounding onto ``out``).

    ``shape`` (the broadcast result) tiles ``x`` first when the alphas are the larger operand.
    """
    if shape is not None:
        x = tile_to(b, x, shape, f"{name}/x")
    refs = x.triple() + alpha.triple()
    if out is not None:
        refs += list(b.range_consts(out, f"{name}/out"))
    return node3(b, "QuantizedPRelu_8_V2", refs, x.shape, f"{name}/prelu", out)


def alpha_const(b: GraphBuilder, alpha: float, name: str) -> Value:
    """A scalar quint8 alpha that is exactly ``alpha`` (code 255 on ``[0, a]``, code 0 on ``[a, 0]``)."""
    if alpha > 0:
        return quint8_const(b, np.array(255), (0.0, alpha), name)
    if alpha < 0:
        return quint8_const(b, np.array(0), (alpha, 0.0), name)
    return quint8_const(b, np.array(0), (0.0, 1.0), name)


def emit_hard_swish(b: GraphBuilder, x: Value, out: Range | None, name: str) -> Value:
    """``x * relu6(x + 3) / 6`` decomposed onto documented ops.

    1. QuantizedAdd_8p8to8(x, 3) onto the fixed range ``[0, 6]``: the
       saturation at both ends *is* relu6 (exact rounding, step 6/255);
    2. those codes read on ``[0, 1]`` are ``relu6(x + 3) / 6`` (a relabel);
    3. QuantizedMul_8x8to32 with ``x`` (exact) and Requantize_32to8 onto
       ``out`` (QuantizeDownAndShrinkRange_32to8 when run-time).
    The gate carries 8 bits (TFLite's reference 16), the one extra rounding.
    """
    three = quint8_const(b, np.array(255), (0.0, 3.0), f"{name}/three")
    gate = emit_add(b, x, three, (0.0, 6.0), f"{name}/plus3")
    gate = relabel(b, gate, (0.0, 1.0), f"{name}/gate")
    acc = node3(b, "QuantizedMul_8x8to32", pair_refs(x, gate), x.shape, f"{name}/mul", None, etype="qint32")
    return to_8bit(b, acc, out, name)


def emit_softmax(b: GraphBuilder, x: Value, beta: float, name: str) -> Value:
    """QuantizedSoftmax_8 along depth (beta as a float Const) onto its fixed ``[0, 1]``."""
    refs = x.triple() + [b.float_const(beta, f"{name}/beta")]
    return node3(b, "QuantizedSoftmax_8", refs, x.shape, f"{name}/softmax", UNIT_RANGE)


def emit_sigmoid(b: GraphBuilder, x: Value, out: Range | None, name: str) -> Value:
    """Logistic: QuantizedSigmoid_8 onto its fixed ``[0, 1]`` (the caller requantizes onto ``out``).

    (hexagon_nn's flat Sigmoid and Tanh run op_tanh_d32.c's fixed-point table, tanh onto
    ``[-1, 128/127]``: reading tanh's codes of ``x/2`` as sigmoid's would give step 1/254, not TFLite's
    1/256, so no single-rounding shortcut exists; ``out`` is kept for the callers' signature.)
    """
    del out
    return node3(b, "QuantizedSigmoid_8", x.triple(), x.shape, f"{name}/sigmoid", UNIT_RANGE)


def emit_tanh(b: GraphBuilder, x: Value, name: str) -> Value:
    """QuantizedTanh_8 onto its fixed ``[-1, 128/127]`` (op_tanh_d32.c; zero code 127)."""
    return node3(b, "QuantizedTanh_8", x.triple(), x.shape, f"{name}/tanh", TANH_RANGE)


def emit_sqrt(b: GraphBuilder, x: Value, name: str) -> Value:
    """QuantizedSqrt_8 (its input range must start at 0); negative inputs become 0 first.

    A fixed range with ``min < 0`` is moved onto ``[0, max - min]`` by a
    Requantize_8to8 of gain exactly 1 (codes shift down by the zero code,
    negatives saturate to 0: exact); a run-time range the same way, its
    ``max - min`` computed by Sub_f at run time (QuantizedClamp_8 and
    QuantizedRelu_8 keep their input range in nnlib's op_relu.c, so they
    cannot do this). Output range ``[0, sqrt(in_max)]``.
    """
    if x.range is None:
        assert x.mn is not None and x.mx is not None
        g = b.graph
        width = g.append("Sub_f", [x.mx, x.mn], [OutputDef.scalar()], name=f"{name}/nonneg/width")
        refs = x.triple() + [b.float_const(0.0, f"{name}/nonneg/min"), Ref(width.node_id, 0)]
        x = node3(b, "Requantize_8to8", refs, x.shape, f"{name}/nonneg", None)
    elif x.range[0] < 0:
        x = requantize_to(b, x, (0.0, x.range[1] - x.range[0]), f"{name}/nonneg")
    rng = None if x.range is None else (0.0, float(np.sqrt(np.float32(x.range[1]))))  # op_sqrt.c: sqrtf
    return node3(b, "QuantizedSqrt_8", x.triple(), x.shape, f"{name}/sqrt", rng)


def emit_l2_normalize(b: GraphBuilder, x: Value, name: str) -> Value:
    """L2Normalize_8 along depth onto its fixed ``[-1, 1]``: the value viewed as ``[1, b*h*w, d, 1]``
    (QuantizedReshape) and normalised along axis 2, where op_l2normalize_8.c runs ``hvx_l2norm_in_cols`` (Newton
    reciprocal square roots, within 3 codes of the quotient). Its depth path ``hvx_l2norm_in_rows`` truncates
    each norm to an integer (tens of codes off for small norms) and negates a row whose integer norm is a power
    of two (tools/hvx/op_l2norm.py, issue 36)."""
    n, h, w, d = x.shape
    rows = reshape_value(b, x, (1, n * h * w, d, 1), f"{name}/l2rows")
    y = node3(b, "L2Normalize_8", rows.triple() + [b.int_const(2, f"{name}/l2axis")], rows.shape, f"{name}/l2norm",
              (-1.0, 1.0))
    return reshape_value(b, y, x.shape, f"{name}/l2back")


def lrn_problem(bias: float, alpha: float, beta: float) -> str | None:
    """Why nnlib's QuantizedLRN_8 would refuse these parameters (op_lrn.c ``lrn_check``: bias >= 1,
    alpha >= 0, beta >= 0), or None."""
    if not bias >= 1.0:
        return f"LRN bias {bias} < 1 (hexagon_nn's QuantizedLRN_8 requires bias >= 1)"
    if not (alpha >= 0.0 and beta >= 0.0):
        return f"LRN alpha {alpha} / beta {beta} negative (hexagon_nn's QuantizedLRN_8 requires both >= 0)"
    return None


def emit_lrn_depth(b: GraphBuilder, x: Value, radius: int, bias: float, alpha: float, beta: float,
                   name: str) -> Value:
    """``x / (bias + alpha * sum_{|d'-d| <= radius} x[d']**2) ** beta`` with QuantizedLRN_8.

    QuantizedLRN_8 divides alpha by the window size, so it gets
    ``alpha * (2*radius + 1)``. nnlib reads the window size as the first
    float of input 3's data (op_lrn.c ``lrn_check``: ``(int)
    tensor_get_float(window, 0)``), so input 3 is a float ``[1, 1, 1,
    size]`` filled with ``size``. Its output range follows the data
    (run-time). :func:`lrn_problem` says which parameters nnlib refuses.
    """
    size = 2 * radius + 1
    g = b.graph
    window = g.const_ref(np.full((1, 1, 1, size), float(size), np.float32), f"{name}/window")
    refs = x.triple() + [window, b.float_const(bias, f"{name}/bias"),
                         b.float_const(alpha * size, f"{name}/alpha"), b.float_const(beta, f"{name}/beta")]
    return node3(b, "QuantizedLRN_8", refs, x.shape, f"{name}/lrn", None)
