"""QuantizedPRelu_8_V2_d32 against hexagon_nn's device code (op_prelu_v2_d32.c ``prelu_opt_execute``) under
qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_prelu_v2_d32`` (issue 36): op_prelu_v2_d32.c compiled
whole and unedited with nnlib's own ``nn_graph.h``, its registered ``prelu_opt_execute`` run on a d32 input with
per-channel quint8 alphas: the output range from the alphas' range ends (or inputs 6 / 7) zero-fixed by
``adjust_minmax_for_zero``, ``set_scaling``'s shifts and 31-bit gains, ``hvx_process_prelu`` per element.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.kernels.activation import prelu_range, prelu_table
from hexnn_import.ops.quant import adjust_range, dequantize_u8, sat_u8
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "prelu_v2_d32.json").read_text())
    with np.load(GOLDEN / "prelu_v2_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _parts(g: dict[str, np.ndarray], i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b, h, w, d, _ = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
    dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
    return x, g["alpha"][g["a_off"][i]:g["a_off"][i + 1]], dev


def test_prelu_v2_d32_equals_device_code() -> None:
    """Every one of the 311 nodes (11 edge, 300 random; depths 1-79, an output range given or not): codes and the
    float32 output range bit for bit."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "prelu_opt_execute" in meta["functions"] and meta["source"].endswith("op_prelu_v2_d32.c")
    assert len(g["hdr"]) == meta["cases"] == 311 and not g["status"].any()
    for i in range(len(g["hdr"])):
        x, al, dev = _parts(g, i)
        r = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i]]
        q, mn, mx = run_op("QuantizedPRelu_8_V2_d32", [to_d32(x), r[0], r[1], al.reshape(1, 1, 1, -1), r[2], r[3],
                                                       *r[4:4 + int(g["hdr"][i][4])]], state={})
        np.testing.assert_array_equal(q.logical(), dev, err_msg=f"case {i}")
        assert mn.astype(F).tobytes() == g["out_min"][i].tobytes(), i
        assert mx.astype(F).tobytes() == g["out_max"][i].tobytes(), i


def test_prelu_v2_d32_set_tells_the_device_from_the_exact_rule() -> None:
    """The set reaches what the device does differently from the exact rule the engine used before: default
    ranges that the alpha values present would make otherwise, and codes off the exactly rounded ones."""
    _, g = _load()
    ranges, codes = 0, 0
    for i in range(len(g["hdr"])):
        x, al, dev = _parts(g, i)
        rin, ral = g["ranges"][i][:2], g["ranges"][i][2:4]
        if g["hdr"][i][4] == 0:
            a = dequantize_u8(np.array([al.min(), al.max()]), *ral)
            old = tuple(F(v) for v in adjust_range(*prelu_range(*rin, float(a[0]), float(a[1]))))
            ranges += old != (g["out_min"][i], g["out_max"][i])
        table = sat_u8(prelu_table(*rin, tuple(ral), (g["out_min"][i], g["out_max"][i])))
        codes += not np.array_equal(table[x.astype(int), al.astype(int)], dev)
    assert ranges > 100 and codes >= 2
