"""op_cast.c's six casts against hexagon_nn's device code under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_cast`` (issue 36): op_cast.c compiled whole and unedited
with nnlib's own ``nn_graph.h``, each node's registered execute (C casts below 512 elements, HVX work items in whole
128-element blocks above, the C tail) on plain data.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_cast  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "cast.json").read_text())
    with np.load(GOLDEN / "cast.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_cast_equals_device_code() -> None:
    """Every one of the 340 nodes (40 edge, 300 random; 60 / 52 / 57 / 56 / 47 / 68 per cast in op_cast.py's
    order): the output bytes, dtype and shape bit for bit."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_cast.c") and "cast_execute_uint8_to_int32" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 340 and np.bincount(g["hdr"][:, 0]).tolist() == [60, 52, 57, 56, 47, 68]
    assert not g["status"].any()
    bad = [i for i in range(len(g["hdr"])) if not op_cast.engine_case(g, i)[0]]
    assert not bad, [op_cast.engine_case(g, i)[1] for i in bad[:3]]


def test_device_float_casts_saturate() -> None:
    """A property the golden set must show: the device's float -> int32 / uint8 casts saturate (+-inf and 1e10 to
    the type's ends) and truncate toward zero, on the C path and the HVX path alike (16 and 1024 elements)."""
    _, g = _load()
    for op, lo, hi in ((2, -2 ** 31, 2 ** 31 - 1), (5, 0, 255)):
        rows = [i for i in np.flatnonzero(g["hdr"][:, 0] == op) if g["hdr"][i][4] in (16, 1024)
                and np.isinf(g["x"][g["x_off"][i]:g["x_off"][i + 1]].view(np.float32)).any()]
        assert len(rows) == 2
        for i in rows:
            x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].view(np.float32).astype(np.float64)
            dev = g["out"][g["offsets"][i]:g["offsets"][i + 1]].view(op_cast.OUT[op]).astype(np.int64)
            assert np.array_equal(dev, np.clip(np.trunc(x), lo, hi).astype(np.int64)), (op, i)
