"""DepthToSpace_8_d32 against hexagon_nn's device code (op_depthspace_d32.c ``depthspace_d32_check`` /
``depthspace_d32_execute``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_depthspace_d32`` (issue 36): op_depthspace_d32.c
compiled whole and unedited with nnlib's own ``nn_graph.h``, one node per case: ``setup_x2s_plan``'s checks and
height extents, the HVX width-interleave loops of every block width (1-4, and 8 through its intermediate buffer),
the crops and the depth crop.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_common  # noqa: E402
import op_depthspace_d32  # noqa: E402

F = np.float32


def test_depthspace_d32_equals_device_code() -> None:
    """Every one of the 319 nodes (19 edge, 300 random; blocks 1-3 by 1, 2, 3, 4, 8; output depths 16 / 32 /
    64; 121 with four crops, 92 with a fifth, 89 of them cropping the depth): the codes, shape and float32
    output range bit for bit; the 7 the device refuses (block width 5, output depth 48, a depth crop 32 below,
    crops leaving no output), the engine refuses."""
    meta, g = op_common.load_golden("depthspace_d32")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "depthspace_d32_execute" in meta["functions"] and meta["source"].endswith("op_depthspace_d32.c")
    assert len(g["hdr"]) == meta["cases"] == 319 and int((g["status"] != 0).sum()) == 7
    for i in range(len(g["hdr"])):
        ins = op_depthspace_d32.case_inputs(g, i)
        if g["status"][i]:
            with pytest.raises(HexnnError):
                run_op("DepthToSpace_8_d32", ins)
            continue
        q, mn, mx = run_op("DepthToSpace_8_d32", ins)
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"case {i} {g['hdr'][i].tolist()}")
        assert mn.astype(F).tobytes() == g["out_min"][i].tobytes() and mx.astype(F).tobytes() == g["out_max"][i].tobytes()


def test_depthspace_d32_device_bytes_are_the_documented_transpose() -> None:
    """A property of the device's bytes, worked in numpy from the op's header comment (not the engine): the
    input [b, h, w, bsH * bsW * d] relabelled [b, h, w, bsH, bsW, d], transposed to [b, h, bsH, w, bsW, d],
    combined, cropped top / bottom / left / right and to the first channels."""
    _, g = op_common.load_golden("depthspace_d32")
    for i in np.flatnonzero(g["status"] == 0):
        b, h, w, d, bsh, bsw, _, ncrop, _ = (int(v) for v in g["hdr"][i])
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, bsh, bsw, d // (bsh * bsw))
        y = x.transpose(0, 1, 3, 2, 4, 5).reshape(b, h * bsh, w * bsw, -1)
        top, bottom, left, right, keep = (g["crop"][i].tolist() if ncrop else [0] * 5)
        y = y[:, top:y.shape[1] - bottom, left:y.shape[2] - right, :keep or None]
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        np.testing.assert_array_equal(dev, y, err_msg=f"case {i}")
