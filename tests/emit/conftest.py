"""Fixtures for the emitter tests: the test-only SDK stub headers, gcc, and a DOT syntax check.

The stub ``hexagon_nn.h`` lives in ``tests/emit/stub/``; ``hexagon_nn_ops.h``
is written here with one made-up ``OP_<name>`` value per catalog op (the
real values come from the SDK's ops.def, which the tests never need: they
only check that the source is well-formed C naming documented ops).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hexnn_import.ops.catalog import CATALOG

STUB = Path(__file__).resolve().parent / "stub"
GCC = shutil.which("gcc")
GCC_FLAGS = ["-fsyntax-only", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]


@pytest.fixture(scope="session")
def stub_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the stub hexagon_nn.h and a made-up hexagon_nn_ops.h (TEST ONLY)."""
    folder = tmp_path_factory.mktemp("hexagon_sdk_stub")
    shutil.copy(STUB / "hexagon_nn.h", folder / "hexagon_nn.h")
    ops = ",\n".join(f"    OP_{name} = {i}" for i, name in enumerate(CATALOG))
    (folder / "hexagon_nn_ops.h").write_text(
        "/* TEST-ONLY stand-in for the SDK's hexagon_nn_ops.h: made-up OP_<name> values, one per catalog op. */\n"
        "#ifndef HEXNN_TEST_STUB_OPS_H\n#define HEXNN_TEST_STUB_OPS_H\n"
        f"enum op_type {{\n{ops},\n    NN_OPS_MAX\n}};\n#endif\n")
    return folder


@pytest.fixture(scope="session")
def gcc_check(stub_dir: Path) -> Callable[..., None]:
    """``gcc_check(file.c, *include_dirs)``: compile with -fsyntax-only against the stubs; fail with gcc's output."""
    if GCC is None:
        pytest.skip("gcc is not installed")

    def run(source: Path, *include_dirs: Path) -> None:
        incs = [f"-I{d}" for d in (stub_dir, source.parent, *include_dirs)]
        proc = subprocess.run([GCC, *GCC_FLAGS, *incs, str(source)], capture_output=True, text=True, timeout=300,
                              check=False)
        assert proc.returncode == 0, f"gcc rejected {source.name}:\n{proc.stderr[:4000]}"

    return run


_TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|->|--|[{}\[\];,=]'
                    r'|[A-Za-z_][A-Za-z0-9_]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)', re.DOTALL)


def tokenize_dot(text: str) -> list[str]:
    """DOT tokens (whitespace and comments dropped); AssertionError at the first character no token matches."""
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m and m.end() > pos, f"DOT: bad character at offset {pos}: {text[pos:pos + 40]!r}"
        tok = m.group(0)
        if not (tok.isspace() or tok.startswith(("//", "/*"))):
            out.append(tok)
        pos = m.end()
    return out


def parse_dot(text: str) -> dict[str, object]:
    """A small parser for the DOT subset the emitter writes.

    Checks: ``digraph [ID] { ... }`` with balanced braces/brackets, statements
    ``graph|node|edge [attrs]``, ``ID [attrs]``, ``ID -> ID [attrs]``,
    attributes ``ID = ID|"string"``, every quoted string well escaped, every
    edge endpoint declared as a node. Returns ``{"nodes": {id: attrs},
    "edges": [(a, b, attrs)]}`` with strings unquoted.
    """
    toks = tokenize_dot(text)
    depth = 0
    for t in toks:
        depth += {"{": 1, "}": -1}.get(t, 0)
        assert depth >= 0, "DOT: '}' without '{'"
    assert depth == 0, "DOT: unbalanced braces"
    i = 0

    def take(expected: str | None = None) -> str:
        nonlocal i
        assert i < len(toks), "DOT: unexpected end"
        tok = toks[i]
        i += 1
        assert expected is None or tok == expected, f"DOT: expected {expected!r}, got {tok!r}"
        return tok

    def is_id(tok: str) -> bool:
        return tok not in "{}[];,=" and tok not in ("->", "--")

    def attrs() -> dict[str, str]:
        found: dict[str, str] = {}
        while i < len(toks) and toks[i] == "[":
            take("[")
            while toks[i] != "]":
                key = take()
                assert is_id(key), f"DOT: bad attribute name {key!r}"
                take("=")
                val = take()
                assert is_id(val), f"DOT: bad attribute value {val!r}"
                found[key] = unquote(val)
                if toks[i] in (",", ";"):
                    take()
            take("]")
        return found

    take("digraph")
    if toks[i] != "{":
        assert is_id(take())
    take("{")
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict[str, str]]] = []
    while toks[i] != "}":
        head = take()
        assert is_id(head), f"DOT: statement starts with {head!r}"
        if head in ("graph", "node", "edge"):
            attrs()
        elif toks[i] == "->":
            take("->")
            dst = take()
            assert is_id(dst)
            edges.append((unquote(head), unquote(dst), attrs()))
        elif toks[i] == "=":
            take("=")
            assert is_id(take())
        else:
            nodes[unquote(head)] = attrs()
        if toks[i] == ";":
            take(";")
    take("}")
    assert i == len(toks), "DOT: text after the graph"
    for a, b, _ in edges:
        assert a in nodes and b in nodes, f"DOT: edge {a} -> {b} names an undeclared node"
    return {"nodes": nodes, "edges": edges}


def unquote(tok: str) -> str:
    """A DOT string's text: quotes dropped, ``\\"`` and ``\\\\`` undone, ``\\n`` as a newline."""
    if not tok.startswith('"'):
        return tok
    body, out, k = tok[1:-1], [], 0
    while k < len(body):
        if body[k] == "\\" and k + 1 < len(body):
            nxt = body[k + 1]
            out.append("\n" if nxt == "n" else nxt)
            k += 2
        else:
            out.append(body[k])
            k += 1
    return "".join(out)


@pytest.fixture(scope="session")
def dot_check() -> Callable[[str], dict[str, object]]:
    """``dot_check(text)``: the parser check, plus ``dot -Tsvg`` when Graphviz is installed."""

    def run(text: str) -> dict[str, object]:
        parsed = parse_dot(text)
        exe = shutil.which("dot")
        if exe:
            proc = subprocess.run([exe, "-Tsvg"], input=text, capture_output=True, text=True, timeout=300,
                                  check=False)
            assert proc.returncode == 0 and "<svg" in proc.stdout, proc.stderr
        return parsed

    return run
