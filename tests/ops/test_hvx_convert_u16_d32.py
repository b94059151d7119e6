"""Convert_to_d32_16b / Convert_from_d32_16b against hexagon_nn's device code (op_convert_d32.c ``convert_to_d32_16b``
/ ``convert_from_d32_16b``, ``get_option``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_convert_u16_d32`` (issue 36): per case a flat quint16 or
qint16 tensor to 16-bit d32 with 1-5 inputs (options in and out of range) and back. The device's paddings, the
logical data read from its stored bytes, the depth padding lanes it zeroes and the flat result are compared; the
device leaves the other padding bytes unwritten.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "convert_u16_d32.json").read_text())
    with np.load(GOLDEN / "convert_u16_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_convert_u16_d32_equal_device_code() -> None:
    """All 281 cases (61 edge, 220 random) reproduced bit for bit (paddings, data, zeroed depth lanes, the flat
    result), among them the 34 whose width total the device makes 2 mod 4 (explicit left + right paddings under
    3: two 16-bit positions fill a 128-byte vector, ops/d32.py ``width_align``)."""
    from op_convert_u16_d32 import case_exact

    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["ops"] == ["Convert_to_d32_16b", "Convert_from_d32_16b"] and len(g["hdr"]) == meta["cases"] == 281
    f = g["format"]
    ragged = (f[:, 6] + f[:, 2] + f[:, 7]) % 4 != 0
    assert ragged.sum() == 34 and ((f[ragged, 6] + f[ragged, 2] + f[ragged, 7]) % 2 == 0).all()
    assert not g["status"].any() and not g["back_status"].any()
    for i in range(len(g["hdr"])):
        ok, msg = case_exact(g, i)
        assert ok, f"case {i}: {msg}"


def test_set_reaches_the_options() -> None:
    """Options out of range (the device takes the default), qint16 data, every left padding."""
    _, g = _load()
    h = g["hdr"]
    out_of_range = (h[:, 4] >= 3) & ((h[:, 6] < 0) | (h[:, 6] > 7))
    assert out_of_range.sum() >= 3 and (g["format"][out_of_range, 6] == 4).all()
    assert h[:, 9].sum() >= 40 and set(g["format"][:, 6].tolist()) >= set(range(8))
