"""The project's prepared graphs against hexagon_nn's own prepare.c (golden node lists, issue 19).

``tools/golden_prepare.py`` ran hexagon_nn 2.14.1's real graph construction and ``prepare.c`` pass
sequence (``optimize()``, built for x86 by the prepare oracle) on each model's unprepared graph and kept
the resulting node list in ``tests/data/golden/prepare/<model>.json``: per node, in list order, the op,
the padding, the input refs as ``[position of the producer, output index]`` and the output definitions'
shapes. Node ids do not enter (prepare.c numbers the nodes it creates downwards from 0xFFFFFFFF, the
project upwards), so the lists must be equal as they are: same ops in the same order, same wiring,
paddings and shapes. Where the oracle's dump had Const bytes, the golden file also keeps the bytes of the
Consts prepare.c made (``consts``: position -> hex), and the project's Consts there must hold the same bytes.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.graph import Graph, NNPad

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = sorted((ROOT / "tests" / "data" / "golden" / "prepare").glob("*.json"))
#: models whose prepared graph leaves prepare.c's on purpose (optimizer/bias_fit.py): prepare.c's fused node
#: would refuse its bias on some input - here the first conv of a run-time-range float model on a blank frame
#: (AutoQuantize's range 1e-4 wide), and in keras_mobilenet_v3_small_float the convs reading a hard-swish's or a
#: squeeze-excite's shrink-range product (optimizer/bias_fit_floor.py: floored, or kept) - so the chain stays,
#: named by its note; the list is compared with prepare.c's unconditional fusion
BIAS_FIT_KEPT = {"mediapipe_selfie_segmentation": "conv2d/shrink: kept as",
                 "keras_mobilenet_v3_small_float": "MobileNetV3Small_1/logits_1/BiasAdd;"}


def node_rows(graph: Graph) -> list[list]:
    """``[op, padding, [[producer position, output], ...], [shape, ...]]`` per node, in list order."""
    pos = {n.node_id: i for i, n in enumerate(graph.nodes)}
    return [[n.op, f"NN_PAD_{NNPad(n.padding).name}", [[pos[r.src_id], r.output_idx] for r in n.inputs],
             [list(o.shape) for o in n.output_defs]] for n in graph.nodes]


def test_golden_files_cover_every_bundled_model() -> None:
    names = {p.stem for p in GOLDEN}
    assert {p.stem for p in (ROOT / "models").glob("*.tflite")} <= names
    assert len(names) >= 10


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_prepared_graph_is_prepare_c_s(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    golden = json.loads(path.read_text())
    model = ROOT / golden["model"]
    assert model.is_file(), f"{golden['model']} is committed with the repository"
    if path.stem in BIAS_FIT_KEPT:
        from hexnn_import.optimizer import supernodes

        notes = hx.prepare(hx.import_model(model)).meta["notes"]
        assert any(n.startswith(BIAS_FIT_KEPT[path.stem]) for n in notes), notes  # type: ignore[union-attr]
        monkeypatch.setattr(supernodes, "unfused_reason", lambda *a: None)
    graph = hx.prepare(hx.import_model(model))
    got, want = node_rows(graph), golden["nodes"]
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    assert got == want, (f"{len(got)} nodes vs prepare.c's {len(want)}; first difference at position {first}: "
                         f"project {got[first] if first < len(got) else None} / "
                         f"prepare.c {want[first] if first < len(want) else None}")
    # the bytes of the Consts prepare.c made (weights / biases / crops of an expanded transposed conv, scalars)
    for pos, hexdata in golden.get("consts", {}).items():
        node = graph.nodes[int(pos)]
        assert node.is_const and np.ascontiguousarray(node.data).astype(node.data.dtype.newbyteorder("<")).tobytes() \
            == bytes.fromhex(hexdata), f"Const at position {pos} ({node.output_defs[0].shape}) differs from prepare.c's"
