"""Supernode_8x8p32to8_d32 / Supernode_8x8p8to8_d32 against hexagon_nn's device code under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_supernode`` (issue 36): op_supernode_new.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, the node's registered ``supernode_check`` then
``supernode_execute_hvx`` (``supernode_recalculate_strategy``, the work items, the assembly kernel
``gvconv2dbbb_v60_asm`` with its per-channel requantize and range, ``gvsuma_asm`` / ``gvint_asm``, the retry check
and the recursive retries) run 1-3 times per node on the same input. The v66 kernels are not among them: they use
the v66 Z register, which qemu-hexagon 7.2 does not decode; the v60 kernels run here are what a v66 build runs for
stride width 3 (those cases have VTCM) and what a device without VTCM runs for every stride.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "supernode.npz") as f:
        return {k: f[k] for k in f.files}


def _inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list, int]:
    """(op, inputs, padding) of case ``i``: the input laid out as d32 with the defaults, as the harness did."""
    b, h, w, din, fh, fw, dout, sh, sw, pad, bias32, n_in = (int(v) for v in g["hdr"][i][:12])
    r = g["ranges"][i]
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    cut = lambda k: g[k][g[f"{k}_off"][i]:g[f"{k}_off"][i + 1]]
    bias = cut("bias").astype(np.int32 if bias32 else np.uint8).reshape(1, 1, 1, dout)
    ins = [to_d32(cut("x").reshape(b, h, w, din)), cut("f").reshape(fh, fw, din, dout), s(r[0]), s(r[1]), s(r[2]),
           s(r[3]), np.zeros((1, sh, sw, 1), np.int32), bias, s(r[4]), s(r[5]), s(r[6]), s(r[7])]
    if n_in == 13:
        ins.append(cut("scales").reshape(1, 1, 1, dout))
    return ("Supernode_8x8p32to8_d32" if bias32 else "Supernode_8x8p8to8_d32"), ins, pad


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the code run, the tools; >= 200 random nodes; the v60 kernels ran."""
    meta = json.loads((GOLDEN / "supernode.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert {"supernode_execute_hvx", "gvconv2dbbb_v60_asm", "supernode_execute_workitem_check_for_retry"} <= set(
        meta["functions"])
    assert meta["source"].endswith("op_supernode_new.c") and meta["random_cases"] >= 200
    assert len(gold["run_case"]) == meta["cases"] and not gold["use_v66"].any() and not gold["check"].any()


def test_supernode_d32_equals_device_code(gold: dict[str, np.ndarray]) -> None:
    """Every run of every node: the codes and the float32 output range bit for bit, including the runs whose fixed
    output range was too narrow (the device widened it by retrying) and the later runs that start from the range
    an earlier one settled on; both bias types, channel scales, strides 1-3, SAME and VALID, batches of 2."""
    g, rc = gold, gold["run_case"]
    runs = 0
    for i in range(len(g["hdr"])):
        op, ins, pad = _inputs(g, i)
        state: dict = {}
        for r in np.flatnonzero(rc == i):
            assert g["status"][r] == 0, (i, r)
            q, mn, mx = run_op(op, ins, padding=pad, state=state)
            dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
            np.testing.assert_array_equal(q.logical(), dev, err_msg=f"case {i} run {r}")
            assert mn.astype(F).tobytes() == g["out_min"][r].tobytes(), (i, r)
            assert mx.astype(F).tobytes() == g["out_max"][r].tobytes(), (i, r)
            runs += 1
    r = g["ranges"][rc]
    fixed = np.isfinite(r[:, 6]) & np.isfinite(r[:, 7])
    widened = fixed & ((g["out_min"] != r[:, 6]) | (g["out_max"] != r[:, 7]))
    hdr = g["hdr"]
    assert runs == len(rc) >= 600 and widened.sum() >= 100
    assert (hdr[:, 10] == 0).sum() >= 90 and (hdr[:, 11] == 13).sum() >= 40 and (hdr[:, 8] == 3).sum() >= 90
