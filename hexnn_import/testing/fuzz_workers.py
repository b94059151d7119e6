"""The fuzzer's worker processes: each loads one file at a time under a time limit and a memory limit.

Workers are forked (no re-import, and the loader need not be picklable),
so a case that hangs is killed after ``case_limit_s`` and its worker
replaced, and ``RLIMIT_AS`` caps each worker's address space at what it
held when forked plus ``memory_mb``: an absurd allocation becomes a
MemoryError there instead of swapping the machine. A worker that dies
(a crash in C code) is reported and replaced too.
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


def run_jobs(jobs: Iterator[Job], load: Callable[[str], Any], suffix: str, on_result: Callable[[Job, str, str], None],
             workers: int = 2, budget_s: float = 50.0, case_limit_s: float = 10.0, memory_mb: int = 1024) -> None:
    """Load every job's bytes (written to a file ending in ``suffix``) until ``jobs`` or ``budget_s`` runs out.

    ``on_result(job, outcome, detail)`` is called once per job, in completion
    order; hangs and crashes are reported as outcomes ``hang`` / ``crash``.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    start = time.monotonic()
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
            on_result(slot.job, outcome, detail)
            slot.job = None
            if restart:
                _kill(slot)
                slots[k] = spawn(k)

        slots = [spawn(k) for k in range(workers)]
        exhausted = False
        try:
            while True:
                for slot in slots:
                    if slot.job is None and not exhausted:
                        job = next(jobs, None)
                        if job is None or time.monotonic() - start > budget_s:
                            exhausted = True
                            continue
                        slot.job, slot.started = job, time.monotonic()
                        slot.conn.send((job.index, job.data))
                busy = [s.conn for s in slots if s.job is not None]
                if not busy:
                    return
                ready = wait(busy, timeout=0.2)
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
                    elif time.monotonic() - slot.started > case_limit_s:
                        done(k, "hang", f"no result after {case_limit_s:g} s", restart=True)
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


__all__ = ["Job", "classify", "run_jobs"]
