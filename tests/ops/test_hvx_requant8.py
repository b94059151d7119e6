"""Requantize_8to8 and Requantize_8to8_d32 against hexagon_nn's device code (op_requantize.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_requant8`` (issue 36): op_requantize.c compiled whole and
unedited with nnlib's own ``nn_graph.h`` and src/quantize.c, each node's registered execute (``launcher``, the
``quantize_adjust_range`` check, the gain and offsets, HVX ``nn_requantize_qu8_to_qu8_hvx`` /
``nn_requantize_qu8_to_qu8_hvx_d32``) run on a plain or d32 input.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_requant8  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "requant8.json").read_text())
    with np.load(GOLDEN / "requant8.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_requant8_equals_device_code() -> None:
    """Every one of the 338 nodes (38 edge, 300 random; 166 flat, 172 d32): codes, shape and range bit for bit, or
    both refuse (59: a target range without an integer zero point, a gain exponent past 15); among them 15 (7 flat,
    8 d32) whose input range excludes 0, which the device runs with its 8-bit offset saturated, as the engine
    does (issue 36)."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_requantize.c") and "hexagon/src/quantize.c" in meta["c_files"]
    assert len(g["hdr"]) == meta["cases"] == 338 and np.bincount(g["hdr"][:, 0]).tolist() == [166, 172]
    assert int(g["status"].sum()) == 59
    bad = [i for i in range(len(g["hdr"])) if not op_requant8.engine_case(g, i)[0]]
    assert bad == []
    r = g["ranges"]
    no_zero = np.flatnonzero(((r[:, 0] > 0) | (r[:, 1] < 0)) & (g["status"] == 0))
    assert np.bincount(g["hdr"][no_zero, 0], minlength=2).tolist() == [7, 8]


def test_device_requant8_unit_gain_copies() -> None:
    """A property the golden set must show: with equal input and target ranges (gain 1) the device copies every
    code, on the flat and the d32 node."""
    _, g = _load()
    same = np.flatnonzero((g["ranges"][:, 0] == g["ranges"][:, 2]) & (g["ranges"][:, 1] == g["ranges"][:, 3])
                          & (g["status"] == 0))
    assert set(g["hdr"][same, 0].tolist()) == {0, 1}
    for i in same:
        assert np.array_equal(g["codes"][g["offsets"][i]:g["offsets"][i + 1]], g["x"][g["x_off"][i]:g["x_off"][i + 1]])
