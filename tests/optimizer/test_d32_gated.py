"""optimizer/d32_gated.py: prepare.c's depth32_replacement_op for the ops of MORE_D32_OPS.

QuantizedNeg_8_d32, QuantizedSplit_8_d32 and QuantizedInstanceNorm_8_d32 are in the catalog and the engine:
convert_to_depth32 must convert exactly where prepare.c does (cases worked from the C: QuantizedNeg_8 only after a
d32 producer, a depth QuantizedSplit_8 with one Convert_from_d32 per output, every QuantizedInstanceNorm_8 - but
the project keeps one of height 1 or 2 flat, with a note), and the converted graph must compute what the flat
one computes (the d32 ops' device code does the same arithmetic as the flat ops here); QuantizedPad_8 converts
after a d32 producer when its Const paddings leave depth alone (the hidden BlazeFace full-range / BlazePose
detectors' spatial pads). The whole-model checks are tests/optimizer/test_prepare_golden.py's.
"""
from __future__ import annotations

import copy
import math
from typing import Callable

import numpy as np
import pytest

from hexnn_import.graph import Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.d32_passes import ConvertToDepth32, RemoveUnnecessaryD32Converts
from hexnn_import.optimizer.cleanup import RemoveDeadNodes
from hexnn_import.testing.prepare_graphs import QBuilder, canonical, q3, run_outputs

W8 = (128 + np.random.default_rng(5).integers(-25, 26, (3, 3, 8, 8))).astype(np.uint8)


def converted(b: QBuilder) -> list[str]:
    out = copy.deepcopy(b)
    run_pipeline(out.g, [ConvertToDepth32(), RemoveUnnecessaryD32Converts(), RemoveDeadNodes()])
    return [n[0] for n in canonical(out.g) if n[0] not in ("Const", "INPUT", "OUTPUT")]


def after_supernode(op: str, inputs: Callable[[QBuilder, list[Ref]], list[Ref]], shape: tuple[int, ...],
                    n_data: int = 1) -> QBuilder:
    """INPUT -> Supernode (d32 once converted) -> ``op`` on ``inputs(builder, supernode triple)`` -> OUTPUT."""
    b = QBuilder()
    sn = b.supernode(b.input((1, 6, 6, 8)), W8, -math.inf, math.inf)
    node = b.op(op, inputs(b, q3(sn)), shape, n_out=n_data + 2, name="x")
    for i in range(1, n_data):
        node.output_defs[i] = type(node.output_defs[0])(shape, "quint8")
    b.output([Ref(node.node_id, i) for i in range(n_data + 2)])
    return b


def same(b: QBuilder, x: list[Ref]) -> list[Ref]:
    return x


@pytest.mark.parametrize("depth_pad, d32", [(0, True), (3, False)])
def test_pad_after_d32_without_depth_padding_goes_d32(depth_pad: int, d32: bool) -> None:
    b = after_supernode("QuantizedPad_8",
                        lambda b, x: [*x, b.c([[0, 0], [1, 1], [2, 0], [0, depth_pad]], np.int32, (1, 1, 4, 2))],
                        (1, 8, 8, 8 + depth_pad))
    want = ["Convert_to_d32", "Supernode_8x8p32to8_d32", "QuantizedPad_8_d32", "Convert_from_d32"] if d32 else \
        ["Convert_to_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32", "QuantizedPad_8"]
    assert converted(b) == want
    same_outputs(b, (1, 6, 6, 8))


def test_pad_rows_count_from_the_end_and_a_flat_input_stays_flat() -> None:
    """prepare.c reads the pads Const's last row as depth: 3 rows pad h, w, d; a pad whose input is not a
    Convert_from_d32 stays flat."""
    b = after_supernode("QuantizedPad_8", lambda b, x: [*x, b.c([[1, 1], [2, 0], [0, 0]], np.int32, (1, 1, 3, 2))],
                        (1, 8, 8, 8))
    assert "QuantizedPad_8_d32" in converted(b)
    same_outputs(b, (1, 6, 6, 8))
    b = after_supernode("QuantizedPad_8", lambda b, x: [*x, b.c([[1, 1], [0, 2]], np.int32, (1, 1, 2, 2))],
                        (1, 6, 8, 10))
    assert "QuantizedPad_8_d32" not in converted(b)
    b = QBuilder()
    x = b.input((1, 6, 6, 8))
    b.output(q3(b.op("QuantizedPad_8", [*x, b.c([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32, (1, 1, 4, 2))],
                     (1, 8, 8, 8), name="p")))
    assert converted(b) == ["QuantizedPad_8"]


def converted_graph(b: QBuilder) -> QBuilder:
    out = copy.deepcopy(b)
    run_pipeline(out.g, [ConvertToDepth32(), RemoveUnnecessaryD32Converts(), RemoveDeadNodes()])
    return out


def same_outputs(b: QBuilder, shape: tuple[int, ...]) -> None:
    """The converted graph's outputs equal the flat graph's, bit for bit, on random codes."""
    x = np.random.default_rng(7).integers(0, 256, shape, dtype=np.uint8)
    for want, got in zip(run_outputs(b.g, [x]), run_outputs(converted_graph(b).g, [x])):
        assert np.asarray(want).tobytes() == np.asarray(got).tobytes()


def test_neg_goes_d32_only_after_a_d32_producer() -> None:
    b = after_supernode("QuantizedNeg_8", same, (1, 6, 6, 8))
    assert converted(b) == ["Convert_to_d32", "Supernode_8x8p32to8_d32", "QuantizedNeg_8_d32", "Convert_from_d32"]
    same_outputs(b, (1, 6, 6, 8))
    b = QBuilder()
    x = b.input((1, 6, 6, 8))
    b.output(q3(b.op("QuantizedNeg_8", x, (1, 6, 6, 8), name="x")))
    assert converted(b) == ["QuantizedNeg_8"]


@pytest.mark.parametrize("dim, d32", [(3, True), (-1, True), (2, False)])
def test_depth_split_gets_a_convert_from_d32_per_output(dim: int, d32: bool) -> None:
    shape = (1, 6, 6, 4) if d32 else (1, 6, 3, 8)
    b = after_supernode("QuantizedSplit_8", lambda b, x: [b.c(dim, np.int32), *x], shape, 2)
    assert converted(b) == (["Convert_to_d32", "Supernode_8x8p32to8_d32", "QuantizedSplit_8_d32", "Convert_from_d32",
                             "Convert_from_d32"] if d32 else
                            ["Convert_to_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32", "QuantizedSplit_8"])
    same_outputs(b, (1, 6, 6, 8))  # the supernode's auto range holds 0, so the d32 split's min is the flat one's


@pytest.mark.parametrize("h, d32", [(1, False), (2, False), (3, True), (6, True)])
def test_instancenorm_goes_d32_unless_its_device_code_reads_padding(h: int, d32: bool) -> None:
    b = QBuilder()
    x = b.input((1, h, 6, 8))
    b.output(q3(b.op("QuantizedInstanceNorm_8", x, (1, h, 6, 8), name="ln")))
    out = converted_graph(b)
    ops = [n[0] for n in canonical(out.g) if n[0] not in ("Const", "INPUT", "OUTPUT")]
    assert ops == (["Convert_to_d32", "QuantizedInstanceNorm_8_d32", "Convert_from_d32"] if d32 else
                   ["QuantizedInstanceNorm_8"])
    notes = out.g.meta.get("notes", [])
    assert any("ln: QuantizedInstanceNorm_8 kept flat" in n for n in notes) == (not d32)
