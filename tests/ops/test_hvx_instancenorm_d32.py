"""QuantizedInstanceNorm_8_d32 against hexagon_nn's device code (op_instancenorm_hvx.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_instancenorm_d32`` (issue 36): op_instancenorm_hvx.c
compiled whole and unedited with nnlib's own ``nn_graph.h`` and src/qf16.c's conversions, its registered check and
``instancenorm_execute_wrapper`` run on a d32 input: the padding zap, the asm ``getstats_asm``, the qf16 mean and
1/sd (asm ``visqrt64_asm``), the output range and its integer scale, the asm ``renorm_asm``.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "instancenorm_d32.json").read_text())
    with np.load(GOLDEN / "instancenorm_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _x(g: dict[str, np.ndarray], i: int) -> np.ndarray:
    return g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(g["hdr"][i])


def test_instancenorm_d32_equals_device_code() -> None:
    """Every one of the 326 nodes (26 edge, 300 random: uniform, normal, narrow and outlier codes; heights 1-8,
    depth 1-100): the codes and the float32 output range bit for bit."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "instancenorm_hvx_execute" in meta["functions"] and meta["source"].endswith("op_instancenorm_hvx.c")
    assert {"hexagon/asm_src/getstats_h.S", "hexagon/asm_src/renorm_h.S", "hexagon/asm_src/visqrt64_h.S"} <= \
        set(meta["asm"])
    assert len(g["hdr"]) == meta["cases"] == 326 and not g["status"].any()
    for i in range(len(g["hdr"])):
        lo, hi = (np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])
        q, mn, mx = run_op("QuantizedInstanceNorm_8_d32", [to_d32(_x(g, i)), lo, hi])
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"case {i}")
        assert mn.astype(F).tobytes() == g["out_min"][i].tobytes() and mx.astype(F).tobytes() == g["out_max"][i].tobytes()


def test_instancenorm_d32_set_reaches_the_device_quirks() -> None:
    """The set holds what tells the device's arithmetic from the flat op's: heights 1-2 (the stats loop reads two
    rows of bottom padding, zeros here, into each channel's min), ranges wider than 255 (the integer scale is 0),
    squashed all-constant inputs (range [0, 0]); and where the range is narrower no code passes
    ``floor(255 / (max - min)) * (max - min)`` (the truncated scale) by more than 2, so that with the width 5.27
    of case 14 the codes stop near 253, not 255."""
    _, g = _load()
    width = g["out_max"].astype(np.float64) - g["out_min"]
    assert (g["hdr"][:, 1] <= 2).sum() > 50 and (width > 255).sum() > 10 and (g["out_max"] == 0).sum() >= 2
    sel = np.flatnonzero((width > 2) & (width < 255))
    top = np.array([g["codes"][g["offsets"][i]:g["offsets"][i + 1]].max() for i in sel])
    assert len(sel) > 200 and np.all(top <= np.floor(255 / width[sel]) * width[sel] + 2)
