"""The flat Supernode_16x16p32to16 against hexagon_nn's device code (op_supernode.c ``supernode_check_ref`` /
``supernode_execute_ref``) under qemu-hexagon: the engine reproduces it.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_supernode16_flat`` (issue 36): op_supernode.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, one node per case (SAME / VALID, stride 1-2, full-range,
8-bit-range and 10-bit-range codes, automatic, fixed and half-automatic output ranges, 12 or 13 inputs), check()
then execute() once or twice on one node state. The engine follows the device's arithmetic
(ops/kernels/q16_supernode_flat_device.py): every run bit for bit, codes and float32 range; a 13th input (channel
scales) is ignored by both.
"""
from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
from hexnn_import.ops.registry import PAD_SAME, PAD_VALID, run_op

from hexnn_import.errors import DeviceDefectWarning

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "supernode16_flat.json").read_text())
    with np.load(GOLDEN / "supernode16_flat.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _inputs(g: dict[str, np.ndarray], i: int) -> tuple[list, int]:
    b, h, w, din, fh, fw, dout, sh, sw, pad = (int(v) for v in g["hdr"][i][:10])
    s = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, din)
    f = g["f"][g["f_off"][i]:g["f_off"][i + 1]].reshape(fh, fw, din, dout)
    bias = g["bias"][g["bias_off"][i]:g["bias_off"][i + 1]].reshape(1, 1, 1, -1)
    scales = [g["scales"][g["scales_off"][i]:g["scales_off"][i + 1]].reshape(1, 1, 1, -1)] if g["hdr"][i][11] == 13 else []
    return [x, f, *s[:4], np.zeros((1, sh, sw, 1), np.int32), bias, *s[4:], *scales], pad


def test_supernode16_flat_matches_device_code() -> None:
    """460 runs of 307 nodes (7 edge cases - all-0 and all-65535 codes, a saturating bias, a 1x1 input, a 3x3
    filter on a 1x2 SAME input, zero bias, a 13th input of scales all 1.0 - then 300 random): every run's codes and
    float32 range equal the device's. 92 runs of 62 nodes have a 13th input (channel scales, random in [1/2048, 1]
    but for the edge case), which op_supernode.c never reads; 7,332 of the device's codes exceed 255 (fixed ranges
    the sums overrun)."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert len(g["hdr"]) == 307 and len(g["run_case"]) == meta["cases"] == 460
    assert not g["status"].any() and not g["check"].any() and int((g["codes"] > 255).sum()) == 7332
    thirteen = np.flatnonzero(g["hdr"][:, 11] == 13)
    assert len(thirteen) == 62 and int(np.isin(g["run_case"], thirteen).sum()) == 92
    assert (g["scales"] != 1).mean() > 0.8
    exact, pads = 0, set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeviceDefectWarning)
        for i in range(len(g["hdr"])):
            (ins, pad), state = _inputs(g, i), {}
            pads.add((pad, int(g["hdr"][i][7]), int(g["hdr"][i][8])))
            for r in np.flatnonzero(g["run_case"] == i):
                q, mn, mx = run_op("Supernode_16x16p32to16", ins, padding=pad, state=state)
                dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
                exact += bool(mn.astype(F).tobytes() == g["out_min"][r].tobytes()
                              and mx.astype(F).tobytes() == g["out_max"][r].tobytes() and np.array_equal(q, dev))
    assert exact == 460 and (PAD_SAME, 2, 2) in pads and (PAD_VALID, 1, 1) in pads


def test_channel_scales_are_ignored_with_a_warning() -> None:
    """A 13th input: the result is the 12-input node's, bit for bit (the device never reads it); scales other than
    1.0 are named once in a DeviceDefectWarning, scales of 1.0 are not."""
    rng = np.random.default_rng(5)
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    x = rng.integers(0, 1024, (1, 3, 4, 2), dtype=np.uint16)
    w = rng.integers(0, 1024, (2, 2, 2, 3), dtype=np.uint16)
    ins = [x, w, s(-1), s(1), s(-1), s(1), np.zeros((1, 1, 1, 1), np.int32), np.array([5, -9, 70], np.int32).reshape(1, 1, 1, 3),
           s(-100), s(100), s(-np.inf), s(np.inf)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeviceDefectWarning)
        want = run_op("Supernode_16x16p32to16", ins, padding=PAD_SAME, state={})
    for scales, warned in ((np.array([0.5, 1.0, 0.25], F), True), (np.ones(3, F), False)):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = run_op("Supernode_16x16p32to16", [*ins, scales.reshape(1, 1, 1, 3)], padding=PAD_SAME, state={},
                         node="sn")
        said = [str(m.message) for m in seen if issubclass(m.category, DeviceDefectWarning)]
        assert any("channel scales" in m for m in said) == warned, said
        assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_output_stage_worked_by_hand() -> None:
    """Input and weight ranges [0, 255] (level 1, zero code 0), bias range +-2**31 (one code 1), output [0, 510]:
    maxrange 510, ``recip = 0xff0000 / 510 = 32768``, code ``(s * 32768 + 32768) >> 16``. 300 * 2 + 10 = 610 ->
    305 (the 8-bit scale: 16-bit code 305 of [0, 510] stands for 2.37, not 610); 0 + 10 -> 5; 65535 * 65535 wraps
    int32 to -131071 -> ``(-131071 * 32768 + 32768) mod 2**32 = 65536`` -> 1. A warning names the defect."""
    x = np.array([300, 65535], np.uint16).reshape(1, 1, 2, 1)
    w = np.array([2, 0], np.uint16).reshape(1, 1, 1, 2)
    w2 = np.array([65535, 0], np.uint16).reshape(1, 1, 1, 2)
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    args = [s(0), s(255), s(0), s(255), np.zeros((1, 1, 1, 1), np.int32), np.array([10, 10], np.int32).reshape(1, 1, 1, 2),
            s(-2.0 ** 31), s(2.0 ** 31), s(0), s(510)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        q, mn, mx = run_op("Supernode_16x16p32to16", [x, w, *args], padding=PAD_VALID, node="sn")
    assert any(issubclass(m.category, DeviceDefectWarning) and "8-bit output stage" in str(m.message) for m in seen)
    assert q[0, 0, 0].tolist() == [305, 5] and float(mn.reshape(-1)[0]) == 0.0 and float(mx.reshape(-1)[0]) == 510.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeviceDefectWarning)
        args[5] = np.zeros((1, 1, 1, 2), np.int32)
        q2 = run_op("Supernode_16x16p32to16", [x, w2, *args], padding=PAD_VALID, node="sn")[0]
    assert q2[0, 0, 1, 0] == 1
