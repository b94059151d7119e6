"""NCHW -> NHWC layout tracking (issue [ONNX import]: "No Transpose node remains between two
convolutions of an NCHW model (test on the op counts)"), the layout helpers, and the per-layer
mapping (every ONNX tensor in ``graph.tensor_map`` with its layout in ``graph.meta["layouts"]``).
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from hexnn_import.importers.onnx.layout import IDENTITY, NHWC, after_transpose, graph_shape, keeps_order, squeeze_like
from hexnn_import.testing.onnx_compare import build_model, compare_layers, compare_onnx, random_feeds

RNG = np.random.default_rng(11)


def _w(*shape: int) -> np.ndarray:
    return RNG.normal(0, 0.3, shape).astype(np.float32)


def chain_model() -> bytes:
    """Convs separated by the ops that keep a layout: activations, pools, Add, Concat, Transpose pairs,
    Squeeze / Unsqueeze of size-1 axes, Pad, Slice, Resize, Softmax over channels."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c2", "p1"], ["a"]),
             helper.make_node("Transpose", ["a"], ["t1"], perm=[0, 2, 3, 1]),
             helper.make_node("Sigmoid", ["t1"], ["s1"]),
             helper.make_node("Transpose", ["s1"], ["t2"], perm=[0, 3, 1, 2]),
             helper.make_node("Concat", ["t2", "p1"], ["cat"], axis=1),
             helper.make_node("Squeeze", ["cat", "ax0"], ["sq"]),
             helper.make_node("Unsqueeze", ["sq", "ax0"], ["us"]),
             helper.make_node("Pad", ["us", "pads"], ["pd"]),
             helper.make_node("Slice", ["pd", "st", "en", "ax23"], ["sl"]),
             helper.make_node("Conv", ["sl", "w3"], ["c3"]),
             helper.make_node("Resize", ["c3", "", "sc"], ["up"], mode="nearest"),
             helper.make_node("Softmax", ["up"], ["sm"], axis=1),
             helper.make_node("Conv", ["sm", "w4"], ["y"])]
    inits = {"w1": _w(4, 3, 3, 3), "w2": _w(4, 4, 3, 3), "w3": _w(6, 8, 1, 1), "w4": _w(2, 6, 3, 3),
             "ax0": np.array([0]), "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1]), "st": np.array([1, 1]),
             "en": np.array([5, 5]), "ax23": np.array([2, 3]), "sc": np.array([1, 1, 2, 2], np.float32)}
    return build_model(nodes, {"x": (1, 3, 8, 8)}, {"y": None}, inits)


def test_no_transpose_between_convolutions() -> None:
    """Only the NCHW graph input is transposed; the output leaves NCHW through a transpose too."""
    model = chain_model()

    def check(g) -> None:  # type: ignore[no-untyped-def]
        counts = g.op_counts()
        assert counts.get("Transpose_8", 0) == 2, counts  # graph input to NHWC, graph output back to NCHW
        convs = [n for n in g.nodes if n.op in ("Supernode_8x8p32to8", "QuantizedConv2d_8x8to32")]
        assert len(convs) == 4
        trans = [n for n in g.nodes if n.op == "Transpose_8"]
        order = {n.node_id: k for k, n in enumerate(g.nodes)}
        first, last = order[convs[0].node_id], order[convs[-1].node_id]
        assert all(not first < order[t.node_id] < last for t in trans)
        assert g.meta["layouts"]["r1"] == list(NHWC) and "t1" not in g.meta["layouts"]  # t1 is NHWC in ONNX order

    feeds = random_feeds(model, 2, np.random.default_rng(1))
    res = compare_onnx(model, feeds, calibration={"x": np.stack([f["x"] for f in random_feeds(model, 8, RNG)])},
                       check_graph=check)
    assert res["y"].sqnr >= 28.0, res


def test_flatten_of_spatial_data_needs_the_onnx_order() -> None:
    """Flatten of [1, C, H, W] with H, W > 1 reads NCHW row-major: one Transpose_8 before it."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Flatten", ["c"], ["f"]),
             helper.make_node("Gemm", ["f", "wf"], ["y"], transB=1)]
    model = build_model(nodes, {"x": (1, 3, 4, 4)}, {"y": (1, 5)}, {"w": _w(4, 3, 3, 3), "wf": _w(5, 64)})

    def check(g) -> None:  # type: ignore[no-untyped-def]
        assert g.op_counts().get("Transpose_8", 0) == 2

    res = compare_onnx(model, random_feeds(model, 3, RNG), check_graph=check)
    assert res["y"].sqnr >= 30.0


def test_per_layer_mapping_covers_every_tensor() -> None:
    """compare_layers undoes each recorded layout: every float tensor agrees with onnxruntime's."""
    model = chain_model()
    layers = compare_layers(model, random_feeds(model, 1, np.random.default_rng(9))[0])
    assert {"r1", "p1", "c2", "a", "t1", "s1", "t2", "cat", "sq", "us", "pd", "sl", "c3", "up", "sm",
            "y"} <= set(layers)
    assert min(layers.values()) >= 25.0, layers


def test_layout_helpers() -> None:
    assert graph_shape((1, 3, 8, 6), NHWC) == (1, 8, 6, 3)
    assert graph_shape((5, 7), IDENTITY) == (1, 1, 5, 7)
    # NCHW -> Transpose(0,2,3,1) lands in the ONNX order of the NHWC tensor
    assert after_transpose(NHWC, (0, 2, 3, 1)) == IDENTITY
    assert after_transpose(IDENTITY, (0, 3, 1, 2)) == NHWC
    # squeezing H, W of [N, C, 1, 1] under NHWC: the data of [N, C] stays where it is
    assert graph_shape((2, 16), squeeze_like((2, 16, 1, 1), NHWC, (2, 16))) == graph_shape((2, 16, 1, 1), NHWC)
    assert squeeze_like((1, 3, 4, 4), NHWC, (1, 48)) is None
    assert keeps_order((1, 1, 1, 16), (0, 3, 1, 2)) and not keeps_order((1, 4, 4, 3), (0, 3, 1, 2))
