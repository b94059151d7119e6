"""compare at scale (issue [Scale]): images/s with --jobs 1 and --jobs 2 in the same run, and the peak memory of
a long run, on the real keras MobileNetV2 1.0 224 int8 (300.8 M MACs, 3.49 M parameters; models/README.md).

    python bench/compare_scale.py speed [--images 640] [--rounds 2]
    python bench/compare_scale.py memory [--images 10000] [--jobs 1]

``speed`` runs ``hexnn-import compare MODEL --data generated:N --preprocess mobilenet --jobs J`` for J = 1, 2,
1, 2, ... (interleaved, so both see the same machine), each as the user would (a new process: the import,
prepare, worker start-up and the reference LiteRT run all count), and prints the images/s of each run, the
ratio of the medians and whether the JSON reports are identical. ``memory`` runs one such command and samples
the resident memory of its whole process tree (it and its workers, ``/proc``) every 0.2 s: the peak of the
sum, and of the largest process. The images are generated on the fly (``generated:N``: 256 x 320, decoded
nowhere, resized and cropped like files), so the data set takes no memory of its own.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "real" / "keras_mobilenet_v2_1.0_224_int8.tflite"


def command(images: int, jobs: int, out: Path) -> list[str]:
    return [sys.executable, "-m", "hexnn_import.cli", "compare", str(MODEL), "--data", f"generated:{images}",
            "--preprocess", "mobilenet", "--jobs", str(jobs), "--json", str(out)]


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:  # the process ended while it was being read: the children found so far
        return kids
    return kids


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:  # the process ended while it was being read: it holds nothing now
        return 0.0
    return 0.0


def run_sampled(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, peak MB of the process tree's sum, peak MB of its largest process)."""
    t0 = time.perf_counter()
    err = tempfile.TemporaryFile("w+")  # a file, not a pipe: a long run's stderr cannot fill it and stall
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True)
    peak_sum = peak_one = 0.0
    while proc.poll() is None:
        pids, todo = [], [proc.pid]
        while todo:
            p = todo.pop()
            pids.append(p)
            todo += _children(p)
        sizes = [_rss_mb(p) for p in pids]
        peak_sum, peak_one = max(peak_sum, sum(sizes)), max(peak_one, max(sizes))
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    err.seek(0)
    if proc.returncode != 0:
        raise SystemExit(f"compare failed: {err.read()}")
    return wall, peak_sum, peak_one


def speed(images: int, rounds: int) -> None:
    rates: dict[int, list[float]] = {1: [], 2: []}
    reports: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as d:
        for r in range(rounds):
            for jobs in (1, 2):
                out = Path(d) / f"j{jobs}_{r}.json"
                wall, peak, one = run_sampled(command(images, jobs, out))
                rates[jobs].append(images / wall)
                reports.setdefault(jobs, json.loads(out.read_text()))
                same = json.loads(out.read_text()) == reports[1]
                print(f"round {r + 1} --jobs {jobs}: {images} images in {wall:.1f} s = {images / wall:.2f} images/s "
                      f"(peak {peak:.0f} MB in all, {one:.0f} MB largest process; report identical to --jobs 1's: "
                      f"{same})", flush=True)
    ratio = statistics.median(rates[2]) / statistics.median(rates[1])
    print(f"--jobs 2 / --jobs 1 (medians): {ratio:.2f}x; reports identical: {reports[1] == reports[2]}")


def memory(images: int, jobs: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        wall, peak, one = run_sampled(command(images, jobs, Path(d) / "r.json"))
        samples = json.loads((Path(d) / "r.json").read_text())["samples"]
    print(f"--jobs {jobs}, {samples} images in {wall:.0f} s ({samples / wall:.2f} images/s): peak resident memory "
          f"{peak:.0f} MB (all processes), {one:.0f} MB (largest process)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("speed", "memory"))
    ap.add_argument("--images", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    print(f"{MODEL.relative_to(ROOT)}; {os.cpu_count()} cores; {sys.version.split()[0]}", flush=True)
    if a.what == "speed":
        speed(a.images or 640, a.rounds)
    else:
        memory(a.images or 10000, a.jobs)


if __name__ == "__main__":
    main()
