"""QuantizedPad_8, QuantizedPad_V2_8 and QuantizedPad_u16 against hexagon_nn's device code (op_pad.c) under
qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_pad`` (issue 36): op_pad.c compiled whole and unedited
with nnlib's own ``nn_graph.h``, each node's registered execute (``pad_q_execute`` / ``pad_q_v2_execute`` /
``pad_q16_execute``, then ``pad_generic_execute`` with its HVX fills and 2-D copies) run on a plain input.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "hvx"))

import op_pad  # noqa: E402  (the case layout of the golden file, numpy only)


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "pad.json").read_text())
    with np.load(GOLDEN / "pad.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_pad_equals_device_code() -> None:
    """Every one of the 403 nodes (103 edge, 300 random; 199 / 96 / 108 per op): the output, its shape and range
    bit for bit, or both refuse (111: a pad value too far out, input 5 set and the value outside, a negative pad,
    a pads tensor of depth 1)."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert meta["source"].endswith("op_pad.c") and "pad_generic_execute" in meta["functions"]
    assert len(g["hdr"]) == meta["cases"] == 403 and np.bincount(g["hdr"][:, 0]).tolist() == [199, 96, 108]
    assert int(g["status"].sum()) == 111
    bad = [i for i in range(len(g["hdr"])) if not op_pad.engine_case(g, i)[0]]
    assert not bad, [op_pad.engine_case(g, i)[1] for i in bad[:3]]


def test_device_pads_the_last_axes() -> None:
    """The device property the engine now follows for QuantizedPad_u16 / _16 (it did for the 8-bit pads): a pads
    tensor of n < 4 rows pads the LAST n of b, h, w, d (``pad_generic_execute`` back-fills), not the first n as the
    op text says; and a NaN pad value runs (code 0, the lowest)."""
    _, g = _load()
    seen = 0
    for i, (op, b, h, w, d, n_in, rows, pdepth, *_rest) in enumerate(g["hdr"].tolist()):
        if g["status"][i] or pdepth != 2 or rows >= 4:
            continue
        p = g["pads"][g["pads_off"][i]:g["pads_off"][i + 1]].reshape(rows, 2)
        pairs = [(0, 0)] * (4 - rows) + [tuple(r) for r in p]
        assert g["out_shape"][i].tolist() == [n + lo + hi for n, (lo, hi) in zip((b, h, w, d), pairs)], i
        seen += op == 2 and pairs != [tuple(r) for r in p] + [(0, 0)] * (4 - rows)
    assert seen >= 20
    nan = [i for i in range(len(g["hdr"])) if g["hdr"][i][0] == 2 and np.isnan(g["run"][i][2])]
    assert nan and all(g["status"][i] == 0 and g["out"][g["offsets"][i]:g["offsets"][i] + 2].tolist() == [0, 0]
                       for i in nan)
