"""Convert_to_d32 and Convert_from_d32 against hexagon_nn's device code (op_convert_d32.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_convert_d32`` (issue 36): op_convert_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``; ``convert_to_d32_execute`` (its padding options, the HVX
``hvx_to_d32_core_*`` work items) on plain inputs, ``convert_from_d32_check`` + ``convert_from_d32_execute`` (the
planned HVX / packzilla copies, run twice) on d32 inputs of several paddings whose padding bytes hold 0x5A.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_convert_d32  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "convert_d32.json").read_text())
    with np.load(GOLDEN / "convert_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_convert_d32_equals_device_code() -> None:
    """Every one of the 408 nodes (108 edge, 300 random; 184 to_d32, 224 from_d32): the logical codes, the shape
    and to_d32's six paddings bit for bit, or both refuse; among the refused the 10 from_d32 inputs with depth
    padding before the data ("unsupported: input tensor has depth_before !=0"), which the engine refuses too
    (issue 36)."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_convert_d32.c") and "convert_from_d32_execute" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 408 and np.bincount(g["hdr"][:, 0]).tolist() == [184, 224]
    assert g["rerun_same"].all()
    bad = [i for i in range(len(g["hdr"])) if not op_convert_d32.engine_case(g, i)[0]]
    assert bad == []
    before = np.flatnonzero((g["hdr"][:, 0] == 1) & (g["hdr"][:, 9] > 0))
    assert len(before) == 10 and g["status"][before].all()


def test_device_to_d32_options() -> None:
    """The device facts the engine follows (``ops/kernels/d32_convert.py`` ``to_d32_padding``): the depth-before
    option is ignored (before 0 whatever it says) and an option out of range takes its default."""
    _, g = _load()
    to = np.flatnonzero((g["hdr"][:, 0] == 0) & (g["status"] == 0))
    assert (g["pads"][to, 4] == 0).all() and (g["hdr"][to, 6] > 0).any()
    for i in to:
        n_in, opt = int(g["hdr"][i][5]), g["hdr"][i][6:].tolist()
        left = opt[1] if n_in >= 3 and 0 <= opt[1] <= 7 else 4
        top = opt[3] if n_in >= 5 and 0 <= opt[3] <= 8 else 4
        assert g["pads"][i][[0, 1, 2]].tolist() == [top, top, left], i
