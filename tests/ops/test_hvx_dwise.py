"""DepthwiseSupernode_8x8p32to8_d32 / _8x8p8to8_d32 against hexagon_nn's device code under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_dwise`` (issue 36): op_dwise_snode_8bit.c compiled whole
and unedited with nnlib's own ``nn_graph.h``, the node's registered ``dwise_supernode_check`` then
``dwise_supernode_execute`` (``dwise_supernode_recalculate_strategy``, the assembly kernels
``dwconv2dbbb_s{1,2}_{3x3,3xN,5xN,7xN}_asm`` with their per-channel requantize and range, the retry loop) run 1-3
times per node on the same input (filter widths 3 / 5 / 7, heights 2-4, stride widths 1-2: what the device takes).
"""
from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.registry import run_op

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32
H_DIN, H_FH, H_FW, H_DMUL, H_SW, H_NIN = 3, 4, 5, 6, 8, 11


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "dwise.npz") as f:
        return {k: f[k] for k in f.files}


def _cut(g: dict[str, np.ndarray], key: str, i: int) -> np.ndarray:
    return g[key][g[f"{key}_off"][i]:g[f"{key}_off"][i + 1]]


def _inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list, int]:
    """(op, inputs, padding) of case ``i`` (header ``dout`` is the depth multiplier), input 0 as d32."""
    b, h, w, din, fh, fw, dmul, sh, sw, pad, bias32, n_in = (int(v) for v in g["hdr"][i][:12])
    r = g["ranges"][i]
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    bias = _cut(g, "bias", i).astype(np.int32 if bias32 else np.uint8).reshape(1, 1, 1, -1)
    ins = [to_d32(_cut(g, "x", i).reshape(b, h, w, din)), _cut(g, "f", i).reshape(fh, fw, din, dmul), s(r[0]), s(r[1]),
           s(r[2]), s(r[3]), np.zeros((1, sh, sw, 1), np.int32), bias, s(r[4]), s(r[5]), s(r[6]), s(r[7])]
    if n_in == 13:
        ins.append(_cut(g, "scales", i).reshape(1, 1, 1, -1))
    return ("DepthwiseSupernode_8x8p32to8_d32" if bias32 else "DepthwiseSupernode_8x8p8to8_d32"), ins, pad


