"""The tensor-arena plan (TFLM GreedyMemoryPlanner algorithm): hand-worked plans, TFLM's own test
cases, random-lifetime properties, lifetime conventions, errors and the tile warning."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.xs3.arena import (TILE_BYTES, ArenaBuffer, ArenaPlan, arena_warning, check_plan,
                                    largest_live_bytes, plan_arena)


def residual_net() -> list[ArenaBuffer]:
    """Five ops: 0 conv0 x->a, 1 conv1 a->b, 2 conv2 b->c, 3 add a+c->d, 4 conv3 d->y."""
    return [ArenaBuffer("x", 1000, -1, 0),   # graph input, read by op 0
            ArenaBuffer("a", 2048, 0, 3),    # conv0 output, read by conv1 (op 1) and the residual add (op 3)
            ArenaBuffer("b", 4096, 1, 2),
            ArenaBuffer("c", 1536, 2, 3),
            ArenaBuffer("d", 2000, 3, 4),
            ArenaBuffer("y", 250, 4, 5)]     # graph output: last = number of ops = 5


def test_residual_chain_plan_worked_by_hand() -> None:
    # Alignment 4: sizes stay 1000, 2048, 4096, 1536, 2000 and 250 -> 252.
    # Order, largest first: b 4096, a 2048, d 2000, c 1536, x 1000, y 252.
    # b [1,2]: first buffer -> offset 0.                          placed by offset: b@0
    # a [0,3]: overlaps b. cand 0; b@0: gap 0-0=0 < 2048 -> cand = 0+4096.
    #          nothing after b -> a@4096.                         placed: b@0, a@4096
    # d [3,4]: b [1,2] is not live at 3..4, skip. a@4096: gap 4096-0 >= 2000 -> d@0.
    #                                                             placed: b@0, d@0, a@4096
    # c [2,3]: overlaps b, d and a. b@0: gap 0 < 1536 -> cand 4096; d@0: gap 0-4096 < 0 ->
    #          cand max(4096, 2000) = 4096; a@4096: gap 0 -> cand 6144; end -> c@6144.
    # x [-1,0]: only a overlaps. a@4096: gap 4096 >= 1000 -> x@0.  placed: b@0, d@0, x@0, a@4096, c@6144
    # y [4,5]: only d overlaps. d@0: gap 0 < 252 -> cand 2000; end -> y@2000.
    # Arena = max(0+4096, 4096+2048, 0+2000, 6144+1536, 0+1000, 2000+252) = 7680.
    # Live sums: pos -1 x=1000; 0 x+a=3048; 1 a+b=6144; 2 a+b+c=7680; 3 a+c+d=5584; 4 d+y=2250; 5 y=250
    # -> largest_live 7680: the greedy plan is optimal here.
    plan = plan_arena(residual_net())
    assert plan.offsets == {"x": 0, "a": 4096, "b": 0, "c": 6144, "d": 0, "y": 2000}
    assert plan.size == 7680
    assert plan.largest_live == 7680
    check_plan(plan)
    assert [plan.live_at(p) for p in range(-1, 6)] == [
        ["x"], ["x", "a"], ["a", "b"], ["a", "b", "c"], ["a", "c", "d"], ["d", "y"], ["y"]]


def test_alignment_16_plan_worked_by_hand() -> None:
    bufs = [ArenaBuffer("p", 100, 0, 1), ArenaBuffer("q", 30, 1, 2), ArenaBuffer("r", 20, 2, 3),
            ArenaBuffer("s", 5, 0, 3)]
    # Aligned sizes: p 112, q 32, r 32, s 16. Order: p, q, r (tie with q: input order), s.
    # p -> 0.  q [1,2] overlaps p: gap 0 < 32 -> cand 112 -> q@112.
    # r [2,3]: p [0,1] skipped; q@112: gap 112 >= 32 -> r@0.     placed: p@0, r@0, q@112
    # s [0,3] overlaps all: p@0 gap 0 -> cand 112; r@0 gap < 0 -> cand max(112, 32) = 112;
    #          q@112 gap 0 -> cand 144; end -> s@144.  Arena = 144 + 16 = 160.
    # Live (unaligned): pos 0 p+s=105, 1 p+q+s=135, 2 q+r+s=55, 3 r+s=25 -> 135.
    plan = plan_arena(bufs, alignment=16)
    assert plan.offsets == {"p": 0, "q": 112, "r": 0, "s": 144}
    assert (plan.size, plan.largest_live) == (160, 135)
    check_plan(plan)


@pytest.mark.parametrize("bufs, offsets, size", [
    # TFLM greedy_memory_planner_test.cc: TestGreedyBasics, TestGreedyMedium, TestOverlapCase
    ([(10, 0, 1), (20, 2, 3)], [0, 0], 20),
    ([(10, 0, 1), (20, 1, 2), (30, 2, 3), (40, 3, 4), (50, 0, 1)], [50, 70, 40, 0, 0], 90),
    ([(100, 0, 1), (50, 2, 3), (20, 1, 2)], None, 120),
])
def test_tflm_planner_test_cases(bufs: list[tuple[int, int, int]], offsets: list[int] | None, size: int) -> None:
    plan = plan_arena([ArenaBuffer(f"b{i}", *b) for i, b in enumerate(bufs)], alignment=1)
    if offsets is not None:
        assert [plan.offsets[f"b{i}"] for i in range(len(bufs))] == offsets
    assert plan.size == size
    check_plan(plan)


@pytest.mark.parametrize("alignment", [1, 4, 16, 64])
def test_random_lifetimes_properties(alignment: int) -> None:
    rng = np.random.default_rng(alignment)
    for _ in range(150):
        n_ops = int(rng.integers(1, 12))
        bufs = []
        for i in range(int(rng.integers(1, 16))):
            first = int(rng.integers(-1, n_ops + 1))
            last = int(rng.integers(first, n_ops + 1))
            bufs.append(ArenaBuffer(f"t{i}", int(rng.integers(0, 5000)), first, last))
        plan = plan_arena(bufs, alignment)
        check_plan(plan)
        aligned = [-(-b.size // alignment) * alignment for b in bufs]
        assert plan.largest_live <= plan.size <= sum(aligned)
        assert all(off % alignment == 0 for off in plan.offsets.values())
        assert plan.size % alignment == 0
        # brute-force largest live set over every position
        assert plan.largest_live == max(sum(b.size for b in bufs if b.first <= p <= b.last)
                                        for p in range(-1, n_ops + 1))


def test_inputs_outputs_live_at_the_ends_and_ops_do_not_alias() -> None:
    bufs = residual_net()
    plan = plan_arena(bufs)
    assert plan.live_at(-1) == ["x"]
    assert plan.live_at(5) == ["y"]
    assert plan.live_at(6) == [] and plan.live_at(-2) == []
    by = {b.name: b for b in bufs}
    for reader, written in (("x", "a"), ("a", "b"), ("b", "c"), ("a", "d"), ("c", "d"), ("d", "y")):
        r, w = by[reader], by[written]
        assert r.first <= w.first <= r.last   # op w.first reads `reader` and writes `written`
        ro, wo = plan.offsets[reader], plan.offsets[written]
        assert ro + r.size <= wo or wo + w.size <= ro, (reader, written)


def test_check_plan_detects_overlap_and_accepts_reuse() -> None:
    bufs = [ArenaBuffer("a", 64, 0, 1), ArenaBuffer("b", 64, 1, 2), ArenaBuffer("c", 64, 2, 3)]
    check_plan(ArenaPlan({"a": 0, "b": 64, "c": 0}, 128, 128, bufs))      # a and c never live together
    with pytest.raises(ValueError, match="overlap"):
        check_plan(ArenaPlan({"a": 0, "b": 32, "c": 128}, 192, 128, bufs))
    with pytest.raises(ValueError, match="outside"):
        check_plan(ArenaPlan({"a": 0, "b": 64, "c": 100}, 128, 128, bufs))
    with pytest.raises(ValueError, match="aligned"):
        check_plan(ArenaPlan({"a": 0, "b": 66, "c": 0}, 132, 128, bufs))
    with pytest.raises(ValueError, match="no offset"):
        check_plan(ArenaPlan({"a": 0, "b": 64}, 128, 128, bufs))


@pytest.mark.parametrize("bufs, alignment, match", [
    ([ArenaBuffer("a", 8, 3, 2)], 4, "last=2 < first=3"),
    ([ArenaBuffer("a", 8, -2, 2)], 4, "first=-2"),
    ([ArenaBuffer("a", -8, 0, 2)], 4, "negative size"),
    ([ArenaBuffer("a", 8, 0, 2), ArenaBuffer("a", 4, 1, 1)], 4, "duplicate"),
    ([ArenaBuffer("a", 8, 0, 2)], 0, "alignment"),
])
def test_bad_buffers(bufs: list[ArenaBuffer], alignment: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        plan_arena(bufs, alignment)


def test_empty_and_zero_size() -> None:
    plan = plan_arena([])
    assert (plan.size, plan.largest_live, plan.offsets) == (0, 0, {})
    check_plan(plan)
    plan = plan_arena([ArenaBuffer("z", 0, 0, 1), ArenaBuffer("a", 6, 0, 1)])
    assert plan.size == 8 and plan.offsets["a"] == 0
    check_plan(plan)
    assert largest_live_bytes([ArenaBuffer("a", 6, 0, 1)]) == 6


def test_arena_warning() -> None:
    small = plan_arena([ArenaBuffer("a", 1000, -1, 1)])
    assert arena_warning(small, 10_000) is None
    assert arena_warning(small, TILE_BYTES - 1000) is None
    msg = arena_warning(small, TILE_BYTES - 999)
    assert msg is not None and "weights" in msg and "\n" not in msg
    big = plan_arena([ArenaBuffer("a", TILE_BYTES, -1, 0), ArenaBuffer("b", 4, 0, 1)])
    msg = arena_warning(big, 0)
    assert msg is not None and str(big.size) in msg and "\n" not in msg
