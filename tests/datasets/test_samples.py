"""Samples in real units (issue [Compare]): read from an .npz (codes of the input's own type dequantized),
drawn at random, and fed to each runner in its own input type - values worked by hand."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hexnn_import.datasets.samples import feed_for, load_dataset, random_dataset
from hexnn_import.errors import InputDataError
from hexnn_import.graph import GraphIO


def test_samples_quantize_per_runner(tmp_path: Path) -> None:
    specs = [GraphIO("x", (1, 2), "int8", 0.5, -1)]
    feed = feed_for(specs, {"x": np.array([[0.25, -100.0]])})
    assert feed["x"].dtype == np.int8 and feed["x"].tolist() == [[0, -128]]  # 0.5 rounds away: 1 - 1
    float_feed = feed_for([GraphIO("other", (2,), "float32")], {"x": np.array([[1.5, 2.0]])})
    assert float_feed["other"].dtype == np.float32 and float_feed["other"].tolist() == [1.5, 2.0]
    # int8 codes in the file are dequantized with the input's scale, and quantize back to the same codes
    codes = np.array([[[3, -7]], [[0, 127]]], np.int8)
    np.savez(tmp_path / "d.npz", codes, labels=np.eye(3)[[2, 0]])
    ds = load_dataset(tmp_path / "d.npz", specs)
    assert ds.labels.tolist() == [2, 0] and len(ds.samples) == 2
    assert feed_for(specs, ds.samples[1])["x"].tolist() == [[0, 127]]
    rnd = random_dataset(3, specs, seed=1)
    assert len(rnd.samples) == 3 and rnd.labels is None
    np.savez(tmp_path / "bad.npz", y=np.zeros((2, 3)))
    with pytest.raises(InputDataError, match="shape"):
        load_dataset(tmp_path / "bad.npz", specs)
