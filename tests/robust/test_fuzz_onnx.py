"""Fuzzing the ONNX reader and importer (issue [Robust]): mutated ONNX files, no escape.

The seeds (float, QDQ and QOperator models, :mod:`hexnn_import.testing.fuzz_seeds`)
are truncated at every protobuf field boundary, bit-flipped, given oversized
length varints, and edited as protobufs: inputs rewired to other tensors,
nodes out of order, dimensions of 0 / -1 / 2**40, element types changed,
initializers cut short or moved to (missing, or escaping) external files,
attributes made huge, negative or NaN, the opset changed.

Any failure (an exception outside the project's types, a multi-line or
empty message, a hang, an absurd allocation) fails the test.
"""
from __future__ import annotations

import pytest

from hexnn_import.testing.fuzz import fuzz_settings, run_fuzz
from hexnn_import.testing.fuzz_seeds import onnx_seeds

def test_fuzz_onnx_files_fail_only_with_project_errors(capsys: pytest.CaptureFixture[str]) -> None:
    count, seed = fuzz_settings(2500)
    report = run_fuzz("onnx", onnx_seeds(), count=count, seed=seed, budget_s=55)
    with capsys.disabled():
        print("\n" + report.summary())
        if report.netted:
            print(report.describe_netted())
    assert report.ran >= min(count, 2000), report.summary()
    assert report.by_mutation[("truncate@boundary", "ok")] == 0, "a truncated file imported"
    assert not report.failures, report.describe_failures()
