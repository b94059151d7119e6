"""QuantizedResizeBilinear_8 against hexagon_nn's device code (op_resizebilinear.c) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_resize`` (issue 36): ``resizebilinear_qu8_execute`` run
whole, a quarter of the random cases on each of its paths (HVX ``resizebilinear_2x``, ``resizebilinear_4x``, the
align-corners ``resizebilinear_hvx``, the portable ``resizebilinear_general``) and the edge cases of
``tools/hvx/op_resize.py`` ``EDGES``. The engine follows the device's dispatch and each path's arithmetic
(ops/nnlib_resize_flat.py); the path is worked out here from op_resizebilinear.c's tests, not by the engine.
"""
from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from hexnn_import.ops.registry import run_op

from hexnn_import.errors import DeviceDefectWarning, HexnnError

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "hvx"


@pytest.fixture(scope="module")
def gold() -> dict[str, np.ndarray]:
    with np.load(GOLDEN / "resize.npz") as f:
        return {k: f[k] for k in f.files}


def _path(shape: np.ndarray, h_out: int, w_out: int, align: bool) -> str:
    """The path ``resizebilinear_qu8_execute`` takes (its tests, in its order)."""
    _, h, w, d = (int(v) for v in shape)
    pow2 = lambda v: v & (v - 1) == 0
    if not align and w_out == 2 * w and h_out == 2 * h and pow2(d) and (d >= 128 or pow2(w)):
        return "2x"
    if not align and w_out == 4 * w and h_out == 4 * h and d < 32 and pow2(d):
        return "4x"
    if (h_out, w_out) == (h, w):
        return "copy"
    if align and w * 4 == w_out and (w - 1) % 3 == 0 and w * d < 384:
        return "hvx"
    return "general"


def _inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    x = g["data"][g["in_off"][i]:g["in_off"][i + 1]].reshape(g["shape"][i])
    ins = [x, np.array([g["h_out"][i], g["w_out"][i]], np.int32).reshape(1, 1, 1, 2),
           g["in_min"][i].reshape(1, 1, 1, 1), g["in_max"][i].reshape(1, 1, 1, 1),
           np.array(g["align"][i], np.int32).reshape(1, 1, 1, 1)]
    return ins[:g["n_inputs"][i]]


def test_provenance(gold: dict[str, np.ndarray]) -> None:
    """The golden file names the nnlib commit, the functions run, the tools; >= 200 random cases."""
    meta = json.loads((GOLDEN / "resize.json").read_text())
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and "clang" in meta
    assert {"resizebilinear_2x", "resizebilinear_4x", "resizebilinear_hvx"} <= set(meta["functions"])
    assert meta["random_cases"] >= 200 and len(gold["offsets"]) - 1 == meta["cases"] == 325


def test_resize_follows_the_device(gold: dict[str, np.ndarray]) -> None:
    """315 of 325 cases bit-exact, every path; the device's failures refused; the output range is the input range.

    The other 10 are the 4x path where ``(w_in - 1) * depth`` is a multiple of 128: ``Q1 =
    q6op_Q_vsetq2_R(wxd - d_in)`` sets every lane, so the last pixel's right neighbour is the next bytes in
    memory; the engine follows that (the next row's first pixel) but cannot know the bytes after the input tensor,
    which the tensor's last row reads (the harness's zero padding here): only the output rows interpolated from
    the last input row of the last batch differ, and only in their last three columns."""
    g, off = gold, gold["offsets"]
    exact, seen = 0, {"2x": 0, "4x": 0, "copy": 0, "hvx": 0, "general": 0, "refused": 0, "past_tensor": 0}
    for i in range(len(off) - 1):
        shape = [int(v) for v in g["shape"][i]]
        h_out, w_out = int(g["h_out"][i]), int(g["w_out"][i])
        path = _path(g["shape"][i], h_out, w_out, bool(g["align"][i]) and g["n_inputs"][i] == 5)
        if g["status"][i]:
            assert path == "hvx" and shape[3] > 2, i
            with pytest.raises(HexnnError, match="weight_generation"):
                run_op("QuantizedResizeBilinear_8", _inputs(g, i))
            seen["refused"] += 1
            exact += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeviceDefectWarning)
            q, mn, mx = run_op("QuantizedResizeBilinear_8", _inputs(g, i))
        assert mn.tobytes() == g["out_min"][i].tobytes() == g["in_min"][i].tobytes(), i
        assert mx.tobytes() == g["out_max"][i].tobytes() == g["in_max"][i].tobytes(), i
        d = q.astype(np.int16) - g["codes"][off[i]:off[i + 1]].reshape(q.shape)
        seen[path] += 1
        if path == "4x" and (shape[2] - 1) * shape[3] % 128 == 0:
            seen["past_tensor"] += 1
            rows = np.arange(h_out) > 4 * (shape[1] - 2)     # reading the last input row
            assert not d[:-1].any() and not d[-1][~rows].any() and not d[-1][:, :-3].any(), i
            exact += not d.any()
            continue
        assert not d.any(), (i, path)
        exact += 1
    assert exact == 315 and len(off) - 1 == 325 and seen["past_tensor"] == 10 and seen["refused"] == 4
    assert min(seen.values()) >= 2 and seen["hvx"] >= 75 and seen["general"] >= 75


def test_device_crash_refused() -> None:
    """Align corners, 4x width, one output row from two input rows: ``resizebilinear_hvx``'s second thread
    (``hblock = (h_out + 1) / 2 = 1``) gets no row and ``memcpy``s to a NULL ``pOut`` (a segmentation fault
    under qemu, so not in the golden file): refused, naming the node and op."""
    x = np.zeros((1, 2, 4, 1), np.uint8)
    size = np.array([1, 16], np.int32).reshape(1, 1, 1, 2)
    with pytest.raises(HexnnError, match="QuantizedResizeBilinear_8.*NULL"):
        run_op("QuantizedResizeBilinear_8", [x, size, np.float32(-1), np.float32(1), np.int32(1)])
