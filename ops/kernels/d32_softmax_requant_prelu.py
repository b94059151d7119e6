"""_d32 forms prepare.c makes of QuantizedSoftmax_8, Requantize_8to8 and QuantizedPRelu_8(_V2)
(hexagon_nn 2.14.1 prepare.c depth32_replacement_op; the ops are in nnlib's op table, not in the op
documents: see their catalog notes).

Each runs its flat twin's arithmetic on the logical data (:class:`~hexnn_import.ops.d32_io.D32Twin`):
nnlib's d32 code for them is HVX (op_softmax_d32.c ``softmax_d32_execute``, op_requantize.c
``do_requantize_8to8_execute_d32`` with ``requantize_d32_hvx_work_func``, op_prelu_d32.c /
op_prelu_v2_d32.c ``prelu_opt_execute``), which the x86 oracle cannot run, so these kernels are as
exact as the flat ones are, and no more. Output 0 is laid out with the default d32 padding (nnlib's
Requantize_8to8_d32 copies its input's padding; only the layout differs).
"""
from __future__ import annotations

from hexnn_import.ops.d32_io import D32Twin
from hexnn_import.ops.registry import register


@register("QuantizedSoftmax_8_d32")
class QuantizedSoftmax8D32(D32Twin):
    """QuantizedSoftmax_8 (along depth, onto ``[0, 1]``, optional beta) on d32 data; nnlib's d32 path is HVX."""

    FLAT_OP = "QuantizedSoftmax_8"


@register("Requantize_8to8_d32")
class Requantize8to8D32(D32Twin):
    """Requantize_8to8 (requested range must hold 0 on a code) on d32 data; nnlib's d32 path is HVX."""

    FLAT_OP = "Requantize_8to8"


@register("QuantizedPRelu_8_d32")
class QuantizedPRelu8D32(D32Twin):
    """QuantizedPRelu_8 (float alphas, range passes through) on d32 data; nnlib's d32 path is HVX."""

    FLAT_OP = "QuantizedPRelu_8"


@register("QuantizedPRelu_8_V2_d32")
class QuantizedPRelu8V2D32(D32Twin):
    """QuantizedPRelu_8_V2 (quint8 alphas, optional output range) on d32 data; nnlib's d32 path is HVX
    (and its flat QuantizedPRelu_8_V2 has no execute function: the d32 op is the one the device runs)."""

    FLAT_OP = "QuantizedPRelu_8_V2"
