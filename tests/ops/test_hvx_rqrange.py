"""RequantizationRange_32 against hexagon_nn's device code (op_requantize.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_rqrange`` (issue 36): op_requantize.c compiled whole
and unedited with nnlib's own ``nn_graph.h``; the registered ``requantrange_execute`` (``launcher`` running
``do_requantrange_execute`` as a vector work item) on the portable-C golden rows' inputs, edge data and random
int32 tensors.
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_common  # noqa: E402  (numpy only)
import op_node  # noqa: E402
import op_rqrange  # noqa: E402

F = np.float32


def test_rqrange_equals_device_code() -> None:
    """Every one of the 356 nodes (48 from the portable-C rows, 8 edge, 300 random): both float32 range ends bit
    for bit."""
    meta, g = op_common.load_golden("rqrange")
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_requantize.c") and meta["harness"].endswith("harness_node.c")
    assert len(g["hdr"]) == meta["cases"] == 356 and not g["status"].any()
    with np.errstate(over="ignore"):
        bad = [i for i in range(len(g["hdr"])) if not op_rqrange.engine_case(g, i)[0]]
    assert not bad, [op_rqrange.engine_case(g, i)[1] for i in bad[:3]]


def test_device_range_is_the_extremes_from_zero() -> None:
    """A property the golden set must show, worked in numpy: the device's range is
    ``((in_max - in_min) * 2**-32) * (min(0, data min), max(0, data max))`` in float32."""
    _, g = op_common.load_golden("rqrange")
    for i in range(len(g["hdr"])):
        x, lo, hi = op_node.case_inputs(g, i)
        with np.errstate(over="ignore"):
            lvl = F(F(hi.reshape(-1)[0] - lo.reshape(-1)[0]) * F(2.0 ** -32))
            want = [F(lvl * F(min(0, int(x.min())))), F(lvl * F(max(0, int(x.max()))))]
        _, outs = op_node.run_outputs(g, i)
        got = [o[1].view(F)[0] for o in outs]
        assert np.array(got, F).tobytes() == np.array(want, F).tobytes(), i
