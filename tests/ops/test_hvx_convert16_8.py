"""Convert_16_8 / Convert_u16_8 against hexagon_nn's device code (op_convert_16.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_convert16_8`` (issue 36): op_convert_16.c compiled
whole and unedited with nnlib's own ``nn_graph.h``; the registered ``cvt_x16_8_execute`` (float32 output range,
the 14-bit scale and int16 offset, a scalar loop in 32-bit integers) on the extreme codes, requested ranges far
narrower than the input's (widened; the products wrap), the 3-input form and 200 random nodes.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_convert16_8  # noqa: E402
import op_node  # noqa: E402


def _load() -> dict[str, np.ndarray]:
    meta, g = op_common.load_golden("convert16_8")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_convert_16.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 218 and not g["status"].any()
    return g


def test_convert16_8_equals_device_code() -> None:
    """All 218 nodes (18 edge, 200 random) equal the device bit for bit: codes, shape, float32 output range."""
    g = _load()
    bad = [i for i in range(len(g["hdr"])) if not op_convert16_8.engine_case(g, i)[0]]
    assert bad == []


def test_widened_range_wraps_on_the_device() -> None:
    """By hand from cvt_x16_8_execute: qint16 [2, -3, 16384, 0] of [-1, 1] onto a requested [-0.001, 0.001]: the
    step widens to 2 * 2**-15 (zero 127), conv_ratio 0.5, rsh = max(7, 0) = 7, scale 2**21, offset 127 << 7; 16384
    * 2**21 = 2**35 wraps to 0 in 32 bits, so 0.5 gives the zero code 127, not 255 - as the device did."""
    g = _load()
    ins = op_node.case_inputs(g, 0)
    assert ins[0].view(np.int16).ravel().tolist() == [2, -3, 16384, 0]
    _, outs = op_node.run_outputs(g, 0)
    assert outs[0][1].tolist() == [128, 126, 127, 127]
    assert (outs[1][1].view(np.float32)[0], outs[2][1].view(np.float32)[0]) == (-127 * 2.0 ** -14, 128 * 2.0 ** -14)
