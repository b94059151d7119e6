"""The engine's kernels against hexagon_nn's own device code (HVX intrinsics / assembly) run under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py`` (issue 36): nnlib's functions compiled unedited by clang for
Hexagon v66 / 128-byte HVX and executed in ``qemu-hexagon``; ``tests/data/golden/hvx/<op>.npz`` holds the inputs
and the device's outputs, ``<op>.json`` where they come from. Replayed here with numpy only (no clang, no qemu).
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


def _cases(g: dict[str, np.ndarray], inp: str = "codes", out: str = "out"):
    off = g["offsets"]
    for i in range(len(off) - 1):
        yield i, g[inp][off[i]:off[i + 1]], g[out][off[i]:off[i + 1]]


def _s(v: np.float32) -> np.ndarray:
    return np.asarray(v, np.float32).reshape(1, 1, 1, 1)


@pytest.mark.parametrize("name, function", [("dequantize", "hvx_do_dequantize"),
                                            ("requantize", "nn_requantize_i32_to_qu8_hvx"),
                                            ("relu", None), ("minmax", "requantize_to_outrange"),
                                            ("quantize", "find_scaling_for_hvx_quant")])
def test_provenance(name: str, function: str | None) -> None:
    """Each golden file says which nnlib commit, functions and tools produced it, and holds >= 200 random cases."""
    meta = json.loads((GOLDEN / f"{name}.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c")
    assert (function in meta["functions"] if function else meta["asm"]) and "qemu-hexagon" in meta and "clang" in meta
    assert meta["random_cases"] >= 200 and len(_load(name)["offsets"]) - 1 == meta["cases"]


def test_dequantize_equals_device_code() -> None:
    """op_quantize.c's HVX Dequantize (``hvx_do_dequantize``) under emulation: every value bit for bit.

    A width that overflows float32 gives the device a NaN step (``flt_div_255(inf)``) and garbage output; the
    engine refuses that range, on purpose."""
    g = _load("dequantize")
    refuse = (g["status"] == 1) | np.isnan(g["step"])
    bad = []
    for i, q, dev in _cases(g):
        ins = [q.reshape(1, 1, 1, -1), g["min"][i].reshape(1, 1, 1, 1), g["max"][i].reshape(1, 1, 1, 1)]
        if refuse[i]:
            with pytest.raises(HexnnError):
                run_op("Dequantize", ins)
            continue
        got = run_op("Dequantize", ins)[0].reshape(-1)
        if not np.array_equal(got.view(np.uint32), dev.view(np.uint32)):
            bad.append(f"case {i} range=[{g['min'][i]}, {g['max'][i]}]")
    assert not bad, f"{len(bad)} of {len(g['min'])} cases differ from the device: {bad[:3]}"
    assert refuse.any() and (~refuse).sum() >= 200


def test_dequantize_cases_decide_the_rounding() -> None:
    """The set can tell the device's rounding (ties away from zero) from a float32 multiply (ties to even):
    some device values differ from ``float32(q - qzero) * step``, the device's own step and qzero."""
    g = _load("dequantize")
    differ = 0
    for i, q, dev in _cases(g):
        if np.isnan(g["step"][i]):
            continue
        naive = (q.astype(np.int32) - g["qzero"][i]).astype(np.float32) * g["step"][i]
        differ += int((naive.view(np.uint32) != dev.view(np.uint32)).sum())
    assert differ > 100


REQUANT_OPS = ("Requantize_32to8", "QuantizeDownAndShrinkRange_32to8")


