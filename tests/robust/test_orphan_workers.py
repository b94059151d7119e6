"""Killing ``compare --jobs 2`` leaves no worker running (issue [Robust] finding 5: two 382 MB workers were alive
3 minutes later): each worker watches its parent and exits with it, whether the command gets SIGKILL or
SIGTERM, while the workers compare shards or are still starting. Processes are read from /proc (no psutil)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "small_int8.tflite")

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads processes from /proc")


def _children(pid: int) -> set[int]:
    kids = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:  # gone meanwhile
            continue
        if fields.get("PPid", "").strip() == str(pid):
            kids.add(int(status.parent.name))
    return kids


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for a parent that does not reap)."""
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_compare_jobs_2_leaves_no_worker(sig: signal.Signals, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "hexnn_import.cli", "compare", MODEL, "--data", "generated:100000", "--preprocess",
           "mobilenet", "--jobs", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2 and proc.poll() is None:
            workers = {k for k in _children(proc.pid) if b"spawn_main" in _cmdline(k)}
            time.sleep(0.02)
        assert len(workers) == 2, "compare --jobs 2 started no two workers"
        kids = _children(proc.pid)  # the workers and multiprocessing's resource tracker
    finally:
        proc.send_signal(sig)
        proc.wait()
    deadline = time.monotonic() + 30  # a worker still importing exits when it starts: after its imports
    while time.monotonic() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.05)
    left = sorted(k for k in kids if _alive(k))
    for k in left:
        os.kill(k, signal.SIGKILL)
    assert not left, f"processes of the killed compare still running: {left}"
