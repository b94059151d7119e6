"""QuantizedSoftmax_8 against hexagon_nn's own HVX code (op_softmax_d32.c ``softmax_flat_execute``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_softmax`` (issue 36): the registered flat execute with
its depth-1 fill, its depth-2 table path and its HVX loops (fixed-point ``2**x``, 16-bit sums, a reciprocal),
compiled unedited for Hexagon v66 / 128-byte HVX and run whole; the large-depth path (depth from 1408 and 5632
bytes, a table built with libm's ``expf``) is not covered. The engine follows the device lane for lane
(ops/nnlib_softmax_device.py).
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest
from hexnn_import.ops.kernels.nonlinear import qsoftmax_ref_codes
from hexnn_import.ops.nnlib_softmax_device import pow2_poly, recip16
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import DeviceDefectWarning

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_common  # noqa: E402
import op_softmax  # noqa: E402

GOLDEN = op_common.GOLDEN
F = np.float32


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    return op_common.load_golden("softmax")[1]


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the functions run, the tools; >= 200 random cases."""
    meta = json.loads((GOLDEN / "softmax.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert "softmax_flat_execute" in meta["functions"] and meta["random_cases"] >= 200
    assert len(gold["offsets"]) - 1 == meta["cases"] == 315
    big = gold["shape"][:, 3] >= 1408  # the large-depth path takes these from 5632 bytes: none here
    assert big.sum() == 2 and (np.prod(gold["shape"][big], axis=1) < 5632).all()


def test_softmax_equals_device_code(gold: dict[str, np.ndarray]) -> None:
    """Every case bit for bit: the codes and the output range [0, 1]; the one case the device refuses (range
    times beta of 256 * 255 * ln 2 or more: ``set_scaling_parms``' "beta too large") the engine flags with a
    DeviceDefectWarning naming the node, and answers as the portable C (op_softmax.c) does."""
    g, off = gold, gold["offsets"]
    bad, refused = [], 0
    for i in range(len(off) - 1):
        if g["status"][i]:
            x = op_softmax.case_inputs(g, i)
            with pytest.warns(DeviceDefectWarning, match="beta too large"):
                q, _, _ = run_op("QuantizedSoftmax_8", x)
            beta = g["beta"][i] if g["n_inputs"][i] == 4 else F(1)
            assert np.array_equal(q, qsoftmax_ref_codes(x[0], g["in_min"][i], g["in_max"][i], beta))
            refused += 1
            continue
        q, mn, mx = run_op("QuantizedSoftmax_8", op_softmax.case_inputs(g, i))
        assert F(mn.reshape(-1)[0]) == g["out_min"][i] == 0 and F(mx.reshape(-1)[0]) == g["out_max"][i] == 1
        if not np.array_equal(q.reshape(-1), g["codes"][off[i]:off[i + 1]]):
            bad.append(f"case {i} shape {g['shape'][i].tolist()}")
    assert not bad, f"{len(bad)} cases differ from the device: {bad[:3]}"
    assert refused == 1


def test_set_tells_the_device_from_the_portable_c(gold: dict[str, np.ndarray]) -> None:
    """The cases decide between the two codes nnlib has: op_softmax.c's portable float ``expf`` version differs
    from the device by one code on many of them, on both the depth-2 and the HVX paths."""
    g, off = gold, gold["offsets"]
    differ = {True: 0, False: 0}
    for i in np.flatnonzero(g["status"] == 0):
        x = op_softmax.case_inputs(g, i)[0]
        beta = g["beta"][i] if g["n_inputs"][i] == 4 else F(1)
        ref = qsoftmax_ref_codes(x, g["in_min"][i], g["in_max"][i], beta).reshape(-1)
        differ[bool(g["shape"][i][3] == 2)] += int(not np.array_equal(ref, g["codes"][off[i]:off[i + 1]]))
    assert differ[True] >= 20 and differ[False] >= 50, differ


def test_reciprocal_and_pow2_against_their_functions() -> None:
    """The model's lane arithmetic against the functions it approximates, on every input: ``hvx_recip16_inline``
    is within one of ``2**29 / d`` rounded (saturated to 32767) over 0x4000..0x7fff (hvx_mathops.h: "+/-1
    count of best answer"), pow2_v65_poly within its header's peak error 6.9827e-5 of ``2**-f`` over every 16-bit
    fraction (15 fractional bits, 32767 at 0)."""
    d = np.arange(0x4000, 0x8000)
    assert np.abs(recip16(d) - np.minimum(np.round(2.0 ** 29 / d), 32767)).max() <= 1
    f = np.arange(65536)
    exact = np.minimum(32768.0 * 2.0 ** (-f / 65536.0), 32767)
    assert np.abs(pow2_poly(f) - exact).max() <= 32768 * 6.9828e-5


def test_lane_functions_equal_device_code_on_every_input() -> None:
    """``tools/hvx/golden_hvx.py --only op_softmax_lanes``: the device's pow2_v65_poly on every 16-bit fraction and
    its ``hvx_recip16_inline(d, 10)`` (then ``* (255 << 7)``, as the loops scale it) on every 16-bit d, each
    reproduced by the model on all 65536 inputs."""
    meta = json.loads((GOLDEN / "softmax_lanes.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and meta["functions"] == ["pow2_v65_poly"]
    with np.load(GOLDEN / "softmax_lanes.npz") as f:
        g = {k: f[k] for k in f.files}
    x = np.arange(65536)
    rec = recip16(np.where(x >= 32768, x - 65536, x))
    np.testing.assert_array_equal(pow2_poly(x), g["pow2"])
    np.testing.assert_array_equal(rec, g["recip"])
    np.testing.assert_array_equal(np.clip((rec * (255 << 7) * 2 + 0x8000) >> 16, -32768, 32767), g["recip_mant"])
