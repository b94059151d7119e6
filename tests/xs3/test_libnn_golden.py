"""hexnn_import.xs3 against XMOS lib_nn's own C kernels, bit for bit, on golden cases.

``tests/data/golden/libnn/<kernel>.npz`` hold inputs, kernel-layout weights,
BSO tensors, windows and the outputs of lib_nn's portable C (commit 96bd67c,
written by ``tools/golden_libnn.py``; see the README there): random BSO
parameters over their whole ranges (shift2 from 0), small shifts and biases,
saturating accumulators (padded windows included) for the kernels whose C
saturates step by step, and layers of the bundled models. Every case goes
through the literal kernel; every case the fast form (xs3/kernels_fast.py) accepts
goes through it too; both must give lib_nn's output exactly.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hexnn_import.testing.libnn_golden import GoldenCase, load_cases
from hexnn_import.xs3.kernels_fast import KernelCall, fast_call
from hexnn_import.xs3.kernels_conv import conv2d_1x1, conv2d_deep, conv2d_shallowin
from hexnn_import.xs3.kernels_depthwise import conv2d_depthwise
from hexnn_import.xs3.kernels_fc import fully_connected_16, fully_connected_8
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "libnn"
KERNELS = ["conv2d_deep", "conv2d_shallowin", "conv2d_1x1", "conv2d_depthwise", "fully_connected_8",
           "fully_connected_16"]


Case = GoldenCase


def load(kernel: str) -> tuple[Case, ...]:
    return load_cases(GOLDEN / f"{kernel}.npz")


def run_literal(c: Case) -> np.ndarray:
    kernel, zp = c.meta["kernel"], c.meta["zero_point"]
    if kernel == "conv2d_deep":
        return conv2d_deep(c.x, c.k, c.bso, zp, c.window, c.out_hw)
    if kernel == "conv2d_shallowin":
        return conv2d_shallowin(c.x, c.k, c.bso, zp, c.window, c.out_hw)
    if kernel == "conv2d_depthwise":
        return conv2d_depthwise(c.x, c.k, c.bso, zp, c.window, c.out_hw)
    if kernel == "conv2d_1x1":
        return conv2d_1x1(c.x, c.k, c.bso)
    return (fully_connected_8 if kernel == "fully_connected_8" else fully_connected_16)(c.x, c.k, c.bso)


def kernel_call(c: Case) -> KernelCall:
    return KernelCall(c.meta["kernel"], c.k, c.bso, c.meta["zero_point"], c.window, c.x.shape, c.y.shape,
                      rows=c.x.shape[0])


def mismatches(cases: tuple[Case, ...], run: Any) -> list[str]:
    """Descriptions of the cases whose output differs from lib_nn's (with the largest difference)."""
    bad = []
    for i, c in enumerate(cases):
        got = run(c)
        if got is None:
            continue
        assert got.shape == c.y.shape and got.dtype == c.y.dtype, (i, got.shape, got.dtype)
        if not np.array_equal(got, c.y):
            d = int(np.abs(got.astype(np.int64) - c.y.astype(np.int64)).max())
            bad.append(f"case {i} ({c.meta['mode']}, {c.meta['source']}): max |diff| {d}")
    return bad


@pytest.mark.parametrize("kernel", KERNELS)
def test_literal_kernel_equals_lib_nn(kernel: str) -> None:
    cases = load(kernel)
    assert len(cases) >= 48
    assert not mismatches(cases, run_literal)


@pytest.mark.parametrize("kernel", [k for k in KERNELS if k != "fully_connected_16"])
def test_fast_form_equals_lib_nn(kernel: str) -> None:
    used = []

    def run_fast(c: Case) -> np.ndarray | None:
        fast = fast_call(kernel_call(c), DEFAULT_OPTIONS)
        if fast is not None:
            used.append(c.meta["mode"])
            return fast.run(c.x)
        return None

    cases = load(kernel)
    assert not mismatches(cases, run_fast)
    # every case whose accumulators cannot saturate has a fast form: random BSO modes and the model layers
    assert {"full", "full0", "real", "nz", "model"} <= set(used) or kernel == "fully_connected_8" and len(used) >= 40
    assert len(used) >= 40, len(used)


def test_cases_reach_what_lib_nn_defines() -> None:
    """The golden data cover shift2 below 8, tiny negative results, lib_nn's order of saturating steps."""
    cases = [c for k in KERNELS for c in load(k)]
    shift2 = np.concatenate([c.bso[:, 6].ravel() for c in cases if c.meta["mode"] == "full0"])
    assert (shift2 < 8).sum() >= 50
    for kernel in ("conv2d_deep", "conv2d_shallowin", "conv2d_1x1"):
        assert sum(c.meta["order_sensitive"] for c in load(kernel)) >= 5, kernel  # the C's step order matters
    assert sum(not c.meta["pristine_equal"] for c in cases) >= 20  # where pristine lib_nn's int32 rounding wraps
    assert {c.meta["mode"] for c in load("conv2d_deep")} >= {"full", "full0", "real", "nz", "sat", "satx", "satpad",
                                                            "model"}


def test_ops_json_libnn_figures_are_current() -> None:
    """``ops --json`` reports each lib_nn kernel's golden cases and how many the literal kernel reproduces."""
    from hexnn_import.xs3.verification import LIBNN, verification

    for kernel in KERNELS:
        cases = load(kernel)
        assert LIBNN[kernel] == (len(cases), len(cases) - len(mismatches(cases, run_literal))), kernel
        assert verification(kernel)["verified"] == "libnn-exact"
