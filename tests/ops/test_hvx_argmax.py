"""ArgMax_8toInt32, ArgMax_8 and ArgMin_8 against hexagon_nn's device code (op_argmax.c, op_argmin.c) under
qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_argmax`` (issue 36): the vendor files compiled whole
and unedited with nnlib's own ``nn_graph.h``, each node's registered check / execute run on a plain input: the
HVX row kernels ``horizontal_argmax128_hvx`` / ``horizontal_argmax_hvx`` (stride-1 axes) and the scalar loops of
op_argmax.c, src/argminmax.c's HVX ``hvx_argmin_or_max_in_rows`` / ``_in_cols`` for ArgMin_8.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_argmax  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "argmax.json").read_text())
    with np.load(GOLDEN / "argmax.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_argmax_equals_device_code() -> None:
    """Every one of the 385 nodes (85 edge, 300 random; 129 / 127 / 129 per op): the output, its shape and
    ArgMax_8's range bit for bit, or both refuse (axes 4 / -5, ArgMax_8 over 256)."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_argmax.c") and "horizontal_argmax128_hvx" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 385
    assert np.bincount(g["hdr"][:, 0]).tolist() == [129, 127, 129] and int(g["status"].sum()) == 8
    bad = [i for i in range(len(g["hdr"])) if not op_argmax.engine_case(g, i)[0]]
    assert not bad, [op_argmax.engine_case(g, i)[1] for i in bad[:3]]


def test_device_argmax_rows_of_128_give_0() -> None:
    """The device property the engine follows (``argmax_rows_hvx``): ArgMax_8toInt32 over a stride-1 axis of
    exactly 128 codes answers 0 on every row (``Q6_Q_vsetq_R(128)`` masks every lane), though the maximum sits
    elsewhere; rows of 127 and 129 give the first index of the maximum as numpy does."""
    _, g = _load()
    seen = {127: 0, 128: 0, 129: 0}
    for i, (op, b, h, w, d, axis) in enumerate(g["hdr"].tolist()):
        if op != 0 or axis % 4 != 3 or d not in seen or g["status"][i]:
            continue
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(-1, d)
        dev = g["out"][g["offsets"][i]:g["offsets"][i + 1]]
        want = np.zeros(len(x)) if d == 128 else np.argmax(x, axis=1)
        assert np.array_equal(dev, want), i
        seen[d] += int((np.argmax(x, axis=1) != 0).sum()) if d == 128 else 1
    assert min(seen.values()) > 0
