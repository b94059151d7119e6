"""Replace's one table: each TFLite operator and the rules tried on it, in order (tflite2xcore's first step).

The rules themselves live beside their helpers: the conv-like ones, with weights, in :mod:`.replace`
(``conv2d_*``, ``fully_connected_*``), those without weights in :mod:`.replace_ops` (``add_elementwise``,
the pools). :func:`replace` tries an operator's rules in order: the first that matches wins; when none does
the layer keeps the reason of the last (most general) rule. The per-tensor activations (lookup8 tables) have
theirs in :mod:`.replace_lut`. A new rule is a class in one of those files and its place in :data:`RULES`.
"""
from __future__ import annotations

from hexnn_import.source_layers import LayerInfo
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.replace import (ConvAsFullyConnected, Conv1x1, ConvDeep, ConvShallowin, Depthwise,
                                      FullyConnected, FullyConnectedToArgmax, ReplaceRule, XS3Op, activation_clamp,
                                      source_reason)
from hexnn_import.xs3.replace_lut import LUT_FUNCTIONS, RELU_BOUNDS, ActivationAsLookup
from hexnn_import.xs3.replace_ops import Add, AvgPool, AvgPoolCoveringInput, GlobalMean, MaxPool, MeanAsDepthwise
from hexnn_import.xs3.shapes import check_layer_shapes

#: TFLite operator -> its Replace rules, in the order they are tried
RULES: dict[str, list[ReplaceRule]] = {
    "CONV_2D": [ConvAsFullyConnected(), Conv1x1(), ConvShallowin(), ConvDeep()],
    "DEPTHWISE_CONV_2D": [Depthwise()],
    "FULLY_CONNECTED": [FullyConnectedToArgmax(), FullyConnected()],
    "ADD": [ActivationAsLookup(), Add()],  # an ADD of one constant value: a lookup8 table
    "MEAN": [MeanAsDepthwise(GlobalMean()), GlobalMean()],
    "MAX_POOL_2D": [MaxPool()],
    "AVERAGE_POOL_2D": [MeanAsDepthwise(AvgPoolCoveringInput()), AvgPoolCoveringInput(), AvgPool()],
    **{op: [ActivationAsLookup()] for op in ("HARD_SWISH", "HARD_SIGMOID", "LEAKY_RELU", "PRELU", "MUL", "SUB",
                                             "DIV", *LUT_FUNCTIONS, *RELU_BOUNDS)},
}
#: the operators with weights: their source quantization (:func:`.replace.source_reason`) and shapes are
#: checked before any rule
WEIGHTED = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"})


def replace(layer: LayerInfo) -> XS3Op | str:
    """The XS3Op of the first matching rule, or the reason no kernel fits."""
    rules = RULES.get(layer.opname)
    if rules is None:
        return f"{layer.opname} has no XS3 kernel"
    if layer.opname in WEIGHTED:
        why = source_reason(layer)
        if why:
            return why
        check_layer_shapes(layer)  # a damaged file's shapes stop the command here, naming the layer
    reason = ""
    for rule in rules:
        reason = rule.match(layer) or ""
        if not reason:
            try:
                op = rule.rewrite(layer)
            except XS3Error as exc:  # parameters the kernel's fields cannot hold
                return f"{rule.kernel}: {exc}"
            op.clamp = activation_clamp(layer)
            if op.clamp is not None:
                if op.out_bits != 8:
                    return f"fused {layer.activation} on 16-bit logits"
                op.canonical.append(f"fused {layer.activation}: clamp to {list(op.clamp)} by a lookup8 table")
            return op
    return f"no XS3 kernel fits: {reason}"
