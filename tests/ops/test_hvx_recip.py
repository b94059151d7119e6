"""QuantizedRecip_8 against hexagon_nn's device code (op_recip.c ``recip_execute``, whole) under qemu-hexagon.

Golden cases written by ``tools/hvx/golden_hvx.py --only op_recip`` (issue 36): op_recip.c compiled unedited with
nnlib's own ``nn_graph.h``; 19 edge cases (an exact 0 on the float path, min 0 / max 0 with and without the zero
code, the zero code near either end, one side of zero missing, ranges without 0, sizes 1 to 640 around the
256-element switch and 128-byte vectors) and 300 random ones. Each case ran three times over stack bytes 0x00 /
0xFF / 0xC0 (``defined``: 1 where the runs agree) with the output range preset to 12345 / -12345.

The engine follows the device (ops/kernels/recip_div_device.py) except where the C reads what it never wrote:
``get_reciprocals_split_range`` / ``_continuous_range`` set ``inverses[i]`` only for ``float_val != 0`` and the
split skips the codes between its two ends, yet convert ``output_data[i] = round((inverses[i] - *output_min) /
out_step)`` for every i; a range excluding 0 from 256 elements takes none of recip_execute's three branches.
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
    meta = json.loads((GOLDEN / "recip.json").read_text())
    with np.load(GOLDEN / "recip.npz") as f:
        return meta, {k: f[k] for k in f.files}


def _s(v: float) -> np.ndarray:
    return np.array(v, F).reshape(1, 1, 1, 1)


def _never_written(x: np.ndarray, lo: F, hi: F) -> np.ndarray:
    """Elements whose table entry op_recip.c leaves unwritten, on the C's terms in float64 (the value ``q * step +
    min`` is 0 in float64 exactly when it is 0); table path (>= 256 elements) only."""
    x = x.astype(np.int64)
    step = float(F(F(hi - lo) / F(255.0)))
    zero = x * step + float(lo) == 0
    if not lo < 0 < hi:
        return zero
    qz = int(np.floor(float(F(F(-lo) / F(step))) + 0.5))
    return zero | ((x > x[x < qz].max(initial=0)) & (x < x[x > qz].min(initial=255)))


def test_recip_matches_device_code() -> None:
    """319 cases: the float32 range bit for bit and every code that reads what the op wrote (275 cases whole, 42
    with 140 elements reading a never-written entry); the 2 ranges excluding 0 from 256 elements leave the preset
    range and are refused. Every element the stack-pattern runs flag lies where the rule says nothing was written."""
    meta, g = _load()
    assert meta["nnlib_commit"].startswith("df7ad3c") and "qemu-hexagon" in meta and meta["random_cases"] >= 200
    assert len(g["hdr"]) == meta["cases"] == 319 and not g["status"].any()
    whole = partial = skipped = refused = flagged_elsewhere = 0
    for i, shp in enumerate(g["hdr"]):
        x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(shp)
        lo, hi = (F(v) for v in g["ranges"][i])
        dev = g["codes"][g["offsets"][i]:g["offsets"][i + 1]]
        flagged = g["defined"][g["offsets"][i]:g["offsets"][i + 1]] == 0
        if (g["out_min"][i], g["out_max"][i]) == (F(12345), F(-12345)):
            assert x.size >= 256 and not (lo <= 0 <= hi and lo < hi) and flagged.all()
            with pytest.raises(HexnnError, match="none of its three branches"):
                run_op("QuantizedRecip_8", [x, _s(lo), _s(hi)])
            refused += 1
            continue
        unset = _never_written(x.ravel(), lo, hi) if x.size >= 256 else np.zeros(x.size, bool)
        flagged_elsewhere += int((flagged & ~unset).sum())
        q, mn, mx = run_op("QuantizedRecip_8", [x, _s(lo), _s(hi)])
        assert q.shape == x.shape and q.dtype == np.uint8
        assert F(mn.ravel()[0]).tobytes() == g["out_min"][i].tobytes(), i
        assert F(mx.ravel()[0]).tobytes() == g["out_max"][i].tobytes(), i
        assert np.array_equal(q.ravel()[~unset], dev[~unset]), i
        whole += not unset.any()
        partial += bool(unset.any())
        skipped += int(unset.sum())
    assert (whole, partial, skipped, refused, flagged_elsewhere) == (275, 42, 140, 2, 0)


def test_recip_exact_zero_on_the_float_path() -> None:
    """[-1, 0.9921875] has step 1/128 exactly, so code 128 is 0: ``1 / +0`` is +Inf, the range's max is Inf and
    the out step Inf; code 128 gives ``round((Inf + 128) / Inf)`` = round(NaN), which the device's
    ``convert_df2uw`` makes 0xFFFFFFFF (byte 255), every finite reciprocal code 0 (device golden case 0)."""
    x = np.array([0, 127, 128, 129, 255], np.uint8).reshape(1, 1, 1, 5)
    q, mn, mx = run_op("QuantizedRecip_8", [x, _s(-1.0), _s(0.9921875)])
    assert q.ravel().tolist() == [0, 0, 255, 0, 0]
    assert (float(mn.ravel()[0]), float(mx.ravel()[0])) == (-128.0, np.inf)


def test_recip_range_without_zero_worked_by_hand() -> None:
    """[0.5, 4.0]: step 3.5/255; codes 0 and 255 are 0.5 and 4.0, reciprocals 2 and 0.25; the range [0, 2] (0 put
    in), out step 2/255: code 255 -> round(0.25 * 127.5) = round(31.875) = 32, code 0 -> 255."""
    x = np.array([0, 255], np.uint8).reshape(1, 1, 1, 2)
    q, mn, mx = run_op("QuantizedRecip_8", [x, _s(0.5), _s(4.0)])
    assert q.ravel().tolist() == [255, 32] and (float(mn.ravel()[0]), float(mx.ravel()[0])) == (0.0, 2.0)
