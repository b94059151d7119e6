"""The fuzzer's worker processes: each loads one file at a time under a time limit and a memory limit.

Workers are forked (no re-import, and the loader need not be picklable),
so a case that hangs is killed and its worker replaced, and ``RLIMIT_AS``
caps each worker's address space at what it held when forked plus
``memory_mb``: an absurd allocation becomes a MemoryError there instead of
swapping the machine. A worker that dies (a crash in C code) is reported
and replaced too.

A hang is counted in work, not in time (issue [First hour]: a wall-clock
limit flaked on a busy 2-core machine): a case is a ``hang`` when its
worker has used more than ``case_limit_s`` seconds of CPU on it (Linux
``/proc/PID/stat``; a loaded machine slows a case down but does not add to
its CPU time), or when it has waited ``wall_limit_s`` seconds of wall clock
(default 10 x ``case_limit_s``: a case stuck without computing). Where
``/proc`` is missing only the wall-clock limit applies. :func:`run_jobs`
runs every job unless it is given a ``budget_s`` (the bench's campaigns),
and returns the slowest case's CPU and wall-clock seconds, from which the
tests' limits are sized (docs/robustness.md).
"""
from __future__ import annotations

import os
import tempfile
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from hexnn_import.errors import HexnnError


class Job(Protocol):
    """What a worker needs of a case."""

    index: int
    data: bytes


def classify(load: Callable[[str], Any], path: str) -> tuple[str, str]:
    """(outcome, detail) of loading one file (outcomes: see :mod:`hexnn_import.testing.fuzz`)."""
    try:
        load(path)
        return "ok", ""
    except HexnnError as exc:
        msg = str(exc)
        if not msg.strip() or "\n" in msg:
            return "bad-message", f"{type(exc).__name__}: {msg[:200]!r}"
        unguarded = getattr(exc, "unguarded_at", None)
        if unguarded:
            return "netted", unguarded
        return "error", type(exc).__name__
    except MemoryError as exc:
        return "memory", f"{type(exc).__name__}: {str(exc)[:120]} at {_where(exc)}"
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - sorting every escape is the point
        return "escape", f"{type(exc).__name__}: {str(exc)[:120]} at {_where(exc)}"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "hexnn_import" in f.filename or "/ops/" in f.filename] or frames
    f = own[-1] if own else None
    return f"{Path(f.filename).name}:{f.lineno} ({f.name})" if f else "?"


def _limit_memory(extra_mb: int) -> None:
    try:
        import resource

        with open("/proc/self/statm") as fh:
            current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = current + extra_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ImportError, OSError, ValueError):  # not Linux: no limit
        pass


def _worker(conn: Connection, load: Callable[[str], Any], path: str, memory_mb: int) -> None:
    import warnings

    warnings.simplefilter("ignore")  # numpy's overflow warnings on garbage data are expected here
    _limit_memory(memory_mb)
    while True:
        job = conn.recv()
        if job is None:
            return
        index, data = job
        with open(path, "wb") as fh:  # the fuzzer's own scratch file
            fh.write(data)
        conn.send((index,) + classify(load, path))


@dataclass
class _Slot:
    proc: Any
    conn: Connection
    job: Job | None = None
    started: float = 0.0
    cpu0: float | None = None


