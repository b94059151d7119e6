"""The device rows of ``hexnn-import ops --json`` (issue 36) name golden files that exist and hold what they say.

Each row's cases equal its golden file's provenance count, the golden file lists the op, and a replay test of
that row exists (``tests/ops/test_hvx_<row>.py`` or the row's own test), which asserts the exact count. The
exact counts here are copied from those replays: a replay that changes fails there, and this table must follow.
"""
from __future__ import annotations

import json
from pathlib import Path

from hexnn_import.ops.verification import verification
from hexnn_import.ops.verified_device import DEVICE
from hexnn_import.summary import op_coverage

ROOT = Path(__file__).resolve().parents[2]
HVX = ROOT / "tests" / "data" / "golden" / "hvx"


def test_every_device_row_names_its_golden_file_and_replay() -> None:
    tests = "".join(p.read_text() for p in (ROOT / "tests" / "ops").glob("test_hvx*.py"))
    for op, (row, cases, exact, why) in DEVICE.items():
        meta = json.loads((HVX / f"{row}.json").read_text())
        assert op in meta["ops"], (op, row)
        shared = [v[1] for v in DEVICE.values() if v[0] == row]
        assert 0 <= exact <= cases and (cases == meta["cases"] or sum(shared) == meta["cases"]), (op, row)
        assert (HVX / f"{row}.npz").is_file(), row
        assert any(f in tests for f in (f"{row}.npz", f'_load("{row}")', f'load_golden("{row}")')), \
            f"no replay test reads {row}.npz"
        assert bool(why) == (exact < cases), op  # a difference always comes with its traced reason


def test_ops_json_says_device_verification() -> None:
    rows = {r["name"]: r for r in op_coverage()}
    assert rows["QuantizedPRelu_8"]["device"]["exact"] == DEVICE["QuantizedPRelu_8"][2]
    # the engine follows the device where the portable C differs (issue 36): labelled by the device row
    assert rows["QuantizedPRelu_8"]["verified"] == "device-exact" and rows["QuantizedPRelu_8"]["nnlib_exact_pct"] < 100
    assert verification("Neg_f")["verified"] == "device-exact"  # no portable C row: the device decides
    assert "device" not in rows["Gather_8"]   # op_gather.c runs no HVX: the portable C decides
