"""QuantizedResizeBilinear_8_d32 against hexagon_nn's device code (op_resizebilinear_d32.c
``resize_bilinear_d32_execute``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_resize_d32`` (issue 36): op_resizebilinear_d32.c
compiled whole and unedited with nnlib's own ``nn_graph.h``, one node per case: the same-size copy, the exact 2x of
asm ``do_bilin_interp_x2_single_slice_HVX``, and ``do_bilin_interp_general_all_HVX`` on ``obtain_scaling_plan``'s
fixed-point steps, with and without align corners.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np
from hexnn_import.ops.registry import run_op

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_common  # noqa: E402
import op_resize_d32  # noqa: E402

F = np.float32


def test_resize_d32_equals_device_code() -> None:
    """Every one of the 323 nodes (23 edge, 300 random; 16 the same size, 64 exact 2x, 243 on the general path -
    88 shrinking a side, 92 with align corners, 14 of those to an output side of 1, where the flat op's general
    path gives every code 255): the codes and the float32 output range bit for bit. 31 general-path nodes have 2
    batches and an even number of d32 slices, where the device's job count runs past the last batch (op_resize_d32.overrun_jobs; the harness
    gives the output room for it): their real batches are compared."""
    meta, g = op_common.load_golden("resize_d32")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "do_bilin_interp_general_all_HVX" in meta["functions"] and meta["source"].endswith("op_resizebilinear_d32.c")
    assert len(g["hdr"]) == meta["cases"] == 323 and not g["status"].any()
    hdr = g["hdr"]
    same = (hdr[:, 4] == hdr[:, 1]) & (hdr[:, 5] == hdr[:, 2])
    x2 = (hdr[:, 4] == 2 * hdr[:, 1]) & (hdr[:, 5] == 2 * hdr[:, 2]) & (hdr[:, 7] == 0)
    general = ~same & ~x2
    assert (same.sum(), x2.sum(), general.sum(), (general & (hdr[:, 7] == 1)).sum()) == (16, 64, 243, 92)
    assert sum(op_resize_d32.overrun_jobs(int(r[0]), int(r[3])) > 0 for r in hdr[general]) == 31
    for i in range(len(hdr)):
        q, mn, mx = run_op("QuantizedResizeBilinear_8_d32", op_resize_d32.case_inputs(g, i))
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"case {i} {hdr[i].tolist()}")
        assert mn.astype(F).tobytes() == g["out_min"][i].tobytes() and mx.astype(F).tobytes() == g["out_max"][i].tobytes()


def test_resize_d32_2x_device_bytes() -> None:
    """A property of the device's bytes on the exact 2x path, worked in numpy without the engine: the even rows
    and columns are the input, every odd column of an even row is within half a code below the mean of its
    neighbours (truncated), and the odd rows lie between the rows around them."""
    _, g = op_common.load_golden("resize_d32")
    hdr = g["hdr"]
    for i in np.flatnonzero((hdr[:, 4] == 2 * hdr[:, 1]) & (hdr[:, 5] == 2 * hdr[:, 2]) & (hdr[:, 7] == 0)):
        b, h, w, d = (int(v) for v in hdr[i][:4])
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d).astype(int)
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i]).astype(int)
        np.testing.assert_array_equal(dev[:, ::2, ::2], x)
        if w > 1:
            np.testing.assert_array_equal(dev[:, ::2, 1:-1:2], (x[:, :, :-1] + x[:, :, 1:]) // 2)
        if h > 1:
            lo = np.minimum(dev[:, :-2:2], dev[:, 2::2])
            hi = np.maximum(dev[:, :-2:2], dev[:, 2::2])
            assert ((dev[:, 1:-1:2] >= lo) & (dev[:, 1:-1:2] <= hi)).all()
