"""What the test suite costs, per file and per test, in CPU seconds (issue 34: under 5 minutes on 2 cores).

Run the suite with ``HEXNN_TEST_CPU_LOG=cpu.jsonl pytest -q`` (tests/conftest.py appends one line per test: its
setup, call and teardown in CPU seconds, child processes included, so the figure does not depend on what else
the machine runs), then ``python tools/suite_cost.py cpu.jsonl [--top N]``: the total, the estimate of the wall
time on 2 workers (total / 2) and the costliest files and tests.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    rows = [json.loads(line) for line in open(args.log, encoding="utf-8") if line.strip()]
    total = sum(r["cpu_s"] for r in rows)
    by_file: dict[str, float] = defaultdict(float)
    for r in rows:
        by_file[r["test"].split("::")[0]] += r["cpu_s"]
    print(f"{len(rows)} tests, {total:.0f} CPU s in all: about {total / 2:.0f} s on 2 workers")
    print("costliest files:")
    for name, cpu in sorted(by_file.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"  {cpu:8.1f} s  {name}")
    print("costliest tests:")
    for r in sorted(rows, key=lambda r: -r["cpu_s"])[:args.top]:
        print(f"  {r['cpu_s']:8.1f} s  {r['test']}")


if __name__ == "__main__":
    main()
