"""The convert-time note for QuantizedMatMul_8x8to32's packed-B block stride defect (issue 36; op_matmul.c
``matmul_asm``, traced in ops/kernels/conv.py ``asm_block_columns``)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.graph import Graph, OutputDef
from hexnn_import.optimizer.device_defects import DeviceDefectWarning, device_defect_notes


def _matmul_graph(m: int, k: int, n: int, op: str = "QuantizedMatMul_8x8to32") -> Graph:
    """``op`` of a Const A [1, 1, m, k] and a Const B [1, 1, k, n], both on [-1, 1]."""
    g = Graph()
    ins = [g.const_ref(np.zeros((1, 1, m, k), np.uint8), "a"), g.const_ref(np.zeros((1, 1, k, n), np.uint8), "b"),
           g.const_ref(-1.0), g.const_ref(1.0), g.const_ref(-1.0), g.const_ref(1.0)]
    g.append(op, ins, [OutputDef((1, 1, m, n), "qint32"), OutputDef.scalar(), OutputDef.scalar()], name="mm")
    return g


@pytest.mark.parametrize("m, k", [(1, 8), (1, 1), (5, 16)])
def test_block_stride_defect_is_noted_and_warned(m: int, k: int) -> None:
    """K <= 16 with N = 40 > 32 on the assembly path (one row of A, or K = 16): one note, one warning."""
    g = _matmul_graph(m, k, 40)
    with pytest.warns(DeviceDefectWarning, match=rf"mm: device defect: .*QuantizedMatMul_8x8to32 with K = {k} "
                                                 r"<= 16 and N = 40 > 32"):
        notes = device_defect_notes(g)
    assert len(notes) == 1 and g.meta["notes"][-1] == notes[0]


@pytest.mark.parametrize("m, k, n, op", [
    (1, 8, 32, "QuantizedMatMul_8x8to32"),        # one block of 32 outputs: read from its own place
    (1, 17, 40, "QuantizedMatMul_8x8to32"),       # K padded to 32 = the packed rows: the strides agree
    (5, 8, 40, "QuantizedMatMul_8x8to32"),        # several rows, K not a multiple of 16: matmul_ref (plain C)
    (1, 8, 40, "QuantizedMatMul_8x8to32_ref"),    # the _ref op reads B itself
])
def test_no_matmul_note_where_the_device_is_right(m: int, k: int, n: int, op: str) -> None:
    g = _matmul_graph(m, k, n, op)
    assert device_defect_notes(g) == [] and not g.meta.get("notes")
