"""Replays issue [Robust]'s compare / data findings as the probe wrote them (6, 9, 4c, 4d, 4a, 3b, 5) and prints,
for each, the exit code, the wall time, the command's peak resident memory, its stderr lines and what it left.

    python bench/compare_faults.py [--only 6,9,...]

Each case runs ``hexnn-import`` as a user would (a new process), on the bundled digits / small models:

- 6: an extra ``shard_000099.npz`` (a copy of shard 3) in a finished 15-shard ``--results`` folder, ``--resume``;
- 9: ``--data generated:1000000000000`` for 15 s (killed then): the peak memory, against a 64-sample run;
- 4c: ``--results`` in a read-only folder (``chmod 555``; for root a read-only tmpfs, when ``mount`` works);
- 4d: a 182 M-pixel PNG (under 1 MB) in ``--data`` and in ``--calibration``;
- 4a: a loopback ``dask scheduler`` and two ``dask worker --no-nanny`` processes, both killed after two shards;
- 3b: a loopback port that accepts and never answers, as ``--scheduler``;
- 5: ``compare --jobs 2`` killed with SIGKILL, then SIGTERM, once its workers run: its processes alive 3 s later.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
M = ROOT / "models"
CLI = [sys.executable, "-m", "hexnn_import.cli"]
DIGITS = [str(M / "digits_int8.tflite"), "--float-model", str(M / "digits_float.tflite"), "--data",
          str(M / "digits_test.npz")]


def run(args: list[str], timeout: float = 300, on_start=None) -> dict:  # type: ignore[no-untyped-def]
    """Run ``hexnn-import ARGS``: exit code, seconds, peak RSS (MB), stderr lines."""
    err = tempfile.TemporaryFile()
    start = time.monotonic()
    proc = subprocess.Popen(CLI + args, stdout=subprocess.DEVNULL, stderr=err)
    if on_start:
        on_start(proc)
    timer = threading.Timer(timeout, lambda: proc.poll() is None and proc.kill())
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    lines = [x for x in err.read().decode(errors="replace").splitlines() if x.strip()]
    return {"rc": proc.returncode, "s": time.monotonic() - start, "mb": usage.ru_maxrss / 1024, "err": lines}


def show(finding: str, what: str, r: dict) -> None:
    last = r["err"][-1] if r["err"] else ""
    print(f"{finding:3} {what:44} exit {r['rc']:4}  {r['s']:6.1f} s  {r['mb']:6.0f} MB  {len(r['err'])} stderr "
          f"line(s): {last[:150]}")


def case_6(tmp: Path) -> None:
    results = tmp / "r6"
    run(["compare", *DIGITS, "--jobs", "1", "--results", str(results)])
    shutil.copy(results / "shard_000003.npz", results / "shard_000099.npz")
    show("6", "extra shard_000099.npz, --resume", run(["compare", *DIGITS, "--jobs", "1", "--results", str(results),
                                                          "--resume"]))


def case_9(tmp: Path) -> None:
    small = ["compare", str(M / "small_int8.tflite"), "--preprocess", "mobilenet", "--jobs", "1", "--data"]
    show("9", "generated:64 (for scale)", run(small + ["generated:64"]))
    show("9", "generated:1000000000000, killed at 15 s", run(small + ["generated:1000000000000"], timeout=15))


def _readonly(folder: Path) -> bool:
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return True
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)],
                          capture_output=True).returncode == 0


def case_4c(tmp: Path) -> None:
    folder = tmp / "ro"
    if not _readonly(folder):
        print("4c  (skipped: root without mount cannot make a read-only folder)")
        return
    try:
        show("4c", "--results in a read-only folder", run(["compare", str(M / "small_int8.tflite"), "--random", "2",
                                                             "--results", str(folder / "res")]))
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(folder)], check=False)


def case_4d(tmp: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "robust"))
    from test_image_bomb import _bomb  # the test's 182 M-pixel PNG
    import numpy as np
    from PIL import Image

    (tmp / "img").mkdir()
    Image.fromarray(np.zeros((30, 30, 3), np.uint8)).save(tmp / "img" / "a.png")
    _bomb(tmp / "img" / "b.png")
    show("4d", "image bomb in --data", run(["compare", str(M / "small_int8.tflite"), "--data", str(tmp / "img"),
                                            "--preprocess", "mobilenet", "--jobs", "1"]))
    show("4d", "image bomb in --calibration", run(["convert", str(M / "small_float.tflite"), "--calibration",
                                                   str(tmp / "img"), "--preprocess", "mobilenet", "-o",
                                                   str(tmp / "g.hexnn.json")]))


def case_4a(tmp: Path) -> None:
    log = open(tmp / "scheduler.log", "w+")
    scheduler = subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
                                 stdout=log, stderr=log)
    try:
        address = ""
        for _ in range(300):
            text = (tmp / "scheduler.log").read_text()
            if "tcp://127.0.0.1:" in text:
                address = "tcp://" + text.split("tcp://", 1)[1].split()[0]
                break
            time.sleep(0.1)
        workers = [subprocess.Popen(["dask", "worker", address, "--no-nanny", "--nthreads", "1", "--no-dashboard"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
        time.sleep(5)
        results = tmp / "r4a"

        def kill_after_two_shards(proc: subprocess.Popen) -> None:
            def watch() -> None:
                while proc.poll() is None and len(list(results.glob("shard_*.npz"))) < 2:
                    time.sleep(0.02)
                for w in workers:
                    w.kill()
            threading.Thread(target=watch, daemon=True).start()

        show("4a", "every Dask worker killed after two shards", run(["compare", *DIGITS, "--scheduler", address,
                                                                    "--results", str(results)],
                                                                   on_start=kill_after_two_shards))
        for w in workers:
            w.wait()
    finally:
        scheduler.terminate()
        scheduler.wait()


def case_3b(tmp: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: [held.append(server.accept()[0]) for _ in range(8)], daemon=True).start()
    show("3b", "--scheduler that accepts and never answers",
         run(["compare", str(M / "small_int8.tflite"), "--random", "2", "--scheduler",
              f"tcp://127.0.0.1:{server.getsockname()[1]}"], timeout=120))
    server.close()


def _children(pid: int) -> set[int]:
    kids = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"PPid:\t{pid}\n" in status.read_text():
                kids.add(int(status.parent.name))
        except OSError:
            continue
    return kids


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def case_5(tmp: Path) -> None:
    for sig in (signal.SIGKILL, signal.SIGTERM):
        proc = subprocess.Popen(CLI + ["compare", str(M / "small_int8.tflite"), "--data", "generated:100000",
                                       "--preprocess", "mobilenet", "--jobs", "2"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        while proc.poll() is None and len(_children(proc.pid)) < 3:
            time.sleep(0.05)
        time.sleep(4)  # the workers compare shards
        kids = _children(proc.pid)
        proc.send_signal(sig)
        proc.wait()
        time.sleep(3)
        alive = [k for k in kids if _running(k)]
        print(f"5   compare --jobs 2 killed with {sig.name:8}: {len(kids)} child processes, {len(alive)} running 3 s "
              f"later")
        for k in alive:
            os.kill(k, signal.SIGKILL)


CASES = {"6": case_6, "9": case_9, "4c": case_4c, "4d": case_4d, "4a": case_4a, "3b": case_3b, "5": case_5}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(CASES), help="findings to replay, e.g. 6,4a")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            (Path(tmp) / name).mkdir()
            CASES[name](Path(tmp) / name)


if __name__ == "__main__":
    main()
