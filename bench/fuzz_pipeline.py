"""Whole-pipeline fuzzing at scale: every stage the command line runs, on many mutated artefacts.

    python bench/fuzz_pipeline.py [--count 20000] [--seed 0] [--formats tflite,onnx,graph,npz]
                                  [--seeds bench|ci] [--budget SECONDS] [--sample-every 10]
                                  [--repro /tmp/fuzz_repro]

The same cases as tests/robust/test_fuzz_pipeline.py
(:mod:`hexnn_import.testing.fuzz_pipeline`), more of them, and with the
"bench" seeds (more real converter outputs: keras float / float-I/O models,
torch QDQ / QOperator / float models); a case is a hang past
``CAMPAIGN_CASE_LIMIT_S`` seconds of CPU (``bench/fuzz_campaign.py`` runs the
suite's fuzz tests, readers and pipeline, at campaign size). Prints per
format the counts per case and per stage, the distinct INTERNAL / hang / crash failures grouped by
traceback location and the converted-then-failed findings (a model that
imported and prepared, then failed a later stage with a project error);
writes the first case of every group to ``--repro`` (``FORMAT_SEED_CASE_STAGE``
files plus README_*.txt with the command to run on each and its
traceback). Exits 1 when any INTERNAL / hang / crash was found.
"""
from __future__ import annotations

import argparse
import sys
import time

from hexnn_import.testing.fuzz_pipeline import CAMPAIGN_CASE_LIMIT_S, run_pipeline_fuzz, write_reproducers
from hexnn_import.testing.fuzz_seeds import pipeline_seeds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=20000, help="cases per format (default 20000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--formats", default="tflite,onnx,graph,npz")
    ap.add_argument("--seeds", choices=("bench", "ci"), default="bench", help="seed set (ci: the test's)")
    ap.add_argument("--budget", type=float, default=None,
                    help="no case starts after this many seconds per format (default: every case runs)")
    ap.add_argument("--sample-every", type=int, default=10,
                    help="every Nth case also runs xs3-export, run --xs3 and compare")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--repro", default="/tmp/fuzz_repro", help="folder for the reproducers")
    args = ap.parse_args(argv)
    failed = False
    for fmt in args.formats.split(","):
        t0 = time.monotonic()
        seeds = pipeline_seeds(fmt, args.seeds)
        report = run_pipeline_fuzz(fmt, seeds, count=args.count, seed=args.seed, budget_s=args.budget,
                                   workers=args.workers, sample_every=args.sample_every,
                                   case_limit_s=CAMPAIGN_CASE_LIMIT_S)
        print(report.summary())
        print(f"  seeds: {', '.join(s.label for s in seeds)} ({time.monotonic() - t0:.0f} s with seed making)")
        if report.seed_problems:
            print("  UNMUTATED SEEDS THAT FAIL A STAGE:\n    " + "\n    ".join(report.seed_problems))
        if report.failures:
            failed = True
            files = write_reproducers(report, args.repro)
            print(f"  INTERNAL / hang / crash, by place ({len(files)} kinds; reproducers in {args.repro}, "
                  f"README_{fmt}_failures.txt):\n    " + report.describe(limit=60).replace("\n", "\n    "))
        if report.converted_failed:
            write_reproducers(report, f"{args.repro}/converted_failed", "converted_failed")
            print("  converted-then-failed (imported and prepared, then a project error):\n    "
                  + report.describe("converted_failed", limit=40).replace("\n", "\n    "))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
