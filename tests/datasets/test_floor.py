"""``datasets/`` sits below ``compare/`` (issue 35): no module of ``hexnn_import.datasets`` imports
``hexnn_import.compare``, and neither does the API (``api.py``: the model's inputs are ``graph.GraphIO``, the
samples ``datasets.samples``) - anywhere in a module, inside functions and ``TYPE_CHECKING`` blocks too (read
with the standard library's ast)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "hexnn_import"
COMPARE = "hexnn_import.compare"


def compare_imports(source: str) -> set[str]:
    """The ``hexnn_import.compare`` modules an import statement of ``source`` names, wherever it sits
    (``from hexnn_import import compare`` included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
            if node.module == "hexnn_import":  # from hexnn_import import compare
                names |= {f"hexnn_import.{a.name}" for a in node.names}
    return {n for n in names if n == COMPARE or n.startswith(COMPARE + ".")}


def test_neither_datasets_nor_the_api_imports_compare() -> None:
    files = sorted((PACKAGE / "datasets").glob("*.py")) + [PACKAGE / "api.py"]
    assert len(files) >= 5 and all(f.is_file() for f in files)  # the folder and the API were read
    found = {str(f.relative_to(PACKAGE)): compare_imports(f.read_text()) for f in files}
    assert {f: n for f, n in found.items() if n} == {}


def test_the_check_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    src = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hexnn_import.compare.runners import X\n"
           "def f():\n    import hexnn_import.compare.data\n    from hexnn_import import compare\n"
           "    from hexnn_import.graph import GraphIO\n")
    assert compare_imports(src) == {"hexnn_import.compare.runners", "hexnn_import.compare.data",
                                    "hexnn_import.compare"}
    assert compare_imports("from hexnn_import.comparex import y\nimport hexnn_import.datasets\n") == set()
