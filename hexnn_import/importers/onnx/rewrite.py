"""ONNX-level rewrites of rank-5 patterns into rank-4 equivalents, after folding (issue 18, item 4).

hexagon_nn tensors have 4 dimensions. The ShuffleNet channel shuffle, as
torch exports it (``x.view(N, g, C/g, H, W).transpose(1, 2).reshape(N, C, H,
W)``), goes through rank 5, but all it does is permute the channels:
output channel ``i * g + j`` is input channel ``j * (C/g) + i``. The three
nodes become one ``Gather(x, order, axis=1)`` with that constant order,
which the Gather handler maps to one Gather_8 along graph depth. In a QDQ
model the rank-5 tensors also pass QuantizeLinear -> DequantizeLinear pairs;
a permutation of codes needs no requantization, so those pairs go too.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper


def _sole_consumer(nodes: list[onnx.NodeProto], name: str, outputs: set[str]) -> onnx.NodeProto | None:
    users = [n for n in nodes if name in n.input]
    return users[0] if len(users) == 1 and name not in outputs else None


def _next(nodes: list[onnx.NodeProto], name: str, outputs: set[str]) -> tuple[onnx.NodeProto | None, list]:
    """The sole consumer of ``name``, looking through one QuantizeLinear -> DequantizeLinear pair (QDQ
    models wrap Reshape and Transpose in them); also the pair's nodes, which the rewrite drops."""
    n = _sole_consumer(nodes, name, outputs)
    if n is None or n.op_type != "QuantizeLinear":
        return n, []
    dq = _sole_consumer(nodes, n.output[0], outputs)
    if dq is None or dq.op_type != "DequantizeLinear":
        return None, []
    return _sole_consumer(nodes, dq.output[0], outputs), [n, dq]


def shuffle_order(c: int, g: int) -> np.ndarray:
    """Input channel of each output channel of a shuffle of ``c`` channels in ``g`` groups."""
    return np.arange(c, dtype=np.int64).reshape(g, c // g).T.reshape(-1)


def rewrite_channel_shuffles(nodes: list[onnx.NodeProto], shapes: dict[str, tuple[int, ...]],
                             consts: dict[str, np.ndarray], outputs: set[str]) -> list[onnx.NodeProto]:
    """``nodes`` with every Reshape -> Transpose -> Reshape channel shuffle replaced by a Gather (module doc)."""
    drop: set[int] = set()
    replace: dict[int, onnx.NodeProto] = {}
    for n in nodes:
        if n.op_type != "Reshape" or n.domain not in ("", "ai.onnx"):
            continue
        x, mid = n.input[0], n.output[0]
        s_in, s5 = shapes.get(x), shapes.get(mid)
        if s_in is None or s5 is None or len(s_in) != 4 or len(s5) != 5:
            continue
        t, pair1 = _next(nodes, mid, outputs)
        if t is None or t.op_type != "Transpose":
            continue
        perm = [int(p) for a in t.attribute if a.name == "perm" for p in a.ints]
        r, pair2 = _next(nodes, t.output[0], outputs)
        if perm != [0, 2, 1, 3, 4] or r is None or r.op_type != "Reshape":
            continue
        s_out = shapes.get(r.output[0])
        n_, c, h, w = s_in
        if s_out != s_in or s5[0] != n_ or s5[1] * s5[2] != c or tuple(s5[3:]) != (h, w):
            continue
        order_name = f"{r.output[0]}/shuffle_order"
        consts[order_name] = shuffle_order(c, int(s5[1]))
        drop.update(id(k) for k in [n, t, *pair1, *pair2])
        replace[id(r)] = helper.make_node("Gather", [x, order_name], [r.output[0]], axis=1,
                                          name=(r.name or r.output[0]) + "/shuffle")
    return [replace.get(id(n), n) for n in nodes if id(n) not in drop]


__all__ = ["rewrite_channel_shuffles", "shuffle_order"]
