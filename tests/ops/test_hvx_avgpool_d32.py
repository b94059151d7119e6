"""QuantizedAvgPool_8_d32 against hexagon_nn's device code (op_avgpool_d32.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_avgpool_d32`` (issue 36): op_avgpool_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, check() then ``avgpool_execute`` on a d32 input whose
depth-padding lanes hold a byte per case: the integral-buffer plan of src/integral_buffer.c and its four paths -
the HVX integral buffer with extrapolated edge padding, the asm 3x3 / stride 1 slice after its edge zaps, the HVX
2x2 / stride-w 2 path, the reduction to 1x1 with its own output range.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np
from hexnn_import.ops.registry import run_op

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_avgpool_d32  # noqa: E402
import op_common  # noqa: E402

F = np.float32


def _engine(g: dict[str, np.ndarray], i: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(the engine's codes, the device's, whether codes and float32 range are bit for bit the device's)."""
    ins, pad = op_avgpool_d32.case_inputs(g, i)
    q, mn, mx = run_op("QuantizedAvgPool_8_d32", ins, padding=pad)
    q, dev, _, ok = op_common.d32_run(q, mn, mx, g, i)
    return q, dev, ok


def _path(g: dict[str, np.ndarray], i: int) -> str:
    _, h, w, _, wh, ww, sh, sw, pad, _ = g["hdr"][i].tolist()
    if tuple(g["out_shape"][i][1:3]) == (1, 1):
        return "1x1"
    if (wh, ww, sh, sw) == (3, 3, 1, 1) and min(h, w) > 1:
        return "3x3 SAME" if pad == op_avgpool_d32.PAD_SAME else "3x3 VALID"
    return "2x2" if (wh, ww, sw) == (2, 2, 2) else ("ibuf SAME" if pad == op_avgpool_d32.PAD_SAME else "ibuf VALID")


def test_avgpool_d32_equals_device_code() -> None:
    """Every one of the 267 nodes (of 349: 49 edge, 300 random; windows 1-5 by 1-5, strides 1-3, SAME and VALID)
    that does not reduce to 1x1 over a depth with padding lanes: the codes and the float32 output range bit for
    bit, on every path (the integral buffer's extrapolated edges, the zapped 3x3 asm, the 2x2, the 1x1 reduction
    over whole slices)."""
    meta, g = op_common.load_golden("avgpool_d32")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "avgpool_execute" in meta["functions"] and meta["source"].endswith("op_avgpool_d32.c")
    assert len(g["hdr"]) == meta["cases"] == 349 and not g["status"].any()
    kept = [i for i in range(len(g["hdr"])) if not op_avgpool_d32.depth_padded_1x1(g, i)]
    assert len(kept) == 267
    paths: dict[str, int] = {}
    for i in kept:
        q, dev, ok = _engine(g, i)
        np.testing.assert_array_equal(q, dev, err_msg=f"case {i} {g['hdr'][i].tolist()}")
        assert ok, f"case {i}: output range differs"
        paths[_path(g, i)] = paths.get(_path(g, i), 0) + 1
    assert paths == {"1x1": 6, "2x2": 72, "3x3 SAME": 29, "3x3 VALID": 29, "ibuf SAME": 85, "ibuf VALID": 46}


def test_avgpool_d32_1x1_range_reads_depth_padding() -> None:
    """The 82 reductions to 1x1 over a depth that is not a multiple of 32 (the selfie segmentation int8 model's
    global pools among them: 16 channels of 16x16 and 32x32): the device's range takes in the padding lanes with
    only their low byte set to the zero sum (``Q6_Q_vand_VR(depthmask, 1)``), its codes and range equal that model
    bit for bit on all of them for padding bytes 0, 0x80, 0xff and random; the engine, which does not model d32
    padding contents, counts the lanes as the zero sum the C means and gives the device's bytes on 25 of them."""
    _, g = op_common.load_golden("avgpool_d32")
    padded = [i for i in range(len(g["hdr"])) if op_avgpool_d32.depth_padded_1x1(g, i)]
    assert len(padded) == 82 and {0, 0x80, 0xFF} <= set(g["hdr"][padded, 9].tolist())
    assert {(16, 16, 16), (32, 32, 16)} <= {tuple(r) for r in g["hdr"][padded][:, [1, 2, 3]].tolist()}
    engine_exact = 0
    for i in padded:
        codes, mn, mx = op_avgpool_d32.masked_lane_model(g, i)
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        np.testing.assert_array_equal(codes, dev, err_msg=f"case {i}")
        assert F(mn).tobytes() == g["out_min"][i].tobytes() and F(mx).tobytes() == g["out_max"][i].tobytes()
        engine_exact += _engine(g, i)[2]
    assert engine_exact == 25
