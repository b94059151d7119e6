"""Gather_8 and Table_8 (op texts of Gather_f / Gather_8 / Table_f / Table_8; ranges copied from the table)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.kernels.gather import partition_of
from hexnn_import.ops.registry import PAD_MIRROR_REFLECT, PAD_NA, PAD_SAME, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error


def ints(*vals: int) -> np.ndarray:
    return np.array(vals, np.int32).reshape(1, 1, 1, -1)




# Every example of the Gather_f text (hexagon_nn_ops.txt; the first seven also in
# hexagon_nn_ops_early.txt): index shape, table shape, (index_dim[, index_rank]), result shape -
# and, worked by hand from the text's rules, the table window (leading 1s stripped, or rank
# raised to 4 - index_dim), the lookup axis within it and the index shape as seen (leading
# 1s stripped, or kept up to index_rank).
EXAMPLES = [
    # "6 lookup in table of 32 of [5,9]"
    ((1, 1, 1, 6), (1, 32, 5, 9), (), (1, 6, 5, 9), (32, 5, 9), 0, (6,)),
    # "4x7 lookup in table of 32 of [5,9]"
    ((1, 1, 4, 7), (1, 32, 5, 9), (), (4, 7, 5, 9), (32, 5, 9), 0, (4, 7)),
    # "2x5x5x12 lookups in one linear table [256]"
    ((2, 5, 5, 12), (1, 1, 1, 256), (), (2, 5, 5, 12), (256,), 0, (2, 5, 5, 12)),
    # index_dim = 2: "4x20 lookup in table of 64 of [5,*,12]"
    ((1, 1, 4, 20), (1, 5, 64, 12), (2,), (5, 4, 20, 12), (5, 64, 12), 1, (4, 20)),
    # index_dim = 2: "8 lookup in table of 64 of [5,*,12]"
    ((1, 1, 1, 8), (1, 5, 64, 12), (2,), (1, 5, 8, 12), (5, 64, 12), 1, (8,)),
    # index_dim = 2, "index is taken to be rank 0 here": "1 lookup in table of 64 of [5,*,12]"
    ((1, 1, 1, 1), (1, 5, 64, 12), (2,), (1, 1, 5, 12), (5, 64, 12), 1, ()),
    # index_dim = 2, index_rank = 2 "force index to be seen as (1,8)": "1x8 lookup"
    ((1, 1, 1, 8), (1, 5, 64, 12), (2, 2), (5, 1, 8, 12), (5, 64, 12), 1, (1, 8)),
    # index_dim = 0: "5 lookup on table of 1 of (1,5,12)" -> 9 copies of the table
    ((1, 1, 1, 9), (1, 1, 5, 12), (0,), (9, 1, 5, 12), (1, 1, 5, 12), 0, (9,)),
]


@pytest.mark.parametrize("ishape,tshape,extra,oshape,window,axis,iview", EXAMPLES)
def test_gather_examples_of_the_text(ishape, tshape, extra, oshape, window, axis, iview):
    rng = np.random.default_rng(8)
    table = rng.integers(0, 256, size=tshape).astype(np.uint8)
    index = rng.integers(0, window[axis], size=ishape).astype(np.int32)
    q, mn, mx = run_op("Gather_8", [index, table, -0.5, 2.0, *[ints(v) for v in extra]])
    assert q.dtype == np.uint8 and q.shape == oshape
    assert (mn.item(), mx.item()) == (-0.5, 2.0)
    # element-by-element reference: out[pre, i, post] = window[pre, index[i], post]
    tab, idx = table.reshape(window), index.reshape(iview)
    ref = np.zeros(window[:axis] + iview + window[axis + 1:], np.uint8)
    for o in np.ndindex(*ref.shape):
        pre, i, post = o[:axis], o[axis:axis + len(iview)], o[axis + len(iview):]
        ref[o] = tab[pre + (int(idx[i]),) + post]
    assert np.array_equal(q, ref.reshape(oshape))


def test_gather_by_hand_and_padding():
    # linear table [10,20,30,40]: index [3,0,2] -> [40,10,30] (same shape as the index)
    table = np.array([10, 20, 30, 40], np.uint8).reshape(1, 1, 1, 4)
    q, mn, mx = run_op("Gather_8", [ints(3, 0, 2), table, -1.0, 1.0])
    assert q.shape == (1, 1, 1, 3) and q.ravel().tolist() == [40, 10, 30]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # out of range (op_gather.c gather_execute): NN_PAD_SAME is an error, every other padding
    # (VALID, NA and the mirror paddings alike) clips: -1 -> 0 -> 10, 5 -> 3 -> 40
    for pad in (PAD_VALID, PAD_NA, PAD_MIRROR_REFLECT):
        q, _, _ = run_op("Gather_8", [ints(-1, 5, 1), table, -1.0, 1.0], padding=pad)
        assert q.ravel().tolist() == [10, 40, 20]
    assert_op_error("Gather_8", [ints(1, 5), table, -1.0, 1.0], "index value 5 at offset 1",
                    "table size is 4", padding=PAD_SAME)
    # rows of a [3, 2] table picked by index_dim = 2 with index_dim/index_rank -1 = "ignore"
    table = np.array([[1, 2], [3, 4], [5, 6]], np.uint8).reshape(1, 1, 3, 2)
    q, _, _ = run_op("Gather_8", [ints(2, 0), table, -1.0, 1.0, ints(-1), ints(-1)])
    assert q.shape == (1, 1, 2, 2) and q[0, 0].tolist() == [[5, 6], [1, 2]]


def test_gather_errors():
    table = np.zeros((1, 32, 5, 9), np.uint8)
    index = np.zeros((1, 2, 4, 7), np.int32)
    assert_op_error("Gather_8", [index, table, -1.0, 1.0], "index rank 3 + table rank 3 - 1 = 5 exceeds 4")
    # op_gather.c analyze_gather_op's checks (the C errors in each case too, messages as the C's)
    assert_op_error("Gather_8", [index[:, :1], table, -1.0, 1.0, ints(1), ints(1)],
                    "improper rank 1 given for apparent rank=2")
    assert_op_error("Gather_8", [index, table, -1.0, 1.0, ints(4)], "dimension_index = 4 : must be -1 ...3")
    assert_op_error("Gather_8", [index, table, -1.0, 1.0, ints(1), ints(5)], "improper rank 5")
    assert_op_error("Gather_8", [index.astype(np.float32) + 0.5, table, -1.0, 1.0], "index holds non-integer")


def test_gather_copies_a_zero_excluding_range():
    # gather_execute tensor_copy's the table min/max unchecked: a range excluding 0 passes through
    table = np.array([10, 20, 30, 40], np.uint8).reshape(1, 1, 1, 4)
    q, mn, mx = run_op("Gather_8", [ints(2, 1), table, 1.0, 2.0])
    assert q.ravel().tolist() == [30, 20] and (mn.item(), mx.item()) == (1.0, 2.0)


# ---------------------------------------------------------------- Table_8

def test_table_without_structure_is_gather():
    table = np.array([10, 20, 30, 40], np.uint8).reshape(1, 1, 1, 4)
    q, mn, mx = run_op("Table_8", [ints(3, 0, 2), table, -1.0, 1.0])
    assert q.ravel().tolist() == [40, 10, 30] and (mn.item(), mx.item()) == (-1.0, 1.0)


def test_partition_mapping_by_hand():
    # 12 index positions onto 5 partitions: mod -> p % 5; div -> the first 12 % 5 = 2
    # partitions take ceil(12/5) = 3 positions each, the other 3 take 2 each
    assert partition_of(12, 5, 0).tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    assert partition_of(12, 5, 1).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4]
    # 6 onto 3 evenly: div -> 0,0,1,1,2,2; not more positions than partitions: identity
    assert partition_of(6, 3, 1).tolist() == [0, 0, 1, 1, 2, 2]
    assert partition_of(3, 5, 1).tolist() == [0, 1, 2]


def test_table_partitions_by_hand():
    # table (1,1,5,2): 5 rows of 2; structure [dim 2, 2 partitions, sizes 3 and 2]:
    # partition 0 = rows 0..2, partition 1 = rows 3..4. Index (1,1,2,2), last dim = 2 positions
    # -> position 0 uses partition 0, position 1 partition 1. Output = index shape minus its
    # first 3 - 2 = 1 dims, then the table's trailing [2]: (1,2,2,2).
    table = np.arange(10, dtype=np.uint8).reshape(1, 1, 5, 2)   # row r = [2r, 2r+1]
    index = np.array([[0, 1], [2, 0]], np.int32).reshape(1, 1, 2, 2)
    q, mn, mx = run_op("Table_8", [index, table, -1.0, 1.0, ints(2, 2, 3, 2)])
    # (0,0): p0 row 0 = [0,1]; (0,1): p1 row 1 = table row 4 = [8,9];
    # (1,0): p0 row 2 = [4,5]; (1,1): p1 row 0 = table row 3 = [6,7]
    assert q.shape == (1, 2, 2, 2)
    assert q[0].tolist() == [[[0, 1], [8, 9]], [[4, 5], [6, 7]]]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # equal partitions given as [TPN, size, ...] = (1,2,3,2) with structure [1, 2, 3]: same
    # table as (1,1,6,2) with structure [2, 2, 3]
    t6 = np.arange(12, dtype=np.uint8).reshape(1, 1, 6, 2)
    a, _, _ = run_op("Table_8", [index, t6.reshape(1, 2, 3, 2), -1.0, 1.0, ints(1, 2, 3)])
    b, _, _ = run_op("Table_8", [index, t6, -1.0, 1.0, ints(2, 2, 3)])
    # (0,1) is partition 1 row 1 = table row 4 = [8, 9]
    assert np.array_equal(a, b) and a[0, 0, 1].tolist() == [8, 9]


def test_table_strategies_and_clipping():
    # two partitions of 2 entries: [10, 11] and [20, 21]; index [1, 1, 0, 0] (4 positions)
    table = np.array([10, 11, 20, 21], np.uint8).reshape(1, 1, 4, 1)
    index = ints(1, 1, 0, 0)
    # mod: positions -> partitions 0,1,0,1 -> 11, 21, 10, 20
    q, _, _ = run_op("Table_8", [index, table, -1.0, 1.0, ints(2, 2, 2)])
    assert q.shape == (1, 1, 4, 1) and q.ravel().tolist() == [11, 21, 10, 20]
    q, _, _ = run_op("Table_8", [index, table, -1.0, 1.0, ints(2, 2, 2), ints(0)])
    assert q.ravel().tolist() == [11, 21, 10, 20]
    # div: 4 positions / 2 partitions -> 0,0,1,1 -> 11, 11, 20, 20
    q, _, _ = run_op("Table_8", [index, table, -1.0, 1.0, ints(2, 2, 2), ints(1)])
    assert q.ravel().tolist() == [11, 11, 20, 20]
    # any other strategy value is div too (op_gather.c table_execute tests strategy != 0): 11, 11, 20, 20
    for strategy in (2, -1):
        q, _, _ = run_op("Table_8", [index, table, -1.0, 1.0, ints(2, 2, 2), ints(strategy)])
        assert q.ravel().tolist() == [11, 11, 20, 20]
    # out of range within a partition clips to that partition (5 -> 1, -3 -> 0) whatever the
    # padding: table_execute ignores it (nnlib's C gives [11, 20] for SAME and VALID alike)
    for pad in (PAD_VALID, PAD_SAME):
        q, _, _ = run_op("Table_8", [ints(5, -3), table, -1.0, 1.0, ints(2, 2, 2)], padding=pad)
        assert q.ravel().tolist() == [11, 20]


def test_table_errors():
    # every case below is an error in op_gather.c analyze_table_op too (checked against nnlib's C)
    table = np.zeros((1, 1, 4, 1), np.uint8)
    index = ints(0, 1)
    assert_op_error("Table_8", [index, table, -1.0, 1.0, ints(1, 2, 2)], "dim 1 is not the first dimension > 1")
    assert_op_error("Table_8", [index, table, -1.0, 1.0, ints(2, 2, 3)], "add up to 6")
    assert_op_error("Table_8", [index, table, -1.0, 1.0, ints(2, 1, 4)], "partitions must be 2..")
    assert_op_error("Table_8", [index, table, -1.0, 1.0, ints(2, 2, 3, 1)], "must all be >= 2")
    assert_op_error("Table_8", [index, table, -1.0, 1.0, ints(2, 2)], "table structure has 2 values")
    big = np.zeros((1, 1, 4, 3), np.uint8)
    assert_op_error("Table_8", [np.zeros((2, 1, 1, 2), np.int32), big, -1.0, 1.0, ints(2, 2, 2)],
                    "can't append 1 dims to index tensor")
