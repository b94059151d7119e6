"""QuantizedSplit_8_d32 against hexagon_nn's device code (op_chanshuffle_d32.c ``split_d32_execute``) under
qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_split_d32`` (issue 36): op_chanshuffle_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, its registered ``split_d32_execute`` run on a d32 input: a
channel shuffle with k = 1 (``channelshuf_d32_k1_template``'s aligned, rotated and vdelta-realigned copies), the
range ``(fminf(0, in_min), in_max)``, the refusals of a dimension other than depth and of an uneven split.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "split_d32.json").read_text())
    with np.load(GOLDEN / "split_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _inputs(g: dict[str, np.ndarray], i: int) -> list:
    b, h, w, d, _, wired, dim = (int(v) for v in g["hdr"][i])
    x = to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d))
    return [x if wired else np.full((1, 1, 1, 1), dim, np.int32), x,
            *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])]


def test_split_d32_equals_device_code() -> None:
    """Every one of the 329 nodes (29 edge, 300 random; parts of 1-69 channels at every depth alignment, input 0 wired
    to the data or an int32 3 / -1): each part's codes and the float32 output range bit for bit; the 4 nodes the
    device refuses (dimension 2, -2, 4; depth 65 in 2 parts), the engine refuses."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "split_d32_execute" in meta["functions"] and meta["source"].endswith("op_chanshuffle_d32.c")
    assert len(g["hdr"]) == meta["cases"] == 329
    refused = 0
    for i in range(len(g["hdr"])):
        parts = np.flatnonzero(g["part_case"] == i)
        if g["status"][parts].any():
            refused += 1
            with pytest.raises(HexnnError):
                run_op("QuantizedSplit_8_d32", _inputs(g, i), n_outputs=len(parts) + 2)
            continue
        *qs, mn, mx = run_op("QuantizedSplit_8_d32", _inputs(g, i), n_outputs=len(parts) + 2)
        for q, r in zip(qs, parts):
            dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
            np.testing.assert_array_equal(q.logical(), dev, err_msg=f"case {i} part {r}")
            assert mn.astype(F).tobytes() == g["out_min"][r].tobytes()
            assert mx.astype(F).tobytes() == g["out_max"][r].tobytes()
    assert refused == 4


def test_split_d32_set_holds_what_tells_the_paths_apart() -> None:
    """The set reaches what the device does differently from the flat split: a range above 0 whose minimum the
    device sets to 0 (codes unmoved), parts not aligned to 32 channels, wired and int32 dimensions."""
    _, g = _load()
    lifted = [r for r, i in enumerate(g["part_case"]) if g["range"][i, 0] > 0 and not g["status"][r]]
    assert lifted and all(g["out_min"][r] == 0 for r in lifted)
    depth_out = g["hdr"][:, 3] // g["hdr"][:, 4]
    assert (depth_out % 32 != 0).sum() > 100 and g["hdr"][:, 5].sum() > 20 and (g["hdr"][:, 5] == 0).sum() > 200
