"""Unsqueeze followed by a Squeeze of the same axes is the identity: an ONNX-level rewrite (issue 33).

torch's exporter writes ``x.unsqueeze(1).squeeze(1)`` (at opset 9 with ``axes`` attributes, from 13 with
``axes`` inputs) where the model code does; on a rank-4 tensor the tensor in between has rank 5, which
hexagon_nn cannot hold. ``Squeeze(Unsqueeze(x, A), A)`` is ``x`` (onnx ``docs/Operators.md``: Unsqueeze
inserts size-1 dimensions at the output positions ``A``; Squeeze removes those same positions), so the
Squeeze becomes an Identity of ``x``; the Unsqueeze is dropped when nothing else reads its output.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from hexnn_import.importers.onnx.reader import attrs_of


def _axes(node: onnx.NodeProto, consts: dict[str, np.ndarray], rank: int) -> list[int] | None:
    """The node's axes, normalized to ``rank``; None when not given or not constant."""
    a = attrs_of(node).get("axes")
    if a is None and len(node.input) > 1 and node.input[1]:
        a = consts.get(node.input[1])
    if a is None:
        return None
    vals = [int(v) for v in np.asarray(a).reshape(-1)]
    return sorted(v + rank if v < 0 else v for v in vals)


def drop_unsqueeze_squeeze(nodes: list[onnx.NodeProto], shapes: dict[str, tuple[int, ...]],
                           consts: dict[str, np.ndarray], outputs: set[str]) -> list[onnx.NodeProto]:
    """The nodes with every ``Squeeze(Unsqueeze(x, A), A)`` made ``Identity(x)`` (module doc)."""
    producer = {o: n for n in nodes for o in n.output if o}
    readers: dict[str, int] = {}
    for n in nodes:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    replaced: dict[int, onnx.NodeProto] = {}
    for n in nodes:
        if n.op_type != "Squeeze" or n.domain not in ("", "ai.onnx") or not n.input:
            continue
        u = producer.get(n.input[0])
        if u is None or u.op_type != "Unsqueeze" or u.domain not in ("", "ai.onnx"):
            continue
        rank = len(shapes.get(n.input[0], ()))
        a, b = _axes(u, consts, rank), _axes(n, consts, rank)
        if not rank or a is None or a != b:
            continue
        replaced[id(n)] = helper.make_node("Identity", [u.input[0]], [n.output[0]], name=n.name)
        readers[n.input[0]] -= 1
    out = []
    for n in nodes:
        if id(n) in replaced:
            out.append(replaced[id(n)])
        elif n.op_type == "Unsqueeze" and n.output and readers.get(n.output[0], 0) == 0 \
                and n.output[0] not in outputs:
            continue  # read only by the Squeezes made Identity
        else:
            out.append(n)
    return out
