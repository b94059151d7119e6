"""Every lowered layer of the real keras MobileNetV2 1.0 224 int8, on its real inputs, against lib_nn's C (issue 23).

``tests/data/golden/libnn/model_keras_mobilenet_v2_1.0_224_int8.json`` (written by
``tools/golden_libnn_model.py``) holds, per XS3 node of the model as it lowers and per photo, the SHA-256 of
the node's int8 input(s) and of XMOS lib_nn's portable C output (commit 96bd67c) on exactly that input. Here
the XS3 path runs again on the same two photo crops (bench/speed_real.py's inputs) and every node must see the
same input (else the change is upstream of the node: regenerate the file) and give lib_nn's output bit for bit.
"""
from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models/real/keras_mobilenet_v2_1.0_224_int8.tflite"
GOLDEN = ROOT / "tests/data/golden/libnn/model_keras_mobilenet_v2_1.0_224_int8.json"
REGEN = ("python tools/golden_libnn_model.py models/real/keras_mobilenet_v2_1.0_224_int8.tflite "
         "--oracle <lib_nn oracle folder>")
#: the model's XS3 nodes as it lowers today: 53 conv-like (the stem, 17 depthwise + the global mean as a 7x7
#: depthwise, 34 pointwise), the 10 residual ADDs, the classifier
COUNTS = {"conv2d_shallowin": 1, "conv2d_depthwise": 18, "conv2d_1x1": 34, "add_elementwise": 10,
          "fully_connected_8": 1}


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("golden_libnn_model", ROOT / "tools/golden_libnn_model.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text())


@pytest.fixture(scope="module")
def ours(golden: dict[str, Any]) -> dict[str, Any]:
    """The XS3 path on the golden file's photos: feeds' hashes and, per photo, every node's record."""
    from hexnn_import.xs3.run import XS3Runner
    from hexnn_import.api import import_model

    tool = _tool()
    runner = XS3Runner(import_model(MODEL))
    feeds = tool.photo_feeds(runner.graph.inputs[0], golden["photos"]["n"])
    photos = []
    for p in range(len(feeds)):
        photos.append([dict(node=node.name, kernel=call.kernel, x=[tool.sha(v) for v in xs], y=tool.sha(y),
                            x_shapes=[list(v.shape) for v in xs], y_shape=list(call.y_shape))
                       for node, call, xs, y in tool.xs3_layers(runner, feeds[p:p + 1])])
    return {"model_sha256": tool.file_sha(MODEL), "feeds": [tool.sha(f) for f in feeds], "photos": photos}


def test_the_golden_file_is_of_this_model_and_these_photos(golden: dict[str, Any], ours: dict[str, Any]) -> None:
    assert golden["lib_nn_commit"] == "96bd67c"
    assert ours["model_sha256"] == golden["model_sha256"], f"the model file changed: regenerate with {REGEN}"
    assert golden["photos"]["n"] == 2
    assert ours["feeds"] == golden["photos"]["input_sha256"], f"the photo inputs changed: regenerate with {REGEN}"


def test_every_layer_is_there_once_with_every_kernel(golden: dict[str, Any], ours: dict[str, Any]) -> None:
    layers = golden["layers"]
    assert len(layers) == golden["n_layers"] == 64
    assert dict(Counter(r["kernel"] for r in layers)) == COUNTS == golden["counts"]
    for photo in ours["photos"]:
        assert [r["node"] for r in photo] == [r["node"] for r in layers], \
            f"the model lowers to other XS3 nodes now: regenerate with {REGEN}"
        assert [(r["kernel"], r["x_shapes"], r["y_shape"]) for r in photo] == \
            [(r["kernel"], r["x_shapes"], r["y_shape"]) for r in layers]
    assert all(len(r["photos"]) == 2 for r in layers)
    # the global average pool runs as a 7x7 depthwise conv over the 7x7x1280 image
    mean = [r for r in layers if "global_average_pooling2d" in r["node"]]
    assert [(r["kernel"], r["x_shapes"], r["y_shape"]) for r in mean] == \
        [("conv2d_depthwise", [[1, 7, 7, 1280]], [1, 1, 1, 1280])]
    assert [len(r["x_shapes"]) for r in layers if r["kernel"] == "add_elementwise"] == [2] * 10


def test_every_layer_bit_exact_against_libnn_on_its_real_input(golden: dict[str, Any], ours: dict[str, Any]) -> None:
    changed, wrong = [], []
    for i, layer in enumerate(golden["layers"]):
        for p, (want, got) in enumerate(zip(layer["photos"], (photo[i] for photo in ours["photos"]))):
            where = f"layer {i} {layer['kernel']} {layer['node'].split(';')[0]} (photo {p})"
            if got["x"] != want["x"]:
                changed.append(where)
            elif got["y"] != want["y"]:
                wrong.append(where)
    assert not changed, (f"{len(changed)} layer input(s) changed upstream of the layer, so lib_nn's output no "
                         f"longer applies; regenerate with {REGEN}: " + "; ".join(changed[:5]))
    assert not wrong, f"{len(wrong)} layer output(s) differ from lib_nn's C: " + "; ".join(wrong[:5])
    assert sum(len(r["photos"]) for r in golden["layers"]) == 128


def test_the_hashes_are_of_int8_bytes() -> None:
    """The hashes are of the values' int8 bytes (not the graph's quint8 codes)."""
    tool = _tool()
    q = np.array([0, 0x7F, 0x80, 0xFF], np.uint8)
    assert tool.to_int8(q).tolist() == [-128, -1, 0, 127]
    assert tool.sha(tool.to_int8(q)) == tool.sha(np.array([-128, -1, 0, 127], np.int8))
