"""compare's progress over a data set (issue [First hour] finding 8): a bar on a terminal, plain lines
when piped.

On a terminal, ``rich``'s bar (samples, rate, time left), removed when the run ends. Piped (``| tee``, a CI
log) no bar can be drawn, so one line goes to stderr every :func:`progress_every` seconds (10 by default,
``$HEXNN_PROGRESS_EVERY``) from a timer thread - also while one long shard is still running - and, when it
printed any, one at the end (a run shorter than the interval prints none: its report follows at once)::

    compare: 96/450 samples (3/15 shards) 21 s, 4.6 samples/s

A resumed run (``--resume``) says first, in both cases, how many finished shards it reused
(:func:`resumed_line`). docs/compare.md, "Data sets at scale", describes both.
"""
from __future__ import annotations

import os
import threading
import time
from types import TracebackType
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

#: the environment variable that sets the seconds between two piped progress lines
EVERY_ENV = "HEXNN_PROGRESS_EVERY"
#: seconds between two piped progress lines when the environment does not say
DEFAULT_EVERY_S = 10.0


def progress_every() -> float:
    """Seconds between two piped progress lines: ``$HEXNN_PROGRESS_EVERY`` when it is a positive number,
    else :data:`DEFAULT_EVERY_S`."""
    try:
        every = float(os.environ.get(EVERY_ENV, ""))
    except ValueError:
        return DEFAULT_EVERY_S
    return every if every > 0 else DEFAULT_EVERY_S


def resumed_line(folder: str, reused: int, shards: int, samples: int, total: int) -> str:
    """``compare: --resume: reused 3 of 15 shards (96 of 450 samples) in DIR; 12 to run``."""
    return (f"compare: --resume: reused {reused} of {shards} shards ({samples} of {total} samples) in {folder}; "
            f"{shards - reused} to run")


class Reporter(Protocol):
    """What :func:`hexnn_import.compare.command.compare` tells a progress display."""

    def advance(self, samples: int) -> None: ...

    def __enter__(self) -> "Reporter": ...

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...


class _Counts:
    """Samples and shards done, the samples this run compared, and when it started."""

    def __init__(self, total: int, shards: int, samples_done: int, shards_done: int) -> None:
        self.total, self.shards = total, shards
        self.samples, self.shards_done = samples_done, shards_done
        self.ran = 0
        self.start = time.perf_counter()
        self.lock = threading.Lock()

    def advance(self, samples: int) -> None:
        with self.lock:
            self.samples += samples
            self.shards_done += 1
            self.ran += samples

    def rate(self) -> str:
        elapsed = time.perf_counter() - self.start
        return f"{self.ran / max(elapsed, 1e-9):.1f} samples/s" if self.ran else ""

    def line(self) -> str:
        with self.lock:
            elapsed = time.perf_counter() - self.start
            rate = self.rate()
            return (f"compare: {self.samples}/{self.total} samples ({self.shards_done}/{self.shards} shards) "
                    f"{elapsed:.0f} s" + (f", {rate}" if rate else ""))


class PlainProgress:
    """Piped progress (module doc): a line every ``every`` seconds from a daemon thread, and one at the end
    when it printed any."""

    def __init__(self, err: Console, counts: _Counts, every: float) -> None:
        self.err, self.counts, self.every = err, counts, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="compare-progress", daemon=True)
        self.printed = 0

    def _print(self) -> None:
        self.err.print(self.counts.line(), markup=False, highlight=False, soft_wrap=True)
        self.err.file.flush()
        self.printed += 1

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self._print()

    def advance(self, samples: int) -> None:
        self.counts.advance(samples)

    def __enter__(self) -> "PlainProgress":
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        if kind is None and self.printed:
            self._print()


class BarProgress:
    """Terminal progress (module doc): ``rich``'s bar, transient."""

    def __init__(self, err: Console, counts: _Counts) -> None:
        self.counts = counts
        columns = (TextColumn("comparing"), BarColumn(), MofNCompleteColumn(), TextColumn("samples"),
                   TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
        self.bar = Progress(*columns, console=err, transient=True)
        self.task = self.bar.add_task("compare", total=counts.total, rate="", completed=counts.samples)

    def advance(self, samples: int) -> None:
        self.counts.advance(samples)
        self.bar.update(self.task, advance=samples, rate=self.counts.rate())

    def __enter__(self) -> "BarProgress":
        self.bar.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.bar.__exit__(kind, exc, tb)


def progress_for(err: Console, total: int, shards: int, samples_done: int = 0, shards_done: int = 0,
                 every: float | None = None) -> Reporter:
    """The bar on a terminal, plain lines every ``every`` seconds (default :func:`progress_every`) otherwise."""
    counts = _Counts(total, shards, samples_done, shards_done)
    if err.is_terminal:
        return BarProgress(err, counts)
    return PlainProgress(err, counts, progress_every() if every is None else every)


__all__ = ["DEFAULT_EVERY_S", "EVERY_ENV", "BarProgress", "PlainProgress", "Reporter", "progress_every",
           "progress_for", "resumed_line"]