@dataclass
class Timing:
    """The slowest finished case of a run (a hang or crash excluded): CPU and wall-clock seconds, its index."""

    cpu_s: float = 0.0
    cpu_case: int | None = None
    wall_s: float = 0.0
    wall_case: int | None = None

    def add(self, index: int, cpu_s: float | None, wall_s: float) -> None:
        if cpu_s is not None and (self.cpu_case is None or cpu_s > self.cpu_s):
            self.cpu_s, self.cpu_case = cpu_s, index
        if self.wall_case is None or wall_s > self.wall_s:
            self.wall_s, self.wall_case = wall_s, index

    def describe(self, cpu_limit_s: float, wall_limit_s: float) -> str:
        """``slowest case 0.41 s CPU (case 12), 0.9 s wall (case 40); hang at 5 s CPU / 50 s wall``."""
        return (f"slowest case {self.cpu_s:.2f} s CPU (case {self.cpu_case}), {self.wall_s:.2f} s wall (case "
                f"{self.wall_case}); hang at {cpu_limit_s:g} s CPU / {wall_limit_s:g} s wall")


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` has used (``/proc/PID/stat`` fields 14 and 15), None where
    there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, ValueError, IndexError):
        return None


def run_jobs(jobs: Iterator[Job], load: Callable[[str], Any], suffix: str, on_result: Callable[[Job, str, str], None],
             workers: int = 2, budget_s: float | None = None, case_limit_s: float = 10.0,
             memory_mb: int = 1024, wall_limit_s: float | None = None) -> Timing:
    """Load every job's bytes (written to a file ending in ``suffix``) until ``jobs`` runs out (or, when given,
    ``budget_s`` seconds have passed: no new job starts after it); the slowest finished case.

    ``on_result(job, outcome, detail)`` is called once per job, in completion
    order; hangs (module doc: ``case_limit_s`` of CPU or ``wall_limit_s``, default
    10 x ``case_limit_s``, of wall clock) and crashes are reported as outcomes
    ``hang`` / ``crash``.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    wall_limit = 10 * case_limit_s if wall_limit_s is None else wall_limit_s
    start = time.monotonic()
    timing = Timing()
    with tempfile.TemporaryDirectory(prefix="hexnn-fuzz-") as folder:

        def spawn(k: int) -> _Slot:
            parent, child = ctx.Pipe()
            path = os.path.join(folder, f"case{k}_{time.monotonic_ns()}{suffix}")
            proc = ctx.Process(target=_worker, args=(child, load, path, memory_mb), daemon=True)
            proc.start()
            child.close()
            return _Slot(proc, parent)

        def done(k: int, outcome: str, detail: str, restart: bool = False) -> None:
            slot = slots[k]
            assert slot.job is not None
            if outcome not in ("hang", "crash"):
                used = cpu_seconds(slot.proc.pid)
                timing.add(slot.job.index, None if used is None or slot.cpu0 is None else used - slot.cpu0,
                           time.monotonic() - slot.started)
            on_result(slot.job, outcome, detail)
            slot.job = None
            if restart:
                _kill(slot)
                slots[k] = spawn(k)

        def hung(slot: _Slot) -> str | None:
            waited = time.monotonic() - slot.started
            used = cpu_seconds(slot.proc.pid)
            cpu = None if used is None or slot.cpu0 is None else used - slot.cpu0
            if cpu is not None and cpu > case_limit_s:
                return f"no result after {case_limit_s:g} s of CPU"
            if waited > wall_limit:
                return f"no result after {wall_limit:g} s" + (f" ({cpu:.1f} s of CPU)" if cpu is not None else "")
            return None

        slots = [spawn(k) for k in range(workers)]
        exhausted = False
        try:
            while True:
                for slot in slots:
                    if slot.job is None and not exhausted:
                        job = next(jobs, None)
                        if job is None or (budget_s is not None and time.monotonic() - start > budget_s):
                            exhausted = True
                            continue
                        slot.job, slot.started = job, time.monotonic()
                        slot.cpu0 = cpu_seconds(slot.proc.pid)
                        slot.conn.send((job.index, job.data))
                busy = [s.conn for s in slots if s.job is not None]
                if not busy:
                    return timing
                ready = wait(busy, timeout=0.1)
                for k, slot in enumerate(slots):
                    if slot.job is None:
                        continue
                    if slot.conn in ready:
                        try:
                            _, outcome, detail = slot.conn.recv()
                        except (EOFError, OSError):
                            done(k, "crash", f"worker died (exit code {slot.proc.exitcode})", restart=True)
                            continue
                        done(k, outcome, detail)
                    elif (why := hung(slot)) is not None:
                        done(k, "hang", why, restart=True)
        finally:
            for slot in slots:
                _stop(slot)


def _kill(slot: _Slot) -> None:
    slot.proc.kill()
    slot.proc.join(timeout=5)
    slot.conn.close()


def _stop(slot: _Slot) -> None:
    """Ask an idle worker to finish; kill it if it does not (or is still busy)."""
    try:
        if slot.job is None and slot.proc.is_alive():
            slot.conn.send(None)
            slot.proc.join(timeout=2)
    except (OSError, ValueError):
        pass
    if slot.proc.is_alive():
        slot.proc.kill()
    slot.proc.join(timeout=5)
    slot.conn.close()


__all__ = ["Job", "Timing", "classify", "cpu_seconds", "run_jobs"]
