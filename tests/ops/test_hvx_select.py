"""Select_8 against hexagon_nn's device code (op_select_8.c ``select_execute`` / HVX ``qselect_hvx``) under
qemu-hexagon: the engine reproduces it.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_select`` (issue 36): op_select_8.c compiled whole and
unedited with nnlib's own ``nn_graph.h``; conditions of 0 / 1, 0 / 255 and any byte, equal and different input
ranges, 1 to 2,100 elements. The engine follows it (ops/kernels/compare.py ``select_tables``): codes and float32
output range bit for bit.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "select.json").read_text())
    with np.load(GOLDEN / "select.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_select_matches_device_code() -> None:
    """306 cases (6 small edge cases, 300 random): every output's codes and float32 range equal the device's;
    a condition byte other than 0 picks X, whatever its value."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert len(g["hdr"]) == meta["cases"] == 306 and not g["status"].any()
    exact, odd_conditions = 0, 0
    for i, shp in enumerate(g["hdr"]):
        sl = slice(g["in_off"][i], g["in_off"][i + 1])
        c, a, b = (g[k][sl].reshape(shp) for k in ("c", "a", "b"))
        s = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
        q, mn, mx = run_op("Select_8", [c, a, s[0], s[1], b, s[2], s[3]])
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        exact += bool(np.array_equal(q, dev) and mn.astype(F).tobytes() == g["out_min"][i].tobytes()
                      and mx.astype(F).tobytes() == g["out_max"][i].tobytes())
        odd_conditions += bool(((c > 1) & (c < 255)).any())
    assert exact == 306 and odd_conditions >= 50


def test_select_multiplier_worked_by_hand() -> None:
    """X [-1, 127/128] (step 1/128, zero 128), Y [-0.5, 127/256] (step 1/256, zero 128): output [-1, 127/128]
    (zero 128 exactly, adjust_minmax_for_zero keeps it), Y's multiplier ``(int)(4096 * 0.5) = 2048``: Y code 200
    -> ((72 * 2048 + 2048) >> 12) + 128 = 36 + 128 = 164; X's 4096: code 9 -> (-119 * 4096 + 2048) >> 12 = -119
    (the rounding shift floors -118.5) -> 9."""
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    c = np.array([0, 1], np.uint8).reshape(1, 1, 1, 2)
    x = np.array([7, 9], np.uint8).reshape(1, 1, 1, 2)
    y = np.array([200, 3], np.uint8).reshape(1, 1, 1, 2)
    q, mn, mx = run_op("Select_8", [c, x, s(-1), s(0.9921875), y, s(-0.5), s(0.49609375)])
    assert q.ravel().tolist() == [164, 9] and (float(mn.ravel()[0]), float(mx.ravel()[0])) == (-1.0, 0.9921875)
