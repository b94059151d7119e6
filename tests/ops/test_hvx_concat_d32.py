"""QuantizedConcat_8_d32 against hexagon_nn's device code (op_concat_d32.c ``concat_execute_hvx``) under
qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_concat_d32`` (issue 36): op_concat_d32.c compiled whole
and unedited with nnlib's own ``nn_graph.h``, its registered ``concat_check`` / ``concat_execute_hvx`` run on d32
inputs each with its own depth padding: the merged range (zero-fixed by ``adjust_minmax_for_zero``), the
truncated per-input offset (1/128 codes) and gain, the asm ``scalemem_d32_hvx`` and the intrinsics'
``do_scale_ub`` copies. It is not the flat QuantizedConcat_8's arithmetic (op_concat.c), which the engine used
before: on the device's own output range that would give other codes in most of these cases.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.kernels.concat_split import requantize_for_concat
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"
F = np.float32


def _load() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads((GOLDEN / "concat_d32.json").read_text())
    with np.load(GOLDEN / "concat_d32.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _x(g: dict[str, np.ndarray], j: int) -> np.ndarray:
    return g["x"][g["x_off"][j]:g["x_off"][j + 1]].reshape(g["in_shape"][j])


def _inputs(g: dict[str, np.ndarray], i: int) -> list:
    k = np.flatnonzero(g["in_case"] == i)
    return [np.full((1, 1, 1, 1), int(g["dim"][i]), np.int32), *(to_d32(_x(g, j)) for j in k),
            *(np.array(g["in_range"][j, 0], F).reshape(1, 1, 1, 1) for j in k),
            *(np.array(g["in_range"][j, 1], F).reshape(1, 1, 1, 1) for j in k)]


def _dev(g: dict[str, np.ndarray], i: int) -> np.ndarray:
    return g["codes"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])


def test_concat_d32_equals_device_code() -> None:
    """Every one of the 322 nodes (22 edge, 300 random; 1-5 inputs along dimension 0-3, depths 1-69 with 0-31
    channels of padding before): codes and the float32 output range bit for bit; the 2 the device refuses
    (dimension 4, shapes that do not match) the engine refuses."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert "concat_execute_hvx" in meta["functions"] and meta["source"].endswith("op_concat_d32.c")
    assert len(g["dim"]) == meta["cases"] == 322
    for i in range(len(g["dim"])):
        if g["status"][i]:
            with pytest.raises(HexnnError):
                run_op("QuantizedConcat_8_d32", _inputs(g, i))
            continue
        q, mn, mx = run_op("QuantizedConcat_8_d32", _inputs(g, i))
        np.testing.assert_array_equal(q.logical(), _dev(g, i), err_msg=f"case {i}")
        assert mn.astype(F).tobytes() == g["out_min"][i].tobytes(), i
        assert mx.astype(F).tobytes() == g["out_max"][i].tobytes(), i
    assert int((g["status"] != 0).sum()) == 2


def test_concat_d32_set_tells_the_device_from_the_flat_op() -> None:
    """The set reaches what the device does differently from op_concat.c: merged ranges the zero fix moves, codes
    op_concat.c's rounding would give otherwise (on the device's own range), every dimension, padded inputs
    (worked by hand: tests/ops/test_d32_hand.py)."""
    _, g = _load()
    ok = np.flatnonzero(g["status"] == 0)
    moved, other = 0, 0
    for i in ok:
        k = np.flatnonzero(g["in_case"] == i)
        lo, hi = min(0.0, min(g["in_range"][k, 0])), max(g["in_range"][k, 1])
        moved += (F(lo), F(hi)) != (g["out_min"][i], g["out_max"][i])
        flat = [requantize_for_concat(_x(g, j), *g["in_range"][j], g["out_min"][i], g["out_max"][i]) for j in k]
        other += not np.array_equal(np.concatenate(flat, axis=int(g["dim"][i])), _dev(g, i))
    assert moved > 200 and other > 200
    assert set(g["dim"][ok].tolist()) == {0, 1, 2, 3} and (g["in_before"] > 0).sum() > 300
