"""QuantizedResizeBilinear_8 against hexagon_nn's device code (op_resizebilinear.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_resize`` (issue 36): ``resizebilinear_qu8_execute`` run
whole, a quarter of the cases on each of its paths (HVX ``resizebilinear_2x``, ``resizebilinear_4x``, the
align-corners ``resizebilinear_hvx``, the portable ``resizebilinear_general``). The engine follows
``resizebilinear_general`` for every shape; this test pins down where the device differs (a decision for the
project, issue 36), so any change shows.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "resize.npz") as f:
        return {k: f[k] for k in f.files}


def _path(shape: np.ndarray, h_out: int, w_out: int, align: bool) -> str:
    """The path ``resizebilinear_qu8_execute`` takes (its tests, in its order)."""
    _, h, w, d = (int(v) for v in shape)
    pow2 = lambda v: v & (v - 1) == 0
    if not align and w_out == 2 * w and h_out == 2 * h and pow2(d) and (d >= 128 or pow2(w)):
        return "2x"
    if not align and w_out == 4 * w and h_out == 4 * h and d < 32 and pow2(d):
        return "4x"
    if align and w * 4 == w_out and (w - 1) % 3 == 0 and w * d < 384:
        return "hvx"
    return "general"


def _inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    x = g["data"][g["in_off"][i]:g["in_off"][i + 1]].reshape(g["shape"][i])
    ins = [x, np.array([g["h_out"][i], g["w_out"][i]], np.int32).reshape(1, 1, 1, 2),
           g["in_min"][i].reshape(1, 1, 1, 1), g["in_max"][i].reshape(1, 1, 1, 1),
           np.array(g["align"][i], np.int32).reshape(1, 1, 1, 1)]
    return ins[:g["n_inputs"][i]]


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the functions run, the tools; >= 200 random cases."""
    meta = json.loads((GOLDEN / "resize.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert {"resizebilinear_2x", "resizebilinear_4x", "resizebilinear_hvx"} <= set(meta["functions"])
    assert meta["random_cases"] >= 200 and len(gold["offsets"]) - 1 == meta["cases"]


def test_resize_differs_from_device_only_as_found(gold: dict[str, np.ndarray]) -> None:
    """210 of 300 cases bit-exact; the output range is the input range on both. Per path:

    - 2x: every case exact.
    - general (the engine's own C): within one code. Built with ``-ffp-contract=off`` the device equals the engine
      on all of them; clang's default fuses ``s + (e - s) * t`` into one multiply-add, which moves a few elements
      across a half (which contraction Qualcomm's toolchain applies is not known here).
    - align-corners path: within two codes (7-bit ``xfrac`` weights from ``weight_generation``); a depth above 2
      makes the device fail ("didn't get scaling plan": ``weight_generation`` takes depth 1-2, the path choice
      does not check it) where the engine computes.
    - 4x: exactly where ``(w_in - 1) * depth`` is a multiple of 128 (w_in = 1 among them), and only in the last
      three output columns: ``Q1 = q6op_Q_vsetq2_R(wxd - d_in)`` is meant to keep the last input pixel, but
      ``vsetq2`` of a multiple of 128 sets every lane, so the right edge is interpolated with the bytes after
      the row (their values depend on the memory there; 6 cases).
    - align_corners with an output height or width of 1: the engine refuses (the general C divides by zero), the
      device runs."""
    g, off = gold, gold["offsets"]
    exact, refused, dev_err, wrong_4x = 0, 0, 0, 0
    for i in range(len(off) - 1):
        align = bool(g["align"][i]) and g["n_inputs"][i] == 5
        path = _path(g["shape"][i], int(g["h_out"][i]), int(g["w_out"][i]), align)
        ins = _inputs(g, i)
        if g["status"][i]:
            assert path == "hvx" and g["shape"][i][3] > 2, i
            run_op("QuantizedResizeBilinear_8", ins)
            dev_err += 1
            continue
        if align and min(g["h_out"][i], g["w_out"][i]) == 1:
            with pytest.raises(HexnnError):
                run_op("QuantizedResizeBilinear_8", ins)
            refused += 1
            continue
        q, mn, mx = run_op("QuantizedResizeBilinear_8", ins)
        assert mn.tobytes() == g["out_min"][i].tobytes() == g["in_min"][i].tobytes(), i
        assert mx.tobytes() == g["out_max"][i].tobytes() == g["in_max"][i].tobytes(), i
        d = q.astype(np.int16) - g["codes"][off[i]:off[i + 1]].reshape(q.shape)
        exact += not d.any()
        if path == "2x":
            assert not d.any(), i
        elif path in ("general", "hvx"):
            assert np.abs(d).max() <= (1 if path == "general" else 2), i
        else:
            _, _, w, depth = (int(v) for v in g["shape"][i])
            assert d.any() == ((w - 1) * depth % 128 == 0) and not d[:, :, :-3].any(), i
            wrong_4x += bool(d.any())
    assert exact == 210 and len(off) - 1 == 300 and dev_err == 1 and refused >= 5 and wrong_4x == 6
