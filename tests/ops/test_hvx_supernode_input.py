"""InputSupernode_8x8p32to8_outd32 / InputSupernode_8x8p8to8_outd32 against hexagon_nn's device code
(op_supernode_new.c ``shortin_supernode_check`` / ``shortin_supernode_execute_call``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_supernode_input`` (issue 36): op_supernode_new.c
compiled whole and unedited with nnlib's own ``nn_graph.h`` and the ``inconv2dbbb*`` assembly, one node per case on
a plain input of depth 1-4, run 1-3 times (the range a run settles on persists, as in a graph).
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))
import op_common  # noqa: E402
import op_supernode as sn  # noqa: E402
import op_supernode_input  # noqa: E402


def test_input_supernode_equals_device_code() -> None:
    """638 runs of 314 nodes (14 edge, 300 random; input depth 1-4, filters 1-3, strides 1-2 by 1-3, SAME /
    VALID, 434 runs with 32-bit bias): 514 bit for bit - every run with a fixed output range and 12 inputs, and
    the depth-5 node both refuse. The other 124, each for its reason:

    - 83 runs of nodes with a 13th input (channel scales): the device ignores it (``shortin_supernode_check``'s
      comment: prepare.c leaves a scalar 1.0 there), the engine refuses the input count;
    - 41 of the 341 other runs with an auto output range: ``shortin_supernode_execute_hvx_slice`` takes the
      range's extremes over whole output vectors, the width-padding columns and depth-padding lanes it computes
      too (their codes can pass the data's), the engine computes only the logical output. The retry rule
      (``round_up_quarter_octave``, floors 1/16 and -1/256) and the starting guess [-1/128, 1/128]
      (``shortin_supernode_check``) the engine follows."""
    meta, g = op_common.load_golden("supernode_input")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "shortin_supernode_execute_everything" in meta["functions"]
    assert len(g["hdr"]) == 314 and len(g["run_case"]) == meta["cases"] == 638 and not g["check"].any()
    exact, thirteen, auto = 0, 0, 0
    for i in range(len(g["hdr"])):
        auto_range = bool(np.isinf(g["ranges"][i][6:]).any())
        for msg in sn.compare_case(g, i, op_supernode_input.OPS):
            if not msg:
                exact += 1
            elif g["hdr"][i][11] == 13:
                assert "got 13 inputs" in msg, msg
                thirteen += 1
            else:
                assert auto_range and "range" in msg, f"case {i}: {msg}"
                auto += 1
    assert (exact, thirteen, auto) == (514, 83, 41)
