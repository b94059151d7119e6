"""The lib_nn golden conv cases (``tests/data/golden/libnn/<kernel>.npz``, written by ``tools/golden_libnn*.py``)
as the XS3 tests read them: case ``i`` holds ``i/x``, ``i/k``, ``i/bso``, ``i/y`` and ``i/meta`` (JSON)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from hexnn_import.xs3.window import Window


@dataclass(frozen=True)
class GoldenCase:
    """One golden case: input, weights, BSO, lib_nn's output and the case's description."""

    x: np.ndarray
    k: np.ndarray
    bso: np.ndarray
    y: np.ndarray
    meta: dict[str, Any]

    @property
    def window(self) -> Window:
        w = self.meta.get("window")
        if w is None:  # conv2d_1x1
            return Window(1, 1)
        return Window(*w["shape"], *w["start"], *w["stride"])

    @property
    def out_hw(self) -> tuple[int, int]:
        return tuple(self.meta["out_hw"])  # type: ignore[return-value]


@lru_cache(maxsize=None)
def load_cases(path: Path) -> tuple[GoldenCase, ...]:
    """Every case of one golden file, in order (AssertionError naming the tool when the file is missing)."""
    assert path.is_file(), f"missing golden data {path} (the tools/golden_libnn*.py that writes it)"
    with np.load(path, allow_pickle=False) as z:
        n = sum(1 for name in z.files if name.endswith("/meta"))
        return tuple(GoldenCase(z[f"{i}/x"], z[f"{i}/k"], z[f"{i}/bso"], z[f"{i}/y"],
                                json.loads(str(z[f"{i}/meta"]))) for i in range(n))
