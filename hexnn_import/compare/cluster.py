"""Running a compare job's shards on a Dask cluster (``--scheduler ADDRESS``; issues [Scale] and [Robust]).

The shards go to the workers of a running ``dask.distributed`` scheduler (``tcp://host:8786``): the job is
sent to each worker once (``scatter``), then at most two shards per worker are in flight (the workers counted
every few seconds, as they join and leave), the next submitted as one finishes, so neither this process nor the scheduler holds a task per shard of a long run (issue
[Robust] finding 9). Each worker keeps its runners between shards and must read the model and data files at
the same paths. Dask is an optional dependency (``pip install hexnn-import[cluster]``).

No network wait is open-ended (finding 3b): before Dask's client connects, the address must accept a TCP
connection and send its side of Dask's handshake (a scheduler writes it at once) within
:data:`NETWORK_DEADLINE_S`, which also bounds the client's connection, each answer of the scheduler and
each result's transfer; a scheduler that stops answering while shards run is one line. A cluster that
loses its workers (the job sent to them is lost with them: Dask cancels every shard, ``FutureCancelledError
... already forgotten``; or a shard's worker died too often: ``KilledWorker``), or has had no worker for
:data:`NO_WORKER_DEADLINE_S`, is one line too (finding 4a); the shards that finished were handed to
``on_done`` (and so to ``--results``) as they arrived.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import socket
import time
from typing import Any, Callable, Iterable, Iterator

from hexnn_import.compare.parallel import WorkersLost
from hexnn_import.compare.results import CompareResult
from hexnn_import.compare.shards import Job, run_shard
from hexnn_import.errors import InputDataError, ResourceError

OnDone = Callable[[int, CompareResult], None]

#: seconds any one network step may take: connect, handshake, an answer of the scheduler, a result's transfer
NETWORK_DEADLINE_S = 10.0
#: seconds the cluster may have no worker (none joined, or all were lost) before the run stops
NO_WORKER_DEADLINE_S = 30.0
#: seconds to wait for a shard before looking at the cluster (its workers, whether the scheduler answers)
POLL_S = 1.0
#: seconds between two looks at the cluster while shards finish (the number of workers sets the shards in flight)
LOOK_S = 5.0


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``tcp://host:port`` (or bare ``host:port``) address; None for other protocols."""
    from urllib.parse import urlsplit

    if "://" in address and not address.startswith("tcp://"):
        return None
    try:
        parts = urlsplit(address if "://" in address else f"tcp://{address}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or not port:
        raise InputDataError(f"--scheduler {address}: expected tcp://host:port")
    return host, port


def check_scheduler(address: str) -> None:
    """InputDataError, within :data:`NETWORK_DEADLINE_S`, when nothing listens at ``address`` or what listens
    does not start Dask's handshake (module doc)."""
    where = _host_port(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=NETWORK_DEADLINE_S) as sock:
            sock.settimeout(NETWORK_DEADLINE_S)
            first = sock.recv(1)
    except socket.timeout as exc:
        raise InputDataError(f"--scheduler {address}: accepted the connection but sent nothing within "
                             f"{NETWORK_DEADLINE_S:g} s (not a Dask scheduler, or a stalled one)") from exc
    except OSError as exc:
        raise InputDataError(f"--scheduler {address}: cannot reach a Dask scheduler there ({exc})") from exc
    if not first:
        raise InputDataError(f"--scheduler {address}: closed the connection without Dask's handshake")


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's client logs its connection troubles on stderr: the command says them in its one line instead."""
    loggers = [logging.getLogger(n) for n in ("distributed.client", "distributed.comm", "distributed.core",
                                              "distributed.batched", "distributed.utils")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def run_dask(job: Job, indices: Iterable[int], address: str, on_done: OnDone) -> None:
    """Run the shards ``indices`` on the Dask cluster at ``address`` (module doc)."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise InputDataError("--scheduler needs Dask's distributed scheduler: pip install hexnn-import[cluster]") \
            from exc
    check_scheduler(address)
    with _quiet_dask():
        try:
            client = Client(address, timeout=NETWORK_DEADLINE_S, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputDataError(f"--scheduler {address}: cannot reach a Dask scheduler there ({exc})") from exc
        try:
            _run(client, job, iter(indices), address, on_done)
        finally:
            with contextlib.suppress(Exception):
                client.close(timeout=NETWORK_DEADLINE_S)


def _run(client: Any, job: Job, todo: Iterator[int], address: str, on_done: OnDone) -> None:
    from distributed import as_completed

    try:
        shared = client.scatter(job, broadcast=True, timeout=NO_WORKER_DEADLINE_S)  # once to each worker
    except TimeoutError as exc:
        raise ResourceError(f"--scheduler {address}: no worker joined the cluster within {NO_WORKER_DEADLINE_S:g} s"
                            ) from exc
    finished = as_completed(loop=client.loop)
    where: dict[Any, int] = {}
    window = 2 * max(1, _workers(client, address))

    def fill() -> None:  # up to two shards per worker in flight
        for i in itertools.islice(todo, max(0, window - len(where))):
            fut = client.submit(run_shard, shared, i, pure=False)
            where[fut.key] = i
            finished.add(fut)

    fill()
    idle_since: float | None = None
    looked = time.monotonic()
    while where:
        done = _next_done(finished)
        for fut in done:
            i = where.pop(fut.key)
            on_done(i, _result(fut, i, address))
        if done and time.monotonic() - looked < LOOK_S:
            fill()
            continue
        workers, looked = _workers(client, address), time.monotonic()  # workers join and leave
        window = 2 * max(1, workers)
        fill()
        if done or workers:
            idle_since = None
            continue
        idle_since = idle_since or time.monotonic()
        if time.monotonic() - idle_since > NO_WORKER_DEADLINE_S:
            raise WorkersLost(f"--scheduler {address}: the cluster has had no worker for "
                              f"{NO_WORKER_DEADLINE_S:g} s (lost every worker)")


def _next_done(finished: Any) -> list[Any]:
    """The futures that finished, waiting up to :data:`POLL_S` for one."""
    deadline = time.monotonic() + POLL_S
    while True:
        batch = finished.next_batch(block=False)
        if batch or time.monotonic() >= deadline:
            return batch
        time.sleep(0.02)


def _workers(client: Any, address: str) -> int:
    """The number of workers the scheduler has now (one answer, under :data:`NETWORK_DEADLINE_S`)."""
    try:
        info = client.sync(client.scheduler.identity, callback_timeout=NETWORK_DEADLINE_S)
    except (OSError, TimeoutError) as exc:
        raise WorkersLost(f"--scheduler {address}: the scheduler stopped answering ({type(exc).__name__}: "
                            f"{exc})") from exc
    return int(info.get("n_workers", len(info.get("workers", {}))))


def _result(fut: Any, index: int, address: str) -> CompareResult:
    """A finished shard's result; the loss of its workers one line (module doc)."""
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError

    try:
        return fut.result(timeout=NETWORK_DEADLINE_S)
    except (FutureCancelledError, KilledWorker) as exc:
        raise WorkersLost(f"--scheduler {address}: the cluster lost the workers that ran shard {index} "
                            f"({type(exc).__name__}: {exc})") from exc
    except TimeoutError as exc:
        raise WorkersLost(f"--scheduler {address}: the result of shard {index} did not arrive within "
                            f"{NETWORK_DEADLINE_S:g} s") from exc
