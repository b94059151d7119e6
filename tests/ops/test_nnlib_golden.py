"""The engine's kernels against hexagon_nn's own C code: golden cases written by tools/golden_nnlib.py (issue 19).

Each file in tests/data/golden/nnlib/ holds the cases of one harness row: the inputs and parameters given
to ``run_op`` and what nnlib's C computed (output codes and output min/max, float32). Every case must be
reproduced bit for bit, except in the rows listed in ``KNOWN_INEXACT`` with the fraction of exact cases
measured when they were last generated (the fraction may only go up), and the rows in ``DEVICE_PATH``, where the
engine follows nnlib's device code (issue 36) instead of the portable C the oracle compiles: there exactly the
listed cases differ, each for the named reason (the device's own answer on them is checked by the
tests/ops/test_hvx_*.py replays).
"""
from __future__ import annotations

import functools
import pathlib

import pytest

from hexnn_import.ops.verification import verification
from hexnn_import.ops.verified_data import NNLIB
from hexnn_import.ops.verified_device import DEVICE
from hexnn_import.testing import golden

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "nnlib"
FILES = sorted(GOLDEN.glob("*.npz"))

replay = functools.lru_cache(maxsize=None)(golden.replay)

#: row file stem -> fraction of its golden cases the engine reproduces today (must not drop).
KNOWN_INEXACT: dict[str, float] = {}

_HALF_DOWN = ("op_quantize.c quantize_execute_opt / autoquantize_execute_opt (asm quantize_floats_to_8b_asm): "
              "its truncated fixed point gives one code less at and just above a half")
#: row file stem -> (the cases that differ from nnlib's portable C because the engine follows the device code,
#: the device path and why; a case listed in the third item differs by more than one code, for the reason given)
DEVICE_PATH: dict[str, tuple[tuple[int, ...], str, dict[int, str]]] = {
    "Quantize": ((4, 12, 16, 18, 19), _HALF_DOWN, {}),
    "requant_Quantize_ref_device_casts_4_D": (
        (3, 10, 13, 16, 17, 18, 19, 21, 23), _HALF_DOWN,
        {10: "3e38 over [0, 2.44]: the asm's shift wraps far inputs (code 92, the C saturates to 255)"}),
    "AutoQuantize": ((4, 16, 18), _HALF_DOWN, {}),
    "extra_QuantizedPRelu_8_ref": (
        (1, 4, 5, 6, 7, 18, 19), "op_prelu.c prelu_execute_hvx (HVX): below the zero code whole vectors multiply "
        "by the 8-bit frac >> 8, one code under the portable 16-bit formula",
        {4: "a channel's alpha = 1: its uint16 frac wraps to 0 on the device", 18: "as case 4"}),
    "QuantizedConcat_8_ref": (
        (3, 5, 19, 21), "op_concat.c concat_execute_asm (asm memconvert_hvx): an input offset above 32512 wraps in "
        "signed 16-bit lanes", {3: "the wrap", 5: "the wrap", 19: "the wrap", 21: "the wrap"}),
    "requant_AutoQuantize_ref_4_D": ((2, 3, 4, 11, 13, 15, 18, 21, 22), _HALF_DOWN + "; min -0.0 without negatives",
                                     {}),
    "QuantizedSoftmax_8_ref": (
        (6, 9, 13, 14, 17, 18, 23), "op_softmax_d32.c softmax_flat_execute: the depth-2 table (fused multiply-adds) "
        "and the HVX loops' fixed-point 2**x, sums and reciprocal, one code off the portable float expf", {}),
    "extra_QuantizedResizeBilinear_8": (
        (14,), "op_resizebilinear.c resizebilinear_general as built for the device: clang contracts "
        "linear_interpolate's s + (e - s) * t into one fused multiply-add (one rounding; the x86 oracle rounds twice)",
        {}),
}


def test_golden_files_present() -> None:
    """The golden set exists (tools/golden_nnlib.py --write regenerates it)."""
    assert len(FILES) >= 20, f"only {len(FILES)} golden files in {GOLDEN}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_engine_equals_nnlib_c(path: pathlib.Path) -> None:
    """Codes and output ranges equal to nnlib's C, case by case."""
    n, exact, first = replay(path)
    assert n > 0
    floor = KNOWN_INEXACT.get(path.stem)
    if path.stem in DEVICE_PATH:
        listed, _, far = DEVICE_PATH[path.stem]
        diffs = golden.case_differences(path)
        differ = tuple(i for i, d in enumerate(diffs) if d is not None)
        assert differ == listed, f"{path.stem}: cases {differ} differ from the C, expected the device's {listed}"
        for i in differ:
            assert (i in far) != ("max code diff 1," in str(diffs[i])), diffs[i]
    elif floor is None:
        assert exact == n, f"{path.stem}: {exact}/{n} bit-exact; first difference: {first}"
    else:
        assert exact / n >= floor, f"{path.stem}: {exact}/{n} bit-exact, below the recorded {floor:.2f}; {first}"


def test_ops_json_figures_are_current() -> None:
    """``ops --json``'s nnlib figures (ops/verified_data.py) equal a fresh replay of the golden files
    (``tools/golden_nnlib.py --summarize`` rewrites them), and its labels follow from them."""
    fresh: dict[str, tuple[int, int]] = {}
    for path in FILES:
        n, exact, _ = replay(path)
        for op in golden.golden_ops(path):
            c, e = fresh.get(op, (0, 0))
            fresh[op] = (c + n, e + exact)
    assert NNLIB == fresh
    for op, (c, e) in fresh.items():
        want = "nnlib-exact" if c == e else "nnlib-partial"
        if c != e and op in DEVICE:   # the engine follows the device there (issue 36)
            want = "device-exact" if DEVICE[op][1] == DEVICE[op][2] else "device-partial"
        assert verification(op)["verified"] == want, op


#: the rows whose ops take the compiled paths (hexnn_import.ops.compiled) on a single run once they are warm:
#: the supernode output stage, per-channel extremes, the add's table look-up
COMPILED_ROWS = [p for p in FILES if any(k in p.stem.lower() for k in ("supernode", "add"))]


@pytest.mark.parametrize("compiled_on", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("path", COMPILED_ROWS, ids=[p.stem for p in COMPILED_ROWS])
def test_compiled_and_numpy_paths_equal_nnlib_c(path: pathlib.Path, compiled_on: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The same golden cases with the compiled paths forced on (numba loaded) and off: both bit-exact."""
    from hexnn_import.ops import compiled

    if compiled_on:
        compiled.warm()
        assert compiled.available(), "numba is in the test extra"
    else:
        monkeypatch.setenv(compiled.COMPILED_ENV, "0")
    n, exact, first = golden.replay(path)
    assert n > 0 and exact == n, f"{path.stem}: {exact}/{n} bit-exact; first difference: {first}"
