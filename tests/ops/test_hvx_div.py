"""QuantizedDiv_8 against hexagon_nn's device code (op_div.c ``div_check`` / ``div_execute``, whole) under
qemu-hexagon: the engine reproduces it.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_div`` (issue 36): op_div.c compiled unedited with
nnlib's own ``nn_graph.h``, the registered check then execute; 18 edge cases (positive / negative / zero scalar
divisors, sizes 1, 127-129, 255-257 around the HVX vectors, static ranges, per-channel divisors one of them 0, a B
depth other than A's, 7 inputs) and 300 random ones (scalar or per-channel, 6 or 8 inputs, ranges with or without
0). The engine follows it (ops/kernels/recip_div_device.py): codes and float32 output range bit for bit, and it
refuses where the device fails.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "div.json").read_text())
    with np.load(GOLDEN / "div.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _s(v: float) -> np.ndarray:
    return np.array(v, F).reshape(1, 1, 1, 1)


def test_div_matches_device_code() -> None:
    """318 cases: 313 computed (81 scalar / 6 inputs, 82 scalar static, 77 per-channel, 73 per-channel static)
    equal bit for bit; the 5 the device fails (a divisor of 0 on each path, 7 inputs) are refused."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert len(g["hdr"]) == meta["cases"] == 318
    kinds: dict[tuple[bool, int], int] = {}
    refused = 0
    for i, h in enumerate(g["hdr"]):
        a = g["a"][g["a_off"][i]:g["a_off"][i + 1]].reshape(h[:4])
        b = g["b"][g["b_off"][i]:g["b_off"][i + 1]].reshape(1, 1, 1, h[4])
        ins = [a, b, *(_s(v) for v in g["ranges"][i][:h[5] - 2])]
        if g["status"][i]:
            with pytest.raises(HexnnError):
                run_op("QuantizedDiv_8", ins)
            refused += 1
            continue
        q, mn, mx = run_op("QuantizedDiv_8", ins)
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
        assert np.array_equal(q, dev), i
        assert F(mn.ravel()[0]).tobytes() == g["out_min"][i].tobytes(), i
        assert F(mx.ravel()[0]).tobytes() == g["out_max"][i].tobytes(), i
        key = (h[4] == 1, int(h[5]))
        kinds[key] = kinds.get(key, 0) + 1
    assert refused == 5 and kinds == {(True, 6): 81, (True, 8): 82, (False, 6): 77, (False, 8): 73}


def test_div_negative_scalar_flips_codes_worked_by_hand() -> None:
    """B [-2, 1] code 3: step 3/255, ``fmaf(3, step, -2)`` = -1.9647058 (float32); div_scalar_execute keeps no
    table: codes ``255 - a`` and the range ``(a_max / s, a_min / s)``, 0 not put in."""
    a = np.array([0, 10, 255], np.uint8).reshape(1, 1, 1, 3)
    q, mn, mx = run_op("QuantizedDiv_8", [a, np.array([3], np.uint8).reshape(1, 1, 1, 1), _s(1.0), _s(3.0),
                                          _s(-2.0), _s(1.0)])
    s = F(3.0 * float(F(F(3.0) / F(255.0))) - 2.0)  # exact in float64 before the one float32 rounding, as fmaf
    assert q.ravel().tolist() == [255, 245, 0]
    assert mn.ravel()[0] == F(F(3.0) / s) and mx.ravel()[0] == F(F(1.0) / s) and mx.ravel()[0] < 0


def test_div_channel_of_b_follows_the_flat_index() -> None:
    """A B depth other than A's: div_depthwise_execute walks ``i = d, d + depth_b, ...`` over A's flat elements,
    so with A depth 3 and B depth 2, element (0, 1, 0) - flat 3 - uses divisor 1 (device golden case 16 shows
    the same with depths 6 and 4). Divisors 1 and 2 on A [0, 255] codes 200: 200 and 100 on the range [0, 255]."""
    a = np.full((1, 1, 2, 3), 200, np.uint8)
    b = np.array([1, 2], np.uint8).reshape(1, 1, 1, 2)
    q, mn, mx = run_op("QuantizedDiv_8", [a, b, _s(0.0), _s(255.0), _s(0.0), _s(255.0), _s(0.0), _s(255.0)])
    assert q.ravel().tolist() == [200, 100, 200, 100, 200, 100] and (mn.item(), mx.item()) == (0.0, 255.0)
