"""QuantizedConcat_8 against hexagon_nn's own device code (op_concat.c ``concat_execute_asm``) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_concat`` (issue 36): ``concat_execute_asm`` with its
two work items (asm ``memconvert_hvx`` to requantize, ``vmemcpy_2d_general_asm`` to copy), compiled unedited for
Hexagon v66 / 128-byte HVX and run whole. The engine follows the device (issue 36), not the portable ``concat_execute_ref``.
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
#: The largest offset for which ``x + offset`` (x <= 255) stays in memconvert_hvx's signed 16-bit lanes.
LANE_MAX_OFFSET = 32767 - 255


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "concat.npz") as f:
        return {k: f[k] for k in f.files}


def _inputs(g: dict[str, np.ndarray], i: int) -> tuple[list[np.ndarray], np.ndarray]:
    idx = np.where(g["part_case"] == i)[0]
    b, h, w = (int(v) for v in g["shape"][i])
    ts = [g["data"][g["d_off"][k]:g["d_off"][k + 1]].reshape(b, h, w, int(g["depth"][k])) for k in idx]
    s = lambda v: np.asarray(v, F).reshape(1, 1, 1, 1)
    return ([np.array(g["dim"][i], np.int32).reshape(1, 1, 1, 1), *ts, *[s(g["in_min"][k]) for k in idx],
             *[s(g["in_max"][k]) for k in idx]], idx)


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the functions and asm run, the tools; >= 200 random cases."""
    meta = json.loads((GOLDEN / "concat.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert "concat_execute_slice_asm" in meta["functions"] and "hexagon/asm_src/memconvert_hvx.S" in meta["asm"]
    assert meta["random_cases"] >= 200 and len(gold["offsets"]) - 1 == meta["cases"]


def test_concat_equals_device_code(gold: dict[str, np.ndarray]) -> None:
    """All 305 cases bit for bit (the C's error - a concat along another axis than depth - refused by both): the
    output range, copied inputs, requantized ones, and those whose offset exceeds 32512 (an input range narrower
    than 1/32512 of its distance from the output min), which the asm ``memconvert_hvx`` adds in signed 16-bit
    lanes so that ``x + offset`` wraps (the engine follows it since issue 36). Each such input is also checked
    against the two formulas: the device's ``usat8(sat16((wrap16(x + offset) * gain * 2 + 0x8000) >> 16))``
    and the portable ``concat_execute_ref``'s ``usat8(((x + offset) * gain + 2**14) >> 15)``, which differs."""
    g, off = gold, gold["offsets"]
    exact = wrapped = differs_from_ref = 0
    for i in range(len(off) - 1):
        ins, idx = _inputs(g, i)
        if g["status"][i]:
            with pytest.raises(HexnnError):
                run_op("QuantizedConcat_8", ins)
            exact += 1
            continue
        q, mn, mx = run_op("QuantizedConcat_8", ins)
        dev = g["codes"][off[i]:off[i + 1]].reshape(q.shape)
        exact += bool(mn.tobytes() == g["out_min"][i].tobytes() and mx.tobytes() == g["out_max"][i].tobytes()
                      and np.array_equal(q, dev))
        d0 = 0
        for k, x in zip(idx, ins[1:1 + idx.size]):
            d = x.shape[-1]
            dv, d0 = dev[..., d0:d0 + d], d0 + d
            o, gain = int(g["offset"][k]), min(int(g["gain"][k]), 32767)
            if o <= LANE_MAX_OFFSET:
                continue
            xi = x.astype(np.int64)
            z = ((xi + (o & 0xFFFF) + 0x8000) & 0xFFFF) - 0x8000
            assert np.array_equal(dv, np.clip(np.clip((z * gain * 2 + 0x8000) >> 16, -32768, 32767), 0, 255)), (i, k)
            differs_from_ref += not np.array_equal(dv, np.clip(((xi + o) * gain + (1 << 14)) >> 15, 0, 255))
            wrapped += 1
    assert exact == 305 == len(off) - 1 and wrapped == 129 and differs_from_ref >= 50, (exact, differs_from_ref)
