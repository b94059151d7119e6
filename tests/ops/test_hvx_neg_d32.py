"""QuantizedNeg_8_d32 against hexagon_nn's device code (op_add_d32.c ``neg_d32_execute``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_neg_d32`` (issue 36): op_add_d32.c compiled whole and
unedited with nnlib's own ``nn_graph.h``, its registered ``neg_d32_execute`` run on a d32 input: the negated range
and ``tensor_copy_scaled_d32`` with scale -32768, offset 32640 (the asm ``scalemem_d32_hvx``).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "neg_d32.json").read_text())
    with np.load(GOLDEN / "neg_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def test_neg_d32_equals_device_code() -> None:
    """Every one of the 333 nodes (33 edge, 300 random; depth 1-128, every right padding, ranges excluding 0 and
    zero-width): the codes and the float32 output range bit for bit."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "neg_d32_execute" in meta["functions"] and meta["source"].endswith("op_add_d32.c")
    assert len(g["hdr"]) == meta["cases"] == 333 and not g["status"].any()
    for i, shape in enumerate(g["hdr"].tolist()):
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(shape)
        lo, hi = (np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])
        q, mn, mx = run_op("QuantizedNeg_8_d32", [to_d32(x), lo, hi])
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"case {i}")
        assert mn.astype(F).tobytes() == g["out_min"][i].tobytes() and mx.astype(F).tobytes() == g["out_max"][i].tobytes()


def test_neg_d32_device_is_the_ones_complement() -> None:
    """The property the golden set must show to tell anything: the device maps each code to 255 - x and
    negates the range ends (exact in float32), on every case."""
    _, g = _load()
    assert np.array_equal(g["codes"], 255 - g["x"])
    assert np.array_equal(g["out_min"], -g["range"][:, 1]) and np.array_equal(g["out_max"], -g["range"][:, 0])
