"""Transpose_8 / _16 / _f / _int32 and AxisShuffle_8 against hexagon_nn's device code (op_transpose.c,
op_axisshuffle.c, src/gentranspose.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_transpose`` (issue 36): the vendor files compiled whole
and unedited with nnlib's own ``nn_graph.h``, each node's check and execute run twice (the second time on its
cached strategy): gentranspose.c's strategy table with its HVX kernels and asm copies.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_transpose  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "transpose.json").read_text())
    with np.load(GOLDEN / "transpose.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_transpose_equals_device_code() -> None:
    """Every one of the 485 nodes (185 edge, 300 random; 201 / 79 / 87 / 80 / 38 per op) bit for bit, or both
    refuse (a repeated or out-of-range control value, a group count that does not divide), among them the 4
    Transpose_f / _int32 nodes with a control of 0 or 1 values, which the device copies (``nn_transpose_check``
    takes 0-4 values, where the op text says 2-4) and the engine follows (issue 36)."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_transpose.c") and "hexagon/src/gentranspose.c" in meta["c_files"]
    assert len(g["hdr"]) == meta["cases"] == 485 and g["rerun_same"].all()
    assert np.bincount(g["hdr"][:, 0]).tolist() == [201, 79, 87, 80, 38]
    bad = [i for i in range(len(g["hdr"])) if not op_transpose.engine_case(g, i)[0]]
    assert bad == []
    short = [i for i in range(len(g["hdr"])) if g["hdr"][i][0] in (2, 3) and g["hdr"][i][5] < 2]
    assert [tuple(g["hdr"][i][[0, 5]]) for i in short] == [(2, 0), (2, 1), (3, 0), (3, 1)]
    assert not g["status"][short].any()   # the device ran them: a copy of the input


def test_device_transpose_is_numpys() -> None:
    """The property the golden set must show to tell anything: on every case the device ran, its output is numpy's
    transpose of the input by the control (padded to 4 axes), and AxisShuffle's the group swap."""
    _, g = _load()
    for i, (op, b, h, w, d, n, *ctl) in enumerate(g["hdr"].tolist()):
        if g["status"][i]:
            continue
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].view(op_transpose.EL[op]).reshape(b, h, w, d)
        if op == 4:
            ax, groups = ctl[0] % 4, ctl[1]
            split = x.shape[:ax] + (groups, x.shape[ax] // groups) + x.shape[ax + 1:]
            want = np.swapaxes(x.reshape(split), ax, ax + 1).reshape(x.shape)
        else:
            want = x.transpose(tuple(range(4 - n)) + tuple(4 - n + k for k in ctl[:n])) if n > 1 else x
        dev = g["out"][g["offsets"][i]:g["offsets"][i + 1]].view(op_transpose.EL[op])
        assert np.array_equal(dev, want.ravel()), i
