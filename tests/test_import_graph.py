"""The package's import graph (issue [Design]): no circle between modules, read with the standard library's ast.

Every module of the installed package (``hexnn_import`` with ``ops/``, ``optimizer/`` and ``xs3/`` mapped
into it) is parsed; its module-level imports (those that run when it is imported: not the ones inside a
function, which is how a module reaches a layer above it at call time, nor ``if TYPE_CHECKING:`` blocks)
are its edges. ``from pkg import name`` depends on ``pkg.name`` when that is a module, else on ``pkg``.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: where each package of the distribution lives in the checkout (pyproject.toml's package-dir)
PACKAGES = {"hexnn_import": ROOT / "hexnn_import", "hexnn_import.ops": ROOT / "ops",
            "hexnn_import.optimizer": ROOT / "optimizer", "hexnn_import.xs3": ROOT / "xs3"}


def modules() -> dict[str, Path]:
    """Module name -> file, every module of the package."""
    out: dict[str, Path] = {}
    for pkg, folder in PACKAGES.items():
        for f in folder.rglob("*.py"):
            parts = list(f.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([pkg, *parts])] = f
    return out


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run at import: the body, into if / try / with blocks, not TYPE_CHECKING ones."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            if "TYPE_CHECKING" not in test:
                out += _module_level(node.body)
            out += _module_level(node.orelse)
        elif isinstance(node, (ast.Try, ast.With)):
            for block in (node.body, *(h.body for h in getattr(node, "handlers", [])),
                          getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                out += _module_level(block)
        else:
            out.append(node)
    return out


@functools.lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test process (several tests walk every module)."""
    return ast.parse(path.read_text())


