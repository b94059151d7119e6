"""QuantizedReshape and Reshape against hexagon_nn's device code (op_reshape.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_reshape`` (issue 36): op_reshape.c compiled whole and
unedited with nnlib's own ``nn_graph.h``, ``reshape_execute`` (the new shape's rules, the memcpy manager's HVX copy)
on plain data.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_reshape  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "reshape.json").read_text())
    with np.load(GOLDEN / "reshape.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_reshape_equals_device_code() -> None:
    """Every one of the 334 nodes (34 edge, 300 random): bytes, shape and range bit for bit, or both refuse; among
    them Reshape with a new shape holding -2, which the device takes as the unknown dimension (any negative
    value), as the engine does for Reshape and QuantizedReshape (issue 36)."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_reshape.c") and "reshape_execute" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 334
    bad = [i for i in range(len(g["hdr"])) if not op_reshape.engine_case(g, i)[0]]
    assert bad == []
    minus2 = [i for i in range(len(g["hdr"])) if g["hdr"][i][0] == 1 and -2 in g["hdr"][i][6:].tolist()]
    assert len(minus2) == 1 and not g["status"][minus2].any()   # the device ran it


def test_device_reshape_keeps_the_bytes() -> None:
    """A property the golden set must show: wherever the device runs, the output bytes are the input's."""
    _, g = _load()
    ran = np.flatnonzero(g["status"] == 0)
    assert len(ran) > 250
    for i in ran:
        assert np.array_equal(g["out"][g["offsets"][i]:g["offsets"][i + 1]], g["x"][g["x_off"][i]:g["x_off"][i + 1]])
