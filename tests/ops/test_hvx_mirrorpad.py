"""MirrorPad_8 and MirrorPad_f against hexagon_nn's device code (op_mirrorpad.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_mirrorpad`` (issue 36): op_mirrorpad.c compiled whole and
unedited with nnlib's own ``nn_graph.h``; each node's ``mirrorpad_check`` then ``mirrorpad_execute_8`` / ``_f`` (the
memcpy manager's HVX copies, asm ``vmemcpy_h`` / ``vmemcpy_2d_h``) on the portable-C golden row's inputs, edge pads
and random nodes.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_mirrorpad  # noqa: E402
import op_node  # noqa: E402


def test_mirrorpad_equals_device_code() -> None:
    """All 396 nodes (24 from the portable-C row, 72 edge, 300 random; 190 MirrorPad_8, 206 MirrorPad_f; 17
    refused by the device) equal the device bit for bit or both refuse; among the refused, 5 MirrorPad_f nodes
    with a pad equal to its dimension in SYMMETRIC mode (4) or a pads tensor of 3 rows (1): ``mirrorpad_execute``
    wants 4 rows and every pad below its dimension, and the engine's MirrorPad_f now follows it (issue 36; it kept
    TensorFlow's reading before; no importer emits MirrorPad_f)."""
    meta, g = op_common.load_golden("mirrorpad")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_mirrorpad.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 396 and np.bincount(g["hdr"][:, 0]).tolist() == [190, 206]
    assert int((g["status"] != 0).sum()) == 17
    bad = [i for i in range(len(g["hdr"])) if not op_mirrorpad.engine_case(g, i)[0]]
    assert bad == []
    tf_only = []
    for i in np.flatnonzero((g["hdr"][:, 0] == 1) & (g["status"] != 0)):
        x, pads = op_node.case_inputs(g, int(i))
        p = pads.reshape(-1, 2)
        if len(p) == 3 or (int(g["hdr"][i, 1]) == 4 and (p.max(axis=1) == np.array(x.shape)).any()):
            tf_only.append(int(i))
    assert len(tf_only) == 5


def test_device_mirror_pad_is_numpy_reflect_and_symmetric() -> None:
    """Worked in numpy: every MirrorPad_8 node the device ran equals ``np.pad`` in mode ``reflect`` (padding 3,
    NN_PAD_MIRROR_REFLECT) or ``symmetric`` (4), and its range is the input range."""
    _, g = op_common.load_golden("mirrorpad")
    seen = 0
    for i in np.flatnonzero((g["hdr"][:, 0] == 0) & (g["status"] == 0)):
        x, pads, lo, hi = op_node.case_inputs(g, int(i))
        want = np.pad(x, pads.reshape(4, 2), mode="reflect" if g["hdr"][i, 1] == 3 else "symmetric")
        st, outs = op_node.run_outputs(g, int(i))
        assert outs[0][0] == list(want.shape) and outs[0][1].tobytes() == want.tobytes(), i
        assert outs[1][1].tobytes() == lo.tobytes() and outs[2][1].tobytes() == hi.tobytes()
        seen += 1
    assert seen >= 150
