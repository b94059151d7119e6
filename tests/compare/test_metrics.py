"""Metric functions against values worked out by hand; running stats against the array functions."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.compare import metrics
from hexnn_import.compare.results import flag_layers
from hexnn_import.compare.tensor_stats import TensorStats


def test_sqnr_by_hand() -> None:
    # signal 1+4+9+16 = 30, noise (4-5)^2 = 1: 10 log10 30
    assert metrics.sqnr_db([1, 2, 3, 4], [1, 2, 3, 5]) == pytest.approx(14.771212547196624)
    # signal 100, noise 1 + 1 = 2: 10 log10 50
    assert metrics.sqnr_db([[6, 8]], [[5, 9]]) == pytest.approx(16.989700043360188)
    assert metrics.sqnr_db([3, 4], [3, 4]) == math.inf
    assert metrics.sqnr_db([0, 0], [0, 1]) == -math.inf
    with pytest.raises(ValueError, match="shape"):
        metrics.sqnr_db([1, 2], [1, 2, 3])


def test_cosine_by_hand() -> None:
    assert metrics.cosine_similarity([1, 0], [0, 1]) == pytest.approx(0.0)
    assert metrics.cosine_similarity([1, 2, 2], [2, 4, 4]) == pytest.approx(1.0)
    assert metrics.cosine_similarity([1, 0], [1, 1]) == pytest.approx(1 / math.sqrt(2))
    assert metrics.cosine_similarity([1, 0], [-1, 0]) == pytest.approx(-1.0)
    assert metrics.cosine_similarity([0, 0], [0, 0]) == 1.0
    assert metrics.cosine_similarity([0, 0], [1, 0]) == 0.0


def test_max_diff_in_real_units_and_lsbs() -> None:
    assert metrics.max_abs_diff([1, -2, 3], [1.5, -2, 1]) == 2.0
    assert metrics.max_diff_lsb([1, -2, 3], [1.5, -2, 1], step=0.5) == 4.0
    assert metrics.max_abs_diff([], []) == 0.0
    with pytest.raises(ValueError, match="positive"):
        metrics.max_diff_lsb([1], [1], 0.0)


def test_share_off_by_more_than_one_lsb() -> None:
    # step 0.1: a diff of exactly one step (0.1) is within; 0.2, 0.21 and 0.3 are not
    ref, test = [0, 0, 0, 0, 0], [0.1, 0.2, 0.21, -0.3, 0.0]
    assert metrics.count_off_by_more_than(ref, test, 0.1) == 3
    assert metrics.frac_off_by_more_than(ref, test, 0.1) == pytest.approx(3 / 5)
    assert metrics.frac_off_by_more_than(ref, test, 0.1, lsbs=2) == pytest.approx(2 / 5)  # 0.21, 0.3


def test_top_k_agreement_and_accuracy_by_hand() -> None:
    ref = [[0.1, 0.9, 0.0], [0.5, 0.2, 0.3], [0.0, 0.0, 1.0]]  # top-1: 1, 0, 2
    test = [[0.9, 0.1, 0.0], [0.5, 0.4, 0.1], [0.2, 0.3, 0.1]]  # top-1: 0, 0, 1; top-2: {0,1}, {0,1}, {1,0}
    assert metrics.topk_agreement(ref, test, 1) == pytest.approx(1 / 3)
    assert metrics.topk_agreement(ref, test, 2) == pytest.approx(2 / 3)
    assert metrics.topk_agreement(ref, test, 3) == 1.0
    assert metrics.accuracy(test, [0, 0, 2]) == pytest.approx(2 / 3)
    assert metrics.accuracy(test, [1, 1, 0], k=2) == 1.0
    assert metrics.accuracy(test, [2, 2, 2], k=2) == 0.0
    assert metrics.top_k([[1.0, 3.0, 3.0, 0.0]], 3).tolist() == [[1, 2, 0]]  # ties: lower index first
    with pytest.raises(ValueError, match="labels"):
        metrics.accuracy(test, [0, 1])


def test_running_stats_equal_the_metrics_over_all_samples() -> None:
    rng = np.random.default_rng(1)
    refs = [rng.normal(size=(2, 5)) for _ in range(3)]
    tests = [r + rng.normal(scale=0.1, size=r.shape) for r in refs]
    steps = [0.05, 0.1, 0.2]
    s = TensorStats("t")
    for r, t, step in zip(refs, tests, steps):
        s.update(r, t, step)
    all_r, all_t = np.concatenate(refs), np.concatenate(tests)
    assert s.sqnr_db == pytest.approx(metrics.sqnr_db(all_r, all_t))
    assert s.cosine == pytest.approx(metrics.cosine_similarity(all_r, all_t))
    assert s.max_abs == pytest.approx(metrics.max_abs_diff(all_r, all_t))
    assert s.max_lsb == pytest.approx(max(metrics.max_diff_lsb(r, t, st) for r, t, st in zip(refs, tests, steps)))
    off = sum(metrics.count_off_by_more_than(r, t, st) for r, t, st in zip(refs, tests, steps))
    assert s.frac_off == pytest.approx(off / 30) and s.samples == 3 and s.count == 30


def test_stats_json_writes_infinite_sqnr_as_exact() -> None:
    s = TensorStats("same")
    s.update(np.ones(4), np.ones(4), None)
    doc = s.to_json()
    assert doc["sqnr_db"] is None and doc["exact"] is True and doc["max_diff_lsb"] is None
    assert doc["frac_off_gt_1lsb"] is None and doc["cosine"] == 1.0


def _layer(name: str, sqnr: float) -> TensorStats:
    """Stats whose SQNR is ``sqnr`` dB (signal 1, noise 10^(-sqnr/10))."""
    return TensorStats(name, signal=1.0, noise=0.0 if sqnr == math.inf else 10 ** (-sqnr / 10))


def test_flags_mark_the_layer_that_loses_accuracy() -> None:
    layers = [_layer("in", math.inf), _layer("a", 60), _layer("b", 20), _layer("c", 18), _layer("d", 5)]
    # b: 20 < 40 (ceiling) and > 10 dB below a (capped at 50); c: only 2 dB below b; d: 13 dB below c
    assert flag_layers(layers) == {"in": False, "a": False, "b": True, "c": False, "d": True}
    assert flag_layers(layers, min_sqnr=19) == {"in": False, "a": False, "b": True, "c": True, "d": True}
    # a drop from 80 to 55 dB is float noise between two faithful runs, not a loss
    assert not any(flag_layers([_layer("a", 80), _layer("b", 55)]).values())
