"""Checks of the int16x8 branch (``tflite.handlers.int16``): which operators are int16 and why one cannot be
imported onto hexagon_nn's 16-bit ops. Each returns the reason or None, like ``tflite.common``'s checks.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.tflite.common import check_fused, const_ints
from hexnn_import.importers.tflite.importer import TFLiteImporter
from hexnn_import.importers.tflite.int16 import is_int16
from hexnn_import.importers.tflite.reader import TFOperator

#: the longest reduction the 16-bit transposed conv sums exactly (ops/kernels/q16_conv.py check_exact16)
MAX_TAPS16 = 2 ** 53 // (65535 * 65535)


def _activations(imp: TFLiteImporter, op: TFOperator) -> list[int]:
    """Tensor indices of the operator's non-constant inputs and its outputs."""
    ins = [i for i in op.inputs if i >= 0 and imp.tensor(i).data is None]
    return ins + [i for i in op.outputs if i >= 0]


def int16_op(imp: TFLiteImporter, op: TFOperator) -> bool:
    """An operator with an int16 activation (input or output): the int16x8 branch takes it."""
    return any(imp.tensor(i).dtype == "int16" for i in _activations(imp, op))


def bad16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Why an int16 activation of the operator is not an int16x8 one (one scale, zero point 0), or None."""
    for kind, indices in (("input", op.inputs), ("output", op.outputs)):
        for i in indices:
            t = imp.tensor(i) if i >= 0 else None
            if t is not None and t.data is None and t.dtype == "int16" and not is_int16(t):
                return (f"{kind} {t.name} of type int16 is not per-tensor with zero point 0 "
                        f"(int16x8 activations are)")
    return None


def all_int16(imp: TFLiteImporter, op: TFOperator, positions: tuple[int, ...] = (0,)) -> str | None:
    """Inputs at ``positions`` (constant or not) and every output are per-tensor int16 with zero point 0."""
    why = bad16(imp, op)
    if why:
        return why
    for kind, indices in (("input", [op.inputs[p] for p in positions if p < len(op.inputs)]),
                          ("output", list(op.outputs))):
        for i in indices:
            t = imp.tensor(i)
            if i >= 0 and not is_int16(t):
                return f"{kind} {t.name} of type {t.dtype} is not int16 (an int16x8 operator)"
    if len(imp.tensor(op.outputs[0]).shape) > 4:
        return "rank above 4"
    return None


def check_conv16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """int16 input and output, constant int8 symmetric weights (per-channel on the output axis), a constant
    bias, equal strides (SpaceToDepth_16 has one block size), not both strided and dilated, at most 2**21
    taps per output."""
    why = all_int16(imp, op) or check_fused(imp, op)
    if why:
        return why
    wt = imp.tensor(op.inputs[1])
    if wt.data is None or wt.dtype != "int8" or wt.quant is None or np.any(wt.quant.zero_point != 0):
        return "weights not constant int8 with zero points 0"
    axis = 3 if op.opname == "DEPTHWISE_CONV_2D" else 0
    if wt.quant.per_channel and wt.quant.axis != axis:
        return f"per-channel weights must be on axis {axis}"
    if len(op.inputs) > 2 and op.inputs[2] >= 0 and imp.tensor(op.inputs[2]).data is None:
        return "non-constant bias"
    o = op.options
    if op.opname != "FULLY_CONNECTED":
        if o is None:
            return "missing options"
        if o.StrideH() != o.StrideW():
            return f"stride {o.StrideH()}x{o.StrideW()} (int16: SpaceToDepth_16 takes one block size)"
        if o.StrideH() > 1 and (o.DilationHFactor() > 1 or o.DilationWFactor() > 1):
            return "stride and dilation both above 1"
    elif o is not None and o.WeightsFormat() != 0:
        return "shuffled weights format"
    x_depth = imp.tensor(op.inputs[0]).shape[-1]
    if op.opname == "CONV_2D" and x_depth != wt.shape[-1]:
        return "grouped convolution (input depth differs from the filter's)"
    taps = int(np.prod(wt.shape[1:])) * (x_depth if op.opname == "DEPTHWISE_CONV_2D" else 1)
    if taps > MAX_TAPS16:
        return f"{taps} taps per output (int16: at most {MAX_TAPS16})"
    return None


def check_pool16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """int16 input and output, a supported fused activation, an options table."""
    return all_int16(imp, op) or check_fused(imp, op) or (None if op.options is not None else "missing options")


def check_elementwise16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """int16 inputs (constants too) and output, a supported fused activation (SOFTMAX, LEAKY_RELU: an options
    table; LEAKY_RELU: alpha in [0, 1])."""
    n = 2 if op.opname in ("ADD", "SUB", "MUL") else 1
    why = all_int16(imp, op, tuple(range(n))) or check_fused(imp, op)
    if why is None and op.opname in ("SOFTMAX", "LEAKY_RELU") and op.options is None:
        return "missing options"
    if why is None and op.opname == "LEAKY_RELU" and not 0.0 <= float(op.options.Alpha()) <= 1.0:
        return f"alpha {float(op.options.Alpha())} outside [0, 1]"
    return why


def mean_axes(imp: TFLiteImporter, op: TFOperator) -> tuple[int, ...] | None:
    """MEAN's constant axes as sorted 4-D axes (None when not constant)."""
    vals = const_ints(imp, op, 1)
    rank = len(imp.tensor(op.inputs[0]).shape)
    if vals is None:
        return None
    return tuple(sorted({int(a) % rank + 4 - rank for a in vals.reshape(-1)}))


