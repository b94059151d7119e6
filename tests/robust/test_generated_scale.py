"""``generated:N`` of any N streams in constant memory and says how many samples it will run; the resume
bookkeeping is linear (issue [Robust] finding 9: ``generated:1000000000000`` reached 3 GB before any shard ran;
resuming half of a 2M-sample run rebuilt ``set(finished)`` once per shard)."""
from __future__ import annotations

import io
import time
import tracemalloc
from pathlib import Path

import pytest
from rich.console import Console

from hexnn_import.compare import CompareOptions, compare, parallel
from hexnn_import.compare.shards import Pending

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "small_int8.tflite")


class _FirstShard(Exception):
    """Raised by the stand-in of ``run_shard``: the run reached its first shard."""


def test_a_trillion_generated_images_reach_the_first_shard_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reached: list[int] = []

    def first_shard(job, index):  # type: ignore[no-untyped-def]
        reached.append(index)
        raise _FirstShard

    monkeypatch.setattr(parallel, "run_shard", first_shard)
    err = io.StringIO()
    opts = CompareOptions(MODEL, data="generated:1000000000000", preprocess="mobilenet", jobs=1)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(_FirstShard):
            compare(opts, Console(file=err, width=400))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert reached == [0] and time.perf_counter() - start < 4.0
    assert peak < 64 << 20, f"{peak / 2**20:.0f} MiB before the first shard"
    said = err.getvalue().splitlines()
    assert said[0].startswith("compare: generated:1000000000000:0 (mobilenet") and said[0].endswith(
        ": 1000000000000 samples in 31250000000 shards of 32, made as they run"), said


def test_the_shards_left_to_run_are_made_in_linear_time() -> None:
    n = 2_000_000  # half of a resumed run of 64M samples finished
    start = time.perf_counter()
    todo = Pending(n, range(0, n, 2))
    assert len(todo) == n // 2
    left = list(todo)
    assert left[:3] == [1, 3, 5] and left[-1] == n - 1 and len(left) == n // 2
    assert time.perf_counter() - start < 3.0  # a set per shard: hours
    huge = iter(Pending(31_250_000_000))
    assert [next(huge) for _ in range(3)] == [0, 1, 2]  # nothing made in advance
