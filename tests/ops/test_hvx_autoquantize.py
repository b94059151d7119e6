"""AutoQuantize, and Quantize on the engine's own cases, against hexagon_nn's device code under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py`` (issue 36): ``autoquantize.npz`` from op_quantize.c's
registered ``autoquantize_execute_opt`` (``autoquantize_hvx``: asm ``find_minmax_of_floats_asm``,
``find_scaling_for_hvx_quant``, asm ``quantize_floats_to_8b_asm``), ``quantize_engine_cases.npz`` from
``quantize_execute_opt`` run whole on the inputs of the engine's own Quantize golden rows (portable C). The
engine follows the device path (issue 36): these tests hold it to the device's bits, and check that the cases
can tell the device's rules from the portable ``autoquantize_execute`` / ``quantize_execute_ref``.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"


def _load(name: str) -> dict[str, np.ndarray]:
    with np.load(GOLDEN / f"{name}.npz") as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name, function, random", [("autoquantize", "autoquantize_hvx", 200),
                                                    ("quantize_engine_cases", "quantize_execute_opt", 0)])
def test_provenance(name: str, function: str, random: int) -> None:
    """Each golden file names the nnlib commit, the functions and asm run, the tools and its case count."""
    meta = json.loads((GOLDEN / f"{name}.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert function in meta["functions"] and meta["asm"] == ["hexagon/asm_src/autoquantize_h.S"]
    assert meta["random_cases"] >= random and len(_load(name)["offsets"]) - 1 == meta["cases"]


def test_autoquantize_equals_device_code() -> None:
    """AutoQuantize against ``autoquantize_execute_opt`` (which the engine follows since issue 36): 374 of 375 cases
    bit for bit, codes and output range, the refusals included (Inf / NaN data: both refuse), the 7 data ranges
    under 1e-4 wide among them (4 all-zero inputs at ``[-0.0, 1e-18]``, 3 at about 6e-5: no 1e-4 floor, as on the
    device). The one left, traced: data of +-3e38, whose width overflows float32: the device's zero fix gives a NaN
    min whose bits come from the emulator runtime's division; the engine refuses."""
    g = _load("autoquantize")
    off, exact, refused, narrow = g["offsets"], 0, [], []
    for i in range(len(off) - 1):
        x = g["data"][off[i]:off[i + 1]].reshape(g["shape"][i])
        dev = g["codes"][off[i]:off[i + 1]]
        if g["status"][i] or np.isnan(g["out_min"][i]):
            with pytest.raises(HexnnError):
                run_op("AutoQuantize", [x])
            exact += bool(g["status"][i])
            refused += [] if g["status"][i] else [i]
            continue
        q, mn, mx = run_op("AutoQuantize", [x])
        mn, mx = mn.reshape(-1)[0], mx.reshape(-1)[0]
        assert mn.tobytes() == g["out_min"][i].tobytes() and mx.tobytes() == g["out_max"][i].tobytes(), i
        assert np.array_equal(q.reshape(-1), dev), f"case {i} differs from the device"
        exact += 1
        narrow += [i] if g["out_max"][i] - g["out_min"][i] < np.float32(1e-4) else []
    assert exact == 374 and refused == [9] and narrow == [0, 1, 6, 7, 169, 209, 228] and len(off) - 1 == 375
    blank = run_op("AutoQuantize", [np.zeros((1, 2, 2, 3), np.float32)])
    assert blank[1].reshape(-1)[0].tobytes() == np.float32(-0.0).tobytes()
    assert blank[2].reshape(-1)[0] == np.float32(1e-18)


def test_autoquantize_cases_decide_the_device_rules() -> None:
    """The set tells the device from portable ``autoquantize_execute``: data ranges under 1e-4 wide keep their
    width (no 1e-4 floor), the min is -0.0 exactly when no value is negative (>= 50 cases), and codes sit within
    one of round-half-away (float64) on the device's own range, one less on 0.5-2% of elements."""
    g = _load("autoquantize")
    off, narrow, minus, el, diff = g["offsets"], 0, 0, 0, 0
    for i in range(len(off) - 1):
        x = g["data"][off[i]:off[i + 1]].astype(np.float64)
        mn, mx = g["out_min"][i], g["out_max"][i]
        if g["status"][i] or not np.isfinite(mn):
            continue
        narrow += bool(mx - mn < np.float32(1e-4))
        neg_zero = mn.tobytes() == np.float32(-0.0).tobytes()
        assert neg_zero == (x.min() >= 0), i
        minus += neg_zero
        t = (x - float(mn)) * (255.0 / (float(mx) - float(mn)))
        d = np.clip(np.floor(t + 0.5), 0, 255) - g["codes"][off[i]:off[i + 1]]
        assert np.abs(d).max() <= 1, i
        el += d.size; diff += int((d != 0).sum())
    assert narrow >= 5 and minus >= 50 and 0.005 < diff / el < 0.02


def test_quantize_device_on_the_engines_own_cases() -> None:
    """``quantize_execute_opt`` on the 48 inputs of the engine's Quantize golden rows (nnlib's portable C): the
    engine now gives the device's codes and range on all 48 (14 of them differ from the portable C: halves
    rounded down, and 3e38 over [0, 2.44] wrapped to code 92)."""
    g = _load("quantize_engine_cases")
    off, exact = g["offsets"], []
    for i in range(len(off) - 1):
        x = g["data"][off[i]:off[i + 1]].reshape(g["shape"][i])
        s = lambda k: g[k][i].reshape(1, 1, 1, 1)  # noqa: B023
        q, mn, mx = run_op("Quantize", [x, s("min"), s("max")])
        if (g["status"][i] == 0 and mn.tobytes() == g["out_min"][i].tobytes()
                and mx.tobytes() == g["out_max"][i].tobytes() and np.array_equal(q.reshape(-1), g["codes"][off[i]:off[i + 1]])):
            exact.append(i)
    assert len(exact) == 48 == len(off) - 1
    assert g["codes"][off[34]] == 92 and g["data"][off[34]] == np.float32(3e38)


def test_fast_path_equals_the_lane_model() -> None:
    """``quantize_floats_to_8b``'s float64 shortcut (data within the range's exponent) gives the codes of its
    per-lane integer model of the asm (the one the golden cases above hold to the device) on 200 random ranges,
    values at and near every half-code included."""
    from hexnn_import.ops.nnlib_hvx_quant import _quantize_fast, find_scaling_for_hvx_quant, quantize_floats_to_8b

    rng = np.random.default_rng(36)
    for _ in range(200):
        lo, hi = -rng.uniform(0, 1) * 10.0 ** rng.uniform(-3, 3), rng.uniform(0.01, 1) * 10.0 ** rng.uniform(-3, 3)
        p = find_scaling_for_hvx_quant(np.float32(-lo), np.float32(hi))
        step = (float(p.maxval) - float(p.minval)) / 255
        halves = float(p.minval) + step * (np.arange(256) + 0.5)
        x = np.concatenate([rng.uniform(lo, hi, 500), halves, np.nextafter(halves, np.inf),
                            np.nextafter(halves, -np.inf), [0.0, -0.0, lo, hi]]).astype(np.float32)
        x = x[(x >= p.minval) & (x <= p.maxval)]
        slow = quantize_floats_to_8b(x, p, (float("inf"), 0.0))   # forces the lane model
        assert np.array_equal(_quantize_fast(x, p), slow)
