"""Sparse TFLite tensors densified (``tflite.sparse.densify``).

The cases are TensorFlow's own (tensorflow/lite/kernels/internal/utils/
sparsity_format_converter_test.cc): a 3x4 CSR matrix and a 4x4 matrix in
2x2 blocks, with the dense values written out there by hand. A random
round trip checks the level-by-level vectorized walk against a plain
element loop written from the schema's description.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.importers.tflite.sparse import DENSE, SPARSE_CSR, DimMeta, Sparsity, densify


def _dense(n: int) -> DimMeta:
    return DimMeta(DENSE, n, np.zeros(0, np.int64), np.zeros(0, np.int64))


def _csr(segments: list[int], indices: list[int]) -> DimMeta:
    return DimMeta(SPARSE_CSR, 0, np.asarray(segments, np.int64), np.asarray(indices, np.int64))


def test_csr_matrix_of_tensorflows_test() -> None:
    sp = Sparsity([0, 1], [], [_dense(3), _csr([0, 3, 3, 5], [0, 2, 3, 0, 3])])
    got = densify(np.array([6, 9, 8, 5, 7], np.float32), sp, (3, 4))
    assert got.tolist() == [[6, 0, 9, 8], [0, 0, 0, 0], [5, 0, 0, 7]]


def test_block_sparse_matrix_of_tensorflows_test() -> None:
    sp = Sparsity([0, 1, 2, 3], [0, 1], [_dense(2), _csr([0, 2, 3], [0, 1, 1]), _dense(2), _dense(2)])
    values = np.array([1, 0, 0, 4, 2, 3, 0, 0, 5, 0, 0, 6], np.int8)
    got = densify(values, sp, (4, 4))
    assert got.tolist() == [[1, 0, 2, 3], [0, 4, 0, 0], [0, 0, 5, 0], [0, 0, 0, 6]]
    assert got.dtype == np.int8


def test_column_major_traversal() -> None:
    # traversal order [1, 0]: columns outermost, each column a CSR list of rows
    sp = Sparsity([1, 0], [], [_dense(3), _csr([0, 1, 1, 3], [1, 0, 1])])
    got = densify(np.array([7, 8, 9], np.int32), sp, (2, 3))
    assert got.tolist() == [[0, 0, 8], [7, 0, 9]]


def _loop_reference(dense: np.ndarray) -> tuple[np.ndarray, Sparsity]:
    """Encode a 2-D matrix as dense rows x CSR columns, element by element."""
    segs, idx, vals = [0], [], []
    for r in range(dense.shape[0]):
        for c in range(dense.shape[1]):
            if dense[r, c] != 0:
                idx.append(c)
                vals.append(dense[r, c])
        segs.append(len(idx))
    return np.asarray(vals, dense.dtype), Sparsity([0, 1], [], [_dense(dense.shape[0]), _csr(segs, idx)])


@pytest.mark.parametrize("seed", range(5))
def test_random_csr_round_trip(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dense = rng.integers(-127, 128, size=(int(rng.integers(1, 40)), int(rng.integers(1, 40)))).astype(np.int8)
    dense[rng.random(dense.shape) < 0.7] = 0
    vals, sp = _loop_reference(dense)
    np.testing.assert_array_equal(densify(vals, sp, dense.shape), dense)


@pytest.mark.parametrize("case", ["too_many_values", "index_out_of_range", "segments_short"])
def test_inconsistent_tables_are_refused(case: str) -> None:
    sp = Sparsity([0, 1], [], [_dense(3), _csr([0, 3, 3, 5], [0, 2, 3, 0, 3])])
    vals = np.arange(5, dtype=np.float32)
    if case == "too_many_values":
        vals = np.arange(6, dtype=np.float32)
    elif case == "index_out_of_range":
        sp.dims[1].indices[1] = 9
    else:
        sp.dims[1].segments = sp.dims[1].segments[:2]
    with pytest.raises(ValueError):
        densify(vals, sp, (3, 4))


@pytest.mark.parametrize("name", ["keras_sparse_float.tflite", "keras_sparse_int8.tflite"])
def test_converter_made_sparse_model_agrees_with_litert(name: str) -> None:
    """TFLiteConverter's EXPERIMENTAL_SPARSITY output (models/real/make_sparse.py): every sparse weight
    densifies to its declared shape with the pruned share of zeros, and the model runs as LiteRT does."""
    import tflite

    from hexnn_import.importers.tflite.reader import read_tflite
    from hexnn_import.testing.real_models import REAL, evaluate, load_manifest

    path = REAL / name
    raw = tflite.Model.GetRootAs(path.read_bytes(), 0).Subgraphs(0)
    sparse = {raw.Tensors(i).Name().decode() for i in range(raw.TensorsLength()) if raw.Tensors(i).Sparsity()}
    assert len(sparse) >= 2
    model = read_tflite(path)
    for t in model.tensors:
        if t.name in sparse:
            assert t.data is not None and t.data.shape == t.shape
            assert 0.6 < float(np.mean(t.data == 0)) < 0.95, t.name
    entry = next(e for e in load_manifest() if e["file"] == name)
    fig = evaluate(entry, n=8, calibrate=True)
    for o in fig.outputs if name.endswith("int8.tflite") else fig.calibrated:
        assert o.sqnr_db >= 30.0, o
        assert o.within1 is None or (o.within1 >= 0.99 and o.worst_lsb <= 1), o
