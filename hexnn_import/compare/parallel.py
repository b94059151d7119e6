"""Running a compare job's shards: in this process, on local worker processes, or on a Dask cluster
(issue [Scale]).

- ``--jobs 1``: shard after shard here.
- ``--jobs N``: N worker processes (``concurrent.futures``, started with ``spawn``: a fresh interpreter
  each, so no runtime's threads are forked); each builds the runners once (``shards.runners_for``) and
  takes shards as it finishes them; at most ``2 N`` shards are in flight, so the memory stays that of a
  few shards whatever the data set's size. A worker dies with the command (issue [Robust] finding 5): it
  watches its parent's sentinel (a pipe that closes when the parent ends, however: ``SIGKILL``, ``SIGTERM``,
  a crash) and exits at once; an error or Ctrl-C in the command stops the workers instead of waiting for
  their shards.
- ``--scheduler ADDRESS``: the same function on the workers of a running ``dask.distributed`` scheduler
  (:mod:`.cluster`).

Results come back in any order; ``on_done(index, result)`` is called in this process as each arrives, and
the merge (``merge.py``) puts them in sample order.
"""
from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import multiprocessing.connection
import os
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator, Protocol

from hexnn_import.compare.results import CompareResult
from hexnn_import.compare.shards import Job, run_shard
from hexnn_import.errors import ResourceError

OnDone = Callable[[int, CompareResult], None]


class WorkersLost(ResourceError):
    """The processes running the shards are gone (a ``--jobs`` worker killed, a cluster without its workers): the
    finished shards stand, and ``--resume`` runs the rest."""


class Sized(Protocol):
    """Shard indices, made as they are taken, and how many there are (:class:`.shards.Pending`)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[int]: ...


#: a local worker's job, sent once when the worker starts (tasks then carry only a shard index)
_WORKER_JOB: list[Job] = []


def _start_worker(job: Job) -> None:
    _WORKER_JOB[:] = [job]
    _die_with_parent()


def _die_with_parent() -> None:
    """In a worker process: exit as soon as the process that started it ends (module doc)."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)  # no cleanup to wait for: the worker's shard has nobody to go to

    threading.Thread(target=watch, name="hexnn-parent-watch", daemon=True).start()


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's processes (Python 3.14's ``terminate_workers``; its process table before)."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):
            process.terminate()


def _run_index(index: int) -> CompareResult:
    return run_shard(_WORKER_JOB[0], index)


def default_jobs() -> int:
    """The cores this process may use (``os.process_cpu_count`` from Python 3.13, the affinity mask before)."""
    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        return max(1, count() or 1)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def run_local(job: Job, indices: Sized, jobs: int, on_done: OnDone) -> None:
    """Run the shards ``indices`` (taken one by one as they are submitted: :class:`.shards.Pending`) on ``jobs``
    local processes (1: here), calling ``on_done`` for each."""
    if jobs <= 1 or len(indices) <= 1:
        for i in indices:
            on_done(i, run_shard(job, i))
        return
    ctx = multiprocessing.get_context("spawn")
    todo = iter(indices)
    with ProcessPoolExecutor(max_workers=min(jobs, len(indices)), mp_context=ctx, initializer=_start_worker,
                             initargs=(job,)) as pool:
        running: dict[Future, int] = {}
        try:
            for i in itertools.islice(todo, 2 * jobs):
                running[pool.submit(_run_index, i)] = i
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    i = running.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool as exc:
                        raise WorkersLost(f"a --jobs worker process died while it compared shard {i} (killed, "
                                            f"or out of memory: fewer --jobs, or --max-memory)") from exc
                    on_done(i, result)
                    for j in itertools.islice(todo, 1):  # the next shard, if any, in its place
                        running[pool.submit(_run_index, j)] = j
        except BaseException:  # an error or Ctrl-C: no new shard starts, the running ones stop (module doc)
            _stop_workers(pool)
            pool.shutdown(wait=False, cancel_futures=True)
            raise
