"""TFLite builtins of transformer models: BATCH_MATMUL and GELU.

The rest of an attention block maps through the existing handlers: FULLY_CONNECTED of a rank-3 input
(rows stacked, ``keep_num_dims`` or not), SOFTMAX along the last axis, RESHAPE / TRANSPOSE up to rank 4,
MEAN over the token axis.

- keras's decomposed LayerNorm is recognised and imported as one (``tflite.layernorm``), and a TRANSPOSE
  through rank 5 between reshapes (keras's patch extraction) as its rank-4 equivalent (``tflite.rank5``);
  both registered here in ``tflite.importer.FUSERS``.
- BATCH_MATMUL (ranks 2-4, ``adj_x`` / ``adj_y``, batch dimensions broadcast; two activations or one
  constant): ``nodes.matmul.emit_batch_matmul``, one exact QuantizedMatMul_8x8to32 per matrix and one
  rounding onto the output range (TFLite's int8 kernel rounds once too, with its fixed-point
  multiplier: the two can differ by one code at ties). Rank > 4 is refused (re-export with the
  batch and head axes merged).
- GELU (``approximate`` false: erf; true: tanh): with fixed ranges a 256-entry table rounded half away
  from zero, as TFLite's int8 / uint8 kernel builds its own look-up table (``gelu.cc``
  ``LUTPopulate``): the same codes. A float model with a run-time range: the float form of
  ``nodes.norm.emit_gelu_float``.
"""
from __future__ import annotations

from hexnn_import.graph import shape4
from hexnn_import.importers.nodes.matmul import MATMUL_EMITS, MAX_MATRICES, emit_batch_matmul, matmul_matrices
from hexnn_import.importers.nodes.norm import GELU_FLOAT_EMITS, LAYER_NORM_EMITS, emit_gelu_float, gelu_fn
from hexnn_import.importers.tflite.common import finish
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.registry import EMITS, FUSERS
from hexnn_import.importers.tflite.layernorm import find_layer_norms
from hexnn_import.importers.tflite.rank5 import find_rank5_transposes
from hexnn_import.importers.tflite.handlers.elementwise import check_arith
from hexnn_import.importers.tflite.handlers.decomposed import LUT_EMITS, emit_table, table_codes
from hexnn_import.importers.tflite.reader import TFOperator


def _check_batch_matmul(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized operands (activations or constants) and output of one kind, ranks
    2-4, batch dimensions that broadcast, at most MAX_MATRICES products."""
    why = check_arith(imp, op, (0, 1))
    if why:
        return why
    a, c = (imp.tensor(op.inputs[p]).shape for p in (0, 1))
    if len(a) < 2 or len(c) < 2:
        return "an operand of rank < 2"
    o = op.options
    adj_x, adj_y = (bool(o.AdjX()), bool(o.AdjY())) if o is not None else (False, False)
    a4, c4 = shape4(a), shape4(c)
    k_a = a4[2] if adj_x else a4[3]
    k_c = c4[3] if adj_y else c4[2]
    if k_a != k_c:
        return f"inner dimensions differ ({list(a)} @ {list(c)})"
    try:
        n = matmul_matrices(a4, c4)
    except ValueError:
        return f"batch dimensions do not broadcast ({list(a)} @ {list(c)})"
    return None if n <= MAX_MATRICES else f"{n} matrices (more than {MAX_MATRICES})"


@tflite_op("BATCH_MATMUL", MATMUL_EMITS, _check_batch_matmul)
def batch_matmul(imp: TFLiteImporter, op: TFOperator) -> None:
    """BATCH_MATMUL: one QuantizedMatMul_8x8to32 per matrix onto the output range (module doc)."""
    o = op.options
    adj_x, adj_y = (bool(o.AdjX()), bool(o.AdjY())) if o is not None else (False, False)
    yt = imp.tensor(op.outputs[0])
    y = emit_batch_matmul(imp, imp.qvalue(op.inputs[0]), imp.qvalue(op.inputs[1]), imp.act_range(op.outputs[0]),
                          yt.name, adj_x, adj_y)
    finish(imp, op, y)


def _check_gelu(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """One float32 or per-tensor quantized input and output of one kind, rank <= 4 (approximate or exact)."""
    return check_arith(imp, op, (0,))


@tflite_op("GELU", LUT_EMITS + GELU_FLOAT_EMITS + ("Requantize_8to8",), _check_gelu)
def gelu(imp: TFLiteImporter, op: TFOperator) -> None:
    """GELU: a table rounded as TFLite's own (fixed ranges), else float with a run-time range (module doc)."""
    approximate = bool(op.options.Approximate()) if op.options is not None else False
    name = imp.tensor(op.outputs[0]).name
    x = imp.qvalue(op.inputs[0])
    out = imp.act_range(op.outputs[0])
    if x.range is not None and out is not None:
        y = emit_table(imp, x, table_codes(gelu_fn(approximate), x.range, out), out, name)
    else:
        y = emit_gelu_float(imp, x, out, name)
    finish(imp, op, y)


for _fuser in (find_layer_norms, find_rank5_transposes):
    if _fuser not in FUSERS:
        FUSERS.append(_fuser)
EMITS.update(LAYER_NORM_EMITS)  # what the fused chains emit (for ``hexnn-import ops``)
