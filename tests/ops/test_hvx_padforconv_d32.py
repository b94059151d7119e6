"""QuantizedPadForConv_8_d32 against hexagon_nn's device code (op_pad_d32.c ``pad_d32_check`` /
``pad_d32_execute``, ``is_padforconv``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_padforconv_d32`` (issue 36): op_pad_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, one node per case, check() then execute() once or twice (a
second run on another range redoes only the scaling): the amounts from the filter's shape, the stride and the
node's padding, the code of 0.0, the memcpy manager's HVX fills and 2-D copy.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np
from hexnn_import.ops.registry import run_op

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_common  # noqa: E402
import op_padforconv_d32  # noqa: E402

F = np.float32


def test_padforconv_d32_equals_device_code() -> None:
    """Every one of the 447 runs of 321 nodes (21 edge, 300 random; filters 1-7 by 1-7 and prepare.c's oversize
    ones up to 9x9, strides 1-3, SAME / SAME_CAFFE / NA, 195 runs on ranges without 0): the codes, shape and
    float32 output range bit for bit; among them the two of the VALID node, which the device copies unpadded
    and the engine too (issue 36; prepare.c's handle_oversize_d32_supernode only puts the op before padded
    convs)."""
    meta, g = op_common.load_golden("padforconv_d32")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "pad_d32_execute" in meta["functions"] and meta["source"].endswith("op_pad_d32.c")
    assert len(g["hdr"]) == 321 and len(g["run_case"]) == meta["cases"] == 447 and not g["status"].any()
    valid = 0
    for r in range(len(g["run_case"])):
        ins, pad = op_padforconv_d32.run_inputs(g, r)
        dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
        if pad == op_padforconv_d32.PAD_VALID:
            valid += 1
            assert list(dev.shape) == g["hdr"][g["run_case"][r]][:4].tolist()
        q, mn, mx = run_op("QuantizedPadForConv_8_d32", ins, padding=pad)
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"run {r}")
        assert mn.astype(F).tobytes() == g["out_min"][r].tobytes() and mx.astype(F).tobytes() == g["out_max"][r].tobytes()
    assert valid == 2


def _zero_code(lo: float, hi: float) -> int:
    """The quint8 code of 0.0 on [lo, hi]: float32 (0 - lo) * 255 / (hi - lo), rounded half away from 0,
    saturated."""
    q = (F(0.0) - F(lo)) * F(255.0) / (F(hi) - F(lo))
    return int(np.clip(np.sign(q) * np.floor(np.abs(q) + F(0.5)), 0, 255))


def test_padforconv_d32_pads_with_the_zero_code() -> None:
    """A property of the device's bytes, worked without the engine: every sampled run's output is its input at
    some offset with every other position the code of 0.0 on the run's range (saturated where the range excludes
    0)."""
    _, g = op_common.load_golden("padforconv_d32")
    for r in range(0, len(g["run_case"]), 5):
        i = int(g["run_case"][r])
        b, h, w, d = (int(v) for v in g["hdr"][i][:4])
        dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
        zero = _zero_code(*(float(v) for v in g["run_in"][r]))
        ph, pw = dev.shape[1] - h, dev.shape[2] - w
        found = []
        for top in range(ph + 1):
            for left in range(pw + 1):
                rest = dev.copy()
                rest[:, top:top + h, left:left + w] = zero
                if np.array_equal(dev[:, top:top + h, left:left + w], x) and (rest == zero).all():
                    found.append((top, left))
        assert found, f"run {r}: the input is not at any offset with the zero code {zero} around it"
