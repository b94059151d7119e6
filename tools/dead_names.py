"""Top-level functions and classes whose name nothing else in the repository uses (issue 35, "dead functions").

    python tools/dead_names.py            # one line per candidate: path:line name

Reads every ``.py`` file of the package, ``ops/``, ``optimizer/``, ``xs3/``, ``tests/``, ``bench/``, ``tools/``
and ``models/`` and counts, from the syntax tree, the names used: variables, attributes, imported names and
identifiers inside string constants (a ``getattr`` or a registry keyed by name), not docstrings or comments.
A definition whose name is used nowhere is listed, except decorated ones (registered handlers, kernels,
fixtures), ``test_*`` / ``pytest_*`` functions and the kernel classes of ``ops/kernels/`` (registered with
``@register``). A candidate is checked by hand before removal: the README and docs/ may document it as API.
Exit status 1 when any is listed.
"""
from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIRS = ("hexnn_import", "ops", "optimizer", "xs3", "tests", "bench", "tools", "models")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for n in ast.walk(tree):
        body = getattr(n, "body", None)
        if (isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
            out.add(id(body[0].value))
    return out


def _uses(tree: ast.AST, counts: Counter[str]) -> None:
    docs = _docstrings(tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            counts[n.id] += 1
        elif isinstance(n, ast.Attribute):
            counts[n.attr] += 1
        elif isinstance(n, ast.alias):
            counts[n.name.rsplit(".", 1)[-1]] += 1
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            counts.update(IDENT.findall(n.value))


def _exempt(path: Path, node: ast.AST) -> bool:
    name = getattr(node, "name", "")
    if getattr(node, "decorator_list", None) or name.startswith(("test_", "pytest_")):
        return True
    return isinstance(node, ast.ClassDef) and path.is_relative_to(ROOT / "ops" / "kernels")


def dead_names(root: Path = ROOT) -> list[tuple[Path, int, str]]:
    """``(path, line, name)`` of every top-level definition whose name nothing uses."""
    counts: Counter[str] = Counter()
    defs: list[tuple[Path, ast.AST]] = []
    for d in DIRS:
        for path in sorted((root / d).rglob("*.py")):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except SyntaxError:
                continue
            _uses(tree, counts)
            defs += [(path, n) for n in tree.body
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return [(p, n.lineno, n.name) for p, n in defs  # type: ignore[attr-defined]
            if not _exempt(p, n) and counts[n.name] == 0]  # type: ignore[attr-defined]


def main() -> int:
    found = dead_names()
    for path, line, name in found:
        print(f"{path.relative_to(ROOT)}:{line} {name}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
