"""The ONNX graph rules the importer relies on, checked before folding (issue 38, finding 7).

What ``onnx.checker.check_model`` (onnx/checker.cc ``check_graph``: "Graph must be in single static assignment
(SSA) form", "Duplicate definition of name", and the opset versions the installed onnx knows) refuses and the
import relied on without checking: every name written once, by a node or as a graph input or initializer; no two
graph outputs of one name; a default-domain opset onnx knows. The checks here are those rules alone, linear in
the graph, not the checker's full check (its shape inference is slow on big graphs and it refuses custom domains
the importer reads). Each refusal is one line naming the node.
"""
from __future__ import annotations

import onnx
from onnx import defs

from hexnn_import.errors import ModelFormatError


def _node_label(node: onnx.NodeProto, k: int) -> str:
    return f"node {node.name or '#' + str(k)} ({node.op_type})"


def check_opset(version: int, label: str) -> None:
    """ModelFormatError for a default-domain opset newer than the installed onnx defines."""
    newest = defs.onnx_opset_version()
    if version > newest:
        raise ModelFormatError(f"{label}: ONNX opset {version} is newer than any the installed onnx ({onnx.__version__}) "
                               f"defines (up to {newest})")


def check_single_assignment(graph: onnx.GraphProto, label: str) -> None:
    """ModelFormatError for a name written twice (graph input, initializer or node output) or a repeated graph
    output name."""
    written: dict[str, str] = {}
    for t in graph.input:
        written.setdefault(t.name, "a graph input")
    for t in graph.initializer:
        if written.get(t.name) == "an initializer":
            raise ModelFormatError(f"{label}: two initializers are named '{t.name}'")
        written[t.name] = "an initializer"
    for k, node in enumerate(graph.node):
        for out in node.output:
            if not out:
                continue
            if out in written:
                raise ModelFormatError(f"{label}: {_node_label(node, k)} writes '{out}', already {written[out]}")
            written[out] = f"written by {_node_label(node, k)}"
    seen: set[str] = set()
    for t in graph.output:
        if t.name in seen:
            raise ModelFormatError(f"{label}: the graph names output '{t.name}' twice")
        seen.add(t.name)


def check_structure(model: onnx.ModelProto, opset: int, label: str) -> None:
    """The rules of the module doc on the main graph."""
    check_opset(opset, label)
    check_single_assignment(model.graph, label)