def _runs(g: dict[str, np.ndarray], i: int) -> list[tuple[bool, tuple, tuple, np.ndarray, np.ndarray]]:
    """Per run of case ``i``: (equal, engine range, device range, engine codes, device codes)."""
    op, ins, pad = _inputs(g, i)
    state: dict = {}
    out = []
    for r in np.flatnonzero(g["run_case"] == i):
        assert g["status"][r] == 0, (i, r)
        q, mn, mx = run_op(op, ins, padding=pad, state=state)
        q = q.logical()
        dev = g["codes"][g["offsets"][r]:g["offsets"][r + 1]].reshape(g["out_shape"][r])
        er, dr = (F(mn.reshape(-1)[0]), F(mx.reshape(-1)[0])), (g["out_min"][r], g["out_max"][r])
        out.append((er[0].tobytes() == dr[0].tobytes() and er[1].tobytes() == dr[1].tobytes()
                    and np.array_equal(q, dev), er, dr, q, dev))
    return out


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the kernels, the tools; >= 200 random nodes, every kernel run."""
    meta = json.loads((GOLDEN / "dwise.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert meta["source"].endswith("op_dwise_snode_8bit.c") and meta["random_cases"] >= 200
    assert {"dwise_supernode_execute", "dwise_supernode_check"} <= set(meta["functions"]) and len(meta["asm"]) >= 8
    assert len(gold["run_case"]) == meta["cases"] and not gold["check"].any()
    h = gold["hdr"]
    assert {(fw, sw) for fw, sw in zip(h[:, H_FW], h[:, H_SW])} == {(3, 1), (3, 2), (5, 1), (5, 2), (7, 1), (7, 2)}


def test_dwise_d32_differs_from_device_only_as_traced(gold: dict[str, np.ndarray]) -> None:
    """558 of 625 runs bit-exact (codes and float32 range); every other case has a depth multiplier of 2 (30
    nodes, every one differs): the device's kernels walk the output channels one to one over the input's
    (``depth = info->out_depth_valid``); op_dwise_snode_8bit.c ``dwise_supernode_execute`` logs it: ">1 depth
    expansion supported but format is not in stadard order - needs shuffling". The 3x3 kernels' padding
    columns are followed (:func:`test_dwise_d32_follows_the_3x3_padding_columns`)."""
    g, h = gold, gold["hdr"]
    exact_runs, dmul2 = 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeviceDefectWarning)
        for i in range(len(h)):
            runs = _runs(g, i)
            exact_runs += sum(r[0] for r in runs)
            if not all(r[0] for r in runs):
                assert h[i, H_DMUL] == 2, i
                dmul2 += 1
    assert exact_runs == 558 and len(g["run_case"]) == 625 and dmul2 == 30


def test_dwise_d32_follows_the_3x3_padding_columns(gold: dict[str, np.ndarray]) -> None:
    """Filter 3x3 without channel scales (``opt_3x3``): ``info->out_width_processed = out_width_total``, so the
    kernel computes the output's padding columns too and their values enter the min / max. They read the
    input's data, its zapped padding (the input's zero code: nothing) and, past the last zapped bottom row, bytes
    no op sets, which the engine leaves out (ops/kernels/dwise_pad_columns.py). Of the set's 3x3 nodes with an
    auto range, one (case 223: 1x4x7x7 SAME, stride 1, input range all below 0) gets a wider range from them
    on the device: [0, 1] where the logical outputs alone give [0, 0.7071] (the flat twin, on the same
    data); the engine's _d32 op gives the device's range and codes, with a DeviceDefectWarning."""
    g, h = gold, gold["hdr"]
    wider = []
    for i in range(len(h)):
        if (h[i, H_FH], h[i, H_FW], h[i, H_DMUL], h[i, H_NIN]) != (3, 3, 1, 12):
            continue
        op, ins, pad = _inputs(g, i)
        with warnings.catch_warnings(record=True) as told:
            warnings.simplefilter("always", DeviceDefectWarning)
            runs = _runs(g, i)
        assert all(r[0] for r in runs), i
        flat = run_op(op.removesuffix("_d32"), [ins[0].logical(), *ins[1:]], padding=pad)
        if (F(flat[2].reshape(-1)[0]), F(flat[1].reshape(-1)[0])) != (runs[0][2][1], runs[0][2][0]):
            wider.append(i)
            assert any("padding columns" in str(w.message) for w in told), i
        else:
            assert not told, i
    assert wider == [223]
    with pytest.warns(DeviceDefectWarning, match="padding columns"):
        r = _runs(g, 223)[0]
    assert r[2] == (F(0.0), F(1.0))
    flat = run_op("DepthwiseSupernode_8x8p32to8", [_inputs(g, 223)[1][0].logical(), *_inputs(g, 223)[1][1:]],
                  padding=_inputs(g, 223)[2])
    assert F(flat[2].reshape(-1)[0]) == F(0.70710677)


def test_dwise_d32_follows_the_scales_slice_defect(gold: dict[str, np.ndarray]) -> None:
    """Channel scales on ``dwconv2dbbb_s1_7xN_asm`` / ``dwconv2dbbb_s2_5xN_asm`` with more than 32 channels: each
    depth slice after the first is requantized with the first slice's per-channel ``recip`` (the packet
    ``{ vrecip = vmem(recip_level++#1); memw(sp+#52) = recip_level }`` stores the pointer before its increment,
    a packet's reads see the old value, and the next slice reloads it from ``sp+#52``). The engine follows it
    (issue 36): the 7 such nodes of the set (scales not repeating every 32 channels) are exact on every run."""
    g, h = gold, gold["hdr"]
    hit = 0
    for i in range(len(h)):
        if h[i, H_NIN] != 13 or (h[i, H_FW], h[i, H_SW]) not in ((7, 1), (5, 2)) or h[i, H_DIN] <= 32:
            continue
        k = _cut(g, "scales", i)
        if np.array_equal(k[32:64], k[:len(k[32:64])]) or h[i, H_DMUL] != 1:
            continue
        hit += 1
        assert all(r[0] for r in _runs(g, i)), i
    assert hit == 7
