"""Rank-5 regions that hold a size-1 axis, rewritten at rank 4: an ONNX-level rewrite (issue 33).

Paddle2ONNX writes SVTR's (PP-OCRv3 recognizer) multi-head attention split as
``Reshape(qkv, [0, -1, 3, heads, d])`` -> ``Transpose [2, 0, 3, 1, 4]`` -> three ``Slice`` of axis 0 ->
``Squeeze`` of axis 0: q, k and v of ``[B, heads, T, d]``. hexagon_nn tensors have 4 dimensions; with
``B = 1`` every rank-5 tensor of that region has a size-1 axis, and dropping a size-1 axis changes no
element's place in memory (onnx ``docs/Operators.md``: Reshape keeps the row-major order). So the region
is rewritten without that axis: the Reshape targets the rank-4 shape, the Transpose's ``perm`` loses the
axis (``perm[j] - (perm[j] > a)``), each Slice's axes are renumbered, per-tensor QuantizeLinear /
DequantizeLinear pairs (a QDQ model) and Identity / Cast pass through unchanged, and the region's last
node (a Squeeze or Reshape back to rank <= 4) becomes an Identity, or a Reshape to its output's shape.

The region is every tensor reachable from the rank-5 Reshape output through those ops; it is rewritten
only when every reader of every rank-5 tensor in it is one of them and none is a graph output; otherwise
the nodes stay and the op mapping refuses them (rank > 4) as before.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper

from hexnn_import.importers.onnx.reader import attrs_of

#: ops through which the dropped axis is carried (elementwise on the layout, or one that renumbers it)
_PASS = {"Transpose", "Slice", "QuantizeLinear", "DequantizeLinear", "Identity", "Cast"}
#: ops that end the region (their output has rank <= 4)
_END = {"Squeeze", "Reshape"}


@dataclass
class _Region:
    """The rewrite of one region: replaced nodes, new rank-4 shapes, new constants."""

    nodes: dict[int, onnx.NodeProto] = field(default_factory=dict)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    consts: dict[str, np.ndarray] = field(default_factory=dict)


def _drop(shape: tuple[int, ...], a: int) -> tuple[int, ...]:
    return tuple(d for i, d in enumerate(shape) if i != a)


def _ints(node: onnx.NodeProto, attr: str, pos: int, consts: dict[str, np.ndarray]) -> list[int] | None:
    """An int-list parameter given as attribute ``attr`` or constant input ``pos`` (None: absent)."""
    a = attrs_of(node).get(attr)
    if a is None and len(node.input) > pos and node.input[pos]:
        a = consts.get(node.input[pos])
        if a is None:
            return None
    return None if a is None else [int(v) for v in np.asarray(a).reshape(-1)]


def _slice(n: onnx.NodeProto, a: int, consts: dict[str, np.ndarray], r: _Region) -> int | None:
    """``n`` (a Slice of a rank-5 tensor without axis ``a``) renumbered; the output's dropped axis (a)."""
    starts = _ints(n, "starts", 1, consts)
    ends = _ints(n, "ends", 2, consts)
    axes = _ints(n, "axes", 3, consts)
    steps = _ints(n, "steps", 4, consts) if len(n.input) > 4 and n.input[4] else None
    if starts is None or ends is None or (axes is None and len(n.input) > 3 and n.input[3]):
        return None
    axes = list(range(len(starts))) if axes is None else [v + 5 if v < 0 else v for v in axes]
    steps = [1] * len(axes) if steps is None else steps
    keep = [k for k, ax in enumerate(axes) if ax != a]
    if len(keep) < len(axes):  # a slice of the size-1 axis itself must keep it whole
        k = axes.index(a)
        if steps[k] != 1 or starts[k] > 0 or ends[k] < 1:
            return None
    if not keep:
        r.nodes[id(n)] = helper.make_node("Identity", [n.input[0]], list(n.output), name=n.name)
        return a
    new_axes = [axes[k] - (axes[k] > a) for k in keep]
    vals = {"starts": [starts[k] for k in keep], "ends": [ends[k] for k in keep], "axes": new_axes,
            "steps": [steps[k] for k in keep]}
    if "starts" in attrs_of(n):  # opset < 10: attributes
        r.nodes[id(n)] = helper.make_node("Slice", [n.input[0]], list(n.output), name=n.name,
                                          starts=vals["starts"], ends=vals["ends"], axes=new_axes)
        return a
    names = []
    for key in ("starts", "ends", "axes", "steps"):
        name = f"{n.output[0]}/rank4_{key}"
        r.consts[name] = np.array(vals[key], np.int64)
        names.append(name)
    r.nodes[id(n)] = helper.make_node("Slice", [n.input[0], *names], list(n.output), name=n.name)
    return a


