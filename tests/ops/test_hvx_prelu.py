"""QuantizedPRelu_8 against hexagon_nn's own HVX code (op_prelu.c ``prelu_execute_hvx``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_prelu`` (issue 36): ``prelu_execute_hvx`` with its
scalar-alpha and per-depth HVX paths, compiled unedited for Hexagon v66 / 128-byte HVX and run whole. The engine
follows the device code (issue 36), not the portable ``prelu_execute`` (nnlib's ``QuantizedPRelu_8_ref``).
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


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "prelu.npz") as f:
        return {k: f[k] for k in f.files}


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the functions run, the tools; >= 200 random cases."""
    meta = json.loads((GOLDEN / "prelu.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert {"prelu_execute_hvx", "hvx_prelu_scalar_alpha", "hvx_intr_prelu_circ"} <= set(meta["functions"])
    assert meta["random_cases"] >= 200 and len(gold["offsets"]) - 1 == meta["cases"]


def _zero_code(lo: np.float32, hi: np.float32) -> int:
    """quantize_uint8(0, lo, hi) (include/quantize.h), float32: the code of 0.0, halves away from zero."""
    v = (F(0.0) - lo) * (F(255.0) / max(F(1e-18), F(hi - lo)))
    return int(np.clip(np.floor(np.abs(v) + 0.5) * np.sign(v), 0, 255))


def test_prelu_equals_device_code(gold: dict[str, np.ndarray]) -> None:
    """All 318 cases bit for bit (14 of them an alpha outside [0, 1]: both refuse): the output range is the input
    range, codes at or above the zero code pass, the others take the device's fixed point (the engine follows
    ``prelu_execute_hvx`` since issue 36), alpha = 1 included."""
    g, off, ao = gold, gold["offsets"], gold["a_off"]
    bad = []
    for i in range(len(off) - 1):
        x = g["data"][off[i]:off[i + 1]]
        a = g["alpha"][ao[i]:ao[i + 1]]
        ins = [x.reshape(g["shape"][i]), g["in_min"][i].reshape(1, 1, 1, 1), g["in_max"][i].reshape(1, 1, 1, 1),
               a.reshape(1, 1, 1, -1)]
        if g["status"][i]:
            assert ((a < 0) | (a > 1)).any()
            with pytest.raises(HexnnError):
                run_op("QuantizedPRelu_8", ins)
            continue
        q, mn, mx = run_op("QuantizedPRelu_8", ins)
        same = (mn.tobytes() == g["out_min"][i].tobytes() and mx.tobytes() == g["out_max"][i].tobytes()
                and np.array_equal(q.reshape(-1), g["codes"][off[i]:off[i + 1]]))
        if not same:
            bad.append(i)
    assert not bad and len(off) - 1 == 318, f"cases differ from the device: {bad[:5]}"


def test_prelu_cases_decide_the_device_rules(gold: dict[str, np.ndarray]) -> None:
    """The set tells the device from the portable ``prelu_execute`` (``((x * frac + 0x8000) >> 16) + offset``,
    computed here in int64): below the zero code, alpha < 1, the device's code is that one or one less on 5-12% of
    the elements; at alpha = 1 (the portable C keeps ``x``) the device differs on nearly every element."""
    g, off, ao = gold, gold["offsets"], gold["a_off"]
    el = el_diff = one_el = one_diff = 0
    for i in range(len(off) - 1):
        if g["status"][i]:
            continue
        x = g["data"][off[i]:off[i + 1]].astype(np.int64)
        a = g["alpha"][ao[i]:ao[i + 1]]
        qz = _zero_code(g["in_min"][i], g["in_max"][i])
        frac = np.resize((a * F(65536.0)).astype(np.int64), x.size)
        ref = np.where(x < qz, (((x * frac + 0x8000) >> 16) + qz - ((qz * frac + 0x8000) >> 16)) & 0xFF, x)
        d = ref - g["codes"][off[i]:off[i + 1]]
        neg, one = x < qz, frac == 65536
        assert not d[~neg].any() and set(np.unique(d[neg & ~one]).tolist()) <= {0, 1}, i
        el += int((neg & ~one).sum()); el_diff += int((d[neg & ~one] != 0).sum())
        one_el += int((neg & one).sum()); one_diff += int((d[neg & one] != 0).sum())
    assert 0.05 < el_diff / el < 0.12 and one_el >= 1000 and one_diff / one_el > 0.9
