"""Supernode_u16x16p32to16_d32 against hexagon_nn's device code (op_supernode_16b.c ``supernode_u16b_check`` /
``supernode_execute_16b_hvx``) under qemu-hexagon: the engine reproduces it.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_supernode_u16_d32`` (issue 36): op_supernode_16b.c compiled
whole and unedited with nnlib's own ``nn_graph.h`` and its assembly, no VTCM (the v60 kernels: with VTCM the v66 ones
run, which qemu-hexagon 7.2 cannot decode), one node per case (VALID, stride 1: the form prepare makes of a 16-bit
transposed conv), check() then execute() once or twice on one node state (the range an auto run settles on is the next run's
start). The engine follows the device's arithmetic (ops/kernels/q16_supernode_device.py): every run bit for bit,
codes and float32 range.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import PAD_VALID, run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "supernode_u16_d32.json").read_text())
    with np.load(GOLDEN / "supernode_u16_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _inputs(g: dict[str, np.ndarray], i: int) -> list:
    b, h, w, din, fh, fw, dout, sh, sw = (int(v) for v in g["hdr"][i][:9])
    s = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, din)
    f = g["f"][g["f_off"][i]:g["f_off"][i + 1]].reshape(fh, fw, din, dout)
    bias = g["bias"][g["bias_off"][i]:g["bias_off"][i + 1]].reshape(1, 1, 1, -1)
    return [to_d32(x), f, *s[:4], np.zeros((1, sh, sw, 1), np.int32), bias, *s[4:]]


def test_supernode_u16_d32_matches_device_code() -> None:
    """343 runs of 225 nodes: 220 random (146 with fixed output ranges, the models' case, 74 automatic; 1-2 runs
    each), then 5 with input and weight ranges [-1, 1] under output steps of 2**15 / 2**14 products and one
    beside: every run's codes and float32 output range equal the device's. The power-of-two widths make ``recip_val`` 2**31,
    which fill_info_minmax_basics casts to int32 (-2**31): the device then gives code 0 where the real values
    are positive (all of [-1, 1], [-0.5, 0.5], [-2, 0]; [0, 2] keeps only its negative sums, mirrored)."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert len(g["hdr"]) == 225 and len(g["run_case"]) == meta["cases"] == 343 and not g["status"].any()
    exact = {True: 0, False: 0}
    for i in range(len(g["hdr"])):
        ins, state = _inputs(g, i), {}
        for r in np.flatnonzero(g["run_case"] == i):
            q, mn, mx = run_op("Supernode_u16x16p32to16_d32", ins, padding=PAD_VALID, state=state)
            dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
            same = (mn.astype(F).tobytes() == g["out_min"][r].tobytes()
                    and mx.astype(F).tobytes() == g["out_max"][r].tobytes())
            exact[bool(np.isinf(g["ranges"][i][6]))] += same and np.array_equal(q.logical(), dev)
            if i in (220, 221, 223):
                assert not q.logical().any()
    assert (exact[False], exact[True]) == (230, 113)


def test_device_range_helpers_by_hand() -> None:
    """The range rules worked by hand: to_next_power_of_two rounds the float32 magnitude up to a power of two;
    fill_info_minmax_basics' reciprocal of a power-of-two step wraps to int32's -2**31 (2**46 / 2**15 = 2**31),
    of 3 is 2**32 // 3 with shift 32 (61 - normamt(3) = 61 - 29); adjust_minmax_for_zero_16b keeps [-1, 1]
    (zero code 32768) and moves the min of [-1, 1.01] to 1.01 * zi / (zi - 65536), zi = 32604 + 1 (the device
    reported -1.0000015 for golden case 224)."""
    from hexnn_import.ops.kernels.q16_supernode_device import (adjust_minmax_for_zero_16b, recip_of,
                                                               to_next_power_of_two)
    from hexnn_import.ops.registry import KernelContext

    assert to_next_power_of_two(F(3.0)) == 4.0 and to_next_power_of_two(F(-0.3)) == -0.5
    assert to_next_power_of_two(F(0.25)) == 0.25
    ctx = KernelContext(node="sn", op="Supernode_u16x16p32to16_d32", padding=PAD_VALID, state={}, n_outputs=3)
    assert recip_of(ctx, 32768) == (-2 ** 31, 46) and recip_of(ctx, 3) == (2 ** 32 // 3, 32)
    assert adjust_minmax_for_zero_16b(F(-1), F(1)) == (-1.0, 1.0)
    zi = F(np.floor(F(F(65536) / F(2.01)))) + 1
    lo, hi = adjust_minmax_for_zero_16b(F(-1), F(1.01))
    assert hi == F(1.01) and lo == F(F(F(1.01) * zi) / F(zi - 65536)) == F(-1.0000015)
