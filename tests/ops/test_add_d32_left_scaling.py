"""A d32 add / subtract whose fixed output range is too narrow for its input ranges, run again (issue 36).

op_add_d32.c: the failed set-up ("scaling failed") has stored the input ranges and left ``strategy_valid = -1``,
which ``elementwise_strategy_valid_check`` takes as valid (it tests ``== 0``); the next run with the same shapes
and ranges runs on ``info->addsub_scaling`` as it is - zeroed by ``nn_calloc`` (the device's recording in
tests/data/golden/hvx/add_d32.npz: every code 0) or the scaling of the last set-up that succeeded, which depends
only on the input ranges of that run: so the codes are those a fresh node computes with those ranges. The device's
own runs of such nodes: ``add_d32_seq.npz`` (``tools/hvx/golden_hvx.py --only op_add_d32_seq``: 48 nodes whose
input ranges change between runs, on qemu-hexagon).
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

from hexnn_import.errors import DeviceDefectWarning, OpError
from hexnn_import.ops.d32 import from_d32, to_d32
from hexnn_import.ops.registry import run_op

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_add_d32_seq  # noqa: E402  (the case layout of the golden file, numpy only)
import op_common  # noqa: E402

RNG = np.random.default_rng(36)
A = RNG.integers(0, 256, (1, 2, 3, 40), dtype=np.uint8)
B = RNG.integers(0, 256, (1, 2, 3, 40), dtype=np.uint8)
FIXED = [0.0, 1.0]                       # inputs 6 / 7: both ends given
WIDE = [0.0, 5000.0, 0.0, 5000.0]        # scale 255 * 5000 / 255 per input: exponent past 12, "scaling failed"
NARROW = [0.0, 1.0, 0.0, 1.0]


def _run(op: str, state: dict, ranges: list[float], a: np.ndarray = A) -> tuple[np.ndarray, float, float]:
    q, mn, mx = run_op(op, [to_d32(a), to_d32(B), *ranges, *FIXED], state=state)
    return from_d32(q), float(mn.item()), float(mx.item())


@pytest.mark.parametrize("op", ["QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32"])
def test_second_run_of_a_failed_node_is_all_zero_codes(op: str) -> None:
    state: dict = {}
    with pytest.raises(OpError, match="scaling failed"):
        _run(op, state, WIDE)
    with pytest.warns(DeviceDefectWarning, match="scaling left"):
        q, mn, mx = _run(op, state, WIDE)
    assert not q.any() and q.shape == A.shape and (mn, mx) == (0.0, 1.0)


@pytest.mark.parametrize("op", ["QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32"])
def test_failed_set_up_keeps_the_last_good_scaling(op: str) -> None:
    state: dict = {}
    first = _run(op, state, NARROW)
    # a good set-up: codes on [0, 1] step 1/255 each, onto the fixed [0, 1]: a + b (a - b) clipped, within a code
    want = np.clip(A.astype(int) + (B if op.startswith("QuantizedAdd") else -B.astype(int)), 0, 255)
    assert first[1:] == (0.0, 1.0) and np.abs(first[0].astype(int) - want).max() <= 1
    with pytest.raises(OpError, match="scaling failed"):
        _run(op, state, WIDE)
    with pytest.warns(DeviceDefectWarning):
        again = _run(op, state, WIDE)
    assert np.array_equal(again[0], first[0]) and again[1:] == first[1:]
    # the codes are the first scaling's on whatever data comes
    a2 = np.ascontiguousarray(A[:, ::-1])
    assert np.array_equal(_run(op, state, WIDE, a2)[0], _run(op, {}, NARROW, a2)[0])
    # other shapes set up again: refused; then a good set-up clears the failure
    with pytest.raises(OpError, match="scaling failed"):
        run_op(op, [to_d32(A[:, :1]), to_d32(B[:, :1]), *WIDE, *FIXED], state=state)
    assert np.array_equal(_run(op, state, NARROW)[0], first[0])
    with pytest.raises(OpError, match="scaling failed"):
        _run(op, state, WIDE)


def test_changing_ranges_equal_device_code() -> None:
    """All 262 runs of the 48 recorded nodes bit for bit (codes and range) or both refuse (47): among them 27 runs
    after a failed set-up, 16 on the zeroed scaling (every code 0) and 11 on a good scaling left by an earlier run
    (codes not all 0 on ranges whose own set-up fails)."""
    meta, g = op_common.load_golden("add_d32_seq")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta
    assert meta["harness"].endswith("harness_add_d32_seq.c") and len(g["run_case"]) == meta["cases"] == 262
    res = op_add_d32_seq.run_engine(g)
    assert [m for ok, m in res if not ok] == []
    left = []   # runs the device made on ranges whose own set-up fails (a fresh node refuses them): a left scaling
    for r in np.flatnonzero(g["status"] == 0):
        i = g["run_case"][r]
        h = g["hdr"][i]
        ab = [to_d32(g[k][g[f"{k}_off"][i]:g[f"{k}_off"][i + 1]].reshape(h[1:5])) for k in ("xa", "xb")]
        try:
            run_op(op_add_d32_seq.OPS[h[0]], [*ab, *g["run_ranges"][r].tolist(), *g["fixed"][i].tolist()])
        except OpError:
            left.append(bool(g["codes"][g["offsets"][r]:g["offsets"][r + 1]].any()))
    assert int((g["status"] != 0).sum()) == 47 and (left.count(False), left.count(True)) == (16, 11), left
