"""QuantizedMul_u16 against hexagon_nn's device code (op_addsubmul_16.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_mul_u16`` (issue 36): op_addsubmul_16.c compiled whole
and unedited with nnlib's own ``nn_graph.h``, src/broadcast.c, src/argminmax.c and src/oper16.c; the registered
``mul_16_execute`` (float32 ``set_mul_scaling``, ``nn_elementwise_with_broadcast`` onto the HVX
``mul_u16_stride_11_hvx`` / ``_10_hvx`` / ``rev_stride_01_hvx`` rows or the C ones below 8) on row lengths about
the vector, scalar operands (also at their zero code), ranges without 0, too small output ranges.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_mul_u16  # noqa: E402
import op_node  # noqa: E402


def _load() -> dict[str, np.ndarray]:
    meta, g = op_common.load_golden("mul_u16")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_addsubmul_16.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 335 and not g["status"].any()
    return g


def _case(g: dict[str, np.ndarray], i: int) -> tuple[np.ndarray, np.ndarray, list[float], np.ndarray, float, float]:
    """(a, b, the six range ends, the device's codes, its output min and max) of golden case ``i``."""
    ins = op_node.case_inputs(g, i)
    outs = op_node.run_outputs(g, i)[1]
    shape = np.broadcast_shapes(ins[0].shape, ins[1].shape)
    return (ins[0], ins[1], [float(x.item()) for x in ins[2:]], outs[0][1].view(np.uint16).reshape(shape),
            float(outs[1][1].view(np.float32)[0]), float(outs[2][1].view(np.float32)[0]))


def test_mul_u16_equals_device_code() -> None:
    """All 335 nodes (35 edge, 300 random) equal the device bit for bit: the uint16 codes, their shape, the
    float32 range (among them the widened output ranges and the scalar operands)."""
    g = _load()
    bad = [i for i in range(len(g["hdr"])) if not op_mul_u16.engine_case(g, i)[0]]
    assert bad == []


def test_device_codes_are_the_product_within_a_code() -> None:
    """What the golden set must show, worked in float64: with both input ranges holding 0, every device code
    inside the output range is within 0.7 of ``zo + (a - za)(b - zb) * a_step * b_step / out_step`` (steps
    ``width / 65536``, zero codes ``floor(-min / step + 0.5)``, on the range the device reports); the reported
    range is the requested one unless that is below ``8 * 4096/4095`` times the product of the input steps."""
    g = _load()
    checked = widened = 0
    for i in range(len(g["hdr"])):
        a, b, r, dev, omn, omx = _case(g, i)
        sa, sb, so = (r[1] - r[0]) / 65536, (r[3] - r[2]) / 65536, (omx - omn) / 65536
        if (omn, omx) != (np.float32(r[4]), np.float32(r[5])):
            assert so >= 8 * sa * sb * 4096 / 4095 * (1 - 1e-6) > (r[5] - r[4]) / 65536, i
            widened += 1
        if not (r[0] <= 0 <= r[1] and r[2] <= 0 <= r[3]):
            continue
        za, zb, zo = (np.clip(np.floor(-lo / st + 0.5), 0, 65535) for lo, st in ((r[0], sa), (r[2], sb), (omn, so)))
        want = zo + (a.astype(np.float64) - za) * (b.astype(np.float64) - zb) * sa * sb / so
        inside = np.broadcast_to((want >= 0) & (want <= 65535), dev.shape)
        assert (np.abs(dev - want)[inside] <= 0.7).all(), i
        checked += 1
    assert checked >= 200 and widened >= 20


def test_scalar_at_its_zero_code_fills_the_output_zero() -> None:
    """By hand: a (1,1,1,1) operand at the code of 0.0 of [-2, 3] ((int)(2 / (5 / 65536) + 0.5f) = 26214) gives
    every output the zero code of [-6, 6], (int)(6 / (12 / 65536) + 0.5f) = 32768, on both sides."""
    g = _load()
    seen = 0
    for i in range(len(g["hdr"])):
        a, b, r, dev, _, _ = _case(g, i)
        scalar = b if b.size == 1 else a if a.size == 1 else None
        if scalar is not None and scalar.item() == 26214 and r[4:] == [-6.0, 6.0] and dev.size > 1:
            assert (dev == 32768).all()
            seen += 1
    assert seen == 4
