"""Convert-time notes and warnings for nodes that reach a defect of hexagon_nn's device code (issue 36)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.graph import Graph, OutputDef
from hexnn_import.optimizer.device_defects import DeviceDefectWarning, device_defect_notes


def _dwise_graph(fw: int, sw: int, scales: np.ndarray) -> Graph:
    """A DepthwiseSupernode_8x8p32to8_d32 reading Consts: weights [3, fw, C, 1], stride [1, 1, sw, 1], scales."""
    g = Graph()
    c = scales.size
    x = g.const_ref(np.zeros((1, 8, 8, c), np.uint8), "x")
    ins = [x, g.const_ref(np.zeros((3, fw, c, 1), np.uint8), "w"), g.const_ref(-1.0), g.const_ref(1.0),
           g.const_ref(-1.0), g.const_ref(1.0), g.shape_ref((1, 1, sw, 1)), g.const_ref(np.zeros((1, 1, 1, c), np.int32)),
           g.const_ref(-1.0), g.const_ref(1.0), g.const_ref(-1.0), g.const_ref(1.0),
           g.const_ref(scales.reshape(1, 1, 1, c).astype(np.float32))]
    g.append("DepthwiseSupernode_8x8p32to8_d32", ins,
             [OutputDef((1, 8, 8, c), "quint8"), OutputDef.scalar(), OutputDef.scalar()], name="dw")
    return g


def test_scales_slice_defect_is_noted_and_warned() -> None:
    """5x5 stride-2 with 48 channel scales that do not repeat every 32 channels: one note naming the node and
    the asm kernel, and one DeviceDefectWarning with the same line."""
    g = _dwise_graph(5, 2, np.linspace(0.1, 1.0, 48))
    with pytest.warns(DeviceDefectWarning, match="dw: device defect: .*dwconv2dbbb_s2_5xN_asm .*channels 32-47"):
        notes = device_defect_notes(g)
    assert len(notes) == 1 and g.meta["notes"][-1] == notes[0]


@pytest.mark.parametrize("fw, sw, scales", [
    (5, 2, np.tile(np.linspace(0.1, 1.0, 32), 2)),   # repeating every 32 channels: the device is right
    (3, 2, np.linspace(0.1, 1.0, 48)),               # a 3xN kernel: not affected
    (7, 2, np.linspace(0.1, 1.0, 48)),               # 7 wide at stride 2: dwconv2dbbb_s2_7xN_asm, not affected
    (7, 1, np.linspace(0.1, 1.0, 32)),               # 32 channels: one slice
])
def test_no_note_where_the_device_is_right(fw: int, sw: int, scales: np.ndarray) -> None:
    g = _dwise_graph(fw, sw, scales)
    assert device_defect_notes(g) == [] and not g.meta.get("notes")
