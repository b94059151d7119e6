"""QuantizedTanh_8, QuantizedSigmoid_8 and their _d32 forms against hexagon_nn's device code (op_tanh_d32.c) under
qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_tanh`` (issue 36): op_tanh_d32.c compiled whole and
unedited with nnlib's own ``nn_graph.h``, each node's ``tanh_d32_check`` then ``tanh_d32_execute`` (the per-node
lookup table and its HVX application) on flat or d32 inputs.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_tanh  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "tanh.json").read_text())
    with np.load(GOLDEN / "tanh.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_tanh_equals_device_code() -> None:
    """Every one of the 328 nodes (28 edge, 300 random; 75 / 79 / 78 / 96 per op): codes, shape and range bit for
    bit."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_tanh_d32.c") and "tanh_d32_execute" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 328 and np.bincount(g["hdr"][:, 0]).tolist() == [75, 79, 78, 96]
    assert not g["status"].any()
    bad = [i for i in range(len(g["hdr"])) if not op_tanh.engine_case(g, i)[0]]
    assert not bad, [op_tanh.engine_case(g, i)[1] for i in bad[:3]]


def test_device_tables_are_monotone() -> None:
    """Properties the golden set must show: on the cases holding every code once, the device's output never falls
    as the input code rises; tanh's codes are symmetric about its zero code 127 on the symmetric ranges within [-1, 1] (an odd
    function; on wider ranges the device's table is not: at [-100, 100] pairs sum to 171-254)."""
    _, g = _load()
    every = [i for i in range(len(g["hdr"])) if g["x_off"][i + 1] - g["x_off"][i] == 256
             and np.array_equal(g["x"][g["x_off"][i]:g["x_off"][i + 1]], np.arange(256))]
    assert len(every) == 28
    for i in every:
        y = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].astype(int)
        assert (np.diff(y) >= 0).all(), i
        if g["hdr"][i][0] in (0, 2) and g["range"][i][0] == -g["range"][i][1] <= -1e-3 and g["range"][i][1] <= 1:
            # input code c stands for (c - 127.5) * step, so c and 255 - c are opposite; the output range is
            # [-1, 1 + 1/127] (zero code 127), so their tanh codes sum to 254 +- 1
            assert (np.abs(y + y[::-1] - 254) <= 1).all(), i
