"""``compare --scheduler`` under network and cluster faults (issue [Robust] findings 3b and 4a): an address that
accepts the connection and never answers fails in seconds (it hung past 600 s), before the model is read; a
cluster that loses every worker is one line, exit 2 (was ``FutureCancelledError``, exit 3), the finished shards
kept in ``--results`` for ``--resume``, which then reports what a run on one process reports."""
from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from hexnn_import.compare import CompareOptions, cluster, command, compare
from hexnn_import.compare.report import to_json
from hexnn_import.errors import InputDataError, ResourceError

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "small_int8.tflite")


@pytest.fixture
def silent_server() -> Iterator[tuple[str, list[socket.socket]]]:
    """A loopback port that accepts every connection and never writes a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}", accepted
    server.close()
    for s in accepted:
        s.close()


@pytest.fixture
def no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def build_runners(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the model was read before the scheduler was checked")

    monkeypatch.setattr(command, "build_runners", build_runners)


def test_an_address_that_never_answers_fails_in_seconds(silent_server: tuple[str, list[socket.socket]], no_run: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    address, accepted = silent_server
    monkeypatch.setattr(cluster, "NETWORK_DEADLINE_S", 1.0)
    start = time.monotonic()
    with pytest.raises(InputDataError, match=r"accepted the connection but sent nothing within 1 s") as err:
        compare(CompareOptions(MODEL, random=2, scheduler=address))
    assert time.monotonic() - start < 3.0 and accepted and "\n" not in str(err.value)


def test_an_address_that_hangs_up_at_once_is_one_line(no_run: None) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    try:
        with pytest.raises(InputDataError, match=r"closed the connection without Dask's handshake"):
            compare(CompareOptions(MODEL, random=2, scheduler=f"tcp://127.0.0.1:{server.getsockname()[1]}"))
    finally:
        server.close()


def test_a_cluster_without_workers_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from distributed import LocalCluster

    monkeypatch.setattr(cluster, "NO_WORKER_DEADLINE_S", 0.5)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty:
        with pytest.raises(ResourceError, match=r"no worker joined the cluster within 0.5 s"):
            compare(CompareOptions(MODEL, random=2, scheduler=empty.scheduler_address))


def _kill_when_a_shard_is_done(results: Path, pids: list[int]) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(results.glob("shard_*.npz")):
            time.sleep(0.005)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_losing_every_worker_is_one_line_and_the_finished_shards_resume(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    results = tmp_path / "results"
    opts = dict(data="generated:96", preprocess="mobilenet", results=str(results))  # 3 shards
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        with Client(local, set_as_default=False) as client:
            pids = list(client.run(os.getpid).values())
        watcher = _kill_when_a_shard_is_done(results, pids)
        with pytest.raises(ResourceError, match=r"the cluster lost the workers that ran shard \d+ \(") as err:
            compare(CompareOptions(MODEL, scheduler=local.scheduler_address, **opts))  # type: ignore[arg-type]
        watcher.join()
    kept = sorted(results.glob("shard_*.npz"))
    assert 1 <= len(kept) < 3 and "\n" not in str(err.value)
    assert str(err.value).endswith(f"; {len(kept)} of 3 shards are finished in --results {results}: the same "
                                   f"command with --resume runs the rest")
    stamps = {p.name: p.stat().st_mtime_ns for p in kept}
    # the run is the same whatever runs its shards: resumed here, it reports what one process reports
    resumed = to_json(compare(CompareOptions(MODEL, jobs=1, resume=True, **opts)))  # type: ignore[arg-type]
    assert {p.name: p.stat().st_mtime_ns for p in kept} == stamps
    whole = to_json(compare(CompareOptions(MODEL, jobs=1, data=opts["data"], preprocess="mobilenet")))
    assert json.dumps(resumed) == json.dumps(whole)
