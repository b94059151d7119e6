"""The engine's kernels against hexagon_nn's own device code (HVX intrinsics / assembly) run under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py`` (issue 36): nnlib's functions compiled unedited by clang for
Hexagon v66 / 128-byte HVX and executed in ``qemu-hexagon``; ``tests/data/golden/hvx/<op>.npz`` holds the inputs
and the device's outputs, ``<op>.json`` where they come from. Replayed here with numpy only (no clang, no qemu).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from hexnn_import.errors import HexnnError
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"


def _load(name: str) -> dict[str, np.ndarray]:
    with np.load(GOLDEN / f"{name}.npz") as f:
        return {k: f[k] for k in f.files}


def _cases(g: dict[str, np.ndarray]):
    off = g["offsets"]
    for i in range(len(off) - 1):
        yield i, g["codes"][off[i]:off[i + 1]], g["out"][off[i]:off[i + 1]]


def test_dequantize_provenance() -> None:
    """The golden file says which nnlib commit, functions and tools produced it, and holds >= 200 random cases."""
    meta = json.loads((GOLDEN / "dequantize.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c")
    assert "hvx_do_dequantize" in meta["functions"] and "qemu-hexagon" in meta and "clang" in meta
    assert meta["random_cases"] >= 200 and len(_load("dequantize")["min"]) == meta["cases"]


def test_dequantize_equals_device_code() -> None:
    """op_quantize.c's HVX Dequantize (``hvx_do_dequantize``) under emulation: every value bit for bit.

    A width that overflows float32 gives the device a NaN step (``flt_div_255(inf)``) and garbage output; the
    engine refuses that range, on purpose."""
    g = _load("dequantize")
    refuse = (g["status"] == 1) | np.isnan(g["step"])
    bad = []
    for i, q, dev in _cases(g):
        ins = [q.reshape(1, 1, 1, -1), g["min"][i].reshape(1, 1, 1, 1), g["max"][i].reshape(1, 1, 1, 1)]
        if refuse[i]:
            with pytest.raises(HexnnError):
                run_op("Dequantize", ins)
            continue
        got = run_op("Dequantize", ins)[0].reshape(-1)
        if not np.array_equal(got.view(np.uint32), dev.view(np.uint32)):
            bad.append(f"case {i} range=[{g['min'][i]}, {g['max'][i]}]")
    assert not bad, f"{len(bad)} of {len(g['min'])} cases differ from the device: {bad[:3]}"
    assert refuse.any() and (~refuse).sum() >= 200


def test_dequantize_cases_decide_the_rounding() -> None:
    """The set can tell the device's rounding (ties away from zero) from a float32 multiply (ties to even):
    some device values differ from ``float32(q - qzero) * step``, the device's own step and qzero."""
    g = _load("dequantize")
    differ = 0
    for i, q, dev in _cases(g):
        if np.isnan(g["step"][i]):
            continue
        naive = (q.astype(np.int32) - g["qzero"][i]).astype(np.float32) * g["step"][i]
        differ += int((naive.view(np.uint32) != dev.view(np.uint32)).sum())
    assert differ > 100
