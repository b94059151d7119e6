"""Depthwise layers with a depth multiplier > 1 (issue 36): hexagon_nn's DepthwiseSupernode kernels compute a
multiplier of 1 only, so the importers emit a fused (declared) multiplier-m layer as a channel replication and a
multiplier-1 layer (hexnn_import/importers/nodes/dwise_mult.py), on the real digits models of
models/real/families (manifest_keras.json / manifest_torch.json, ``made_by ... dwmult``)."""
from __future__ import annotations

import warnings

import numpy as np

import hexnn_import as hx
from hexnn_import.engine import Engine
from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.graph import Graph, Ref
from hexnn_import.testing.families import FAMILIES, evaluate_family, load_families

QDQ = FAMILIES / "torch_dwmult_digits_qdq.onnx"
ENTRIES = {e["file"]: e for e in load_families() if "dwmult" in e["file"]}


def _multipliers(graph: Graph) -> dict[str, int]:
    """Depth multiplier (the Const filter's last dimension) of every depthwise node, by label."""
    out = {}
    for n in graph.nodes:
        if "Depthwise" in n.op:
            w = graph.find_node(n.inputs[1].src_id)
            assert w is not None and w.is_const, n.label
            out[n.label] = int(w.data.shape[3])
    return out


def test_fused_depthwise_layer_is_emitted_with_multiplier_one() -> None:
    """The QDQ model's depthwise Conv (group 8, 16 outputs: multiplier 2) is a declared chain: fused into a
    DepthwiseSupernode over 16 replicated channels, and no depthwise node of the imported or the prepared graph
    has a multiplier other than 1, so prepare raises no DeviceDefectWarning."""
    g = hx.import_model(QDQ)
    assert [n.op for n in g.nodes].count("QuantizedTile_8") == 1
    assert "DepthwiseSupernode_8x8p32to8" in {n.op for n in g.nodes}
    assert set(_multipliers(g).values()) == {1}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeviceDefectWarning)
        p = hx.prepare(g)
    assert set(_multipliers(p).values()) == {1}
    assert "DepthwiseSupernode_8x8p32to8_d32" in {n.op for n in p.nodes}


def test_replicated_channels_follow_the_source_order() -> None:
    """Channel ``c * 2 + k`` of the replication is input channel ``c`` (ONNX / TFLite's depthwise order), code for
    code: the engine's replication equals ``np.repeat`` of its input on a real sample."""
    g = hx.import_model(QDQ)
    spread = next(n for n in g.nodes if n.label.endswith("/spread/reshape"))
    flat = g.find_node(g.find_node(spread.inputs[0].src_id).inputs[0].src_id)  # the tile's input
    assert flat is not None and flat.op == "QuantizedReshape"
    x = np.load(FAMILIES / "digits_torch_img8_test.npz")["input"][3:4]
    _, every = Engine(g).run([x], mark_all=True)
    src = np.asarray(every[flat.inputs[0]])
    got = np.asarray(every[Ref(spread.node_id, 0)])
    assert src.shape == (1, 4, 4, 8) and src.std() > 0
    np.testing.assert_array_equal(got, np.repeat(src, 2, axis=3))


def test_unfused_chains_keep_their_multiplier() -> None:
    """A per-channel (keras int8) or run-time-range (float) depthwise layer stays a chain with its multiplier:
    prepare.c does not fuse it (dwconv_extrachecks) and the device's reference op computes it right."""
    for name in ("keras_dwmult_digits_int8.tflite", "torch_dwmult_digits_float.onnx"):
        p = hx.prepare(hx.import_model(FAMILIES / name))
        assert set(_multipliers(p).values()) == {2}, name
        assert {n.op for n in p.nodes if "Depthwise" in n.op} == {"QuantizedDepthwiseConv2d_8x8to32"}, name


def test_replicated_form_matches_onnxruntime() -> None:
    """16 held-out digits through the replicated form: the engine's logits within 2 output steps of
    onnxruntime's on the same QDQ file, and the same top-1 class every time (tests/real/test_families.py runs
    every dwmult file against its runtime too)."""
    fig = evaluate_family(ENTRIES[QDQ.name], n=16)
    assert fig.top1_agreement == 1.0 and fig.engine_distinct_top1 > 5, fig
    assert fig.worst_lsb is not None and fig.worst_lsb <= 2.0, fig
