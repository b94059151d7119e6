"""QuantizedAdd_u16_d32 / QuantizedSub_u16_d32 against hexagon_nn's device code (op_addsubmul16_d32.c
``addsub16_d32_check`` / ``addsub_d32_execute_common``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_add_u16_d32`` (issue 36): op_addsubmul16_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, one node per case, check() then execute() once or twice on the
same inputs: the broadcast modes (general, B11D, mixed; A broadcast onto B swaps the operands and reverses a
subtraction), the 15-bit gains and offset of ``set_addsub_scaling``, the output range raised to 1/8192 of the larger
input step, the HVX core's rounding saturating shift. The engine follows it (ops/nnlib_u16_d32.py); its flat
QuantizedAdd_u16 / QuantizedSub_u16 round the exact sum instead, one code apart on some elements.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32
OPS = ("QuantizedAdd_u16_d32", "QuantizedSub_u16_d32")


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "add_u16_d32.json").read_text())
    with np.load(GOLDEN / "add_u16_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _case(g: dict[str, np.ndarray], i: int) -> tuple[str, list, list]:
    """(op, the 16-bit d32 inputs, the flat inputs) of case ``i`` (harness_add_u16_d32.c)."""
    h = g["hdr"][i]
    a = g["xa"][g["xa_off"][i]:g["xa_off"][i + 1]].reshape(h[1:5])
    b = g["xb"][g["xb_off"][i]:g["xb_off"][i + 1]].reshape(h[5:9])
    s = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
    return OPS[h[0]], [to_d32(a), to_d32(b), *s], [a, b, *s]


def test_add_sub_u16_d32_equal_device_code() -> None:
    """All 472 runs of 318 nodes (18 edge, 300 random; 243 add runs, 229 subtract): the uint16 codes, shape and
    float32 output range bit for bit, on every broadcast mode and the widened output ranges."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_addsubmul16_d32.c") and meta["ops"] == list(OPS)
    assert len(g["hdr"]) == 318 and len(g["run_case"]) == meta["cases"] == 472 and not g["status"].any()
    for r in range(len(g["run_case"])):
        op, ins, _ = _case(g, int(g["run_case"][r]))
        q, mn, mx = run_op(op, ins)
        dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
        assert q.dtype == np.uint16
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"run {r}")
        assert mn.astype(F).tobytes() == g["out_min"][r].tobytes() and mx.astype(F).tobytes() == g["out_max"][r].tobytes()


def test_set_holds_the_broadcasts_widening_and_where_the_flat_rounding_differs() -> None:
    """The set reaches each broadcast direction and the widened ranges, and its cases tell the device's fixed-point
    result from the exact sum the flat ops round: where no input step exceeds the output step (gains <= 1, as in
    the models' LSTM cells) the flat twins differ by at most 2 codes, on a fifth of the elements; larger gains
    magnify the 15-bit gain's rounding (hundreds of codes at gains in the thousands)."""
    _, g = _load()
    h = g["hdr"]
    assert (h[:, 1:5] < h[:, 5:9]).any(1).sum() >= 20 and (h[:, 1:5] > h[:, 5:9]).any(1).sum() >= 40
    assert (g["out_min"] != g["ranges"][g["run_case"], 4]).sum() >= 40
    off_by_one = 0
    for i in range(len(h)):
        op, ins, flat = _case(g, i)
        r = g["ranges"][i]
        if not (r[0] <= 0 <= r[1] and r[2] <= 0 <= r[3] and r[2] < r[3] and r[4] <= 0 <= r[5]):
            continue
        if g["out_min"][g["run_case"] == i][0] != r[4] or max(r[1] - r[0], r[3] - r[2]) > r[5] - r[4]:
            continue  # widened (the flat op widens in float64), or a gain above 1
        d = run_op(op, ins)[0].logical().astype(np.int64) - run_op(op[:-4], flat)[0].astype(np.int64)
        assert np.abs(d).max() <= 2
        off_by_one += int((d != 0).sum())
    assert off_by_one > 1000
