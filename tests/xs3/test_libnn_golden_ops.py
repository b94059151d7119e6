"""hexnn_import.xs3's element-wise, pooling and padding kernels against XMOS lib_nn's own C, bit for bit.

``tests/data/golden/libnn/{add_elementwise,avgpool2d,avgpool2d_global,maxpool2d,pad,lookup8,
requantize_16_to_8}.npz`` hold inputs, parameters and the outputs of lib_nn's portable C (commit 96bd67c,
written by ``tools/golden_libnn_ops.py``; see the README there). Every case goes through the simulation and
must give lib_nn's output exactly; each file's case count is pinned so that no case is lost silently.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_add import AddParams, add_elementwise, add_params
from hexnn_import.xs3.kernels_misc import clamp_lut, lookup8, pad, requantize_16_to_8
from hexnn_import.xs3.kernels_pool import (avgpool2d, avgpool2d_global, avgpool2d_scale_shift, global_avg_params,
                                           maxpool2d)
from hexnn_import.xs3.window import Window

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "libnn"
#: cases per golden file, as tools/golden_libnn_ops.py --seed 1 writes them
COUNTS = {"add_elementwise": 58, "avgpool2d": 31, "avgpool2d_global": 44, "maxpool2d": 31, "pad": 18,
          "lookup8": 20, "requantize_16_to_8": 14}
#: cases every file must have of some modes (model layers, saturation, edges)
REQUIRED_MODES = {"add_elementwise": {"model": 3, "wrap": 1, "edge": 1, "sat": 1, "real": 1},
                  "avgpool2d_global": {"model": 1, "edge": 1, "sat": 1, "real": 1},
                  "avgpool2d": {"shape": 1, "max": 1, "min": 1}, "maxpool2d": {"shape": 1, "max": 1, "min": 1},
                  "pad": {"edge": 1}, "lookup8": {"clamp": 1, "all_codes": 1}, "requantize_16_to_8": {"all_codes": 1}}


@lru_cache(maxsize=None)
def load(kernel: str) -> tuple[tuple[dict[str, np.ndarray], dict[str, Any]], ...]:
    with np.load(GOLDEN / f"{kernel}.npz", allow_pickle=False) as z:
        cases: dict[int, dict[str, np.ndarray]] = {}
        for name in z.files:
            i, key = name.split("/", 1)
            cases.setdefault(int(i), {})[key] = z[name]
    out = []
    for i in sorted(cases):
        arrays = cases[i]
        meta = json.loads(str(arrays.pop("meta")))
        out.append((arrays, meta))
    return tuple(out)


def window(meta: dict[str, Any]) -> Window:
    return Window(*meta["window"])


def simulate(kernel: str, a: dict[str, np.ndarray], m: dict[str, Any]) -> np.ndarray:
    if kernel == "add_elementwise":
        return add_elementwise(a["x0"], a["x1"], AddParams(*(int(v) for v in a["params"])))
    if kernel == "avgpool2d":
        return avgpool2d(a["x"], window(m), tuple(m["out_hw"]))
    if kernel == "maxpool2d":
        return maxpool2d(a["x"], window(m), tuple(m["out_hw"]))
    if kernel == "avgpool2d_global":
        return avgpool2d_global(a["x"], m["bias"], m["scale"], m["shift"])
    if kernel == "pad":
        return pad(a["x"], *m["pads"], m["pad_value"])
    if kernel == "lookup8":
        return lookup8(a["x"], a["lut"])
    if kernel == "requantize_16_to_8":
        return requantize_16_to_8(a["x"])
    raise AssertionError(kernel)


@pytest.mark.parametrize("kernel", sorted(COUNTS))
def test_golden_file_present_with_all_cases(kernel: str) -> None:
    path = GOLDEN / f"{kernel}.npz"
    assert path.is_file(), f"missing golden file {path}: run tools/golden_libnn_ops.py <lib_nn oracle folder>"
    cases = load(kernel)
    assert len(cases) == COUNTS[kernel]
    modes: dict[str, int] = {}
    for _, m in cases:
        assert m["kernel"] == kernel
        modes[m["mode"]] = modes.get(m["mode"], 0) + 1
    for mode, least in REQUIRED_MODES[kernel].items():
        assert modes.get(mode, 0) >= least, (kernel, mode, modes)


@pytest.mark.parametrize("kernel", sorted(COUNTS))
def test_golden_bit_exact(kernel: str) -> None:
    cases = load(kernel)
    checked = 0
    for i, (a, m) in enumerate(cases):
        y = simulate(kernel, a, m)
        assert y.dtype == a["y"].dtype, (kernel, i)
        assert y.shape == a["y"].shape, (kernel, i, y.shape, a["y"].shape)
        bad = np.flatnonzero(y.ravel() != a["y"].ravel())
        assert bad.size == 0, (f"{kernel} case {i} ({m['mode']}): {bad.size} of {y.size} outputs differ from "
                               f"lib_nn, first at {bad[0]}: {y.ravel()[bad[0]]} vs {a['y'].ravel()[bad[0]]}")
        checked += 1
    assert checked == COUNTS[kernel]


def test_golden_pristine_build_agrees() -> None:
    """These kernels do not touch the patched vlsat_single_s16: unmodified lib_nn gives the same outputs."""
    for kernel in COUNTS:
        assert all(m["pristine_equal"] for _, m in load(kernel)), kernel


def test_golden_outputs_saturate_at_both_ends() -> None:
    """The saturating cases really reach -128 and 127 (so the clamps are tested)."""
    for kernel in ("add_elementwise", "avgpool2d", "avgpool2d_global"):
        ys = np.concatenate([a["y"].ravel() for a, _ in load(kernel)])
        assert ys.min() == -128 and ys.max() == 127, kernel


def test_golden_avgpool_paths() -> None:
    """2x2/2 windows (lib_nn's avgpool2d_2x2) and other 2x2 windows (avgpool2d_gen with scale 1, shift 2)."""
    windows = {tuple(m["window"]) for _, m in load("avgpool2d")}
    assert (2, 2, 0, 0, 2, 2) in windows and (2, 2, 0, 0, 1, 1) in windows
    assert avgpool2d_scale_shift(Window(2, 2, 0, 0, 2, 2)) == avgpool2d_scale_shift(Window(2, 2)) == (1, 2)
    assert avgpool2d_scale_shift(Window(3, 3)) == (114, 10)  # round(2**10 / 9)


def test_golden_model_cases_use_this_projects_parameters() -> None:
    """The model cases' parameters are what add_params / global_avg_params give for the recorded quantization."""
    for a, m in load("add_elementwise"):
        if m["mode"] in ("model", "real"):
            assert np.array_equal(add_params(*m["quant"]).as_array(), a["params"]), m
    for a, m in load("avgpool2d_global"):
        if m["mode"] in ("model", "real"):
            pix = int(np.prod(a["x"].shape[1:3]))
            assert global_avg_params(*m["quant"], pix) == (m["bias"], m["scale"], m["shift"]), m


def test_preconditions_raise() -> None:
    """What lib_nn asserts on (or leaves undefined) is an XS3Error, not a wrong answer."""
    x = np.zeros((4, 4, 6), np.int8)  # 6 channels: not a multiple of 4
    with pytest.raises(XS3Error):
        maxpool2d(x, Window(2, 2, 0, 0, 2, 2), (2, 2))
    with pytest.raises(XS3Error):
        avgpool2d(x, Window(2, 2, 0, 0, 2, 2), (2, 2))
    with pytest.raises(XS3Error):
        pad(x, 1, 1, 1, 1, 0)
    x4 = np.zeros((4, 4, 4), np.int8)
    with pytest.raises(XS3Error):  # padding
        avgpool2d(x4, Window(3, 3, -1, -1, 1, 1), (4, 4))
    with pytest.raises(XS3Error):  # reads past the image
        avgpool2d(x4, Window(3, 3, 0, 0, 1, 1), (3, 3))
    with pytest.raises(XS3Error):
        add_elementwise(x4, x4, AddParams(0, 1, 0, 1, 0, 0))  # out_shr 0: 1 << -1 in the C
    with pytest.raises(XS3Error):
        add_elementwise(x4, x4, AddParams(0, 1, 0, 1, 0, 32))
    with pytest.raises(XS3Error):
        avgpool2d_global(x4, 0, 1, 32)
    with pytest.raises(XS3Error):
        add_params(1.0, 0, 1e7, 0, 1e-1, 0)  # ratio 1e8: no int16 multiplier holds it
    with pytest.raises(XS3Error):
        global_avg_params(200.0, 0, 1.0, 0, 1)  # multiplier 200 > 127
    with pytest.raises(XS3Error):
        clamp_lut(5, 4)


def test_clamp_lut_through_lookup8() -> None:
    """clamp_lut indexed as lookup8 reads it (the code's byte) clamps every int8 code."""
    codes = np.arange(-128, 128, dtype=np.int8)
    for lo, hi in [(-128, 127), (0, 127), (-20, 35), (0, 0)]:
        assert np.array_equal(lookup8(codes, clamp_lut(lo, hi)), np.clip(codes, lo, hi))


def test_the_op_listing_counts_these_golden_cases_and_every_kernel_of_the_table() -> None:
    """Every XS3 kernel name (the table's and the simulated ones) has a golden file of lib_nn's C and every
    golden file names one of them; `hexnn-import ops` lists these as lib_nn-exact with these files' case counts."""
    from hexnn_import.xs3.verification import verification
    from hexnn_import.xs3.kernel_table import KERNELS, SIMULATED

    assert not set(KERNELS) & set(SIMULATED)
    assert {p.stem for p in GOLDEN.glob("*.npz")} == set(KERNELS) | set(SIMULATED)
    for kernel, n in COUNTS.items():
        assert verification(kernel) == {"verified": "libnn-exact", "libnn_cases": n}, kernel
