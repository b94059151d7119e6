"""Fuzzing the TFLite reader and importer (issue [Robust]): mutated real .tflite files, no escape.

Every flatbuffer boundary of the seed models is a truncation point; the
rest are bit flips, oversized offsets / lengths / counts, swapped tensor,
buffer and opcode indices, boundary values in shapes, scales and zero
points, and spliced regions (:mod:`hexnn_import.testing.fuzz`). Any
exception other than the project's own, a hang or an absurd allocation
fails the test with the case that reproduces it.
"""
from __future__ import annotations

import pytest

from hexnn_import.testing.fuzz import fuzz_settings, run_fuzz
from hexnn_import.testing.fuzz_seeds import tflite_seeds


def test_fuzz_tflite_files_fail_only_with_project_errors(capsys: pytest.CaptureFixture[str]) -> None:
    count, seed = fuzz_settings(4000)
    report = run_fuzz("tflite", tflite_seeds(), count=count, seed=seed, budget_s=55)
    with capsys.disabled():
        print("\n" + report.summary())
        if report.netted:
            print(report.describe_netted())
    assert report.ran >= min(count, 2000), report.summary()
    assert report.by_mutation[("truncate@boundary", "ok")] == 0, "a truncated file imported"
    assert report.clean, report.describe_failures()
