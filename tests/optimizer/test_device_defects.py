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


def _dmul_graph(din: int, m: int) -> Graph:
    """A DepthwiseSupernode_8x8p32to8_d32 with Const weights [3, 3, din, m] (no channel scales)."""
    g = Graph()
    x = g.const_ref(np.zeros((1, 8, 8, din), np.uint8), "x")
    ins = [x, g.const_ref(np.zeros((3, 3, din, m), np.uint8), "w"), g.const_ref(-1.0), g.const_ref(1.0),
           g.const_ref(-1.0), g.const_ref(1.0), g.shape_ref((1, 1, 1, 1)),
           g.const_ref(np.zeros((1, 1, 1, din * m), np.int32)), g.const_ref(-1.0), g.const_ref(1.0),
           g.const_ref(-1.0), g.const_ref(1.0)]
    g.append("DepthwiseSupernode_8x8p32to8_d32", ins,
             [OutputDef((1, 8, 8, din * m), "quint8"), OutputDef.scalar(), OutputDef.scalar()], name="dwm")
    return g


def test_depth_multiplier_is_noted_and_warned() -> None:
    """A depth multiplier of 2 (8 -> 16 channels): op_dwise_snode_8bit.c walks output channels one to one over the
    input's, so the node gets one note and one DeviceDefectWarning; a multiplier of 1 gets none."""
    g = _dmul_graph(8, 2)
    with pytest.warns(DeviceDefectWarning, match="dwm: device defect: .*8 input and 16 output channels .*multiplier 2"):
        notes = device_defect_notes(g)
    assert len(notes) == 1 and g.meta["notes"] == notes
    one = _dmul_graph(16, 1)
    assert device_defect_notes(one) == [] and not one.meta.get("notes")


def _mean_graph(out_max: float | None) -> Graph:
    """QuantizedMean_8 over h, w of a 1x2x2x8 Const on [0, 2.55] (step 0.01, n = 4), onto [0, out_max] when
    given (inputs 4, 5), else onto the input's range."""
    g = Graph()
    x = g.const_ref(np.full((1, 2, 2, 8), 40, np.uint8), "x")
    ins = [x, g.const_ref(0.0), g.const_ref(2.55), g.const_ref(np.array([1, 2], np.int32))]
    if out_max is not None:
        ins += [g.const_ref(0.0), g.const_ref(out_max)]
    g.append("QuantizedMean_8", ins, [OutputDef((1, 1, 1, 8), "quint8"), OutputDef.scalar(), OutputDef.scalar()],
             name="mean")
    return g


def test_mean_multiplier_cap_is_noted_and_warned() -> None:
    """Onto [0, 0.51] (step 0.002): in_step / (out_step * n) = 0.01 / 0.008 = 1.25, capped at 0.99999, so the
    mean of codes 40 (0.4) is code 160 (0.32) on the device, not 200: one note naming the node and the ratio,
    one warning; the engine gives the device's 160."""
    from hexnn_import.ops import run_op

    g = _mean_graph(0.51)
    with pytest.warns(DeviceDefectWarning, match=r"mean: device defect: .*QuantizedMean_8 caps .*0\.99999 "
                                                 r"\(here 1\.25, n = 4\)"):
        notes = device_defect_notes(g)
    assert len(notes) == 1 and "51 codes" in notes[0]
    x = np.full((1, 2, 2, 8), 40, np.uint8)
    q, _, _ = run_op("QuantizedMean_8", [x, np.float32(0.0), np.float32(2.55), np.array([1, 2], np.int32),
                                         np.float32(0.0), np.float32(0.51)])
    assert np.all(np.asarray(q) == 160)


@pytest.mark.parametrize("out_max", [None, 2.55, 0.64])
def test_no_mean_note_below_the_cap(out_max: float | None) -> None:
    """The input's own range (ratio 1/4), a given one as wide, and [0, 0.64] (ratio 0.996: below the cap)."""
    g = _mean_graph(out_max)
    assert device_defect_notes(g) == [] and not g.meta.get("notes")


def _resize_graph(shape: tuple[int, int, int, int], size: tuple[int, int], align: int) -> Graph:
    """A flat QuantizedResizeBilinear_8 of a Const ``shape`` to ``size``, align_corners ``align`` (input 4)."""
    g = Graph()
    x = g.const_ref(np.zeros(shape, np.uint8), "x")
    ins = [x, g.const_ref(np.array(size, np.int32)), g.const_ref(0.0), g.const_ref(1.0),
           g.const_ref(np.array([align], np.int32))]
    g.append("QuantizedResizeBilinear_8", ins,
             [OutputDef((1, *size, shape[3]), "quint8"), OutputDef.scalar(), OutputDef.scalar()], name="rs")
    return g


def test_resize_align_corners_to_one_column_is_noted() -> None:
    """align_corners to an output width of 1: (in - 1) / (out - 1) divides by zero in resizebilinear_general,
    every device code is 255: a note and a warning naming the node."""
    g = _resize_graph((1, 4, 4, 2), (8, 1), 1)
    with pytest.warns(DeviceDefectWarning, match=r"rs: device defect: .*output size of \[8, 1\].*255"):
        assert len(device_defect_notes(g)) == 1


def test_resize_hvx_crash_shape_is_refused_at_convert_time() -> None:
    """align_corners, 2 input rows to 1 output row, width 4 -> 16 (w_in - 1 = 3, a multiple of 3), depth 1:
    nnlib's resizebilinear_hvx path, whose second thread memcpy()s to a NULL row: refused, naming node and op."""
    from hexnn_import.errors import OpError
    with pytest.raises(OpError, match=r"node rs \(QuantizedResizeBilinear_8\): align_corners .*NULL"):
        device_defect_notes(_resize_graph((1, 2, 4, 1), (1, 16), 1))


@pytest.mark.parametrize("shape, size, align", [((1, 2, 4, 1), (1, 16), 0), ((1, 4, 4, 2), (8, 8), 1),
                                                ((1, 4, 4, 2), (8, 1), 0)])
def test_resize_without_defect_has_no_note(shape: tuple[int, int, int, int], size: tuple[int, int], align: int) -> None:
    g = _resize_graph(shape, size, align)
    assert device_defect_notes(g) == [] and not g.meta.get("notes")