def test_requantize_equals_device_code() -> None:
    """Requantize_32to8 and QuantizeDownAndShrinkRange_32to8 through ``nn_requantize_i32_to_qu8_hvx`` (src/quantize.c)
    and its three device paths (float fallback, HVX ``hvx_quantize_32_to_8``, assembly ``quantize_asm``):
    codes and the float32 output range bit for bit."""
    g = _load("requantize")
    bad = []
    for i, x, dev in _cases(g, "data", "codes"):
        ins = [x.reshape(1, 1, 1, -1), _s(g["in_min"][i]), _s(g["in_max"][i])]
        if g["mode"][i] == 0:
            ins += [_s(g["req_min"][i]), _s(g["req_max"][i])]
        q, mn, mx = run_op(REQUANT_OPS[g["mode"][i]], ins)
        same_range = (mn.reshape(-1)[:1].tobytes() == g["out_min"][i:i + 1].tobytes()
                      and mx.reshape(-1)[:1].tobytes() == g["out_max"][i:i + 1].tobytes())
        if not (same_range and np.array_equal(q.reshape(-1), dev)):
            bad.append(f"case {i} {REQUANT_OPS[g['mode'][i]]}: {int((q.reshape(-1) != dev).sum())} codes differ")
    assert not bad, f"{len(bad)} of {len(g['mode'])} cases differ from the device: {bad[:3]}"


