"""Hand-built graphs for the prepare-pass tests and the prepare benchmark.

- :func:`canonical`: a graph as comparable data (ops, names, paddings, where
  each input comes from; Consts by value), so "input graph -> expected
  graph" tests compare structure without caring about the ids new nodes got.
- :class:`QBuilder`: a Graph with helpers for quantized chains (quint8
  INPUT with Const ranges, the float-model style conv -> bias -> requantize
  -> relu chain) and :func:`run_outputs` / :func:`real_outputs` to run them.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hexnn_import.engine import Engine
from hexnn_import.graph import Graph, NNPad, Node, OutputDef, Ref
from hexnn_import.ops.quant import step_zero

S = OutputDef.scalar


def canonical(graph: Graph) -> list[tuple[Any, ...]]:
    """Non-Const nodes in list order as ``(op, name, padding, inputs, output dtypes)``.

    An input is ``("const", dtype, values)`` for a Const, else ``(k, output_idx)``
    with ``k`` the position of its producer among the non-Const nodes.
    """
    pos: dict[int, int] = {}
    out = []
    for node in graph.nodes:
        if node.is_const:
            continue
        ins = []
        for r in node.inputs:
            src = graph.node(r.src_id)
            if src.is_const:
                ins.append(("const", src.data.dtype.str, tuple(src.data.reshape(-1).tolist()), src.data.shape))
            else:
                ins.append((pos[r.src_id], r.output_idx))
        pos[node.node_id] = len(out)
        out.append((node.op, node.name, int(node.padding), tuple(ins), tuple(o.dtype for o in node.output_defs)))
    return out


def q3(node: Node) -> list[Ref]:
    """Refs to outputs 0, 1, 2 of a node (data, min, max)."""
    return [Ref(node.node_id, i) for i in range(3)]


class QBuilder:
    """A Graph plus helpers that append quantized ops with the right output defs."""

    def __init__(self) -> None:
        self.g = Graph()

    def c(self, value: Any, dtype: Any = np.float32, shape: Sequence[int] | None = None) -> Ref:
        """A Const ref (scalars become ``[1,1,1,1]``)."""
        arr = np.asarray(value, dtype=dtype)
        return self.g.const_ref(arr.reshape(shape) if shape is not None else arr)

    def input(self, shape: Sequence[int], dtype: str = "quint8", lo: float = -1.0, hi: float = 1.0) -> list[Ref]:
        """INPUT of one tensor; quint8/qint32 data come with Const min/max refs."""
        node = self.g.append("INPUT", [], [OutputDef(tuple(shape), dtype)], name="in")
        data = Ref(node.node_id, 0)
        return [data] if dtype == "float" else [data, self.c(lo), self.c(hi)]

    def op(self, op: str, inputs: Sequence[Ref], shape: Sequence[int], dtype: str = "quint8", n_out: int = 3,
           padding: NNPad = NNPad.NA, name: str = "") -> Node:
        """Append ``op`` with outputs ``[shape dtype] + scalars``."""
        defs = [OutputDef(tuple(shape), dtype)] + [S() for _ in range(n_out - 1)]
        return self.g.append(op, inputs, defs, padding, name)

    def output(self, refs: Sequence[Ref]) -> Node:
        """The OUTPUT node."""
        return self.g.append("OUTPUT", refs, [], name="out")

    def conv(self, x: Sequence[Ref], w: np.ndarray, w_range: tuple[float, float], stride: int = 1,
             padding: NNPad = NNPad.SAME, op: str = "QuantizedConv2d_8x8to32") -> Node:
        """A quint8 product (conv / depthwise) with Const filter codes; qint32 output."""
        b, h, wd, _ = self.g.node(x[0].src_id).output_defs[x[0].output_idx].shape
        fh, fw, din, dm = w.shape
        dout = din * dm if "Depthwise" in op else dm
        oh, ow = (-(-h // stride), -(-wd // stride)) if padding == NNPad.SAME else \
            ((h - fh) // stride + 1, (wd - fw) // stride + 1)
        ins = [x[0], self.c(w, np.uint8, w.shape), x[1], x[2], self.c(w_range[0]), self.c(w_range[1]),
               self.g.shape_ref((1, stride, stride, 1))]
        return self.op(op, ins, (b, oh, ow, dout), "qint32", padding=padding, name="conv")

    def supernode(self, x: Sequence[Ref], w: np.ndarray, lo: float, hi: float, stride: int = 1,
                  padding: NNPad = NNPad.SAME, op: str = "Supernode_8x8p32to8", scale: np.ndarray | None = None,
                  name: str = "sn") -> Node:
        """A flat supernode: filter codes ``w`` on [-0.5, 0.5], zero qint32 bias, output range [lo, hi]."""
        b, h, wd, _ = self.g.node(x[0].src_id).output_defs[x[0].output_idx].shape
        fh, fw, _, dout = w.shape
        oh, ow = (-(-h // stride), -(-wd // stride)) if padding == NNPad.SAME else \
            ((h - fh) // stride + 1, (wd - fw) // stride + 1)
        ins = [x[0], self.c(w, np.uint8, w.shape), x[1], x[2], self.c(-0.5), self.c(0.5),
               self.g.shape_ref((1, stride, stride, 1)), self.c(np.zeros((1, 1, 1, dout)), np.int32),
               self.c(-1.0), self.c(1.0), self.c(lo), self.c(hi)]
        if scale is not None:
            ins.append(self.c(np.asarray(scale, np.float32).reshape(1, 1, 1, dout)))
        return self.op(op, ins, (b, oh, ow, dout), padding=padding, name=name)


def run_outputs(graph: Graph, feeds: Sequence[np.ndarray], runs: int = 1) -> list[np.ndarray]:
    """The OUTPUT node's inputs after ``runs`` executions (auto ranges widen and persist)."""
    eng = Engine(graph)
    outs: list[np.ndarray] = []
    for _ in range(runs):
        outs, _ = eng.run(list(feeds))
    return outs


def real_outputs(outs: Sequence[np.ndarray]) -> tuple[np.ndarray, float]:
    """``(real values, step)`` of a (quint8 data, min, max) output triple."""
    q, mn, mx = outs[0], float(outs[1].item()), float(outs[2].item())
    step, zero = step_zero(mn, mx)
    return (q.astype(np.float64) - zero) * step, step
