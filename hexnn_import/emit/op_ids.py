"""The ``OP_<name>`` constant of each op in hexagon_nn's own op table (``interface/ops.def`` of hexagon_nn
2.14.1, whose order gives the ids the SDK's ``hexagon_nn_ops.h`` numbers).

The engine names ops as the op documents do; where nnlib's ``ops.def`` spells an op otherwise, the emitted C must
use nnlib's spelling or it does not compile against the SDK: the documents' ``QuantizedMaximum`` /
``QuantizedMinimum`` are ``QuantizedMaximum_8`` / ``QuantizedMinimum_8`` there, ``SsdDetectionOutput`` is
``SsdDetectionOut`` (op_ssd_detection_out.c, same 17 inputs and 9 outputs), and the early edition's names
(hexagon_nn_ops_early.txt) map onto the ops their kernels are. ``StridedSlice_uint8`` has an op table entry in
nnlib's op_stridedslice.c but no ``ops.def`` line, so no id: a graph holding it cannot be emitted.
"""
from __future__ import annotations

#: document / engine name -> ops.def name, where they differ.
NNLIB_NAMES: dict[str, str] = {
    "QuantizedMaximum": "QuantizedMaximum_8",
    "QuantizedMinimum": "QuantizedMinimum_8",
    "SsdDetectionOutput": "SsdDetectionOut",
    "QuantizeForTestd32": "QuantizeForTest_d32",
    "QuantizedAdd_8x8to8": "QuantizedAdd_8p8to8",
    "QuantizedAdd_8x8to8_d32": "QuantizedAdd_8p8to8_d32",
    "QuantizedSub_8x8to8_d32": "QuantizedSub_8p8to8_d32",
}
#: ops with no ops.def id, each with the reason.
NO_ID: dict[str, str] = {
    "StridedSlice_uint8": "hexagon_nn 2.14.1's ops.def has no StridedSlice_uint8 (op_stridedslice.c defines its "
                          "table entry, but no id reaches it)",
}


def op_id_name(op: str) -> str | None:
    """The ops.def name of ``op`` (the emitted ``OP_<name>`` is ``OP_`` + it), or None if it has no id."""
    if op in NO_ID:
        return None
    return NNLIB_NAMES.get(op, op)
