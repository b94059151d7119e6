"""QuantizedSlice_8, Slice_int32 and Slice_f against hexagon_nn's device code (op_slice.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_slice`` (issue 36): op_slice.c compiled whole and
unedited with nnlib's own ``nn_graph.h``, ``slice_run`` / ``slice_run_f`` (``slice_prepare``'s row-job plan, the asm
``vmemcpy_asm`` / ``vmemcpy_2d_general_asm``) run twice per node on plain data in an output buffer filled with 0x5A.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_slice  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "slice.json").read_text())
    with np.load(GOLDEN / "slice.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _plan(hdr: list[int]) -> tuple[int, int, int]:
    """(batch, height, width) job counts as ``slice_prepare`` has them after merging contiguous axes (op_slice.c:
    each axis whose input stride equals the size times stride of the one below is folded into it)."""
    _, b, h, w, d, k, *r = hdr
    start, size = [0] * (4 - k) + r[:k], [-1] * (4 - k) + r[4:4 + k]
    size = [n - s if z == -1 else z for n, s, z in zip((b, h, w, d), start, size)]
    lay = [[size[3], 1], [size[2], d], [size[1], w * d], [size[0], h * w * d]]
    n, i = 4, 0
    while i < n - 1:
        if lay[i + 1][1] == lay[i][0] * lay[i][1]:
            lay[i][0] *= lay[i + 1][0]
            lay[i + 1:n - 1] = lay[i + 2:n]
            n -= 1
            lay[n] = [1, 0]
        else:
            i += 1
    return lay[3][0], lay[2][0], lay[1][0]


def test_slice_equals_device_code() -> None:
    """Every one of the 336 nodes (36 edge, 300 random; 120 / 112 / 104 per op) bit for bit, both runs, or both
    refuse, except 11 (5 / 3 / 3): exactly the nodes whose merged plan has more than one batch and a height count
    other than its width count. There op_slice.c:296 ``b_out_stride = h_out_stride * w_size`` (not ``h_size``)
    puts every batch after the first at the wrong place: parts of the output are never written (the harness's
    0x5A shows) and bytes land past its end. Not deterministic in a graph: the engine keeps numpy's slice."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_slice.c") and "slice_prepare" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 336 and np.bincount(g["hdr"][:, 0]).tolist() == [120, 112, 104]
    assert g["rerun_same"].all() and int(g["status"].sum()) == 6
    bad = [i for i in range(len(g["hdr"])) if not op_slice.engine_case(g, i)[0]]
    defect = [i for i in range(len(g["hdr"])) if g["status"][i] == 0
              and (lambda p: p[0] > 1 and p[1] != p[2])(_plan(g["hdr"][i].tolist()))]
    assert bad == defect and np.bincount(g["hdr"][bad, 0], minlength=3).tolist() == [5, 3, 3]
