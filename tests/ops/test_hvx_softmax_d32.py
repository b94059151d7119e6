"""QuantizedSoftmax_8_d32 against hexagon_nn's device code (op_softmax_d32.c ``softmax_d32_execute``), qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_softmax_d32`` (issue 36): op_softmax_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, its registered ``softmax_d32_execute`` run on a d32 input whose
padding bytes hold a per-case fill: the HVX loop ``softmax_operate_hvx_function`` on every depth (depths 1-399,
most not a multiple of 32; widths 1-13, so every right padding; beta 1 and 0.1-3, as the importers emit it).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import DeviceDefectWarning

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "softmax_d32.npz") as f:
        return {k: f[k] for k in f.files}


def _x(g: dict[str, np.ndarray], i: int) -> np.ndarray:
    return g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(g["hdr"][i])


def _inputs(g: dict[str, np.ndarray], i: int, x: np.ndarray) -> list:
    s = [np.array(v, F).reshape(1, 1, 1, 1) for v in (*g["range"][i], g["beta"][i])]
    return [x, *s][:g["n_inputs"][i]]


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """Nnlib commit, function, tools; >= 200 random cases; depths not a multiple of 32, non-zero padding fills
    and betas other than 1 all present."""
    meta = json.loads((GOLDEN / "softmax_d32.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert "softmax_d32_execute" in meta["functions"] and meta["random_cases"] >= 200
    assert len(gold["hdr"]) == meta["cases"] == 345
    d = gold["hdr"][:, 3]
    assert (d % 32 != 0).sum() >= 200 and (gold["fill"] != 0).sum() >= 300 and (gold["beta"] != 1).sum() >= 100


def test_softmax_d32_equals_device_code(gold: dict[str, np.ndarray]) -> None:
    """Every node: the codes and the float32 output range bit for bit; the device's one refusal ("beta too
    large") the engine flags with a DeviceDefectWarning and answers as the portable C does."""
    g = gold
    bad = []
    for i in range(len(g["hdr"])):
        ins = _inputs(g, i, to_d32(_x(g, i)))
        if g["status"][i]:
            with pytest.warns(DeviceDefectWarning, match="beta too large"):
                run_op("QuantizedSoftmax_8_d32", ins)
            continue
        q, mn, mx = run_op("QuantizedSoftmax_8_d32", ins)
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        if not np.array_equal(q.logical(), dev):
            bad.append(f"case {i} hdr {g['hdr'][i].tolist()}")
        assert F(mn.reshape(-1)[0]).tobytes() == g["out_min"][i].tobytes() == F(0).tobytes()
        assert F(mx.reshape(-1)[0]).tobytes() == g["out_max"][i].tobytes() == F(1).tobytes()
    assert not bad, f"{len(bad)} of {len(g['hdr'])} nodes differ from the device: {bad[:3]}"
    assert int(g["status"].sum()) == 1


def test_d32_is_not_the_flat_op_at_depth_1_and_2(gold: dict[str, np.ndarray]) -> None:
    """What tells the two registered executes apart: at depth 1 and 2 the d32 op runs its HVX loop (depth 1 gives
    255 as the flat op's fill does; depth 2 gives codes the flat op's table does not), so the d32 kernel is not
    its flat twin on the logical data."""
    g = gold
    d2 = [i for i in range(len(g["hdr"])) if g["hdr"][i][3] == 2 and not g["status"][i]]
    differ = sum(not np.array_equal(run_op("QuantizedSoftmax_8", _inputs(g, i, _x(g, i)))[0],
                                    g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["hdr"][i]))
                 for i in d2)
    assert len(d2) >= 5 and differ >= 3, (len(d2), differ)
    d1 = np.flatnonzero(g["hdr"][:, 3] == 1)
    assert len(d1) >= 5 and all((g["codes"][g["offsets"][i]:g["offsets"][i + 1]] == 255).all() for i in d1)
