"""Fusions planned before the walk: BatchNormalization folded into the convolution before it, and a
clipping activation folded into the layer's output range.

A float model's ``Conv -> BatchNormalization`` (the conv's only reader, all
parameters constant, inference mode) becomes one convolution with
``w' = w * a[o]`` and ``b' = (b - mean) * a + beta``, ``a = gamma /
sqrt(var + eps)``, written under the BatchNormalization's output name
(issue [ONNX import]: "BatchNormalization (folded)"). A BatchNormalization
after quantized (QDQ) weights or after anything else is imported on its own
(onnx_ops_dense.py).

A Relu / Clip that is the only reader of a Conv, Gemm or MatMul (constant B)
output - after a folded BatchNormalization too - disappears when its own
output range is fixed (calibrated, or a QDQ range) and lies inside the clip
interval: the layer writes straight onto that range, and the Supernode's
saturation is the clip (one rounding instead of two; SEMANTICS §5).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hexnn_import.importers.builder import calibrated_range
from hexnn_import.importers.onnx_reader import ONode

if TYPE_CHECKING:
    from hexnn_import.importers.onnx_import import OnnxImporter


def bn_affine(imp: "OnnxImporter", bn: ONode) -> tuple[np.ndarray, np.ndarray]:
    """(a, c) with ``BN(x) = a * x + c`` per channel, in float64."""
    gamma, beta, mean, var = (np.asarray(imp.const(bn.inputs[i]), dtype=np.float64).reshape(-1) for i in (1, 2, 3, 4))
    eps = float(bn.attr("epsilon", 1e-5))
    a = gamma / np.sqrt(var + eps)
    return a, beta - mean * a


def bn_is_simple(imp: "OnnxImporter", bn: ONode) -> bool:
    """Inference-mode BatchNormalization with constant parameters and one used output."""
    if len(bn.inputs) < 5 or not all(imp.is_const(bn.inputs[i]) for i in (1, 2, 3, 4)):
        return False
    if bn.attr("training_mode", 0) or bn.attr("spatial", 1) == 0:
        return False
    return all(not o or not imp.consumers(o) and o not in imp.m.outputs for o in bn.outputs[1:])


def plan_fusions(imp: "OnnxImporter") -> None:
    """Run the registered planners (``onnx_registry.PLANNERS``: the dynamic-quantization chains of
    onnx_qop_dynamic), then mark Conv -> BatchNormalization pairs with float weights
    (``imp.fused_bn[conv index] = bn``)."""
    from hexnn_import.importers.onnx_registry import PLANNERS

    for planner in PLANNERS:
        planner(imp)
    imp.fused_bn = {}  # type: ignore[attr-defined]
    producer = {o: n for n in imp.live for o in n.outputs if o}
    for bn in imp.live:
        if bn.op_type != "BatchNormalization" or not bn_is_simple(imp, bn):
            continue
        conv = producer.get(bn.inputs[0])
        if conv is None or conv.op_type != "Conv" or len(conv.inputs) < 2:
            continue
        y = conv.outputs[0]
        if len(imp.consumers(y)) != 1 or y in imp.m.outputs:
            continue
        w = conv.inputs[1]
        if not imp.is_const(w) or imp.qconst(w) is not None or imp.dtype(w) != "float32":
            continue
        if len(conv.inputs) > 2 and conv.inputs[2] and not imp.is_const(conv.inputs[2]):
            continue
        imp.fused_bn[conv.index] = bn  # type: ignore[attr-defined]
        imp.absorbed.add(bn.index)
    plan_activations(imp)


def layer_out(imp: "OnnxImporter", node: ONode) -> str:
    """The tensor a conv-like node writes: its own output, or that of a fused BatchNormalization / activation."""
    act = imp.fused_act.get(node.index)  # type: ignore[attr-defined]
    if act is not None:
        return act.outputs[0]
    bn = imp.fused_bn.get(node.index)  # type: ignore[attr-defined]
    return bn.outputs[0] if bn is not None else node.outputs[0]


def plan_activations(imp: "OnnxImporter") -> None:
    """``imp.fused_act[layer index] = activation`` for the clips of the module doc."""
    from hexnn_import.importers.onnx_common import clip_bounds

    imp.fused_act = {}  # type: ignore[attr-defined]
    for node in imp.live:
        if node.op_type not in ("Conv", "Gemm", "MatMul") or node.index in imp.absorbed:
            continue
        if node.op_type == "MatMul" and not imp.is_const(node.input(1)):
            continue
        y = layer_out(imp, node)
        users = imp.consumers(y)
        if len(users) != 1 or y in imp.m.outputs or users[0].op_type not in ("Relu", "Clip"):
            continue
        act = users[0]
        if act.op_type == "Clip" and not all(imp.is_const(n) for n in act.inputs[1:] if n):
            continue
        lo, hi = (0.0, float("inf")) if act.op_type == "Relu" else clip_bounds(imp, act)
        name = act.outputs[0]
        rng = imp.act_range(name)
        if rng is None:
            continue
        if name in imp.calibration and name not in imp.hints and name not in imp.qparams:
            # observed on the run-time graph, where the clip's bound lands on a code of the producer's
            # range, a little past the bound: the clip's output cannot really leave [lo, hi]
            raw = imp.calibration[name]
            rng = calibrated_range(min(max(raw[0], lo), hi), max(min(raw[1], hi), lo))
            imp.range_override[name] = rng
        if rng[0] >= lo - 1e-9 and rng[1] <= hi * (1 + 1e-6) + 1e-9:
            imp.fused_act[node.index] = act  # type: ignore[attr-defined]
            imp.absorbed.add(act.index)