def test_requantize_cases_cover_every_device_path() -> None:
    """The set reaches each branch of ``nn_requantize_i32_to_qu8_hvx`` many times, for both ops: gain >= 1 (float
    fallback), n >= 128 with a 31-bit gain >= 1024 (``quantize_asm``) and the rest (``hvx_quantize_32_to_8``)."""
    g = _load("requantize")
    n = np.diff(g["offsets"])
    level = (g["in_max"] - g["in_min"]) * np.float32(2.0 ** -32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gain = level * (np.float32(255.0) / (g["out_max"] - g["out_min"]))
        gaini = np.round(gain.astype(np.float64) * 2.0 ** 31)
    fallback = gain >= 1
    asm = ~fallback & (n >= 128) & (gaini >= 1024)
    hvx = ~fallback & ~asm
    for mode in (0, 1):
        m = g["mode"] == mode
        assert (fallback & m).sum() >= 10 and (asm & m).sum() >= 30 and (hvx & m).sum() >= 30, mode


RELU_OPS = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8")


def test_relu_family_equals_device_code() -> None:
    """QuantizedRelu_8 / QuantizedReluX_8 / QuantizedClamp_8: op_relu.c's bounds (``quantize_uint8``) and the
    assembly ``relu_kernel`` / ``reluX_kernel`` (relu_kernel_h.S) under emulation: codes bit for bit, the input
    range passed through; bounds inside, outside, half a step off a code, infinite."""
    g = _load("relu")
    bad = []
    for i, q, dev in _cases(g):
        ins = [q.reshape(1, 1, 1, -1), _s(g["in_min"][i]), _s(g["in_max"][i])]
        ins += [[], [_s(g["a"][i])], [_s(g["a"][i]), _s(g["b"][i])]][g["kind"][i]]
        got, mn, mx = run_op(RELU_OPS[g["kind"][i]], ins)
        same_range = (mn.reshape(-1)[:1].tobytes() == g["in_min"][i:i + 1].tobytes()
                      and mx.reshape(-1)[:1].tobytes() == g["in_max"][i:i + 1].tobytes())
        if not (same_range and np.array_equal(got.reshape(-1), dev)):
            bad.append(f"case {i} {RELU_OPS[g['kind'][i]]}")
    assert not bad, f"{len(bad)} of {len(g['kind'])} cases differ from the device: {bad[:3]}"
    assert all((g["kind"] == k).sum() >= 100 for k in (0, 1, 2)) and np.isinf(g["a"]).any()


MINMAX_OPS = ("QuantizedMinimum", "QuantizedMaximum")


def test_minmax_equals_device_code() -> None:
    """QuantizedMinimum / QuantizedMaximum on same-shape operands: op_minimum_maximum.c's output range (6, 7 or 8
    inputs), ``requantize_to_outrange`` (HVX ``jointly_quantize``) and ``qminmax_hvx`` under emulation: codes and
    range bit for bit; where the C errs ("output min >= output max") the engine refuses."""
    g = _load("minmax")
    bad = []
    for i, a, dev in _cases(g, "a", "codes"):
        b = g["b"][g["offsets"][i]:g["offsets"][i + 1]]
        ins = [a.reshape(1, 1, 1, -1), b.reshape(1, 1, 1, -1)] + [
            _s(g[k][i]) for k in ("a_min", "a_max", "b_min", "b_max", "out_min_in", "out_max_in")]
        ins = ins[:g["n_inputs"][i]]
        if g["status"][i]:
            with pytest.raises(HexnnError):
                run_op(MINMAX_OPS[g["op"][i]], ins)
            continue
        q, mn, mx = run_op(MINMAX_OPS[g["op"][i]], ins)
        same_range = (mn.reshape(-1)[:1].tobytes() == g["out_min"][i:i + 1].tobytes()
                      and mx.reshape(-1)[:1].tobytes() == g["out_max"][i:i + 1].tobytes())
        if not (same_range and np.array_equal(q.reshape(-1), dev)):
            bad.append(f"case {i} {MINMAX_OPS[g['op'][i]]}")
    assert not bad, f"{len(bad)} of {len(g['op'])} cases differ from the device: {bad[:3]}"
    moved = (g["a_min"] != g["out_min"]) | (g["a_max"] != g["out_max"])
    assert (moved & (g["status"] == 0)).sum() >= 200 and (g["status"] == 1).any()


def _quantize_replay() -> list[tuple[int, np.ndarray, np.ndarray, bool]]:
    """Per golden Quantize case: (index, engine codes - device codes, elements far outside the range, same range)."""
    g = _load("quantize")
    out = []
    for i, x, dev in _cases(g, "data", "codes"):
        q, mn, mx = run_op("Quantize", [x.reshape(1, 1, 1, -1), _s(g["min"][i]), _s(g["max"][i])])
        same_range = (mn.reshape(-1)[:1].tobytes() == g["out_min"][i:i + 1].tobytes()
                      and mx.reshape(-1)[:1].tobytes() == g["out_max"][i:i + 1].tobytes())
        width = float(max(g["max"][i], 0)) - float(min(g["min"][i], 0))
        far = ~np.isfinite(x) | (np.abs(x.astype(np.float64)) > 8 * width)
        out.append((i, q.reshape(-1).astype(np.int16) - dev.astype(np.int16), far, same_range))
    return out


def test_quantize_equals_device_code() -> None:
    """Quantize against op_quantize.c's device path (``quantize_execute_opt``, which nnlib registers and the engine
    follows since issue 36): all 311 golden cases bit for bit, codes and output range."""
    bad = [i for i, d, _, same in _quantize_replay() if not same or d.any()]
    assert not bad and len(_load("quantize")["min"]) == 311, f"cases differ from the device: {bad[:5]}"


def test_quantize_cases_decide_the_device_rules() -> None:
    """The set tells the device path from portable ``quantize_execute_ref``: on ranges that hold 0 and are at least
    1e-6 wide, the device is within one code of round-half-away (float64), mostly one less (at and just above a
    half), on 0.5-5% of the elements within 8x the range; ranges excluding 0 come back as given; far inputs wrap (low codes for
    values above the range)."""
    g = _load("quantize")
    lo, hi = g["min"], g["max"]
    normal = (lo <= 0) & (hi >= 0) & (hi.astype(np.float64) - lo >= 1e-6)
    near_el = near_diff = below = wraps = 0
    for i, x, dev in _cases(g, "data", "codes"):
        mn, mx = float(g["out_min"][i]), float(g["out_max"][i])
        width = float(max(hi[i], 0)) - float(min(lo[i], 0))
        far = ~np.isfinite(x) | (np.abs(x.astype(np.float64)) > 8 * width)
        if normal[i]:
            t = (x[~far].astype(np.float64) - mn) * (255.0 / (mx - mn))
            ref = np.clip(np.floor(t + 0.5), 0, 255)
            d = ref - dev[~far]
            assert np.abs(d).max(initial=0) <= 1, i
            near_el += d.size; near_diff += int((d != 0).sum()); below += int((d == 1).sum())
        wraps += int(((x > 4096 * width) & (dev < 255)).sum())
    kept = (lo > 0) & (g["out_min"] == lo) & (g["out_max"] == hi)
    assert 0.005 < near_diff / near_el < 0.05 and below > 0.9 * near_diff and kept.sum() >= 10 and wraps >= 3
