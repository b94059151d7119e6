"""Fuzzing the TFLite reader and importer (issue [Robust]): mutated real .tflite files, no escape.

An even sample of the flatbuffer boundaries of the seed models are
truncation points (every one in ``bench/fuzz_campaign.py``); the rest of
the 2,000 cases (seed 0) are bit flips, oversized offsets / lengths / counts, swapped tensor,
buffer and opcode indices, boundary values in shapes, scales and zero
points, and spliced regions (:mod:`hexnn_import.testing.fuzz`). Any
exception other than the project's own, a hang or an absurd allocation
fails the test with the case that reproduces it.
"""
from __future__ import annotations

import pytest

from hexnn_import.testing.fuzz_bar import assert_fuzz_bar
from hexnn_import.testing.fuzz_seeds import tflite_seeds


def test_fuzz_tflite_files_fail_only_with_project_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert_fuzz_bar("tflite", tflite_seeds(), capsys)
