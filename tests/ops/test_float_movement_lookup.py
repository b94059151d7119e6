"""Gather_f, Gather_int32, Table_f, Table_int32 (op texts: lookups in plain float / int32 tables)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_MIRROR_REFLECT, PAD_SAME, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error, f4, i4

# a (1,1,5,2) table whose row r is {10r, 10r+1}
ROWS = f4([[10.0 * r, 10.0 * r + 1] for r in range(5)], (1, 1, 5, 2))


def test_gather_by_hand():
    # table (1,1,3,2) {{1,2},{3,4},{5,6}}: index dim = first dim > 1 (w); index {2,0} (rank 1)
    # -> output rank 1 + 2 - 1 = 2: {{5,6},{1,2}}, left-padded to (1,1,2,2)
    table = f4([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (1, 1, 3, 2))
    (out,) = run_op("Gather_f", [i4([2, 0]), table])
    assert out.dtype == np.float32 and out.tolist() == [[[[5.0, 6.0], [1.0, 2.0]]]]
    # int32 linear table {7, -8, 9}: index {1,1,2} -> {-8,-8,9}
    (q,) = run_op("Gather_int32", [i4([1, 1, 2]), i4([7, -8, 9])])
    assert q.dtype == np.int32 and q.ravel().tolist() == [-8, -8, 9]


@pytest.mark.parametrize("ishape, tshape, extra, oshape", [
    ((1, 1, 1, 6), (1, 32, 5, 9), [], (1, 6, 5, 9)),
    ((1, 1, 4, 7), (1, 32, 5, 9), [], (4, 7, 5, 9)),
    ((2, 5, 5, 12), (1, 1, 1, 256), [], (2, 5, 5, 12)),
    ((1, 1, 4, 20), (1, 5, 64, 12), [2], (5, 4, 20, 12)),
    ((1, 1, 1, 8), (1, 5, 64, 12), [2], (1, 5, 8, 12)),
    ((1, 1, 1, 1), (1, 5, 64, 12), [2], (1, 1, 5, 12)),
    ((1, 1, 1, 8), (1, 5, 64, 12), [2, 2], (5, 1, 8, 12)),
    ((1, 1, 1, 9), (1, 1, 5, 12), [0], (9, 1, 5, 12)),
])
def test_gather_text_examples(ishape, tshape, extra, oshape):
    # the Gather_f text's example shapes; values against np.take on the table's index axis
    rng = np.random.default_rng(sum(ishape) + sum(tshape))
    table = rng.standard_normal(tshape).astype(np.float32)
    axis = extra[0] if extra else next(i for i, n in enumerate(tshape) if n > 1)
    index = rng.integers(0, tshape[axis], size=ishape).astype(np.int32)
    (out,) = run_op("Gather_f", [index, table, *[np.int32(v) for v in extra]])
    assert out.shape == oshape
    assert np.array_equal(out.ravel(), np.take(table, index, axis=axis).ravel())


def test_gather_out_of_range_follows_padding():
    # table {7,8,9}: index {-1, 5} clipped (NA and VALID) to {0, 2} -> {7, 9}; SAME is an error
    table, index = f4([7.0, 8.0, 9.0]), i4([-1, 5])
    assert run_op("Gather_f", [index, table])[0].ravel().tolist() == [7.0, 9.0]
    assert run_op("Gather_f", [index, table], padding=PAD_VALID)[0].ravel().tolist() == [7.0, 9.0]
    assert_op_error("Gather_f", [index, table], "index value -1 at offset 0 is out of range", padding=PAD_SAME)
    assert_op_error("Gather_int32", [i4([0]), i4([1])], "reserved", padding=PAD_MIRROR_REFLECT)


def test_gather_errors():
    assert_op_error("Gather_f", [i4([0]), f4([1.0]), np.int32(4)], "index_dim 4 must be -1")
    assert_op_error("Gather_f", [i4([0] * 4, (1, 2, 1, 2)), ROWS, np.int32(-1), np.int32(1)],
                    "index_rank 1 is below")
    assert_op_error("Gather_f", [f4([0.5]), ROWS], "non-integer")
    assert_op_error("Gather_f", [i4([0], (1, 1, 1, 1)), np.zeros((1, 1, 0, 2), np.float32)], "no elements")


def test_table_without_structure_is_gather():
    rng = np.random.default_rng(5)
    table = rng.integers(-1000, 1000, size=(1, 1, 7, 3)).astype(np.int32)
    index = rng.integers(0, 7, size=(1, 1, 2, 4)).astype(np.int32)
    (out,) = run_op("Table_int32", [index, table])
    assert np.array_equal(out[0], np.take(table[0, 0], index[0, 0], axis=0))
    assert np.array_equal(out, run_op("Gather_int32", [index, table])[0])


def test_table_partitions_by_hand():
    # structure [2, 2, 2, 3]: dim 2 (w) holds partition 0 = rows 0..1 and partition 1 = rows 2..4.
    # index (1,1,2,2) {{1,2},{0,1}}: last-dim position 0 uses partition 0, position 1 partition 1 (mod):
    # {{row 1, row 2+2}, {row 0, row 2+1}}; output = index dims after the first + table dims after w
    (out,) = run_op("Table_f", [i4([1, 2, 0, 1], (1, 1, 2, 2)), ROWS, i4([2, 2, 2, 3])])
    assert out.shape == (1, 2, 2, 2)
    assert out.tolist() == [[[[10.0, 11.0], [40.0, 41.0]], [[0.0, 1.0], [30.0, 31.0]]]]
    # div with 4 positions over 2 partitions: positions 0,1 -> partition 0, 2,3 -> partition 1
    # index {1,0,2,0}: rows 1, 0, 2+2, 2+0
    got = run_op("Table_f", [i4([1, 0, 2, 0]), ROWS, i4([2, 2, 2, 3]), np.int32(1)])[0]
    assert got.shape == (1, 1, 4, 2) and got[0, 0, :, 0].tolist() == [10.0, 0.0, 40.0, 20.0]
    # mod (explicit 0): partitions 0,1,0,1; index 2 in partition 0 (size 2) is clipped to 1 (padding NA):
    # rows 1, 2+0, 1, 2+0
    got = run_op("Table_f", [i4([1, 0, 2, 0]), ROWS, i4([2, 2, 2, 3]), np.int32(0)])[0]
    assert got[0, 0, :, 0].tolist() == [10.0, 20.0, 10.0, 20.0]


def test_table_errors():
    assert_op_error("Table_f", [i4([0, 0]), ROWS, i4([2, 2, 2, 2])], "add up to 4")
    assert_op_error("Table_f", [i4([0, 0]), ROWS, i4([2, 2, 2, 3]), np.int32(2)], "must be 0 (mod) or 1 (div)")
    assert_op_error("Table_f", [i4([0, 3]), ROWS, i4([2, 2, 2, 3])], "out of range", padding=PAD_SAME)
    assert_op_error("Table_f", [i4([0, 0, 0, 0], (2, 1, 1, 2)), ROWS, i4([2, 2, 2, 3])], "leaves no room")
