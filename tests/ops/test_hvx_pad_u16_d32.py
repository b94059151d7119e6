"""QuantizedPad_u16_d32 against hexagon_nn's device code (op_pad_d32.c ``pad_d32_check`` / ``pad_d32_execute`` with
the u16 node type) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_pad_u16_d32`` (issue 36): op_pad_d32.c compiled whole
and unedited with nnlib's own ``nn_graph.h``, one node per case, check() then execute() once or twice (a second run
on another range and pad value redoes only the scaling): the memcpy manager's HVX fills and 2-D copy over 2-byte
elements, the 16-bit fill code of ``pad32_setup_scaling``, the refusals of ``pad32_build_strategy``.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from hexnn_import.errors import HexnnError
from hexnn_import.ops.registry import run_op

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_common  # noqa: E402
import op_pad_d32  # noqa: E402

F = np.float32


def test_pad_u16_d32_equals_device_code() -> None:
    """Every one of the 468 runs of 351 nodes (51 edge, 300 random): the uint16 codes, shape and float32 output
    range bit for bit; the 36 runs the device refuses, the engine refuses."""
    meta, g = op_common.load_golden("pad_u16_d32")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["ops"] == ["QuantizedPad_u16_d32"] and meta["source"].endswith("op_pad_d32.c")
    assert len(g["hdr"]) == 351 and len(g["run_case"]) == meta["cases"] == 468 and g["x"].dtype == np.uint16
    refused = 0
    for r in range(len(g["run_case"])):
        if g["status"][r]:
            refused += 1
            with pytest.raises(HexnnError):
                run_op("QuantizedPad_u16_d32", op_pad_d32.run_inputs(g, r))
            continue
        q, mn, mx = run_op("QuantizedPad_u16_d32", op_pad_d32.run_inputs(g, r))
        dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
        assert q.dtype == np.uint16
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"run {r}")
        assert mn.astype(F).tobytes() == g["out_min"][r].tobytes() and mx.astype(F).tobytes() == g["out_max"][r].tobytes()
    assert refused == 36


def test_pad_u16_d32_set_reaches_the_16_bit_fill_codes() -> None:
    """The fill code is 16-bit: pad values inside the range give codes across 0..65535 (not a byte's 256 steps),
    values far outside saturate, and the set pads batches, height and width."""
    _, g = op_common.load_golden("pad_u16_d32")
    ok = g["status"] == 0
    lo, hi, v = g["run_in"].T.astype(np.float64)
    with np.errstate(all="ignore"):
        q = (v - lo) * 65536 / (hi - lo)
    inside = ok & np.isfinite(q) & (q > 256) & (q < 65280)
    assert inside.sum() >= 50 and (ok & np.isfinite(q) & ((q < -0.5) | (q > 65535.5))).sum() >= 20
    hdr = g["hdr"][g["run_case"][ok]]
    assert (g["out_shape"][ok][:, 0] > hdr[:, 0]).any() and (g["out_shape"][ok][:, 2] > hdr[:, 2]).sum() > 100
    assert (g["out_shape"][ok][:, 1] > hdr[:, 1]).sum() > 100
