"""Running agreement statistics of one tensor over many samples.

The metrics of :mod:`hexnn_import.compare.metrics` are computed once over all
samples (as if the samples were concatenated): SQNR and cosine from summed
energies, max |diff| as the largest over samples. The LSB figures use each
sample's own step, since a float model's run-time ranges give every run its
own step. For outputs (``spread=True``) it also keeps whether each side was the same on every sample
(:mod:`.degenerate`): the fingerprint of its first sample (:func:`fingerprint`) and whether a later one differed.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hexnn_import.compare import metrics


def fingerprint(arr: np.ndarray) -> str:
    """A digest of an array's shape and values (as float64): equal digests, equal arrays."""
    a = np.ascontiguousarray(arr, dtype=np.float64)
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(a.shape).encode())
    h.update(a.tobytes())
    return h.hexdigest()


@dataclass
class TensorStats:
    """Sums over samples for one (reference, tested) tensor pair."""

    name: str
    signal: float = 0.0
    noise: float = 0.0
    dot: float = 0.0
    test_sq: float = 0.0
    max_abs: float = 0.0
    max_lsb: float | None = None
    off: int = 0  # elements off by more than 1 LSB (only where a step is known)
    lsb_count: int = 0  # elements that had a step
    count: int = 0
    samples: int = 0
    #: ``spread`` tracking: each side's first sample's :func:`fingerprint` (None: not tracked)
    #: and whether a later sample differed from it
    ref_first: str | None = None
    ref_varies: bool = False
    test_first: str | None = None
    test_varies: bool = False

    def update(self, ref: np.ndarray, test: np.ndarray, step: float | None, spread: bool = False) -> None:
        """Add one sample; ``step`` is the tested tensor's LSB in real units (None for float tensors);
        ``spread``: also track whether each side varies across samples (outputs)."""
        r = np.asarray(ref, dtype=np.float64)
        t = np.asarray(test, dtype=np.float64)
        d = r - t
        self.signal += float(np.sum(r * r))
        self.noise += float(np.sum(d * d))
        self.dot += float(np.sum(r * t))
        self.test_sq += float(np.sum(t * t))
        self.max_abs = max(self.max_abs, metrics.max_abs_diff(r, t))
        self.count += r.size
        self.samples += 1
        if step is not None and step > 0:
            self.max_lsb = max(self.max_lsb or 0.0, metrics.max_diff_lsb(r, t, step))
            self.off += metrics.count_off_by_more_than(r, t, step)
            self.lsb_count += r.size
        if spread:
            self._track(r, t)

    def _track(self, r: np.ndarray, t: np.ndarray) -> None:
        fr, ft = fingerprint(r), fingerprint(t)
        if self.ref_first is None:
            self.ref_first, self.test_first = fr, ft
            return
        self.ref_varies = self.ref_varies or fr != self.ref_first
        self.test_varies = self.test_varies or ft != self.test_first

    @property
    def ref_constant(self) -> bool | None:
        """The reference was the same on every sample (None: not tracked, or fewer than two samples)."""
        return None if self.ref_first is None or self.samples < 2 else not self.ref_varies

    @property
    def test_constant(self) -> bool | None:
        """The tested tensor was the same on every sample (as :attr:`ref_constant`)."""
        return None if self.test_first is None or self.samples < 2 else not self.test_varies

    @property
    def sqnr_db(self) -> float:
        return metrics.sqnr_from_sums(self.signal, self.noise)

    @property
    def cosine(self) -> float:
        return metrics.cosine_from_sums(self.dot, self.signal, self.test_sq)

    @property
    def frac_off(self) -> float | None:
        """Share of elements off by more than 1 LSB, or None without a step."""
        return self.off / self.lsb_count if self.lsb_count else None

    def to_json(self) -> dict[str, Any]:
        """The figures as JSON-ready values (an infinite SQNR is ``null`` with ``exact: true``)."""
        sq = self.sqnr_db
        return {"name": self.name, "sqnr_db": sq if math.isfinite(sq) else None, "exact": self.noise == 0.0,
                "cosine": self.cosine, "max_abs_diff": self.max_abs, "max_diff_lsb": self.max_lsb,
                "frac_off_gt_1lsb": self.frac_off, "elements": self.count, "samples": self.samples}
