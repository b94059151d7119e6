"""Fuzz campaigns: the suite's fuzz tests with thousands of cases (docs/robustness.md).

    python bench/fuzz_campaign.py [--kinds readers,pipeline] [--formats tflite,onnx,graph,npz]
                                  [--cases N] [--seed S] [--workers W] [--repro /tmp/fuzz_repro]

The tests (tests/robust/test_fuzz_*.py) run a fixed, small number of cases so that they take a few
seconds on any machine; this runs the same cases and checks the same bar
(:mod:`hexnn_import.testing.fuzz_bar`) at campaign size:

- ``readers``: mutated TFLite / ONNX / graph files through import (:func:`hexnn_import.testing.fuzz.run_fuzz`;
  4,000 / 2,500 / 2,400 cases by default: every structural boundary of the TFLite and ONNX seeds is cut);
- ``pipeline``: mutated TFLite / ONNX / graph / ``.npz`` artefacts through every stage the command line
  runs (:func:`hexnn_import.testing.fuzz_pipeline.run_pipeline_fuzz`; 2,500 cases per format, the suite's
  seeds - ``bench/fuzz_pipeline.py`` adds more real models).

``--cases`` / ``--seed`` default to ``$HEXNN_FUZZ_CASES`` / ``$HEXNN_FUZZ_SEED`` (else the counts above and
seed 0); case ``i`` is a pure function of (format, seeds, seed, ``i``). Every case runs (no time budget); a
case is a hang past ``CAMPAIGN_CASE_LIMIT_S`` (pipeline) / ``CASE_LIMIT_S`` (readers) seconds of CPU, or 10 x
as many of wall clock. Prints each run's report (counts, slowest case, failures); writes reproducers of the
pipeline's failures to ``--repro``; exits 1 when any run falls short of the bar.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from hexnn_import.testing.fuzz import CASE_LIMIT_S, run_fuzz
from hexnn_import.testing.fuzz_bar import bar_problems, pipeline_problems
from hexnn_import.testing.fuzz_pipeline import CAMPAIGN_CASE_LIMIT_S, run_pipeline_fuzz, write_reproducers
from hexnn_import.testing.fuzz_seeds import SEEDS, pipeline_seeds

#: cases per format when neither --cases nor $HEXNN_FUZZ_CASES says (the tests' counts before issue 34)
READER_CASES = {"tflite": 4000, "onnx": 2500, "graph": 2400}
PIPELINE_CASES = 2500


def readers(formats: list[str], cases: int | None, seed: int, workers: int | None) -> list[str]:
    """Run the reader campaigns; their problems, one line each."""
    problems = []
    for fmt in (f for f in formats if f in READER_CASES):
        count = cases or READER_CASES[fmt]
        report = run_fuzz(fmt, SEEDS[fmt](), count=count, seed=seed, case_limit_s=CASE_LIMIT_S, workers=workers)
        print(report.summary())
        if report.netted:
            print(report.describe_netted())
        problems += [f"readers {fmt}: {p}" for p in bar_problems(report, count)]
        sys.stdout.flush()
    return problems


def pipeline(formats: list[str], cases: int | None, seed: int, workers: int | None, repro: str) -> list[str]:
    """Run the whole-pipeline campaigns; their problems, one line each."""
    problems = []
    for fmt in formats:
        count = cases or PIPELINE_CASES
        t0 = time.monotonic()
        report = run_pipeline_fuzz(fmt, pipeline_seeds(fmt), count=count, seed=seed, workers=workers,
                                   case_limit_s=CAMPAIGN_CASE_LIMIT_S)
        print(report.summary())
        print(f"  ({time.monotonic() - t0:.0f} s with seed making)")
        if report.converted_failed:
            print("  converted-then-failed (imported and prepared, then a project error):\n    "
                  + report.describe("converted_failed", limit=20).replace("\n", "\n    "))
        found = pipeline_problems(report, count)
        if not report.clean:
            write_reproducers(report, repro)
            found.append(f"reproducers in {repro}, README_{fmt}_failures.txt")
        problems += [f"pipeline {fmt}: {p}" for p in found]
        sys.stdout.flush()
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", default="readers,pipeline", help="readers, pipeline or both")
    ap.add_argument("--formats", default="tflite,onnx,graph,npz", help="npz is a pipeline format only")
    env_cases = os.environ.get("HEXNN_FUZZ_CASES")
    ap.add_argument("--cases", type=int, default=int(env_cases) if env_cases else None,
                    help="cases per format (default $HEXNN_FUZZ_CASES, else 4000/2500/2400 readers, 2500 pipeline)")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("HEXNN_FUZZ_SEED", "0")),
                    help="default $HEXNN_FUZZ_SEED, else 0")
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core, 2 to 4)")
    ap.add_argument("--repro", default="/tmp/fuzz_repro", help="folder for the pipeline's reproducers")
    args = ap.parse_args(argv)
    kinds, formats = args.kinds.split(","), args.formats.split(",")
    problems = []
    if "readers" in kinds:
        problems += readers(formats, args.cases, args.seed, args.workers)
    if "pipeline" in kinds:
        problems += pipeline(formats, args.cases, args.seed, args.workers, args.repro)
    print("\n".join(["FAILED:"] + problems) if problems else "every campaign passed its bar")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
