"""``ops/`` is the lowest floor of the package (issue 35): its modules import nothing of the project but
``hexnn_import.ops`` and ``hexnn_import.errors`` - not ``xs3/``, ``optimizer/`` or the importers - anywhere in a
module, inside functions and ``TYPE_CHECKING`` blocks too (read with the standard library's ast)."""
from __future__ import annotations

import ast
from pathlib import Path

OPS = Path(__file__).resolve().parents[2] / "ops"
ALLOWED = ("hexnn_import.ops", "hexnn_import.errors")


def project_imports(source: str) -> set[str]:
    """Every ``hexnn_import...`` module an absolute import statement of ``source`` names, wherever it sits."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return {n for n in names if n == "hexnn_import" or n.startswith("hexnn_import.")}


def above_the_floor(names: set[str]) -> set[str]:
    """The names that are neither ``hexnn_import.ops`` (or below it) nor ``hexnn_import.errors``."""
    return {n for n in names if not any(n == a or n.startswith(a + ".") for a in ALLOWED)}


def test_no_module_of_ops_imports_a_floor_above() -> None:
    files = sorted(OPS.rglob("*.py"))
    assert len(files) > 100   # the folder was read
    found = {str(f.relative_to(OPS)): above_the_floor(project_imports(f.read_text())) for f in files}
    assert {f: n for f, n in found.items() if n} == {}


def test_the_check_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    src = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hexnn_import.xs3.vpu import X\n"
           "def f():\n    import hexnn_import.optimizer.editor\n    from hexnn_import.ops import quant\n")
    assert above_the_floor(project_imports(src)) == {"hexnn_import.xs3.vpu", "hexnn_import.optimizer.editor"}
    assert above_the_floor({"hexnn_import.errors", "hexnn_import.ops.kernels.add8", "hexnn_import.opsx"}) == {
        "hexnn_import.opsx"}
