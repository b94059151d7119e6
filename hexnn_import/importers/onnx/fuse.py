"""Fusions planned before the walk: BatchNormalization folded into the convolution before it, and a
clipping activation folded into the layer's output range.

A float model's ``Conv -> BatchNormalization`` (the conv's only reader, all
parameters constant, inference mode) becomes one convolution with
``w' = w * a[o]`` and ``b' = (b - mean) * a + beta``, ``a = gamma /
sqrt(var + eps)``, written under the BatchNormalization's output name
(issue [ONNX import]: "BatchNormalization (folded)"). A BatchNormalization
after quantized (QDQ) weights or after anything else is imported on its own
(onnx/handlers/dense.py).

A Relu / Clip that is the only reader of a Conv, Gemm or MatMul (constant B)
output - after a folded BatchNormalization too - disappears when its own
output range is fixed (calibrated, or a QDQ range) and lies inside the clip
interval: the layer writes straight onto that range, and the Supernode's
saturation is the clip (one rounding instead of two; SEMANTICS §5).

Every decision is declared in one :class:`FusionPlan` that :func:`plan_fusions` returns before the walk:
each planner (the ones registered with ``onnx.registry.onnx_planner`` beside their handlers, then the
BatchNormalization and activation planners here) gets the plan so far and returns its own part, which is
merged in. The importer keeps the plan (``imp.plan``); handlers read it and nothing writes it afterwards.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hexnn_import.importers.nodes.builder import calibrated_range
from hexnn_import.importers.nodes.core import clip_implied
from hexnn_import.importers.onnx.common import clip_bounds
from hexnn_import.importers.onnx.fusion_plan import FusionPlan
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.onnx.registry import PLANNERS

if TYPE_CHECKING:
    from hexnn_import.importers.onnx.graph_builder import OnnxGraphBuilder


def bn_affine(imp: "OnnxGraphBuilder", bn: ONode) -> tuple[np.ndarray, np.ndarray]:
    """(a, c) with ``BN(x) = a * x + c`` per channel, in float64."""
    gamma, beta, mean, var = (np.asarray(imp.tensors.const(bn.inputs[i]), dtype=np.float64).reshape(-1) for i in (1, 2, 3, 4))
    eps = float(bn.attr("epsilon", 1e-5))
    a = gamma / np.sqrt(var + eps)
    return a, beta - mean * a


def bn_is_simple(imp: "OnnxGraphBuilder", bn: ONode) -> bool:
    """Inference-mode BatchNormalization with constant parameters and one used output."""
    if len(bn.inputs) < 5 or not all(imp.tensors.is_const(bn.inputs[i]) for i in (1, 2, 3, 4)):
        return False
    if bn.attr("training_mode", 0) or bn.attr("spatial", 1) == 0:
        return False
    return all(not o or not imp.tensors.consumers(o) and o not in imp.m.outputs for o in bn.outputs[1:])


def plan_fusions(imp: "OnnxGraphBuilder") -> FusionPlan:
    """The importer's plan: the registered planners (``onnx.registry.PLANNERS``: the dynamic-quantization
    chains of onnx.handlers.qop_dynamic), then :func:`plan_batchnorm` and :func:`plan_activations`, each given the
    plan so far."""
    plan = FusionPlan()
    for planner in (*PLANNERS, plan_batchnorm, plan_activations):
        plan = plan.merge(planner(imp, plan))
    return plan


def plan_batchnorm(imp: "OnnxGraphBuilder", done: FusionPlan) -> FusionPlan:
    """Conv -> BatchNormalization pairs with float weights (``bn[conv index] = bn``)."""
    part = FusionPlan()
    producer = {o: n for n in imp.live for o in n.outputs if o}
    for bn in imp.live:
        if bn.op_type != "BatchNormalization" or not bn_is_simple(imp, bn):
            continue
        conv = producer.get(bn.inputs[0])
        if conv is None or conv.op_type != "Conv" or len(conv.inputs) < 2:
            continue
        y = conv.outputs[0]
        if len(imp.tensors.consumers(y)) != 1 or y in imp.m.outputs:
            continue
        w = conv.inputs[1]
        if not imp.tensors.is_const(w) or imp.tensors.qconst(w) is not None or imp.tensors.dtype(w) != "float32":
            continue
        if len(conv.inputs) > 2 and conv.inputs[2] and not imp.tensors.is_const(conv.inputs[2]):
            continue
        part.bn[conv.index] = bn
        part.absorbed.add(bn.index)
    return part


def layer_out(plan: FusionPlan, node: ONode) -> str:
    """The tensor a conv-like node writes: its own output, or that of a fused BatchNormalization / activation."""
    act = plan.act.get(node.index)
    if act is not None:
        return act.outputs[0]
    bn = plan.bn.get(node.index)
    return bn.outputs[0] if bn is not None else node.outputs[0]


def plan_activations(imp: "OnnxGraphBuilder", done: FusionPlan) -> FusionPlan:
    """``act[layer index] = activation`` for the clips of the module doc."""
    part = FusionPlan()
    for node in imp.live:
        if node.op_type not in ("Conv", "Gemm", "MatMul") or node.index in done.absorbed:
            continue
        if node.op_type == "MatMul" and not imp.tensors.is_const(node.input(1)):
            continue
        y = layer_out(done, node)
        users = imp.tensors.consumers(y)
        if len(users) != 1 or y in imp.m.outputs or users[0].op_type not in ("Relu", "Clip"):
            continue
        act = users[0]
        if act.op_type == "Clip" and not all(imp.tensors.is_const(n) for n in act.inputs[1:] if n):
            continue
        lo, hi = (0.0, float("inf")) if act.op_type == "Relu" else clip_bounds(imp, act)
        name = act.outputs[0]
        rng = imp.tensors.act_range(name)
        if rng is None:
            continue
        if name in imp.calibration and name not in imp.tensors.hints and name not in imp.tensors.qparams:
            # observed on the run-time graph, where the clip's bound lands on a code of the producer's
            # range, a little past the bound: the clip's output cannot really leave [lo, hi]
            raw = imp.calibration[name]
            rng = calibrated_range(min(max(raw[0], lo), hi), max(min(raw[1], hi), lo))
            part.range_override[name] = rng
        if clip_implied(rng, lo, hi):
            part.act[node.index] = act
            part.absorbed.add(act.index)
    return part
