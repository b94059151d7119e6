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

from hexnn_import.testing.fuzz_bar import assert_fuzz_bar
from hexnn_import.testing.fuzz_seeds import onnx_seeds


def test_fuzz_onnx_files_fail_only_with_project_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert_fuzz_bar("onnx", onnx_seeds(), capsys)
