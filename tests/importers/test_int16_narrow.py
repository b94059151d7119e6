"""Supernode_u16x16p32to16_d32's misaligned byte planes (issue 36): the condition, the importer's widening and
the convert-time note (hexnn_import/importers/nodes/int16_narrow.py, optimizer/device_defects.py)."""
from __future__ import annotations

import itertools
import pathlib
import warnings

import numpy as np
import pytest

from hexnn_import import api
from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.graph import Graph, OutputDef, Ref
from hexnn_import.importers.nodes.int16_narrow import narrow_row_extra, u16_planes_misaligned, widen_for_narrow_row
from hexnn_import.optimizer.device_defects import device_defect_notes

#: Observed on nnlib df7ad3c's own op_supernode_16b.c under qemu-hexagon (tools/hvx/op_supernode_u16_d32.py's
#: harness with the input's right pad hidden from check(), as a node output's is; VALID, stride 1, 1 output
#: channel, 2 runs each, against the engine's op): (height, width, depth) of the input -> the device was right.
DEVICE_RIGHT = {
    (1, 1, 32): False, (1, 1, 64): False, (1, 2, 32): True, (1, 2, 64): False, (1, 3, 32): False,
    (1, 3, 64): False, (2, 2, 32): True, (2, 2, 64): True, (1, 5, 32): False, (1, 5, 64): False,
    (1, 6, 32): True, (1, 6, 64): False, (1, 7, 32): False, (1, 7, 64): False, (1, 9, 32): False,
    (1, 9, 64): False, (2, 1, 32): True, (2, 1, 64): False, (3, 1, 32): False, (3, 1, 64): False,
    (4, 1, 32): True, (4, 1, 64): True, (6, 6, 32): True, (6, 6, 64): True, (10, 10, 32): True,
    (10, 10, 64): True, (8, 8, 32): True, (8, 8, 64): True, (1, 13, 32): False, (1, 13, 64): False,
    (1, 17, 32): False, (1, 17, 64): False, (1, 30, 32): True, (1, 30, 64): False, (3, 3, 32): False,
    (3, 3, 64): False, (12, 12, 32): True, (12, 12, 64): True, (20, 20, 32): True, (20, 20, 64): True,
    # where execute reallocates the planes (a depth off a multiple of 32 or a wide row): right
    (1, 21, 40): True, (1, 1, 40): True, (1, 1, 16): True, (1, 3, 16): False, (3, 3, 40): False,
    (1, 5, 100): True, (2, 3, 8): False, (1, 22, 33): True, (6, 1, 32): True, (1, 4, 32): True,
}


@pytest.mark.parametrize("hwd, right", sorted(DEVICE_RIGHT.items()))
def test_condition_matches_the_device(hwd: tuple[int, int, int], right: bool) -> None:
    h, w, d = hwd
    assert u16_planes_misaligned(1, h, w, d) is not right


def test_heads_of_the_int16x8_digit_models() -> None:
    """1 x 1 x 32 (conv1d) and 1 x 1 x 128 (cnn) Dense inputs: 1 and 3 zero columns end the misalignment."""
    assert narrow_row_extra((1, 1, 1, 32), (0, 0, 0, 0)) == 1
    assert narrow_row_extra((1, 1, 1, 128), (0, 0, 0, 0)) == 3
    assert narrow_row_extra((1, 10, 8, 1), (1, 1, 1, 1)) == 0      # the cnn's 3x3 SAME conv: aligned
    assert narrow_row_extra((1, 1, 1, 32), (0, 0, -1, 0)) == 0     # a crop: left alone


def test_widening_always_aligns() -> None:
    """Over a grid of input shapes: 0-3 zero columns, none exactly where the planes are aligned already."""
    for b, h, w, d in itertools.product((1, 2), (1, 2, 3, 7), (1, 2, 3, 5, 9, 19), (1, 16, 32, 40, 64, 128)):
        e = narrow_row_extra((b, h, w, d), (0, 0, 0, 0))
        assert 0 <= e <= 3 and not u16_planes_misaligned(b, h, w + e, d)
        assert (e == 0) is not u16_planes_misaligned(b, h, w, d)


