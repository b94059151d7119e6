"""optimizer/d32_gated.py: prepare.c's depth32_replacement_op for ops whose _d32 twin the engine lacks yet.

With a catalog entry (the flat op's) and a kernel pretended for each _d32 op, convert_to_depth32 must
convert exactly where prepare.c does, cases worked from the C: QuantizedPad_8 after a d32 producer without
depth padding (BlazeFace's pads), QuantizedNeg_8 only after a d32 producer, a depth QuantizedSplit_8 with one
Convert_from_d32 per output; and without the pretence, nothing changes (the ops stay flat). The whole-model
checks are tests/optimizer/test_prepare_golden.py's pending models.
"""
from __future__ import annotations

import copy
import math
from typing import Callable

import numpy as np
import pytest

from hexnn_import.graph import Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.d32_gated import MORE_D32_OPS
from hexnn_import.optimizer.d32_passes import ConvertToDepth32, RemoveUnnecessaryD32Converts
from hexnn_import.optimizer.cleanup import RemoveDeadNodes
from hexnn_import.testing.prepare_graphs import QBuilder, canonical, q3

W8 = (128 + np.random.default_rng(5).integers(-25, 26, (3, 3, 8, 8))).astype(np.uint8)


@pytest.fixture
def pretend(monkeypatch: pytest.MonkeyPatch) -> None:
    from hexnn_import.ops import catalog, registry
    from hexnn_import.optimizer import editor

    flat = {d32: op for op, d32 in MORE_D32_OPS.items()}
    spec, kernel = catalog.get_spec, registry.has_kernel
    monkeypatch.setattr(catalog, "get_spec", lambda op: spec(flat.get(op, op)))
    monkeypatch.setattr(editor, "get_spec", lambda op: spec(flat.get(op, op)))
    monkeypatch.setattr(registry, "has_kernel", lambda op: op in flat or kernel(op))
    monkeypatch.setenv("HEXNN_VERIFY", "0")  # the flat op's entry does not type the d32 tensors


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
def test_pad_after_d32_without_depth_padding_goes_d32(pretend: None, depth_pad: int, d32: bool) -> None:
    b = after_supernode("QuantizedPad_8",
                        lambda b, x: [*x, b.c([[0, 0], [1, 1], [2, 0], [0, depth_pad]], np.int32, (1, 1, 4, 2))],
                        (1, 8, 8, 8 + depth_pad))
    want = ["Convert_to_d32", "Supernode_8x8p32to8_d32", "QuantizedPad_8_d32", "Convert_from_d32"] if d32 else \
        ["Convert_to_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32", "QuantizedPad_8"]
    assert converted(b) == want


def test_neg_goes_d32_only_after_a_d32_producer(pretend: None) -> None:
    assert converted(after_supernode("QuantizedNeg_8", same, (1, 6, 6, 8))) == \
        ["Convert_to_d32", "Supernode_8x8p32to8_d32", "QuantizedNeg_8_d32", "Convert_from_d32"]
    b = QBuilder()
    x = b.input((1, 6, 6, 8))
    b.output(q3(b.op("QuantizedNeg_8", x, (1, 6, 6, 8), name="x")))
    assert converted(b) == ["QuantizedNeg_8"]


@pytest.mark.parametrize("dim, d32", [(3, True), (-1, True), (2, False)])
def test_depth_split_gets_a_convert_from_d32_per_output(pretend: None, dim: int, d32: bool) -> None:
    got = converted(after_supernode("QuantizedSplit_8", lambda b, x: [b.c(dim, np.int32), *x], (1, 6, 6, 4), 2))
    assert got == (["Convert_to_d32", "Supernode_8x8p32to8_d32", "QuantizedSplit_8_d32", "Convert_from_d32",
                    "Convert_from_d32"] if d32 else
                   ["Convert_to_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32", "QuantizedSplit_8"])


def test_without_the_d32_ops_everything_stays_flat() -> None:
    assert converted(after_supernode("QuantizedNeg_8", same, (1, 6, 6, 8))) == \
        ["Convert_to_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32", "QuantizedNeg_8"]
