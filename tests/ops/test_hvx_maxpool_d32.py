"""QuantizedMaxPool_8_d32 against hexagon_nn's device code (op_maxpool_d32.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_maxpool_d32`` (issue 36): op_maxpool_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, its registered ``maxpool_execute`` run on a d32 input: the asm
slices for 2x2 / 2 and 3x3 / 1 or 2 windows, the rolling-buffer path with src/hmaxpool_d32.c's HVX horizontal max for
any other window, the padding zap.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def test_maxpool_d32_equals_device_code() -> None:
    """Every one of the 315 nodes (15 edge, 300 random; SAME and VALID; windows 1-5 by 1-5, strides 1-3): the
    codes and the float32 output range bit for bit."""
    meta = json.loads((GOLDEN / "maxpool_d32.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "maxpool_execute" in meta["functions"] and meta["source"].endswith("op_maxpool_d32.c")
    with np.load(GOLDEN / "maxpool_d32.npz") as f:
        g = {k: f[k] for k in f.files}
    assert len(g["hdr"]) == meta["cases"] == 315 and not g["status"].any()
    windows = {tuple(r) for r in g["hdr"][:, 4:8].tolist()}
    assert {(2, 2, 2, 2), (3, 3, 1, 1), (3, 3, 2, 2)} <= windows and len(windows) > 20
    for i, (b, h, w, d, wh, ww, sh, sw, pad) in enumerate(g["hdr"].tolist()):
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
        lo, hi = (np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])
        q, mn, mx = run_op("QuantizedMaxPool_8_d32", [to_d32(x), lo, hi, np.zeros((1, wh, ww, 1), np.int32),
                                                      np.zeros((1, sh, sw, 1), np.int32)], padding=pad)
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"case {i}")
        assert mn.astype(F).tobytes() == g["out_min"][i].tobytes() and mx.astype(F).tobytes() == g["out_max"][i].tobytes()
