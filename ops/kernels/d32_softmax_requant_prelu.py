"""_d32 forms prepare.c makes of QuantizedSoftmax_8, Requantize_8to8 and QuantizedPRelu_8(_V2)
(hexagon_nn 2.14.1 prepare.c depth32_replacement_op; the ops are in nnlib's op table, not in the op
documents: see their catalog notes).

QuantizedSoftmax_8_d32 follows the device: op_softmax_d32.c ``softmax_d32_execute`` runs its HVX loop on every
depth (no depth-1 / depth-2 / large-depth paths, unlike the flat op), modelled lane for lane on the logical data
(:mod:`hexnn_import.ops.nnlib_softmax_device`, issue 36; the device masks the depth padding out). With depth
padding before the data the device would take its scalar ``softmax_operate_ref_function`` instead; the engine's
d32 tensors never have any (prepare.c's converts, the default layout), and that path is not modelled.
The others run their flat twin's arithmetic on the logical data (:class:`~hexnn_import.ops.d32_io.D32Twin`):
nnlib's d32 code for them is HVX (op_requantize.c
``do_requantize_8to8_execute_d32`` with ``requantize_d32_hvx_work_func``, op_prelu_d32.c /
op_prelu_v2_d32.c ``prelu_opt_execute``), which the x86 oracle cannot run, so these kernels are as
exact as the flat ones are, and no more. Output 0 is laid out with the default d32 padding (nnlib's
Requantize_8to8_d32 copies its input's padding; only the layout differs).
"""
from __future__ import annotations

from typing import Any

from hexnn_import.ops.d32_io import D32Twin, d32_output
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.kernels.nonlinear import UNIT_RANGE, _QSoftmax
from hexnn_import.ops.registry import KernelContext, register


@register("QuantizedSoftmax_8_d32")
class QuantizedSoftmax8D32(D32Twin, _QSoftmax):
    """QuantizedSoftmax_8 (along depth, onto ``[0, 1]``, optional beta) on d32 data, as ``softmax_d32_execute``."""

    FLAT_OP = "QuantizedSoftmax_8"
    FLAT = False

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        flat = self.flat_inputs(ctx, inputs)
        q = u8_codes(ctx, require_4d(ctx, flat[0], "input data"), "input data")
        return (d32_output(self.codes(ctx, q, self.params(ctx, tuple(flat)))), *range_out(*UNIT_RANGE))


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
