"""QuantizedConv2d_8x8to32 against hexagon_nn's device code (op_conv2d.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_conv2d`` (issue 36): op_conv2d.c compiled whole and
unedited with nnlib's own ``nn_graph.h``; the node nnlib registers (``conv2d_execute_ref``: the device build runs
the portable C loop, not the unused ``conv2d_execute_hvx``) run on the portable-C golden rows' inputs and random
nodes.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_conv2d  # noqa: E402
import op_node  # noqa: E402


def test_conv2d_equals_device_code() -> None:
    """Every one of the 348 nodes (48 from the portable-C rows, 300 random): the int32 sums, their shape and the
    float32 output range bit for bit."""
    meta, g = op_common.load_golden("conv2d")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_conv2d.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 348 and not g["status"].any()
    bad = [i for i in range(len(g["hdr"])) if not op_conv2d.engine_case(g, i)[0]]
    assert not bad, [op_conv2d.engine_case(g, i)[1] for i in bad[:3]]


def _offset(lo: float, hi: float) -> int:
    """quantize.h ``quantize_int(0, lo, hi)``: ``roundf(-lo * (255 / (hi - lo)))`` in float32, unclamped."""
    v = float(np.float32(-np.float32(lo)) * np.float32(np.float32(255) / np.float32(np.float32(hi) - np.float32(lo))))
    return int(np.copysign(np.floor(abs(v) + 0.5), v))


def test_device_valid_conv_is_the_plain_sum() -> None:
    """A property the golden set must show, worked in numpy int64: on VALID stride-1 nodes the device's sums are
    ``sum((x - x_off) * (w - w_off))`` modulo 2**32, the offsets ``quantize_int(0, min, max)`` unclamped, and its range
    ``(INT32_MIN, INT32_MAX) * (in step * filter step)`` in float32."""
    _, g = op_common.load_golden("conv2d")
    seen = 0
    for i in range(len(g["hdr"])):
        x, w, a, b, c, d, s = op_node.case_inputs(g, i)
        if g["hdr"][i, 1] != 2 or s.shape[1:3] != (1, 1) or w.shape[0] > x.shape[1] or w.shape[1] > x.shape[2]:
            continue
        a, b, c, d = (float(v.reshape(-1)[0]) for v in (a, b, c, d))
        xo, wo = (_offset(lo, hi) for lo, hi in ((a, b), (c, d)))
        fh, fw = w.shape[:2]
        oh, ow = x.shape[1] - fh + 1, x.shape[2] - fw + 1
        xs = x.astype(np.int64) - xo
        acc = sum(np.einsum("bhwc,cd->bhwd", xs[:, p:p + oh, q:q + ow], w[p, q].astype(np.int64) - wo)
                  for p in range(fh) for q in range(fw))
        want = ((acc + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)
        st, outs = op_node.run_outputs(g, i)
        assert st == 0 and outs[0][0] == list(want.shape) and outs[0][1].view(np.int32).tolist() == want.reshape(-1).tolist()
        lvl = np.float32(np.float32(b - a) / np.float32(255)) * np.float32(np.float32(d - c) / np.float32(255))
        assert outs[1][1].view(np.float32)[0] == np.float32(np.float32(-2.0 ** 31) * lvl)
        seen += 1
    assert seen >= 15
