"""QuantizedEqual_8 ... QuantizedGreaterEqual_8 against hexagon_nn's device code (op_compare_8.c ``compare_execute``)
under qemu-hexagon: the engine reproduces it.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_compare`` (issue 36): op_compare_8.c compiled whole and
unedited with nnlib's own ``nn_graph.h``, op_quantize.c's HVX dequantize and src/broadcast.c; equal ranges (the
HVX code compare), different ranges (the float32 values of ``hvx_do_dequantize``), every broadcast kind. The engine
follows it (ops/kernels/compare.py ``device_values``).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
OPS = ("QuantizedEqual_8", "QuantizedNotEqual_8", "QuantizedLess_8", "QuantizedLessEqual_8", "QuantizedGreater_8",
       "QuantizedGreaterEqual_8")
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "compare.json").read_text())
    with np.load(GOLDEN / "compare.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_compare_matches_device_code() -> None:
    """324 cases, 54 per op: 24 edge cases (ranges under 0.0255 wide, where the device floors the step at 1e-4,
    alike and against wider ones; a range twice the other; a scalar operand) and 300 random; 125 with equal
    ranges. Every output equals the device's."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert len(g["hdr"]) == meta["cases"] == 324 and not g["status"].any()
    r = g["ranges"]
    assert int(((r[:, 0] == r[:, 2]) & (r[:, 1] == r[:, 3])).sum()) == 125
    exact = np.zeros(6, int)
    for i, h in enumerate(g["hdr"]):
        s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
        a = g["a"][g["a_off"][i]:g["a_off"][i + 1]].reshape(h[1:5])
        b = g["b"][g["b_off"][i]:g["b_off"][i + 1]].reshape(h[5:9])
        q = run_op(OPS[h[0]], [a, b, *(s(v) for v in r[i])])[0]
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        exact[h[0]] += bool(q.shape == dev.shape and np.array_equal(q, dev))
    assert exact.tolist() == [54] * 6


def test_tiny_ranges_compare_floored_steps() -> None:
    """[-0.01, 0.002] against [-0.02, 0.004]: both steps floor to 1e-4 on the device (the widths / 255 are 4.7e-5
    and 9.4e-5), zero codes 100 and 200, so A codes 150, 110, 170 read 0.005, 0.001, 0.007 and B codes 220, 220, 255
    read 0.002, 0.002, 0.0055: greater, not greater, greater. Their values on the ranges themselves (zero code 212
    on both) are -0.0029, -0.0048, -0.0020 against 0.00075, 0.00075, 0.0040: never greater."""
    a = np.array([150, 110, 170], np.uint8).reshape(1, 1, 1, 3)
    b = np.array([220, 220, 255], np.uint8).reshape(1, 1, 1, 3)
    ends = [np.array(v, F).reshape(1, 1, 1, 1) for v in (-0.01, 0.002, -0.02, 0.004)]
    assert run_op("QuantizedGreater_8", [a, b, *ends])[0].ravel().tolist() == [1, 0, 1]
