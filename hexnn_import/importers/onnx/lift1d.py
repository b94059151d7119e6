"""1-D window ops on ``[N, C, L]`` as 2-D ops with ``H = 1`` (issue 33, item 3): an ONNX-level rewrite.

hexagon_nn's convolutions and pools are 2-D. A 1-D Conv / ConvTranspose /
MaxPool / AveragePool / LpPool, a BatchNormalization and a global pool of a
rank-3 tensor are the same computation on ``[N, C, 1, L]`` with a window
``[1, k]`` (onnx ``docs/Operators.md``: Conv "X is (N x C x D1 x ... x Dn)",
the window attributes list one value per spatial axis, ``pads`` all begins
then all ends). After folding, each such node becomes

    Unsqueeze(x, axis 2) -> the 2-D op (attributes with a leading 1 / 0, weights
    [O, I, k] -> [O, I, 1, k]) -> Squeeze(axis 2)

Unsqueeze / Squeeze of a size-1 axis only change the tracked layout (no
node, :mod:`onnx.layout`). So that a chain of 1-D layers stays one 2-D chain
(a Conv and its BatchNormalization fuse; a QDQ layer's QuantizeLinear reads
the conv's own output), a 2-D op whose input came out of such a Squeeze
reads the 4-D tensor directly, and the shape-preserving elementwise ops in
between (activations, per-tensor QuantizeLinear / DequantizeLinear, adds of
two lifted tensors or of scalars) are lifted too. The Squeezes stay for the
readers that still want rank 3; unread ones are dead and never imported.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper

from hexnn_import.importers.onnx.reader import MS_DOMAIN, QConst, attrs_of

#: the window ops rewritten (default domain), and the position of their weights (None: no weights)
WINDOW_OPS: dict[str, int | None] = {"Conv": 1, "ConvTranspose": 1, "QLinearConv": 3, "ConvInteger": 1,
                                     "MaxPool": None, "AveragePool": None, "LpPool": None,
                                     "BatchNormalization": None, "GlobalAveragePool": None, "GlobalMaxPool": None,
                                     "GlobalLpPool": None}
#: shape-preserving ops lifted when every data input is lifted and every other input a scalar constant
ELEMENTWISE = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Selu", "Softplus",
               "Identity", "Dropout", "QuantizeLinear", "DequantizeLinear", "Log", "Exp", "Abs", "Neg", "Sqrt", "Pow",
               "Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mish", "Erf", "PRelu"}
#: onnxruntime's contrib window ops (com.microsoft, QOperator models) rewritten the same way (not channels_last)
MS_WINDOW_OPS: dict[str, int | None] = {"QLinearAveragePool": None, "QLinearGlobalAveragePool": None}
SUFFIX = "__h1"


class Lifter:
    """The rewrite's state: which rank-3 tensors exist as 4-D ``[N, C, 1, L]`` tensors (module doc)."""

    def __init__(self, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, np.dtype],
                 consts: dict[str, np.ndarray], qconsts: dict[str, QConst], opset: int) -> None:
        self.shapes, self.dtypes, self.consts, self.qconsts, self.opset = shapes, dtypes, consts, qconsts, opset
        self.lifted: dict[str, str] = {}
        self.out: list[onnx.NodeProto] = []
        self.producer: dict[str, onnx.NodeProto] = {}

    def rank3(self, name: str) -> bool:
        return bool(name) and name not in self.consts and len(self.shapes.get(name, ())) == 3

    def _axes_node(self, op: str, src: str, dst: str) -> onnx.NodeProto:
        if self.opset >= 13:
            key = f"{SUFFIX}_axes"
            self.consts.setdefault(key, np.array([2], np.int64))
            return helper.make_node(op, [src, key], [dst])
        return helper.make_node(op, [src], [dst], axes=[2])

    def four_d(self, name: str) -> str:
        """The 4-D twin of rank-3 ``name``: an Unsqueeze when it has none yet; for the output of a per-tensor
        DequantizeLinear, a second DequantizeLinear of the Unsqueeze'd codes (a QDQ layer's input stays
        written by a DequantizeLinear, as the layer records for XS3 want)."""
        if name not in self.lifted:
            twin = name + SUFFIX
            dq = self.producer.get(name)
            if dq is not None and dq.op_type == "DequantizeLinear" and dq.domain in ("", "ai.onnx") and \
                    self.rank3(dq.input[0]) and all(_scalar_const(self, i) for i in dq.input[1:]):
                ins = [self.four_d(dq.input[0])] + list(dq.input[1:])
                self.out.append(helper.make_node("DequantizeLinear", ins, [twin], **attrs_of(dq)))
            else:
                self.out.append(self._axes_node("Unsqueeze", name, twin))
            self._declare(twin, name)
            self.lifted[name] = twin
        return self.lifted[name]

    def _declare(self, twin: str, name: str) -> None:
        s = self.shapes[name]
        self.shapes[twin] = (s[0], s[1], 1, s[2])
        if name in self.dtypes:
            self.dtypes[twin] = self.dtypes[name]

    def finish(self, node: onnx.NodeProto, inputs: list[str], attrs: dict[str, Any]) -> None:
        """Append the 4-D form of ``node`` and a Squeeze back to each rank-3 output."""
        outs = []
        for o in node.output:
            if o and len(self.shapes.get(o, ())) == 3:
                outs.append(o + SUFFIX)
                self._declare(o + SUFFIX, o)
                self.lifted[o] = o + SUFFIX
            else:
                outs.append(o)
        self.out.append(helper.make_node(node.op_type, inputs, outs, name=node.name, domain=node.domain, **attrs))
        for o, t in zip(node.output, outs):
            if o != t:
                self.out.append(self._axes_node("Squeeze", t, o))

    def weights(self, name: str) -> str:
        """Constant weights ``[A, B, k]`` as ``[A, B, 1, k]`` (codes and quantization too)."""
        twin = name + SUFFIX
        if twin not in self.consts:
            self.consts[twin] = np.asarray(self.consts[name])[:, :, None, :]
            qc = self.qconsts.get(name)
            if qc is not None:
                self.qconsts[twin] = QConst(qc.codes[:, :, None, :], qc.scale, qc.zero_point, qc.axis)
        return twin


