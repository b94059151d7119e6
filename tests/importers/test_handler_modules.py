"""Every importer file that registers handlers is loaded: the handler lists are explicit, and complete.

The importers load their handler modules from ``HANDLER_MODULES`` (no folder rule: a new
``onnx/handlers/lstm.py`` would otherwise be skipped without a word). This test reads every source file of
the format's package and finds every one that applies the registering decorator (``@onnx_op(`` /
``@tflite_op(``): each must be in its importer's list (so it lives in ``handlers/``), and every listed module
must exist and register something.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from hexnn_import.importers.onnx import importer as onnx_import
from hexnn_import.importers.tflite import importer as tflite_import


@pytest.mark.parametrize("module, decorator", [(onnx_import, "onnx_op"), (tflite_import, "tflite_op")])
def test_every_file_using_the_decorator_is_listed(module, decorator: str) -> None:  # type: ignore[no-untyped-def]
    pattern = re.compile(rf"^@{decorator}\(", re.M)
    fmt = Path(module.__file__).parent  # the format's package: every file of it, handlers/ or not
    using = {".".join(p.relative_to(fmt).with_suffix("").parts) for p in fmt.rglob("*.py")
             if pattern.search(p.read_text(encoding="utf-8"))}
    listed = {f"handlers.{name}" for name in module.HANDLER_MODULES}
    assert module.HANDLER_PACKAGE == f"{module.__package__}.handlers"
    assert using - listed == set(), f"handler files not in {module.__name__}.HANDLER_MODULES"
    assert listed - using == set(), "listed modules that register nothing"
