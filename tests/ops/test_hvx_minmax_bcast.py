"""QuantizedMaximum / QuantizedMinimum with broadcasting against hexagon_nn's device code under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_minmax_bcast`` (issue 36): ``maximum_q8_execute`` /
``minimum_q8_execute`` run whole (HVX ``requantize_to_outrange``, ``nn_check_prepare_hvx_opt`` and HVX
``qminmax_hvx`` for a depth-only operand, the portable ``nn_elementwise_with_broadcast`` for other patterns),
compiled unedited for Hexagon v66 / 128-byte HVX. Scalar operands are left out (see test_hvx_golden.py).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
OPS = ("QuantizedMinimum", "QuantizedMaximum")


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "minmax_bcast.npz") as f:
        return {k: f[k] for k in f.files}


def _inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    s = lambda k: g[k][i].reshape(1, 1, 1, 1)
    a = g["a"][g["a_off"][i]:g["a_off"][i + 1]].reshape(g["a_shape"][i])
    b = g["b"][g["b_off"][i]:g["b_off"][i + 1]].reshape(g["b_shape"][i])
    return [a, b] + [s(k) for k in ("a_min", "a_max", "b_min", "b_max", "out_min_in", "out_max_in")][:g["n_inputs"][i] - 2]


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the functions run, the tools; >= 200 random cases."""
    meta = json.loads((GOLDEN / "minmax_bcast.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert {"minmax_execute", "nn_check_prepare_hvx_opt"} <= set(meta["functions"])
    assert meta["random_cases"] >= 200 and len(gold["offsets"]) - 1 == meta["cases"]


def test_broadcast_minmax_equals_device_code(gold: dict[str, np.ndarray]) -> None:
    """Every case bit for bit (codes and range); where the C errs ("output min >= output max") the engine refuses.
    The set holds >= 80 depth-only broadcasts (the HVX path) and >= 80 other patterns (the portable loops)."""
    g, off, bad = gold, gold["offsets"], []
    for i in range(len(off) - 1):
        if g["status"][i]:
            with pytest.raises(HexnnError):
                run_op(OPS[g["op"][i]], _inputs(g, i))
            continue
        q, mn, mx = run_op(OPS[g["op"][i]], _inputs(g, i))
        same = (mn.reshape(-1)[:1].tobytes() == g["out_min"][i:i + 1].tobytes()
                and mx.reshape(-1)[:1].tobytes() == g["out_max"][i:i + 1].tobytes())
        if not (same and np.array_equal(q.reshape(-1), g["codes"][off[i]:off[i + 1]])):
            bad.append(f"case {i} {OPS[g['op'][i]]}")
    assert not bad, f"{len(bad)} of {len(off) - 1} cases differ from the device: {bad[:3]}"
    small = np.where(g["a_shape"].prod(1)[:, None] <= g["b_shape"].prod(1)[:, None], g["a_shape"], g["b_shape"])
    depth_only = (small[:, :3] == 1).all(1)
    assert depth_only.sum() >= 80 and (~depth_only).sum() >= 80 and (g["status"] == 1).any()
    assert not (small == 1).all(1).any()