def _window_attrs(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """The 2-D attributes of a 1-D window op (None when some attribute is not 1-D)."""
    out = dict(attrs)
    for key, lead in (("kernel_shape", 1), ("strides", 1), ("dilations", 1), ("output_shape", 1),
                      ("output_padding", 0)):
        if key in out:
            v = [int(a) for a in out[key]]
            if len(v) != 1:
                return None
            out[key] = [lead] + v
    if "pads" in out:
        p = [int(a) for a in out["pads"]]
        if len(p) != 2:
            return None
        out["pads"] = [0, p[0], 0, p[1]]
    return out


def _scalar_const(lifter: Lifter, name: str) -> bool:
    return not name or (name in lifter.consts and np.asarray(lifter.consts[name]).size <= 1)


def _lift_window(lifter: Lifter, n: onnx.NodeProto) -> bool:
    if not lifter.rank3(n.input[0]) or (n.op_type == "MaxPool" and len(n.output) > 1 and n.output[1]):
        return False
    attrs = _window_attrs(attrs_of(n))
    if attrs is None:
        return False
    ins = list(n.input)
    if n.domain == MS_DOMAIN and attrs.get("channels_last", 0):
        return False
    pos = (MS_WINDOW_OPS if n.domain == MS_DOMAIN else WINDOW_OPS)[n.op_type]
    if pos is not None:
        if len(ins) <= pos or ins[pos] not in lifter.consts or np.asarray(lifter.consts[ins[pos]]).ndim != 3:
            return False
        ins[pos] = lifter.weights(ins[pos])
    ins[0] = lifter.four_d(ins[0])
    lifter.finish(n, ins, attrs)
    return True


def _lift_elementwise(lifter: Lifter, n: onnx.NodeProto) -> bool:
    data = [i for i in n.input if i and i not in lifter.consts]
    if not data or not all(i in lifter.lifted for i in data):
        return False
    if not all(i in data or _scalar_const(lifter, i) for i in n.input):
        return False
    if any(len(lifter.shapes.get(o, ())) != 3 for o in n.output[:1]):
        return False
    if n.op_type in ("QuantizeLinear", "DequantizeLinear") and not all(_scalar_const(lifter, i) for i in n.input[1:]):
        return False  # per-axis quantization: its axis would move
    lifter.finish(n, [lifter.lifted.get(i, i) for i in n.input], attrs_of(n))
    return True


def _is_window(n: onnx.NodeProto) -> bool:
    ops = MS_WINDOW_OPS if n.domain == MS_DOMAIN else WINDOW_OPS if n.domain in ("", "ai.onnx") else {}
    return n.op_type in ops and bool(n.input)


def lift_1d(nodes: list[onnx.NodeProto], shapes: dict[str, tuple[int, ...]], dtypes: dict[str, np.dtype],
            consts: dict[str, np.ndarray], qconsts: dict[str, QConst], opset: int) -> list[onnx.NodeProto]:
    """The nodes with every 1-D window op on a rank-3 tensor done in 2-D (module doc); ``shapes``,
    ``dtypes``, ``consts`` and ``qconsts`` gain the new tensors."""
    if not any(_is_window(n) and len(shapes.get(n.input[0], ())) == 3 for n in nodes):
        return nodes
    lifter = Lifter(shapes, dtypes, consts, qconsts, opset)
    for n in nodes:
        done = False
        if _is_window(n):
            done = _lift_window(lifter, n)
        elif n.domain in ("", "ai.onnx") and n.input and n.op_type in ELEMENTWISE:
            done = _lift_elementwise(lifter, n)
        if not done:
            lifter.out.append(n)
        lifter.producer.update((o, n) for o in n.output if o)
    return lifter.out
