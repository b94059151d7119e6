"""TFLite TRANSPOSE_CONV -> QuantizedTransposeConv2d_8x8p32to8 (nodes.transpose_conv).

Inputs: ``output_shape`` (constant int32 [4]), weights ``[O, H, W, I]``
(int8 / uint8 per-tensor, int8 per-channel on axis 0, or float: quantized
symmetric per output channel), the data, and an optional bias (input 3).
SAME / VALID padding is turned into explicit crops of the full output as
TFLite computes them (``transpose_conv_pads``). Quantized models and
calibrated float models use fixed ranges; float models without calibration
use the op's auto output range (SEMANTICS §5) - see the emitter's docstring.

Arithmetic: exact int64 product sums, then the §5 output stage (bias on a
power-of-two fraction of the product step, 31-bit multiplier, round half
up) where TFLite applies its per-channel fixed-point multiplier; the two
roundings can differ by one code.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.errors import ModelFormatError
from hexnn_import.importers.nodes.transpose_conv import (
    TRANSPOSE_CONV_EMITS,
    emit_transpose_conv,
    transpose_conv_pads,
)
from hexnn_import.importers.tflite.common import (
    check_fused,
    check_io,
    const_ints,
    finish,
    out_shape,
)
from hexnn_import.importers.tflite.importer import QUANT_TYPES, TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.handlers.conv_pool import weights_of
from hexnn_import.importers.tflite.reader import TFOperator, TFTensor

ACT_EMITS = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8")


def _check(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A constant output_shape equal to the output's; constant 4-D float32 / int8 / uint8 weights (per-channel
    only on axis 0 with zero points 0) matching the 4-D input's depth; a constant bias; a supported fused
    activation."""
    if len(op.inputs) < 3:
        return "fewer than 3 inputs"
    why = check_io(imp, op, (2,)) or check_fused(imp, op)
    if why:
        return why
    if op.options is None:
        return "missing options"
    shape = const_ints(imp, op, 0)
    if shape is None or shape.reshape(-1).tolist() != list(imp.tensor(op.outputs[0]).shape):
        return "output_shape is not constant or differs from the output tensor's shape"
    w = imp.tensor(op.inputs[1])
    if w.data is None or len(w.shape) != 4:
        return "non-constant or non-4-D weights"
    if w.dtype not in QUANT_TYPES and w.dtype != "float32":
        return f"weights of type {w.dtype}"
    if w.dtype in QUANT_TYPES and w.quant is None:
        return f"weights of type {w.dtype} without quantization"
    if w.quant is not None and w.quant.per_channel and (w.quant.axis != 0 or np.any(w.quant.zero_point != 0)):
        return "per-channel weights must be on axis 0 with zero points 0"
    if len(imp.tensor(op.inputs[2]).shape) != 4 or w.shape[3] != imp.tensor(op.inputs[2]).shape[3]:
        return "input is not 4-D or its depth differs from the weights'"
    if len(op.inputs) > 3 and op.inputs[3] >= 0 and imp.tensor(op.inputs[3]).data is None:
        return "non-constant bias"
    return None


def _bias_real(imp: TFLiteImporter, op: TFOperator, x: TFTensor, w: TFTensor, n_out: int) -> np.ndarray:
    """The bias (input 3) in real units: float data, or int32 codes on the bias' scale
    (TFLite's rule ``input scale * weight scale`` when it carries none); zeros when absent."""
    if len(op.inputs) < 4 or op.inputs[3] < 0:
        return np.zeros(n_out)
    b = imp.tensor(op.inputs[3])
    data = np.asarray(b.data, dtype=np.float64).reshape(-1)
    if data.size != n_out:
        raise ModelFormatError(f"{imp.label}: bias {b.name} has {data.size} values for {n_out} output channels")
    if b.dtype == "float32":
        return data
    if b.quant is not None and b.quant.scale.size:
        return (data - np.broadcast_to(b.quant.zero_point, (n_out,))) * np.broadcast_to(b.quant.scale, (n_out,))
    if x.quant is None or w.quant is None:
        raise ModelFormatError(f"{imp.label}: bias {b.name} is integer but has no scale")
    return data * np.broadcast_to(float(x.quant.scale[0]) * w.quant.scale, (n_out,))


@tflite_op("TRANSPOSE_CONV", TRANSPOSE_CONV_EMITS + ACT_EMITS, _check)
def transpose_conv(imp: TFLiteImporter, op: TFOperator) -> None:
    """TRANSPOSE_CONV (SAME / VALID, strides, optional bias, fused activation) onto quint8."""
    wt, xt, yt = imp.tensor(op.inputs[1]), imp.tensor(op.inputs[2]), imp.tensor(op.outputs[0])
    o = op.options
    lw = weights_of(imp, wt, 0, yt.name)
    stride = (int(o.StrideH()), int(o.StrideW()))
    crops = transpose_conv_pads((xt.shape[1], xt.shape[2]), (wt.shape[1], wt.shape[2]), stride,
                                (yt.shape[1], yt.shape[2]), o.Padding() == 0)
    y = emit_transpose_conv(imp, yt.name, imp.qvalue(op.inputs[2]), lw.codes, lw.w_range, lw.k,
                            _bias_real(imp, op, xt, wt, wt.shape[0]), imp.act_range(op.outputs[0]), stride, crops,
                            out_shape(imp, op))
    finish(imp, op, y)
