"""Agreement metrics between a reference tensor and a tested one, as pure functions.

Every function takes real-valued arrays (already dequantized) of the same
shape, ``ref`` first, and returns a Python float. The ``*_from_sums``
variants compute the same figure from running sums, so that
:class:`hexnn_import.compare.tensor_stats.TensorStats` can aggregate over many
samples without keeping them; each array function is written on top of its
``*_from_sums`` twin, so the two can never disagree.

Conventions (Polygraphy's comparator keeps the same ones):

* SQNR is ``10 log10(sum ref^2 / sum (ref - test)^2)`` in dB: +inf when the
  tensors are identical, -inf when the reference is all zero and the test is not;
* cosine similarity is 1.0 when both tensors are all zero, 0.0 when only one is;
* an "LSB" is one quantization step of the tested tensor in real units;
  "off by more than 1 LSB" allows :data:`LSB_MARGIN` of a step for the float
  rounding of two runtimes' scales.
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

#: fraction of a step that still counts as "within": absorbs float32 vs float64 scales
LSB_MARGIN = 1e-3


def _pair(ref: npt.ArrayLike, test: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r = np.asarray(ref, dtype=np.float64)
    t = np.asarray(test, dtype=np.float64)
    if r.shape != t.shape:
        raise ValueError(f"reference shape {list(r.shape)} differs from tested shape {list(t.shape)}")
    return r, t


def sqnr_from_sums(signal: float, noise: float) -> float:
    """SQNR in dB from the signal energy ``sum ref^2`` and the noise energy ``sum (ref-test)^2``."""
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)


def sqnr_db(ref: npt.ArrayLike, test: npt.ArrayLike) -> float:
    """Signal-to-quantization-noise ratio of ``test`` against ``ref`` in dB."""
    r, t = _pair(ref, test)
    return sqnr_from_sums(float(np.sum(r * r)), float(np.sum((r - t) ** 2)))


def cosine_from_sums(dot: float, ref_sq: float, test_sq: float) -> float:
    """Cosine similarity from ``sum ref*test``, ``sum ref^2`` and ``sum test^2``."""
    if ref_sq == 0.0 and test_sq == 0.0:
        return 1.0
    if ref_sq == 0.0 or test_sq == 0.0:
        return 0.0
    return float(np.clip(dot / math.sqrt(ref_sq * test_sq), -1.0, 1.0))


def cosine_similarity(ref: npt.ArrayLike, test: npt.ArrayLike) -> float:
    """Cosine of the angle between the two tensors seen as flat vectors."""
    r, t = _pair(ref, test)
    return cosine_from_sums(float(np.sum(r * t)), float(np.sum(r * r)), float(np.sum(t * t)))


def max_abs_diff(ref: npt.ArrayLike, test: npt.ArrayLike) -> float:
    """Largest ``|ref - test|`` in real units (0.0 for empty tensors)."""
    r, t = _pair(ref, test)
    return float(np.max(np.abs(r - t))) if r.size else 0.0


def max_diff_lsb(ref: npt.ArrayLike, test: npt.ArrayLike, step: float) -> float:
    """Largest ``|ref - test|`` in quantization steps of size ``step``."""
    if step <= 0:
        raise ValueError(f"a quantization step must be positive, got {step}")
    return max_abs_diff(ref, test) / step


def count_off_by_more_than(ref: npt.ArrayLike, test: npt.ArrayLike, step: float, lsbs: float = 1.0) -> int:
    """How many elements differ by more than ``lsbs`` steps (plus :data:`LSB_MARGIN`)."""
    if step <= 0:
        raise ValueError(f"a quantization step must be positive, got {step}")
    r, t = _pair(ref, test)
    return int(np.count_nonzero(np.abs(r - t) > (lsbs + LSB_MARGIN) * step))


def frac_off_by_more_than(ref: npt.ArrayLike, test: npt.ArrayLike, step: float, lsbs: float = 1.0) -> float:
    """Share of elements that differ by more than ``lsbs`` steps (0.0 for empty tensors)."""
    n = np.asarray(ref).size
    return count_off_by_more_than(ref, test, step, lsbs) / n if n else 0.0


def top_k(logits: npt.ArrayLike, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values of each row of ``[N, C]`` logits, best first (ties: lower index)."""
    a = np.asarray(logits, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"logits must be [N, C], got shape {list(a.shape)}")
    return np.argsort(-a, axis=1, kind="stable")[:, :k]


def topk_agreement(ref_logits: npt.ArrayLike, test_logits: npt.ArrayLike, k: int = 1) -> float:
    """Share of rows where the reference's top-1 class is among the tested top ``k``.

    ``k = 1`` is plain argmax agreement.
    """
    r, t = _pair(ref_logits, test_logits)
    if r.shape[0] == 0:
        return 0.0
    best = top_k(r, 1)[:, 0]
    return float(np.mean(np.any(top_k(t, k) == best[:, None], axis=1)))


def accuracy(logits: npt.ArrayLike, labels: npt.ArrayLike, k: int = 1) -> float:
    """Share of rows whose label is among the top ``k`` of ``[N, C]`` logits."""
    y = np.asarray(labels).reshape(-1).astype(np.int64)
    a = np.asarray(logits, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != y.size:
        raise ValueError(f"{y.size} labels for logits of shape {list(a.shape)}")
    if y.size == 0:
        return 0.0
    return float(np.mean(np.any(top_k(a, k) == y[:, None], axis=1)))


def topk_agreement_of(ref_top1: npt.ArrayLike, test_topk: npt.ArrayLike, k: int = 1) -> float:
    """:func:`topk_agreement` from class indices: the reference's top-1 per row and the tested top-k rows
    (``[N, >= k]``, best first, as :func:`top_k` gives them)."""
    best = np.asarray(ref_top1).reshape(-1)
    top = np.asarray(test_topk)[:, :k]
    return float(np.mean(np.any(top == best[:, None], axis=1))) if best.size else 0.0


def accuracy_of(topk: npt.ArrayLike, labels: npt.ArrayLike, k: int = 1) -> float:
    """:func:`accuracy` from class indices (``[N, >= k]`` rows of :func:`top_k`)."""
    y = np.asarray(labels).reshape(-1).astype(np.int64)
    top = np.asarray(topk)[:, :k]
    return float(np.mean(np.any(top == y[:, None], axis=1))) if y.size else 0.0
