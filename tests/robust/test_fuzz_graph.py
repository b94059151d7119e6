"""Fuzzing graph files (``.hexnn.json``, issue [Robust]): mutated real graph files, no escape.

Seeds are the small TFLite models imported and written by ``save_graph``'s
serializer. Besides byte-level damage (JSON truncated at token boundaries,
bit flips, spliced regions) the document itself is edited: leaves of the
wrong kind or size, refs to later or missing nodes, Const data of another
dtype / shape / base64, unknown element types, duplicate ids, nesting that
exhausts the parser's stack, numbers too long to convert.
"""
from __future__ import annotations

import pytest

from hexnn_import.testing.fuzz_bar import assert_fuzz_bar
from hexnn_import.testing.fuzz_seeds import graph_seeds


def test_fuzz_graph_files_fail_only_with_project_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert_fuzz_bar("graph", graph_seeds(), capsys)
