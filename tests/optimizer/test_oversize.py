"""Oversize-filter d32 supernodes (prepare_utils.c handle_oversize_d32_supernode), cases worked by hand.

The whole-model check against prepare.c is tests/data/golden/prepare/keras_ds_cnn_int8.json (its 10x4
SAME convolution gets a QuantizedPadForConv_8_d32); here the worst-case padding rule
(``top = (fh - adj) >> 1``, ``bottom = fh - 1 - top``; at risk when a vertical side needs more than 4,
a horizontal one more than 3, or the right side any while the bottom needs more than 3) and the
rewrite, which must not change any result.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from hexnn_import.graph import NNPad, Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.cleanup import RemoveDeadNodes
from hexnn_import.optimizer.d32_passes import ConvertToDepth32, RemoveUnnecessaryD32Converts
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.oversize import needed_padding
from hexnn_import.testing.prepare_graphs import QBuilder, q3, run_outputs

RNG = np.random.default_rng(5)


def build(fh: int, fw: int, padding: NNPad = NNPad.SAME, h: int = 12, w: int = 10) -> tuple[QBuilder, object]:
    """INPUT on [-1, 127/128] (0.0 is exactly code 128, the pad code) -> one supernode."""
    b = QBuilder()
    x = b.input((1, h, w, 8), lo=-1.0, hi=127 / 128)
    wts = (128 + RNG.integers(-30, 31, (fh, fw, 8, 8))).astype(np.uint8)
    sn = b.supernode(x, wts, -4.0, 4.0, padding=padding)
    b.output(q3(sn))
    return b, sn


@pytest.mark.parametrize("fh,fw,padding,want", [
    (10, 4, NNPad.SAME, (4, 5, 1, 2)),        # bottom 5 > 4
    (1, 9, NNPad.SAME, (0, 0, 4, 4)),         # left 4 > 3
    (9, 2, NNPad.SAME, (4, 4, 0, 1)),         # right > 0 and bottom 4 > 3
    (8, 8, NNPad.SAME_CAFFE, (4, 3, 4, 3)),   # adj 0: before (8 >> 1) = 4
    (7, 7, NNPad.SAME, None), (5, 5, NNPad.SAME, None), (7, 7, NNPad.SAME_CAFFE, None),
    (1, 1, NNPad.SAME, None), (10, 4, NNPad.VALID, None),
])
def test_worst_case_padding_rule(fh: int, fw: int, padding: NNPad, want: tuple | None) -> None:
    b, sn = build(fh, fw, padding)
    assert needed_padding(GraphEditor(b.g), sn) == want


def test_oversize_supernode_gets_pad_for_conv_and_valid_and_same_results() -> None:
    b, sn = build(10, 4)
    got = copy.deepcopy(b)
    run_pipeline(got.g, [ConvertToDepth32(), RemoveUnnecessaryD32Converts(), RemoveDeadNodes()])
    nodes = [n for n in got.g.nodes if not n.is_const]
    assert [n.op for n in nodes] == ["INPUT", "Convert_to_d32", "QuantizedPadForConv_8_d32", "Supernode_8x8p32to8_d32",
                                     "Convert_from_d32", "OUTPUT"]
    inp, to, pad, conv = nodes[:4]
    assert pad.padding == NNPad.SAME and conv.padding == NNPad.VALID and conv.node_id == sn.node_id
    assert pad.inputs == [Ref(to.node_id, 0), sn.inputs[2], sn.inputs[3], sn.inputs[1], sn.inputs[6]]
    assert conv.inputs[:4] == [Ref(pad.node_id, 0), sn.inputs[1], Ref(pad.node_id, 1), Ref(pad.node_id, 2)]
    assert conv.inputs[4:] == sn.inputs[4:]
    assert tuple(pad.output_defs[0].shape) == (1, 12 + 9, 10 + 3, 8)
    x = RNG.integers(0, 256, (1, 12, 10, 8)).astype(np.uint8)
    for a, c in zip(run_outputs(b.g, [x]), run_outputs(got.g, [x])):
        np.testing.assert_array_equal(a, c)


def test_large_same_filter_now_goes_d32() -> None:
    """prepare.c waived its "no d32 supernode above 9x9 with SAME" rule (the pad node makes it VALID)."""
    b, _ = build(11, 11, h=14, w=14)
    got = copy.deepcopy(b)
    run_pipeline(got.g, [ConvertToDepth32()])
    assert "Supernode_8x8p32to8_d32" in [n.op for n in got.g.nodes]
    assert "QuantizedPadForConv_8_d32" in [n.op for n in got.g.nodes]