def check_mean16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """int16 input and output, the mean over height and / or width of the 4-D view (a rank-3 ``[N, L, C]``
    tensor is ``[1, N, L, C]``: axis 1 is the width)."""
    why = all_int16(imp, op)
    if why:
        return why
    axes = mean_axes(imp, op)
    if axes is None or not axes or not set(axes) <= {1, 2} or len(imp.tensor(op.inputs[0]).shape) > 4:
        return "int16 MEAN only over height and / or width (axes 1, 2 of the 4-D view)"
    return None


def check_edge16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A float32 graph input, int16 or per-tensor int8 / uint8 to int16, or int16 to int8 / uint8
    (QUANTIZE); int16 to float32 (DEQUANTIZE); rank <= 4."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    why = bad16(imp, op)
    if why:
        return why
    if len(yt.shape) > 4:
        return "rank above 4"
    if op.opname == "DEQUANTIZE":
        return None if is_int16(xt) and yt.dtype == "float32" else f"{xt.dtype} to {yt.dtype}"
    if is_int16(yt):
        if xt.dtype == "float32":
            return None if op.inputs[0] in imp.model.inputs else "int16 QUANTIZE of a float that is no graph input"
        ok = is_int16(xt) or (xt.dtype in ("int8", "uint8") and xt.quant is not None and not xt.quant.per_channel)
        return None if ok else f"input of type {xt.dtype}"
    if is_int16(xt) and yt.dtype in ("int8", "uint8") and yt.quant is not None and not yt.quant.per_channel:
        return None
    return f"{xt.dtype} to {yt.dtype}"


def check_pad16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """int16 input and output of rank <= 4, constant non-negative paddings, one pair per dimension."""
    why = all_int16(imp, op)
    if why:
        return why
    p = const_ints(imp, op, 1)
    rank = len(imp.tensor(op.inputs[0]).shape)
    if p is None or p.size != 2 * rank or np.any(p < 0) or rank > 4:
        return "paddings not a constant non-negative pair per dimension (rank <= 4)"
    return None


def check_concat16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """int16 inputs (constants too) and output of rank <= 4, an options table, a supported fused activation."""
    if op.options is None:
        return "missing options"
    return all_int16(imp, op, tuple(range(len(op.inputs)))) or check_fused(imp, op)


def check_transpose16(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """int16 input and output of rank <= 4, a constant permutation."""
    why = all_int16(imp, op)
    if why:
        return why
    rank = len(imp.tensor(op.inputs[0]).shape)
    p = const_ints(imp, op, 1)
    if p is None or sorted(int(a) % rank for a in p.reshape(-1)) != list(range(rank)) or rank > 4:
        return "perm not a constant permutation (rank <= 4)"
    return None
