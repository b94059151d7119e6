"""QuantizedBiasAdd_8p8to32 against hexagon_nn's device code (op_biasadd.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_biasadd8`` (issue 36): op_biasadd.c compiled whole and
unedited with nnlib's own ``nn_graph.h``; the registered ``biasadd_8p8to32_execute`` on the portable-C golden rows'
inputs, edge ranges and random nodes. The Hexagon build contracts ``(x - xo) * in_mpy + (b - bo) * bias_mpy`` to one
fused multiply-add (``sfmpyacc``), which the engine follows.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_biasadd8  # noqa: E402  (numpy only)
import op_common  # noqa: E402
import op_node  # noqa: E402

F = np.float32


def test_biasadd8_equals_device_code() -> None:
    """Every one of the 366 nodes (48 from the portable-C rows, 18 edge, 300 random): the int32 output, its shape and
    the float32 range bit for bit."""
    meta, g = op_common.load_golden("biasadd8")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_biasadd.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 366 and not g["status"].any()
    bad = [i for i in range(len(g["hdr"])) if not op_biasadd8.engine_case(g, i)[0]]
    assert not bad, [op_biasadd8.engine_case(g, i)[1] for i in bad[:3]]


def _two_roundings(g: dict[str, np.ndarray], i: int) -> tuple[np.ndarray, np.ndarray]:
    """(the device's output of case ``i``, the portable C's ``(int)(a * g_x + b * g_b + 0.5f)`` with both products
    rounded to float32), worked in numpy for a range holding 0 with offsets read from the codes' zero points."""
    x, b, a0, a1, b0, b1 = (np.asarray(v) for v in op_node.case_inputs(g, i))
    lo, hi, blo, bhi = (F(v.reshape(-1)[0]) for v in (a0, a1, b0, b1))
    m = F(max(abs(lo), hi, abs(blo), bhi) * F(2 ** 17))
    one = F(F(m + m) / F(2.0 ** 32))
    gx, gb = F(F(F(hi - lo) / F(255)) / one), F(F(F(bhi - blo) / F(255)) / one)
    xo, bo = (int(np.floor(float(-v0 * F(F(255) / F(v1 - v0))) + 0.5)) for v0, v1 in ((lo, hi), (blo, bhi)))
    xs = (x.astype(np.int64) - xo).astype(F) * gx
    bs = (b.reshape(-1).astype(np.int64) - bo).astype(F) * gb
    want = np.trunc(F(F(xs + bs) + F(0.5)).astype(np.float64)).astype(np.int64).reshape(-1)
    return op_node.run_outputs(g, i)[1][0][1].view(np.int32).astype(np.int64), want


def test_device_fuses_the_sum_the_portable_c_rounds_twice() -> None:
    """What the golden set must show: on nodes whose ranges hold 0 the device's result is the portable C's two-rounding
    sum or one away from it, and at least one such node differs (the fused multiply-add decides those)."""
    _, g = op_common.load_golden("biasadd8")
    differ = 0
    for i in range(len(g["hdr"])):
        r = [op_node.case_inputs(g, i)[k].reshape(-1)[0] for k in range(2, 6)]
        if not (r[0] < 0 < r[1] and r[2] < 0 < r[3]):
            continue
        dev, two = _two_roundings(g, i)
        assert np.abs(dev - two).max() <= 1, i
        differ += bool((dev != two).any())
    assert differ >= 5
