"""QuantizedMaxPool_8_d32 against hexagon_nn's device code (op_maxpool_d32.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_maxpool_d32`` (issue 36): op_maxpool_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, its registered ``maxpool_execute`` run on a d32 input: the asm
slices for 2x2 / 2 and 3x3 / 1 or 2 windows, the rolling-buffer path with src/hmaxpool_d32.c's HVX horizontal max for
any other window, the padding zap. The last 160 inputs have a left padding of 0-7 and random padding bytes, as a
producer such as DepthwiseSupernode leaves them: there the device moves the asm slices' windows and its zap
clears the wrong columns (``hexnn_import.ops.nnlib_maxpool_d32``), which the engine follows with a warning.
"""
from __future__ import annotations

import json
import pathlib
import sys
import warnings

import numpy as np
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import DeviceDefectWarning, HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_maxpool_d32 as mod

F = np.float32
SAME, VALID = 1, 2


def _gold() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "maxpool_d32.json").read_text())
    with np.load(GOLDEN / "maxpool_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _device(g: dict[str, np.ndarray], i: int) -> np.ndarray:
    return g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])


def test_maxpool_d32_equals_device_code() -> None:
    """Every one of the 475 nodes (315 on the default layout: 15 edge, 300 random; 160 on left paddings 0-7 with
    random padding bytes; SAME and VALID; windows 1-5 by 1-5, strides 1-3): the codes and the float32 output range
    bit for bit, or both refuse (a left padding short of the window's)."""
    meta, g = _gold()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "maxpool_execute" in meta["functions"] and meta["source"].endswith("op_maxpool_d32.c")
    assert len(g["hdr"]) == meta["cases"] == 475 and g["random_pad"].sum() == 160
    assert not g["status"][:315].any() and set(g["left"][g["random_pad"]].tolist()) == set(range(8))
    windows = {tuple(r) for r in g["hdr"][:, 4:8].tolist()}
    assert {(2, 2, 2, 2), (3, 3, 1, 1), (3, 3, 2, 2)} <= windows and len(windows) > 20
    refused = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeviceDefectWarning)
        for i in range(len(g["hdr"])):
            ins, pad = mod.case_inputs(g, i)
            if g["status"][i]:
                refused += 1
                try:
                    run_op("QuantizedMaxPool_8_d32", ins, padding=pad)
                except HexnnError:
                    continue
                raise AssertionError(f"case {i}: the device refused, the engine ran")
            q, mn, mx = run_op("QuantizedMaxPool_8_d32", ins, padding=pad)
            np.testing.assert_array_equal(q.logical(), _device(g, i), err_msg=f"case {i}")
            assert mn.astype(F).tobytes() == g["out_min"][i].tobytes()
            assert mx.astype(F).tobytes() == g["out_max"][i].tobytes()
    assert 0 < refused < 10


def test_device_pools_left_of_the_data_on_a_left_padding_of_3_by_hand() -> None:
    """The issue's case worked from the recorded buffer alone: VALID 2x2 / 2 on left padding 2, 3, 5, 6 or 7 -
    each output (outputs at least 2x2: a single row or column takes the rolling buffer) is the max of a 2x2 window
    whose columns start ``left % 4`` to the left of the intended ones (padding bytes the producer left), not the
    flat pool; and the engine says so with a DeviceDefectWarning."""
    _, g = _gold()
    seen = 0
    for i in np.nonzero(g["random_pad"] & (g["status"] == 0))[0]:
        b, h, w, d, wh, ww, sh, sw, pad = g["hdr"][i].tolist()
        left = int(g["left"][i])
        if (wh, ww, sh, sw, pad) != (2, 2, 2, 2, VALID) or left % 4 == 0 or min(h, w) < 4:
            continue
        t = mod.d32_input(g, i)
        rows = t.data[:, 4:4 + h]  # [b, h, nd32, w_total, 32]
        oh, ow = h // 2, w // 2
        cols = left - left % 4 + np.arange(2 * ow)
        win = rows[:, :2 * oh, :, cols].reshape(b, oh, 2, t.nd32, ow, 2, 32).max(axis=(2, 5))
        want = win.transpose(0, 1, 3, 2, 4).reshape(b, oh, ow, -1)[..., :d]
        dev = _device(g, i)
        np.testing.assert_array_equal(dev, want, err_msg=f"case {i}")
        x = t.logical()
        intended = x[:, :2 * oh, :2 * ow].reshape(b, oh, 2, ow, 2, d).max(axis=(2, 4))
        assert (dev != intended).any()
        ins, _ = mod.case_inputs(g, i)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run_op("QuantizedMaxPool_8_d32", ins, padding=pad)
        assert any(issubclass(c.category, DeviceDefectWarning) for c in caught)
        seen += 1
    assert seen >= 4
