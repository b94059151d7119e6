"""Issue 38 findings 1 and 2 replayed at full size: chains of N quantized ADDs through convert, ``run``,
``compare`` and ``xs3-export``, each under ``--max-memory 64M`` in its own process, with wall / CPU seconds,
exit code and the process's peak resident size (VmHWM, Linux).

    python bench/hostile_scale.py [--sizes 2000,10000] [--max-memory 64M,2G] [--commands convert,run,compare,xs3-export]
                                  [--chains same,distinct] [--random 2] [--work DIR]

Two chains per size: ``same`` (every ADD on the same ranges: the nodes share two 256x256 tables) and
``distinct`` (every ADD's output scale differs: one table per node, refused before the run once they pass the
budget). ``compare`` is ``compare MODEL --random N`` (LiteRT as the reference) under the same budget.
Prints one JSON line per (size, chain, budget, command); ``--markdown`` prints the table of them at the end. Several
budgets (``--max-memory 64M,2G``) give a row each; ``fits`` says whether the peak stayed within the budget (a
refusal, exit 2, should come early: its peak and seconds show how early). ``--work DIR`` puts the models and
outputs in a temporary folder under DIR (a real disk, or ``/dev/shm``: ``xs3-export`` writes ~40 MB for 10,000
layers, its ``layers.npz`` one file since manifest version 3); the rows then carry ``user_s`` / ``sys_s``.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hexnn_import.memory import parse_size
from hexnn_import.testing.hostile_chains import add_chain_tflite
from hexnn_import.testing.peak_rss import PEAK_WRAPPER


def timed(args: list[str], work: Path) -> dict[str, object]:
    """Run ``hexnn-import *args``: exit code, wall and CPU seconds, peak MiB, the last stderr line."""
    peak = work / "peak.txt"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, str(peak), *args], cwd=work, capture_output=True,
                       text=True, timeout=3600)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    tail = r.stderr.strip().splitlines()[-1:] if r.returncode else []
    return {"exit": r.returncode, "wall_s": round(wall, 2), "cpu_s": round(user + system, 2),
            "user_s": round(user, 2), "sys_s": round(system, 2),
            "peak_mib": round(int(peak.read_text()) / 1024, 1) if peak.exists() else None,
            "stderr_lines": len(r.stderr.strip().splitlines()), "error": tail[0][:200] if tail else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,10000")
    ap.add_argument("--max-memory", default="64M", help="budgets, comma-separated (a row each)")
    ap.add_argument("--commands", default="convert,run,compare,xs3-export")
    ap.add_argument("--chains", default="same,distinct")
    ap.add_argument("--random", default="2", help="compare's --random N")
    ap.add_argument("--markdown", action="store_true", help="print the rows as a markdown table at the end")
    ap.add_argument("--work", default=None, help="folder to work under (default: the system's temporary folder)")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=a.work) as tmp:
        work = Path(tmp)
        np.save(work / "x.npy", np.random.default_rng(0).integers(0, 256, (1, 4, 4, 8), dtype=np.uint8))
        for n in (int(s) for s in a.sizes.split(",")):
            for chain in a.chains.split(","):
                model = work / f"add{n}_{chain}.tflite"
                model.write_bytes(add_chain_tflite(n, distinct_ranges=chain == "distinct"))
                for budget, cmd in ((b, c) for b in a.max_memory.split(",") for c in a.commands.split(",")):
                    args = {"convert": ["convert", str(model), "-o", str(work / "g.json")],
                            "run": ["run", str(model), "--input", "x.npy"],
                            "compare": ["compare", str(model), "--random", a.random, "--json", str(work / "c.json")],
                            "xs3-export": ["xs3-export", str(model), "-o", str(work / f"x{n}{chain}"), "--force"],
                            }[cmd] + ["--max-memory", budget]
                    row = {"adds": n, "chain": chain, "budget": budget, "command": cmd, **timed(args, work)}
                    row["fits"] = row["peak_mib"] is not None and row["peak_mib"] * (1 << 20) <= parse_size(budget)
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    if a.markdown:
        print("| ADDs | chain | budget | command | exit | wall s | CPU s | peak MiB | peak within | error |\n"
              "|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['adds']:,} | {r['chain']} | {r['budget']} | {r['command']} | {r['exit']} | {r['wall_s']} | "
                  f"{r['cpu_s']} | {r['peak_mib']} | {'yes' if r['fits'] else 'no'} | {(r['error'] or '')[:120]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
