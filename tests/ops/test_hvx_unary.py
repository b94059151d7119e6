"""Neg / Abs (float, int32), QuantizedNeg_8 and QuantizedSqrt_8 against hexagon_nn's own HVX code under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_unary`` (issue 36): op_neg.c's ``unary_op_execute``
(its HVX run functions) and op_sqrt.c's ``sqrt_execute`` (``vlut32`` table lookup) compiled unedited by clang for
Hexagon v66 / 128-byte HVX, run whole in ``qemu-hexagon``. Replayed with numpy only.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
OPS = ("Neg_f", "Abs_f", "Neg_int32", "Abs_int32", "QuantizedNeg_8", "QuantizedSqrt_8")
DTYPES = (np.float32, np.float32, np.int32, np.int32, np.uint8, np.uint8)


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "unary.npz") as f:
        return {k: f[k] for k in f.files}


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the functions run, the tools; >= 200 random cases."""
    meta = json.loads((GOLDEN / "unary.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert {"unary_op_execute", "sqrt_execute"} <= set(meta["functions"]) and tuple(meta["ops"]) == OPS
    assert meta["random_cases"] >= 200 and len(gold["offsets"]) - 1 == meta["cases"]


def test_unary_ops_equal_device_code(gold: dict[str, np.ndarray]) -> None:
    """Every case bit for bit: float sign-bit flips and clears (NaN payloads, -0, Inf kept), saturating int32
    negation and absolute value (INT32_MIN -> INT32_MAX), ``255 - x`` codes with range ``(-max, -min)``, the sqrt
    table with range ``(sqrtf(min), sqrtf(max))``; where the C errs (sqrt of a range below 0) the engine refuses."""
    g, off, bad = gold, gold["offsets"], []
    for i in range(len(off) - 1):
        op = int(g["op"][i])
        x = g["data"][off[i]:off[i + 1]].view(DTYPES[op]).reshape(1, 1, 1, -1)
        ins = [x] + ([g["in_min"][i].reshape(1, 1, 1, 1), g["in_max"][i].reshape(1, 1, 1, 1)] if op >= 4 else [])
        if g["status"][i]:
            with pytest.raises(HexnnError):
                run_op(OPS[op], ins)
            continue
        outs = run_op(OPS[op], ins)
        same = np.array_equal(np.ascontiguousarray(outs[0].reshape(-1).astype(DTYPES[op])).view(np.uint8),
                              g["result"][off[i]:off[i + 1]])
        if op >= 4:
            same = same and (outs[1].reshape(-1)[:1].tobytes() == g["out_min"][i:i + 1].tobytes()
                             and outs[2].reshape(-1)[:1].tobytes() == g["out_max"][i:i + 1].tobytes())
        if not same:
            bad.append(f"case {i} {OPS[op]}")
    assert not bad, f"{len(bad)} of {len(off) - 1} cases differ from the device: {bad[:3]}"


def test_unary_cases_cover_the_edges(gold: dict[str, np.ndarray]) -> None:
    """>= 50 cases per op; the float cases hold NaN, +-Inf and -0, the int32 ones INT32_MIN; sqrt's error path
    and a case past 256 vectors (two work items) are there."""
    g, off = gold, gold["offsets"]
    assert all((g["op"] == k).sum() >= 50 for k in range(6))
    f = np.concatenate([g["data"][off[i]:off[i + 1]].view(np.float32) for i in np.where(g["op"] < 2)[0]])
    n = np.concatenate([g["data"][off[i]:off[i + 1]].view(np.int32) for i in np.where((g["op"] >= 2) & (g["op"] < 4))[0]])
    assert np.isnan(f).any() and np.isinf(f).any() and (f.view(np.uint32) == 0x80000000).any() and (n == -2 ** 31).any()
    assert ((g["op"] == 5) & (g["status"] == 1)).sum() >= 5 and (np.diff(off) > 32768).any()
