"""A liveness-based tensor-arena plan for an XS3 export (TFLM's greedy planner).

The algorithm is the one of TensorFlow Lite Micro's ``GreedyMemoryPlanner``
(tensorflow/tflite-micro, ``tensorflow/lite/micro/memory_planner/greedy_memory_planner.cc``,
``CalculateOffsetsIfNeeded``), which XMOS xformer's arena sizing also relies on:

1. sizes are rounded up to the alignment (TFLM's allocator aligns every request before it reaches the
   planner), so every offset below is aligned too;
2. buffers are sorted by size, largest first; ties keep their input order (TFLM's
   ``ReverseSortInPlace`` is a stable sort);
3. the first buffer goes at offset 0; each following buffer walks the already-placed buffers in offset
   order (ties: earlier-placed first), looking only at those whose lifetime overlaps its own
   (``DoesEntryOverlapInTime``, inclusive ends). The candidate offset starts at 0 and becomes the
   largest end of the overlapping buffers walked so far; the buffer goes in the first gap between the
   candidate offset and the next overlapping buffer that is big enough, or after the last one.

Lifetimes are inclusive positions in the op order: a buffer written by op ``i`` and last read by op
``j`` is live at ``i..j``; a graph input has ``first = -1`` and a graph output ``last = n_ops``. An op's
output therefore never shares memory with its own inputs (both are live at the op's position).
Offline-planned offsets (TFLM's second ``AddBuffer``) are not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: one xcore.ai tile's SRAM, bytes
TILE_BYTES = 512 * 1024


@dataclass(frozen=True)
class ArenaBuffer:
    """One tensor of the arena and its inclusive lifetime in op positions."""

    name: str
    size: int    # bytes
    first: int   # index of the op that writes it (-1: a graph input, live from the start)
    last: int    # index of the last op that reads it (a graph output: the number of ops)


@dataclass
class ArenaPlan:
    """Offsets of every buffer, the arena size and the largest live set (a lower bound on any plan)."""

    offsets: dict[str, int]
    size: int            # arena bytes = max(offset + aligned size)
    largest_live: int    # max over op positions of the sum of (unaligned) sizes live there
    buffers: list[ArenaBuffer]
    alignment: int = 4

    def live_at(self, pos: int) -> list[str]:
        """Names of the buffers live at op position ``pos`` (``first <= pos <= last``), in buffer order."""
        return [b.name for b in self.buffers if b.first <= pos <= b.last]


def _align_up(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def _validate(buffers: Sequence[ArenaBuffer], alignment: int) -> None:
    if alignment < 1:
        raise ValueError(f"alignment must be >= 1, got {alignment}")
    seen: set[str] = set()
    for b in buffers:
        if b.name in seen:
            raise ValueError(f"duplicate arena buffer name {b.name!r}")
        seen.add(b.name)
        if b.size < 0:
            raise ValueError(f"arena buffer {b.name!r} has a negative size {b.size}")
        if b.first < -1:
            raise ValueError(f"arena buffer {b.name!r}: first={b.first} < -1")
        if b.last < b.first:
            raise ValueError(f"arena buffer {b.name!r}: last={b.last} < first={b.first}")


def largest_live_bytes(buffers: Sequence[ArenaBuffer]) -> int:
    """Max over op positions of the summed sizes of the buffers live there (0 for no buffers).

    The maximum is reached at some buffer's ``first`` position (the live set only grows there).
    """
    if not buffers:
        return 0
    first = np.array([b.first for b in buffers], dtype=np.int64)
    last = np.array([b.last for b in buffers], dtype=np.int64)
    size = np.array([b.size for b in buffers], dtype=np.int64)
    # at position p: the sizes of buffers with first <= p, less those with last < p (a sweep, n log n)
    by_first, by_last = np.argsort(first, kind="stable"), np.argsort(last, kind="stable")
    started = np.concatenate([[0], np.cumsum(size[by_first])])
    ended = np.concatenate([[0], np.cumsum(size[by_last])])
    live = (started[np.searchsorted(first[by_first], first, side="right")]
            - ended[np.searchsorted(last[by_last], first, side="left")])
    return int(live.max())


class _TimeIndex:
    """Placed buffers by the blocks of op positions their lifetimes touch, so a buffer meets only the buffers
    live near it (issue 38: walking every placed buffer made planning quadratic in layers)."""

    WIDTH = 32

    def __init__(self, buffers: Sequence[ArenaBuffer]):
        self.buffers = buffers
        self.blocks: dict[int, list[tuple[int, int, int]]] = {}

    def _span(self, b: ArenaBuffer) -> range:
        return range((b.first + 1) // self.WIDTH, (b.last + 1) // self.WIDTH + 1)

    def add(self, b: ArenaBuffer, entry: tuple[int, int, int]) -> None:
        for k in self._span(b):
            self.blocks.setdefault(k, []).append(entry)

    def overlapping(self, b: ArenaBuffer) -> set[tuple[int, int, int]]:
        """The entries ``(offset, placement order, buffer index)`` of placed buffers live with ``b``."""
        found: set[tuple[int, int, int]] = set()
        for k in self._span(b):
            found.update(self.blocks.get(k, ()))
        bufs = self.buffers
        return {e for e in found if not (bufs[e[2]].first > b.last or b.first > bufs[e[2]].last)}


def plan_arena(buffers: Sequence[ArenaBuffer], alignment: int = 4) -> ArenaPlan:
    """Place ``buffers`` in one arena with TFLM's ``GreedyMemoryPlanner`` algorithm (see the module doc).

    Raises ``ValueError`` for duplicate names, negative sizes, ``first < -1`` or ``last < first``.
    """
    buffers = list(buffers)
    _validate(buffers, alignment)
    sizes = [_align_up(b.size, alignment) for b in buffers]
    order = sorted(range(len(buffers)), key=lambda i: -sizes[i])   # stable: ties keep input order
    index = _TimeIndex(buffers)
    offsets: dict[str, int] = {}
    for seq, i in enumerate(order):
        b = buffers[i]
        candidate = 0
        # the placed buffers whose lifetime overlaps b's, in offset order (ties: earlier-placed first)
        for off, _, j in sorted(index.overlapping(b)):
            if off - candidate >= sizes[i]:                 # the gap before this buffer is big enough
                break
            candidate = max(candidate, off + sizes[j])
        offsets[b.name] = candidate
        index.add(b, (candidate, seq, i))
    size = max((offsets[b.name] + s for b, s in zip(buffers, sizes)), default=0)
    return ArenaPlan(offsets=offsets, size=size, largest_live=largest_live_bytes(buffers), buffers=buffers,
                     alignment=alignment)


def check_plan(plan: ArenaPlan) -> None:
    """Raise ``ValueError`` unless every buffer has an aligned, in-arena offset and no two buffers
    live at the same position share a byte (TFLM's ``DoAnyBuffersOverlap``, on unaligned sizes)."""
    bufs = plan.buffers
    for b in bufs:
        if b.last < b.first:
            raise ValueError(f"arena buffer {b.name!r}: last={b.last} < first={b.first}")
        off = plan.offsets.get(b.name)
        if off is None:
            raise ValueError(f"arena buffer {b.name!r} has no offset")
        if off < 0 or off + b.size > plan.size:
            raise ValueError(f"arena buffer {b.name!r} [{off}, {off + b.size}) is outside the arena of {plan.size}")
        if off % plan.alignment:
            raise ValueError(f"arena buffer {b.name!r} offset {off} is not {plan.alignment}-aligned")
    if len(bufs) < 2:
        return
    first = np.array([b.first for b in bufs], dtype=np.int64)
    last = np.array([b.last for b in bufs], dtype=np.int64)
    start = np.array([plan.offsets[b.name] for b in bufs], dtype=np.int64)
    end = start + np.array([b.size for b in bufs], dtype=np.int64)
    in_time = (first[:, None] <= last[None, :]) & (first[None, :] <= last[:, None])
    in_memory = (start[:, None] < end[None, :]) & (start[None, :] < end[:, None])
    clash = np.triu(in_time & in_memory, k=1)
    if clash.any():
        i, j = (int(v) for v in np.argwhere(clash)[0])
        a, b = bufs[i], bufs[j]
        raise ValueError(f"arena buffers {a.name!r} [{start[i]}, {end[i]}) live {a.first}..{a.last} and "
                         f"{b.name!r} [{start[j]}, {end[j]}) live {b.first}..{b.last} overlap")


def arena_warning(plan: ArenaPlan, weight_bytes: int) -> str | None:
    """A one-line warning when the arena, or the arena plus the weights, exceeds one tile's SRAM; else None."""
    if plan.size > TILE_BYTES:
        return (f"tensor arena of {plan.size} bytes exceeds one xcore.ai tile's {TILE_BYTES}-byte SRAM "
                f"(largest live set {plan.largest_live} bytes)")
    total = plan.size + weight_bytes
    if total > TILE_BYTES:
        return (f"tensor arena {plan.size} + weights {weight_bytes} = {total} bytes exceed one xcore.ai tile's "
                f"{TILE_BYTES}-byte SRAM: keep the weights in flash / external memory or split the network")
    return None
