"""The graph as a Graphviz picture: op names, shapes, ranges, d32 and supernodes at a glance.

One box per op node (``n<node_id>``), with the source name, the op and its
padding, the ranges whose min/max inputs are Consts (``out [0, 6]``), the
other constant inputs in a line each, and the output shape. Const nodes are
folded into their consumers' labels (or drawn as small notes with
``fold_consts=False``). Colours: supernodes orange, ops on d32 tensors blue
with a bold border, INPUT/OUTPUT green; edges carrying a d32 tensor are
bold blue. Parallel refs between two nodes (data, min, max) are one edge.

Input slot names come from the op catalog (``in_min``, ``out_max``...), the
document text every op's inputs follow; ops whose variadic inputs outrun the
catalog's list get ``in<i>``.
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np

from hexnn_import.emit.files import EmitError
from hexnn_import.graph import Graph, NNPad, Node, OutputDef
from hexnn_import.ops.catalog import CATALOG

SUPERNODE_FILL = "#ffd8a8"
D32_FILL = "#d0e4ff"
D32_COLOR = "#1c64d6"
IO_FILL = "#cdeccd"
OP_FILL = "#f4f4f4"
CONST_FILL = "#eeeeee"
LEGEND = "orange: supernode   blue, bold: d32 op / tensor   green: INPUT, OUTPUT"


def dot_quote(lines: list[str] | str) -> str:
    """A DOT quoted string: ``\\`` and ``"`` escaped, lines joined with the ``\\n`` escape."""
    items = [lines] if isinstance(lines, str) else [str(s) for s in lines]
    esc = [s.replace("\\", "\\\\").replace('"', '\\"').replace("\r", " ").replace("\n", " ") for s in items]
    return '"' + "\\n".join(esc) + '"'


def dims(shape: tuple[int, ...]) -> str:
    """``1x24x24x8``."""
    return "x".join(str(int(d)) for d in shape)


def is_d32(od: OutputDef) -> bool:
    return od.dtype == "quint8_d32"


def _num(v: float) -> str:
    return f"{float(v):.4g}"


def slot_names(node: Node) -> list[str]:
    """Catalog names of the node's input slots, or ``in<i>`` where the catalog cannot say."""
    spec = CATALOG.get(node.op)
    names = [s.name for s in spec.inputs] if spec else []
    if len(node.inputs) > len(names):
        return [f"in{i}" for i in range(len(node.inputs))]
    return names[: len(node.inputs)]


def _slot_types(node: Node) -> list[tuple[str, ...]]:
    spec = CATALOG.get(node.op)
    if spec is None or len(node.inputs) > len(spec.inputs):
        return [("any",)] * len(node.inputs)
    return [s.types for s in spec.inputs[: len(node.inputs)]]


def _scalar_const(graph: Graph, node: Node, pos: int) -> float | None:
    src = graph.node(node.inputs[pos].src_id)
    if src.is_const and src.data is not None and src.data.size == 1 and src.data.dtype.kind == "f":
        return float(src.data.reshape(-1)[0])
    return None


def range_lines(graph: Graph, node: Node) -> tuple[list[str], set[int]]:
    """``prefix [lo, hi]`` for each (``X_min``, ``X_max``) input pair fed by scalar Consts; and their positions."""
    names = slot_names(node)
    where = {n: i for i, n in enumerate(names)}
    lines: list[str] = []
    used: set[int] = set()
    for i, name in enumerate(names):
        if name == "min" or name.endswith("_min"):
            prefix = name[:-4] if name.endswith("_min") else "range"
            j = where.get(prefix + "_max" if name.endswith("_min") else "max")
            if j is None:
                continue
            lo, hi = _scalar_const(graph, node, i), _scalar_const(graph, node, j)
            if lo is not None and hi is not None:
                lines.append(f"{prefix} [{_num(lo)}, {_num(hi)}]")
                used |= {i, j}
    return lines, used


def const_text(name: str, types: tuple[str, ...], const: Node) -> str:
    """One line for a constant input: shape-only slots by shape, small values by value, others by type."""
    data = const.data if const.data is not None else np.zeros(0)
    if "shape" in types:
        return f"{name} {dims(data.shape)}"
    if data.dtype.itemsize and 0 < data.size <= 4:
        vals = ", ".join(_num(v) if data.dtype.kind == "f" else str(int(v)) for v in data.reshape(-1))
        return f"{name} = {vals}"
    return f"{name} {const.output_defs[0].dtype} {dims(data.shape)}"


def outputs_text(node: Node) -> str:
    """``out 1x24x24x8 quint8_d32 (+min, max)``: scalar float outputs after the first are summarized."""
    if not node.output_defs:
        return ""
    first, rest = node.output_defs[0], node.output_defs[1:]
    scalars = [od for od in rest if od.shape == (1, 1, 1, 1) and od.dtype == "float"]
    shown = [first] + [od for od in rest if od not in scalars]
    text = "out " + "; ".join(f"{dims(od.shape)} {od.dtype}" for od in shown)
    return text + (f" (+{len(scalars)} scalar)" if scalars else "")