def _step(n: onnx.NodeProto, a: int, consts: dict[str, np.ndarray], r: _Region) -> int | None:
    """The output's dropped axis after pass-through node ``n`` reading the region tensor (None: cannot)."""
    if n.op_type == "Transpose":
        perm = attrs_of(n).get("perm") or [4, 3, 2, 1, 0]
        out_a = list(perm).index(a)
        new = [p - (p > a) for j, p in enumerate(perm) if j != out_a]
        r.nodes[id(n)] = helper.make_node("Transpose", [n.input[0]], list(n.output), name=n.name, perm=new)
        return out_a
    if n.op_type == "Slice":
        return _slice(n, a, consts, r)
    if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
        scale = consts.get(n.input[1]) if len(n.input) > 1 else None
        return a if scale is not None and np.asarray(scale).size == 1 else None  # per-tensor only
    return a  # Identity, Cast


def _region(start: onnx.NodeProto, a: int, readers: dict[str, list[onnx.NodeProto]],
            shapes: dict[str, tuple[int, ...]], consts: dict[str, np.ndarray], outputs: set[str]) -> _Region | None:
    """The rewrite of the region starting at the rank-5 Reshape ``start`` without its size-1 axis ``a``."""
    r = _Region()
    s5 = shapes[start.output[0]]
    target = f"{start.output[0]}/rank4_shape"
    r.consts[target] = np.array(_drop(s5, a), np.int64)
    r.nodes[id(start)] = helper.make_node("Reshape", [start.input[0], target], list(start.output), name=start.name)
    todo = [(start.output[0], a)]
    while todo:
        t, ax = todo.pop()
        s = shapes.get(t)
        if s is None or len(s) != 5 or s[ax] != 1 or t in outputs:
            return None
        r.shapes[t] = _drop(s, ax)
        for n in readers.get(t, []):
            if n.domain not in ("", "ai.onnx") or n.input[0] != t or t in n.input[1:]:
                return None
            out = shapes.get(n.output[0])
            if n.op_type in _END and out is not None and len(out) <= 4:
                op = "Identity" if tuple(out) == r.shapes[t] else "Reshape"
                ins = [t]
                if op == "Reshape":
                    ins.append(f"{n.output[0]}/rank4_out_shape")
                    r.consts[ins[1]] = np.array(out, np.int64)
                r.nodes[id(n)] = helper.make_node(op, ins, [n.output[0]], name=n.name)
                continue
            nxt = _step(n, ax, consts, r) if n.op_type in _PASS and len(n.output) == 1 else None
            if nxt is None:
                return None
            todo.append((n.output[0], nxt))
    return r


def rewrite_rank5_splits(nodes: list[onnx.NodeProto], shapes: dict[str, tuple[int, ...]],
                         consts: dict[str, np.ndarray], outputs: set[str]) -> list[onnx.NodeProto]:
    """``nodes`` with every rank-5 region that has a size-1 axis rewritten at rank 4 (module doc); ``shapes``
    and ``consts`` are updated in place."""
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in nodes:
        for i in dict.fromkeys(n.input):
            readers.setdefault(i, []).append(n)
    replace: dict[int, onnx.NodeProto] = {}
    for n in nodes:
        s5 = shapes.get(n.output[0]) if n.op_type == "Reshape" and n.output else None
        s_in = shapes.get(n.input[0]) if n.input else None
        if s5 is None or s_in is None or len(s5) != 5 or len(s_in) > 4 or n.domain not in ("", "ai.onnx"):
            continue
        for a in (i for i, d in enumerate(s5) if d == 1):
            r = _region(n, a, readers, shapes, consts, outputs)
            if r is not None and not set(r.nodes) & set(replace):
                replace.update(r.nodes)
                shapes.update(r.shapes)
                consts.update(r.consts)
                break
    return [replace.get(id(n), n) for n in nodes]


__all__ = ["rewrite_rank5_splits"]
