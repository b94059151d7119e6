"""The bar of the model-file fuzz tests (``tests/robust/test_fuzz_*.py``, tests only).

:func:`assert_fuzz_bar` runs :func:`hexnn_import.testing.fuzz.run_fuzz` at the tests' settings
(:func:`~hexnn_import.testing.fuzz.fuzz_settings`, 55 s), prints its counts and netted places
through pytest's capture, and asserts what every reader's fuzz test asks: enough cases ran, no
file truncated at a structural boundary imported, no failure.
"""
from __future__ import annotations

from typing import Sequence

import pytest

from hexnn_import.testing.fuzz import FuzzReport, fuzz_settings, run_fuzz


def assert_fuzz_bar(fmt_name: str, seeds: Sequence[tuple[str, bytes]], default_count: int,
                    capsys: pytest.CaptureFixture[str]) -> FuzzReport:
    """Fuzz ``seeds`` as ``fmt_name`` files (``default_count`` cases unless the environment says
    otherwise), show the summary, assert the bar; the report."""
    count, seed = fuzz_settings(default_count)
    report = run_fuzz(fmt_name, seeds, count=count, seed=seed, budget_s=55)
    with capsys.disabled():
        print("\n" + report.summary())
        if report.netted:
            print(report.describe_netted())
    assert report.ran >= min(count, 2000), report.summary()
    assert report.by_mutation[("truncate@boundary", "ok")] == 0, "a truncated file imported"
    assert report.clean, report.describe_failures()
    return report
