"""Every importer file that registers handlers is loaded: the handler lists are explicit, and complete.

The importers load their handler modules from ``HANDLER_MODULES`` (no file-name prefix rule: a new
``onnx_lstm.py`` would otherwise be skipped without a word). This test reads the package's source
files and finds every one that applies the registering decorator (``@onnx_op(`` / ``@tflite_op(``):
each must be in its importer's list, and every listed module must exist and register something.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from hexnn_import.importers import onnx_import, tflite_import

PKG = Path(onnx_import.__file__).parent


@pytest.mark.parametrize("module, decorator", [(onnx_import, "onnx_op"), (tflite_import, "tflite_op")])
def test_every_file_using_the_decorator_is_listed(module, decorator: str) -> None:  # type: ignore[no-untyped-def]
    pattern = re.compile(rf"^@{decorator}\(", re.M)
    using = {p.stem for p in PKG.glob("*.py") if pattern.search(p.read_text(encoding="utf-8"))}
    listed = set(module.HANDLER_MODULES)
    assert using - listed == set(), f"handler files not in {module.__name__}.HANDLER_MODULES"
    assert listed - using == set(), "listed modules that register nothing"
