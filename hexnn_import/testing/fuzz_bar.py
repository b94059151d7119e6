"""The bar of the fuzz tests (``tests/robust/test_fuzz_*.py``) and of the campaigns (``bench/fuzz_campaign.py``).

The tests run a fixed number of cases (:data:`TEST_CASES`, :data:`PIPELINE_TEST_CASES`; seed 0), every one
of them whatever the machine's speed or load (no time budget); a case is a hang past
:data:`hexnn_import.testing.fuzz.CASE_LIMIT_S` (readers) or
:data:`hexnn_import.testing.fuzz_pipeline.CASE_LIMIT_S` (pipeline) seconds of CPU. :func:`bar_problems`
is what every reader's fuzz run must show: every case ran, no file truncated at a structural boundary
imported, no failure; :func:`pipeline_problems` the whole pipeline's: every unmutated seed through every
stage, every case ran, some cases rejected and some run, no INTERNAL / hang / crash.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from hexnn_import.testing.fuzz import FuzzReport, run_fuzz

if TYPE_CHECKING:
    import pytest

    from hexnn_import.testing.fuzz_pipeline import PipelineReport

#: the suite's cases per reader format (seed 0), each test about 3-4 s of CPU on one core (docs/robustness.md)
TEST_CASES = {"tflite": 2000, "onnx": 1500, "graph": 1500}
#: the suite's whole-pipeline cases per format (seed 0; every 10th also through xs3-export / run --xs3 /
#: compare), each test about 4-5 s of CPU on one core (docs/robustness.md)
PIPELINE_TEST_CASES = {"tflite": 120, "onnx": 100, "graph": 300, "npz": 200}


def bar_problems(report: FuzzReport, count: int) -> list[str]:
    """What falls short of the bar (module doc), one line each; empty when the run passes."""
    problems = []
    if report.ran != count:
        problems.append(f"{report.ran} of {count} cases ran")
    if report.by_mutation[("truncate@boundary", "ok")]:
        problems.append(f"{report.by_mutation[('truncate@boundary', 'ok')]} files truncated at a structural "
                        "boundary imported")
    if not report.clean:
        problems.append(report.describe_failures())
    return problems


def pipeline_problems(report: "PipelineReport", count: int) -> list[str]:
    """What falls short of the whole pipeline's bar (module doc), one line each; empty when it passes."""
    problems = [f"unmutated seed fails a stage: {p}" for p in report.seed_problems]
    if report.ran != count:
        problems.append(f"{report.ran} of {count} cases ran")
    if not (report.stages[("run", "ok")] > 0 and report.cases["rejected"] > 0):
        problems.append("no case ran, or none was rejected")
    if not report.clean:
        problems.append(report.describe())
    return problems


def assert_fuzz_bar(fmt_name: str, seeds: Sequence[tuple[str, bytes]], capsys: "pytest.CaptureFixture[str]",
                    count: int | None = None, seed: int = 0) -> FuzzReport:
    """Fuzz ``seeds`` as ``fmt_name`` files (:data:`TEST_CASES` unless ``count`` is given), show the summary
    and the netted places, assert the bar; the report."""
    count = TEST_CASES[fmt_name] if count is None else count
    report = run_fuzz(fmt_name, seeds, count=count, seed=seed)
    with capsys.disabled():
        print("\n" + report.summary())
        if report.netted:
            print(report.describe_netted())
    problems = bar_problems(report, count)
    assert not problems, report.summary() + "\n" + "\n".join(problems)
    return report