def io_lines(graph: Graph, node: Node) -> list[str]:
    """The source model's input/output names on the INPUT/OUTPUT node."""
    lines = []
    ios = graph.inputs if node.op == "INPUT" else graph.outputs if node.op == "OUTPUT" else []
    for io in ios:
        q = f" scale {_num(io.scale)} zp {io.zero_point}" if io.quantized else ""
        lines.append(f"{io.name}: {io.dtype} {list(io.shape)}{q}")
    return lines


def node_label(graph: Graph, node: Node, fold_consts: bool) -> list[str]:
    """The lines of an op node's label."""
    head = [node.name] if node.name and node.name != node.op else []
    pad = f"  {NNPad(node.padding).name}" if node.padding != NNPad.NA else ""
    lines = head + [f"{node.op}{pad}  #{node.node_id}"] + io_lines(graph, node)
    if fold_consts:
        ranges, used = range_lines(graph, node)
        lines += ranges
        for i, (ref, name, types) in enumerate(zip(node.inputs, slot_names(node), _slot_types(node))):
            src = graph.node(ref.src_id)
            if src.is_const and i not in used:
                lines.append(const_text(name, types, src))
    out = outputs_text(node)
    return lines + ([out] if out else [])


def node_style(graph: Graph, node: Node) -> str:
    """DOT attributes that make the node's class visible: supernode, d32, INPUT/OUTPUT."""
    d32 = any(is_d32(od) for od in node.output_defs) or any(
        is_d32(graph.node(r.src_id).output_defs[r.output_idx]) for r in node.inputs)
    if node.op in ("INPUT", "OUTPUT"):
        return f'shape={"invhouse" if node.op == "INPUT" else "house"}, fillcolor="{IO_FILL}"'
    fill = SUPERNODE_FILL if node.op.startswith("Supernode") else D32_FILL if d32 else OP_FILL
    border = f', color="{D32_COLOR}", penwidth=2.5' if d32 else ""
    return f'fillcolor="{fill}"{border}'


def edge_lines(graph: Graph, node: Node, fold_consts: bool) -> list[str]:
    """One edge per source node: labelled with the lowest output read, ``+k`` for the others."""
    by_src: dict[int, list[int]] = {}
    for ref in node.inputs:
        by_src.setdefault(ref.src_id, []).append(ref.output_idx)
    out = []
    for src_id, idxs in by_src.items():
        src = graph.node(src_id)
        if src.is_const:
            if not fold_consts:
                out.append(f'  n{src_id} -> n{node.node_id} [color="#999999", arrowsize=0.5];')
            continue
        od = src.output_defs[min(idxs)]
        others = [src.output_defs[i] for i in idxs if i != min(idxs)]
        kind = "scalar" if all(o.shape == (1, 1, 1, 1) and o.dtype == "float" for o in others) else "more"
        more = f" +{len(others)} {kind}" if others else ""
        label = dot_quote(f"{dims(od.shape)} {'d32' if is_d32(od) else od.dtype}{more}")
        style = f', color="{D32_COLOR}", penwidth=2.5' if is_d32(od) else ""
        out.append(f"  n{src_id} -> n{node.node_id} [label={label}{style}];")
    return out


def render_dot(graph: Graph, title: str = "", fold_consts: bool = True) -> str:
    """The DOT text of ``graph`` (a ``digraph``); nodes in list order, edges after their target's node."""
    n_const = sum(1 for n in graph.nodes if n.is_const)
    summary = f"{len(graph.nodes)} nodes ({n_const} Const" + (", folded into labels)" if fold_consts else ")")
    caption = [f"{title}: {summary}" if title else summary, LEGEND]
    lines = [
        "digraph hexnn {",
        f"  graph [rankdir=TB, labelloc=t, fontname=\"Helvetica\", label={dot_quote(caption)}];",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8];',
    ]
    for node in graph.nodes:
        if node.is_const:
            if not fold_consts:
                text = [node.name or f"Const #{node.node_id}", const_text("data", ("any",), node)]
                lines.append(f'  n{node.node_id} [label={dot_quote(text)}, shape=note, fontsize=7, '
                             f'fillcolor="{CONST_FILL}", style=filled];')
            continue
        lines.append(f"  n{node.node_id} [label={dot_quote(node_label(graph, node, fold_consts))}, "
                     f"{node_style(graph, node)}];")
        lines.extend(edge_lines(graph, node, fold_consts))
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphviz_program() -> str:
    """Path of Graphviz's ``dot``; EmitError naming the fix when it is not installed."""
    exe = shutil.which("dot")
    if exe is None:
        raise EmitError("svg/png need Graphviz's 'dot' program, which is not on PATH: "
                        "install Graphviz, or use --emit dot and render the file elsewhere")
    return exe


def render_with_graphviz(dot_text: str, fmt: str, timeout: float = 600.0) -> bytes:
    """Run ``dot -T<fmt>`` on the text; the picture's bytes, or EmitError with Graphviz's message."""
    exe = graphviz_program()
    try:
        proc = subprocess.run([exe, f"-T{fmt}"], input=dot_text.encode("utf-8"), capture_output=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EmitError(f"Graphviz 'dot -T{fmt}' failed: {exc}") from exc
    if proc.returncode != 0 or not proc.stdout:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise EmitError(f"Graphviz 'dot -T{fmt}' failed (exit {proc.returncode}): {msg[0] if msg else 'no output'}")
    return proc.stdout
