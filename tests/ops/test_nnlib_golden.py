"""The engine's kernels against hexagon_nn's own C code: golden cases written by tools/golden_nnlib.py (issue 19).

Each file in tests/data/golden/nnlib/ holds the cases of one harness row: the inputs and parameters given
to ``run_op`` and what nnlib's C computed (output codes and output min/max, float32). Every case must be
reproduced bit for bit, except in the rows listed in ``KNOWN_INEXACT`` with the fraction of exact cases
measured when they were last generated (the fraction may only go up).
"""
from __future__ import annotations

import functools
import pathlib

import pytest

from hexnn_import.ops.verification import verification
from hexnn_import.ops.verified_data import NNLIB
from hexnn_import.testing import golden

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "nnlib"
FILES = sorted(GOLDEN.glob("*.npz"))

replay = functools.lru_cache(maxsize=None)(golden.replay)

#: row file stem -> fraction of its golden cases the engine reproduces today (must not drop).
KNOWN_INEXACT: dict[str, float] = {}


def test_golden_files_present() -> None:
    """The golden set exists (tools/golden_nnlib.py --write regenerates it)."""
    assert len(FILES) >= 20, f"only {len(FILES)} golden files in {GOLDEN}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_engine_equals_nnlib_c(path: pathlib.Path) -> None:
    """Codes and output ranges equal to nnlib's C, case by case."""
    n, exact, first = replay(path)
    assert n > 0
    floor = KNOWN_INEXACT.get(path.stem)
    if floor is None:
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
        assert verification(op)["verified"] == ("nnlib-exact" if c == e else "nnlib-partial"), op


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
