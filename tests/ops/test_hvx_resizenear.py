"""ResizeNearestNeighbor_8 against hexagon_nn's device code (op_resizenear.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_resizenear`` (issue 36): op_resizenear.c compiled whole
and unedited with nnlib's own ``nn_graph.h``, ``resizenear_8_execute`` (float32 scales, truncated or, with align
corners, double-rounded source indices, the asm ``vmemcpy_asm`` per pixel) on plain inputs.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_resizenear  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "resizenear.json").read_text())
    with np.load(GOLDEN / "resizenear.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_resizenear_equals_device_code() -> None:
    """Every one of the 323 nodes (23 edge, 300 random): codes, shape and range bit for bit."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_resizenear.c") and "resizenear_8_execute" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 323 and not g["status"].any()
    bad = [i for i in range(len(g["hdr"])) if not op_resizenear.engine_case(g, i)[0]]
    assert not bad, [op_resizenear.engine_case(g, i)[1] for i in bad[:3]]


def test_device_2x_repeats_each_pixel() -> None:
    """A property the golden set must show: a 4x4 -> 8x8 resize without align corners repeats each input pixel
    in a 2x2 block on the device."""
    _, g = _load()
    rows = [i for i, hd in enumerate(g["hdr"].tolist()) if hd[1:3] == [4, 4] and hd[4:6] == [8, 8] and hd[7] == 0]
    assert rows
    for i in rows:
        b, h, w, d = g["hdr"][i][:4]
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        assert np.array_equal(dev, x.repeat(2, axis=1).repeat(2, axis=2))