def imports(name: str, path: Path, mods: dict[str, Path], module_level: bool = True) -> set[str]:
    """The package modules ``name`` imports (at import time, or anywhere with ``module_level=False``)."""
    tree = _tree(path)
    nodes = _module_level(tree.body) if module_level else list(ast.walk(tree))
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    deps: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            deps |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up level - 1
                anchor = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                deps.add(f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base)
    return {d for d in deps if d in mods and d != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_circle_between_modules() -> None:
    mods = modules()
    assert len(mods) > 200 and "hexnn_import.xs3.graph_pass" in mods and "hexnn_import.ops.registry" in mods
    graph = {m: imports(m, f, mods) for m, f in mods.items()}
    assert sum(len(d) for d in graph.values()) > 500  # the edges were read
    assert cycles(graph) == []


def test_the_checker_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_importer_core_module_imports_a_handler_module() -> None:
    """Handler modules register with the importers' registries; nothing else of the importers imports them
    (anywhere in the module, at import or at call time): the importer core depends on nothing above it."""
    from hexnn_import.importers.onnx import importer as onnx_importer
    from hexnn_import.importers.tflite import importer as tflite_importer

    mods = modules()
    handlers = {f"{i.HANDLER_PACKAGE}.{m}" for i in (onnx_importer, tflite_importer) for m in i.HANDLER_MODULES}
    assert handlers <= set(mods)
    core = {m: f for m, f in mods.items() if m.startswith("hexnn_import.importers.") and m not in handlers}
    assert "hexnn_import.importers.onnx.fuse" in core and "hexnn_import.importers.onnx.conv_layer" in core
    bad = {m: sorted(imports(m, f, mods, module_level=False) & handlers) for m, f in core.items()}
    assert {m: b for m, b in bad.items() if b} == {}


def test_no_production_module_imports_the_test_helpers() -> None:
    """``hexnn_import.testing`` (builders, fuzzers, LiteRT helpers for the tests) is imported by no module
    outside it."""
    mods = modules()
    helpers = {m for m in mods if m == "hexnn_import.testing" or m.startswith("hexnn_import.testing.")}
    assert "hexnn_import.testing.xs3_models" in helpers
    users = {m: sorted(imports(m, f, mods, module_level=False) & helpers) for m, f in mods.items()
             if m not in helpers}
    assert {m: u for m, u in users.items() if u} == {}


def test_no_circle_counting_imports_inside_functions() -> None:
    """Issue 35 [Seams]: an import made inside a function (at call time) counts too. A deferred import that breaks
    a circle hides a layering question; the answer is to move code, so there is no circle at all."""
    mods = modules()
    graph = {m: imports(m, f, mods, module_level=False) for m, f in mods.items()}
    assert sum(len(d) for d in graph.values()) > sum(len(imports(m, f, mods)) for m, f in mods.items())
    assert cycles(graph) == []


def test_a_model_path_is_resolved_in_one_place() -> None:
    """Issue 35 [Seams]: only :mod:`hexnn_import.model_source` tells a model's format from its path or bytes
    (``detect_format``, the ``TFL3`` identifier); every other module takes a ModelSource or a graph. The TFLite
    reader's own identifier check, on the bytes it parses, is not a second guess of the format; the test helpers
    (``hexnn_import.testing``) write the identifier into the models they build."""
    mods = modules()
    sniffers = set()
    for name, path in mods.items():
        if name.startswith("hexnn_import.testing"):
            continue
        tree = _tree(path)
        for node in ast.walk(tree):
            called = isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "detect_format"
            magic = isinstance(node, ast.Constant) and node.value == b"TFL3"
            if called or magic:
                sniffers.add(name)
    assert sniffers == {"hexnn_import.model_source", "hexnn_import.importers.tflite.reader"}


#: the floors of the package (issue 35), read anywhere in a module (imports inside functions and TYPE_CHECKING
#: blocks count): a module under the prefix imports only the allowed prefixes (ALLOWED_ONLY) or none of the
#: forbidden ones (FORBIDDEN)
ALLOWED_ONLY = {"hexnn_import.ops": ("hexnn_import.ops", "hexnn_import.errors")}  # the lowest floor
FORBIDDEN = {
    "hexnn_import.datasets": ("hexnn_import.compare",),  # samples sit below compare/
    "hexnn_import.api": ("hexnn_import.compare",),  # a model's inputs are graph.GraphIO, its samples datasets/'s
    "hexnn_import.xs3": ("hexnn_import.api", "hexnn_import.cli"),  # XS3 takes graphs, never imports a model
}


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def floor_breaks(mods: dict[str, Path]) -> dict[str, list[str]]:
    """Module -> the imports its floor does not allow."""
    out: dict[str, list[str]] = {}
    for m, f in mods.items():
        deps = imports(m, f, mods, module_level=False)
        bad = {d for floor, ok in ALLOWED_ONLY.items() if _under(m, (floor,)) for d in deps if not _under(d, ok)}
        bad |= {d for floor, no in FORBIDDEN.items() if _under(m, (floor,)) for d in deps if _under(d, no)}
        if bad:
            out[m] = sorted(bad)
    return out


def test_each_floor_imports_only_what_is_below_it() -> None:
    mods = modules()
    for floor in (*ALLOWED_ONLY, *FORBIDDEN):
        assert sum(_under(m, (floor,)) for m in mods) >= 1, floor  # the floor was read
    assert floor_breaks(mods) == {}


def test_the_floor_check_sees_imports_inside_functions_and_type_checking_blocks(tmp_path: Path) -> None:
    src = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hexnn_import.xs3.vpu import X\n"
           "def f():\n    import hexnn_import.optimizer.editor\n    from hexnn_import import compare\n"
           "    from hexnn_import.ops import quant\n")
    (tmp_path / "probe.py").write_text(src)
    mods = {m: tmp_path / "probe.py" for m in ("hexnn_import.ops.probe", "hexnn_import.xs3.vpu",
                                               "hexnn_import.optimizer.editor", "hexnn_import.compare",
                                               "hexnn_import.ops.quant")}  # the names imports() resolves against
    deps = imports("hexnn_import.ops.probe", tmp_path / "probe.py", mods, module_level=False)
    assert deps == {"hexnn_import.xs3.vpu", "hexnn_import.optimizer.editor", "hexnn_import.compare",
                    "hexnn_import.ops.quant"}
    assert {d for d in deps if not _under(d, ALLOWED_ONLY["hexnn_import.ops"])} == {
        "hexnn_import.xs3.vpu", "hexnn_import.optimizer.editor", "hexnn_import.compare"}
