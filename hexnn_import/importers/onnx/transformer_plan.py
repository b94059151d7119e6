"""Chains of ONNX nodes that torch exports for transformer layers, recognised before the walk.

Each matcher returns the nodes it absorbs, the node that ends the chain (whose turn imports it) and
what the emitter needs; :mod:`.onnx.handlers.transformer` turns them into the fusion plan's ``chains``.

- **GELU** (``nn.GELU()`` below opset 20): ``Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)`` (or
  ``x * 0.5`` first; ``Mul(x, 1/sqrt 2)`` for the Div), every inner tensor read once, no Q/DQ inside.
- **Erf of a scaled input** (a QDQ model leaves Div and Erf in float between a DequantizeLinear and a
  QuantizeLinear): ``Erf(Div(x, c))`` is one function of ``x``, a table from x's range to Erf's.
- **LayerNorm, decomposed** (opset < 17): ``m = ReduceMean(x, -1)``, ``d = Sub(x, m)``,
  ``v = ReduceMean(Pow(d, 2), -1)``, ``Div(d, Sqrt(Add(v, eps)))``, then ``Mul(gamma)`` and ``Add(beta)``
  when present (constants).
- **Rank-5 head split**: torch's packed in-projection ``proj.unflatten(-1, (3, E)).unsqueeze(0)
  .transpose(0, -2).squeeze(-2)`` is Unsqueeze -> Transpose -> Squeeze through rank 5 (each through a
  Q/DQ pair of one range in a QDQ model); the three are one rank-4 permutation of the input.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hexnn_import.importers.nodes.core import same_range
from hexnn_import.importers.onnx.reader import ONode

if TYPE_CHECKING:
    from hexnn_import.importers.onnx.importer import OnnxImporter


@dataclass
class Chain:
    """A matched chain: ``kind`` ('gelu', 'erf', 'layernorm', 'permute'), its nodes, the node ending it,
    the input and output tensors and the kind's parameters."""

    kind: str
    nodes: list[ONode]
    end: ONode
    x: str
    y: str
    params: dict


class _View:
    """Producers, readers and constants of the live graph."""

    def __init__(self, imp: "OnnxImporter") -> None:
        self.imp = imp
        self.producer = {o: n for n in imp.live for o in n.outputs if o}
        self.outputs = set(imp.m.outputs)

    def sole(self, t: str, *ops: str) -> ONode | None:
        users = self.imp.tensors.consumers(t)
        return users[0] if len(users) == 1 and users[0].op_type in ops and t not in self.outputs else None

    def scalar(self, t: str) -> float | None:
        if not t or not self.imp.tensors.is_const(t):
            return None
        c = np.asarray(self.imp.tensors.const(t), dtype=np.float64)
        return float(c.reshape(-1)[0]) if c.size == 1 else None

    def const(self, t: str) -> np.ndarray | None:
        if not t or not self.imp.tensors.is_const(t):
            return None
        return np.asarray(self.imp.tensors.const(t), dtype=np.float64)


def _other(node: ONode, t: str) -> str | None:
    a, b = node.input(0), node.input(1)
    return b if a == t else a if b == t else None


def _scaled_input(v: _View, div: ONode) -> tuple[str, float] | None:
    """``(x, k)`` when ``div`` is ``x / c`` (k = 1/c) or ``x * k`` with a constant scalar."""
    if div.op_type == "Div" and v.scalar(div.input(1)) not in (None, 0.0):
        return div.input(0), 1.0 / v.scalar(div.input(1))  # type: ignore[operator]
    if div.op_type == "Mul":
        for a, b in ((div.input(0), div.input(1)), (div.input(1), div.input(0))):
            if v.scalar(b) is not None and not v.imp.tensors.is_const(a):
                return a, v.scalar(b)  # type: ignore[return-value]
    return None


def match_gelu(v: _View, erf: ONode) -> Chain | None:
    """The exact GELU around ``erf`` (module doc), or None."""
    div = v.producer.get(erf.input(0))
    scaled = _scaled_input(v, div) if div is not None and div.op_type in ("Div", "Mul") else None
    if scaled is None or abs(scaled[1] - 1 / math.sqrt(2)) > 1e-5 or v.sole(div.outputs[0], "Erf") is None:
        return None
    x = scaled[0]
    add = v.sole(erf.outputs[0], "Add")
    if add is None or v.scalar(_other(add, erf.outputs[0]) or "") != 1.0:
        return None
    m1 = v.sole(add.outputs[0], "Mul")
    if m1 is None:
        return None
    other = _other(m1, add.outputs[0])
    half = v.producer.get(other or "")
    if other == x:  # x * (1 + erf) then * 0.5
        m2 = v.sole(m1.outputs[0], "Mul")
        if m2 is None or v.scalar(_other(m2, m1.outputs[0]) or "") != 0.5:
            return None
        return Chain("gelu", [div, erf, add, m1, m2], m2, x, m2.outputs[0], {})
    # (x * 0.5) * (1 + erf)
    if half is None or half.op_type != "Mul" or v.sole(half.outputs[0], "Mul") is not m1:
        return None
    if v.scalar(_other(half, x) or "") != 0.5:
        return None
    return Chain("gelu", [div, erf, add, half, m1], m1, x, m1.outputs[0], {})


def match_scaled_erf(v: _View, erf: ONode) -> Chain | None:
    """``Erf(x / c)`` with the Div read only by the Erf (the QDQ form), or None."""
    div = v.producer.get(erf.input(0))
    if div is None or div.op_type not in ("Div", "Mul") or v.sole(div.outputs[0], "Erf") is None:
        return None
    scaled = _scaled_input(v, div)
    if scaled is None:
        return None
    return Chain("erf", [div, erf], erf, scaled[0], erf.outputs[0], {"k": scaled[1]})