def _correlate(x: np.ndarray, w: np.ndarray, pads: tuple[int, int, int, int]) -> np.ndarray:
    """VALID correlation of ``x`` [H, W, I] padded by ``pads`` with ``w`` [O, KH, KW, I] (a float64 reference)."""
    xp = np.pad(x, ((pads[0], pads[1]), (pads[2], pads[3]), (0, 0)))
    kh, kw = w.shape[1:3]
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(0, 1))  # [OH, OW, I, KH, KW]
    return np.einsum("abikl,okli->abo", win, w)


def test_widened_layer_computes_the_same() -> None:
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(1, 1, 32)), rng.normal(size=(10, 1, 1, 32))
    w2, pads2 = widen_for_narrow_row(w, (0, 0, 0, 0), (1, 1, 1, 32))
    assert w2.shape == (10, 1, 2, 32) and pads2 == (0, 0, 0, 1) and not w2[:, :, 1:].any()
    np.testing.assert_array_equal(_correlate(x, w2, pads2), _correlate(x, w, (0, 0, 0, 0)))


def _supernode_graph(shape: tuple[int, int, int, int]) -> Graph:
    """A Supernode_u16x16p32to16_d32 whose input a Convert_to_d32_16b makes."""
    g = Graph()
    x = g.const_ref(np.zeros(shape, np.uint16), "x")
    conv = g.append("Convert_to_d32_16b", [x], [OutputDef(shape, "quint16_d32")], name="to_d32")
    one = g.const_ref(1.0)
    ins = [Ref(conv.node_id, 0), g.const_ref(np.zeros((1, 1, shape[3], 1), np.uint16), "w"), g.const_ref(-1.0), one,
           g.const_ref(-1.0), one, g.shape_ref((1, 1, 1, 1)), g.const_ref(np.zeros((1, 1, 1, 1), np.int32)),
           g.const_ref(-1.0), one, g.const_ref(-1.0), one]
    g.append("Supernode_u16x16p32to16_d32", ins, [OutputDef(shape[:3] + (1,), "quint16_d32"), OutputDef.scalar(),
                                                  OutputDef.scalar()], name="head")
    return g


def test_misaligned_supernode_is_noted() -> None:
    g = _supernode_graph((1, 1, 1, 32))
    with pytest.warns(DeviceDefectWarning, match=r"head: device defect: .*Supernode_u16x16p32to16_d32 .*\[1, 1, 1, 32\]"):
        notes = device_defect_notes(g)
    assert len(notes) == 1 and g.meta["notes"][-1] == notes[0]


def test_aligned_supernode_has_no_note() -> None:
    g = _supernode_graph((1, 1, 2, 32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeviceDefectWarning)
        assert device_defect_notes(g) == []


def test_conv1d_int16x8_heads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The int16x8 conv1d's 10 one-channel Dense heads on the 1x1x32 pool: widened, no note; left as they were
    (the widening off), each gets the note."""
    path = pathlib.Path(__file__).resolve().parents[2] / "models/real/families/keras_conv1d_digits_int16x8.tflite"
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        g = api.prepare(api.import_model(path))
    heads = [n for n in g.nodes if n.op == "Supernode_u16x16p32to16_d32" and "channels" in n.label
             and "StatefulPartitionedCall" in n.label]
    widths = {g.find_node(n.inputs[0].src_id).output_defs[n.inputs[0].output_idx].shape[2] for n in heads}
    assert len(heads) == 10 and widths == {2}
    assert not [w for w in got if issubclass(w.category, DeviceDefectWarning)]
    monkeypatch.setattr("hexnn_import.importers.nodes.int16_narrow.narrow_row_extra", lambda shape, pads: 0)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        api.prepare(api.import_model(path))
    assert len([w for w in got if issubclass(w.category, DeviceDefectWarning)]) == 10
