"""Emitters: the prepared graph as a graph file, hexagon_nn C source, or a picture.

``emit_graph(graph, fmt, path)`` writes one format (docs/architecture.md, the
stages' diagram):

- ``json``: the graph file (:mod:`hexnn_import.serialize`, docs/graph_format.md);
- ``c``: ``path`` (C source calling the hexagon_nn host API) and the header
  beside it (``path`` with the suffix ``.h``) naming inputs and outputs;
- ``dot``: Graphviz text; ``svg`` / ``png``: the same drawn by Graphviz's
  ``dot`` program, which must be on PATH.

Every file is written atomically; a failure leaves no file behind (for C,
neither the source nor the header).
"""
from __future__ import annotations

import os
from pathlib import Path

from hexnn_import.emit.c_header import render_c_header
from hexnn_import.emit.c_source import render_c_source
from hexnn_import.emit.c_text import c_identifier
from hexnn_import.emit.dot import graphviz_program, render_dot, render_with_graphviz
from hexnn_import.emit.files import EmitError, write_files
from hexnn_import.graph import Graph
from hexnn_import.model_source import GRAPH_SUFFIX

EMIT_FORMATS = ("json", "c", "dot", "svg", "png")
#: file suffix of each format when no output path is given
SUFFIXES = {"c": ".c", "dot": ".dot", "svg": ".svg", "png": ".png"}


def check_emit_format(fmt: str) -> None:
    """Fail early (before importing a model) when ``fmt`` is unknown or its tool is missing."""
    if fmt not in EMIT_FORMATS:
        raise EmitError(f"unknown emit format {fmt!r}: expected one of {', '.join(EMIT_FORMATS)}")
    if fmt in ("svg", "png"):
        graphviz_program()


def default_emit_path(model: str | os.PathLike, fmt: str) -> Path:
    """``models/x.tflite`` -> ``models/x.hexnn.json`` / ``x.c`` / ``x.dot`` ... beside the model."""
    p = Path(model)
    stem = p.name[: -len(GRAPH_SUFFIX)] if p.name.endswith(GRAPH_SUFFIX) else p.stem
    return p.with_name(stem + (GRAPH_SUFFIX if fmt == "json" else SUFFIXES[fmt]))


def header_path(c_path: str | os.PathLike) -> Path:
    """The header written beside a C source: the same name with the suffix ``.h``."""
    p = Path(c_path)
    h = p.with_suffix(".h")
    if h == p:
        raise EmitError(f"{p}: the C source needs a name other than *.h (its header is written as {h})")
    return h


def emit_c(graph: Graph, path: str | os.PathLike, source: str | None = None, prefix: str | None = None) -> list[str]:
    """Write the C source at ``path`` and its header beside it; returns both paths (source first)."""
    c_path = Path(path)
    h_path = header_path(c_path)
    ident = prefix or c_identifier(c_path.stem)
    c_text = render_c_source(graph, ident, h_path.name, source)
    h_text = render_c_header(graph, ident, c_path.name, source)
    written = write_files([(h_path, h_text.encode("utf-8")), (c_path, c_text.encode("utf-8"))])
    return [written[1], written[0]]


def emit_graph(graph: Graph, fmt: str, path: str | os.PathLike, source: str | None = None) -> list[str]:
    """Write ``graph`` in format ``fmt`` at ``path``; returns the files written."""
    check_emit_format(fmt)
    if fmt == "json":
        from hexnn_import.serialize import save_graph

        save_graph(graph, path)
        return [str(path)]
    if fmt == "c":
        return emit_c(graph, path, source)
    title = Path(source).name if source else Path(path).stem
    text = render_dot(graph, title=title)
    payload = text.encode("utf-8") if fmt == "dot" else render_with_graphviz(text, fmt)
    return write_files([(Path(path), payload)])


__all__ = ["EMIT_FORMATS", "EmitError", "check_emit_format", "default_emit_path", "emit_c", "emit_graph",
           "header_path", "render_c_header", "render_c_source", "render_dot", "render_with_graphviz"]