def _last_axis_reduce(v: _View, node: ONode) -> bool:
    if node.op_type != "ReduceMean" or not int(node.attr("keepdims", 1)):
        return False
    axes = node.attr("axes")
    if axes is None and node.input(1):
        c = v.const(node.input(1))
        axes = None if c is None else [int(a) for a in c.reshape(-1)]
    r = len(v.imp.tensors.shape(node.input(0)))
    return axes is not None and len(axes) == 1 and int(axes[0]) % r == r - 1


def match_layer_norm(v: _View, mean: ONode) -> Chain | None:
    """The decomposed LayerNorm starting at ReduceMean ``mean`` (module doc), or None."""
    if not _last_axis_reduce(v, mean):
        return None
    x, m = mean.input(0), mean.outputs[0]
    sub = v.sole(m, "Sub")
    if sub is None or sub.input(0) != x or sub.input(1) != m:
        return None
    d_users = v.imp.tensors.consumers(sub.outputs[0])
    pow_ = next((u for u in d_users if u.op_type == "Pow" and u.input(0) == sub.outputs[0]), None)
    div = next((u for u in d_users if u.op_type == "Div" and u.input(0) == sub.outputs[0]), None)
    if len(d_users) != 2 or pow_ is None or div is None or v.scalar(pow_.input(1)) != 2.0:
        return None
    var = v.sole(pow_.outputs[0], "ReduceMean")
    add = v.sole(var.outputs[0], "Add") if var is not None and _last_axis_reduce(v, var) else None
    eps = v.scalar(_other(add, var.outputs[0]) or "") if add is not None else None  # type: ignore[union-attr]
    sqrt = v.sole(add.outputs[0], "Sqrt") if eps is not None else None  # type: ignore[union-attr]
    if sqrt is None or v.sole(sqrt.outputs[0], "Div") is not div or div.input(1) != sqrt.outputs[0]:
        return None
    nodes, y = [mean, sub, pow_, var, add, sqrt, div], div.outputs[0]  # type: ignore[list-item]
    d = v.imp.tensors.shape(x)[-1]
    params = {"gamma": np.ones(d), "beta": np.zeros(d), "eps": eps}
    for op, key in (("Mul", "gamma"), ("Add", "beta")):
        nxt = v.sole(y, op)
        c = v.const(_other(nxt, y) or "") if nxt is not None else None
        if c is None or c.size not in (1, d):
            break
        params[key] = np.broadcast_to(c.reshape(-1), (d,)).astype(np.float64)
        nodes.append(nxt)  # type: ignore[arg-type]
        y = nxt.outputs[0]  # type: ignore[union-attr]
    return Chain("layernorm", nodes, nodes[-1], x, y, params)


def _through_qdq(v: _View, t: str, rng: tuple[float, float] | None) -> tuple[ONode | None, list[ONode]]:
    """The one reader of ``t``, looking through a QuantizeLinear -> DequantizeLinear pair on range ``rng``."""
    users = v.imp.tensors.consumers(t)
    if len(users) != 1 or t in v.outputs:
        return None, []
    q = users[0]
    if q.op_type != "QuantizeLinear":
        return q, []
    dq = v.sole(q.outputs[0], "DequantizeLinear")
    if dq is None or not (rng is None or same_range(v.imp.tensors.act_range(q.outputs[0]), rng)):
        return None, []
    nxt = v.imp.tensors.consumers(dq.outputs[0])
    return (nxt[0], [q, dq]) if len(nxt) == 1 and dq.outputs[0] not in v.outputs else (None, [])


def match_rank5_permute(v: _View, unsq: ONode) -> Chain | None:
    """Unsqueeze -> Transpose -> Squeeze through rank 5 that is one rank-4 permutation (module doc)."""
    shapes = v.imp.tensors
    x = unsq.input(0)
    s_in = shapes.shape(x)
    if len(s_in) != 4 or len(shapes.shape(unsq.outputs[0])) != 5:
        return None
    rng = shapes.act_range(x)
    tr, pair1 = _through_qdq(v, unsq.outputs[0], rng)
    if tr is None or tr.op_type != "Transpose":
        return None
    sq, pair2 = _through_qdq(v, tr.outputs[0], rng)
    if sq is None or sq.op_type != "Squeeze" or len(shapes.shape(sq.outputs[0])) != 4:
        return None
    probe = np.arange(int(np.prod(s_in))).reshape(s_in)
    want = probe.reshape(shapes.shape(unsq.outputs[0])).transpose(tr.attr("perm") or list(range(5))[::-1])
    want = want.reshape(shapes.shape(sq.outputs[0]))
    for perm in itertools.permutations(range(4)):
        if probe.transpose(perm).shape == want.shape and np.array_equal(probe.transpose(perm), want):
            return Chain("permute", [unsq, *pair1, tr, *pair2, sq], sq, x, sq.outputs[0], {"perm": list(perm)})
    return None


def find_chains(imp: "OnnxImporter", absorbed: set[int]) -> list[Chain]:
    """Every chain of the module doc in the live graph whose nodes no other fusion took."""
    v = _View(imp)
    found: list[Chain] = []
    taken = set(absorbed)
    for node in imp.live:
        hit = None
        if node.op_type == "Erf":
            hit = match_gelu(v, node) or match_scaled_erf(v, node)
        elif node.op_type == "ReduceMean":
            hit = match_layer_norm(v, node)
        elif node.op_type == "Unsqueeze":
            hit = match_rank5_permute(v, node)
        if hit is None or any(n.index in taken for n in hit.nodes):
            continue
        taken.update(n.index for n in hit.nodes)
        found.append(hit)
    return found


__all__ = ["Chain", "find_chains"]
