"""Fewer cyclic-garbage collections while a pass builds many long-lived objects (issue 38).

CPython's collector (Python docs, ``gc.set_threshold``; the CPython developer guide, "Garbage collector
design", "Optimization: incremental collection of the oldest generation") runs a young collection every 700
container allocations and a full one whenever the surviving objects have grown by a quarter. Lowering a
10,000-layer chain allocates ~700,000 objects that all survive (graph nodes, refs, kernel calls, network
entries): measured on the 10,000-ADD chain, twelve full collections scan the whole heap and free nothing
(``collected=0`` each), ~1.5 CPU s of an export's ~11.

:func:`fewer_collections` raises the young threshold for the duration of a block and puts the caller's
thresholds back after it (nesting keeps the outermost's), so garbage cycles are still collected, only less
often; nothing else about the objects changes.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

#: young-generation threshold inside a block (CPython's default is 700); at most this many container objects
#: wait for their collection (a few MB), and the older generations' counts scale with it
YOUNG_THRESHOLD = 100_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with the young-generation threshold at :data:`YOUNG_THRESHOLD` (if lower), restored after."""
    saved = gc.get_threshold()
    if saved[0] == 0 or saved[0] >= YOUNG_THRESHOLD:  # collection off, or already as relaxed: leave it
        yield
        return
    gc.set_threshold(YOUNG_THRESHOLD, *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)
