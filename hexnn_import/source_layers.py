"""What an importer records of a quantized source layer, on the graph (``graph.source_layers``).

The hexagon graph holds requantized quint8 copies of weights and its own
range conventions; a target that must reproduce the source model's integer
arithmetic from its quantization (the XS3 lowering: SEMANTICS §8, BSO from
the TFLite quantization) needs the file's own numbers. Each importer records
them here as it reads the model - one :class:`LayerInfo` per source operator,
in model order - so no consumer reads the source file again.

The record is format-neutral. ``opname`` is the canonical kind, TFLite's
builtin names (``CONV_2D``, ``DEPTHWISE_CONV_2D``, ``FULLY_CONNECTED``,
``ADD``, ``MEAN``, ``AVERAGE_POOL_2D``, ``MAX_POOL_2D``, ``PAD``, ...);
``source_op`` the operator as the file names it (``Conv``, ``QLinearAdd``...).
Tensors carry int8-domain quantization: a uint8 tensor is recorded with
``dtype "uint8"`` and its own zero point; :meth:`TensorQ.int8_zero_point`
gives the int8 view (the same real values: ``q8 = q_u8 - 128``). Weights are
in TFLite layout (conv OHWI, depthwise ``[1, K_h, K_w, C]``, fully connected
``[M, N]``) as int8 codes, the bias as int32 codes on ``input scale x weight
scale``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: TFLite's ActivationFunctionType values by name
ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


@dataclass(slots=True)  # slots: a 100,000-layer model keeps small records (memory, issue 38)
class TensorQ:
    """One tensor's name, index (in the source file; -1 when it has none), shape, dtype and per-tensor
    (scale, zero point) - None when absent or per-channel."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    scale: float | None
    zero_point: int | None
    per_channel: bool = False

    @property
    def int8_zero_point(self) -> int:
        """The zero point of the int8 view of this tensor (uint8 codes shifted by -128)."""
        zp = int(self.zero_point or 0)
        return zp - 128 if self.dtype == "uint8" else zp


@dataclass(slots=True)
class LayerInfo:
    """One source operator; conv-like ones add weights, bias and geometry, others ``attrs``."""

    index: int
    opname: str
    inputs: list[TensorQ]
    outputs: list[TensorQ]
    weights: np.ndarray | None = None  # raw int8 codes in TFLite layout
    w_dtype: str = ""
    w_scales: np.ndarray | None = None
    w_zero_points: np.ndarray | None = None
    w_axis: int = 0
    bias: np.ndarray | None = None  # int32 codes (zeros when the op has none)
    bias_dtype: str = "int32"
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    same_padding: bool = False
    #: explicit padding before the first row / column (ONNX ``pads``); None: from ``same_padding``
    pad_begin: tuple[int, int] | None = None
    activation: str = "NONE"
    depth_multiplier: int = 1
    consumers: list[str] = field(default_factory=list)  # op names reading the first output
    notes: list[str] = field(default_factory=list)
    source_op: str = ""
    #: op-specific values: ``filter`` (pool window), ``axes`` (MEAN), ``paddings`` (PAD)...
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The layer's name: its first output tensor's (the importer names its node so too)."""
        return self.outputs[0].name if self.outputs else f"op{self.index}"

    @property
    def x(self) -> TensorQ:
        return self.inputs[0]

    @property
    def y(self) -> TensorQ:
        return self.outputs[0]


def activation_bounds(act: str, scale: float, zero_point: int, qmin: int = -128, qmax: int = 127) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized: the int clamp a fused activation applies."""
    def q(v: float) -> int:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            r = float(np.float32(v) / np.float32(scale))
        if not math.isfinite(r):  # a scale so small that 6 / scale overflows float32: beyond any int8 bound
            return qmax + 1 if r > 0 else qmin - 1 if r < 0 else int(zero_point)
        return int(zero_point) + int(np.sign(r) * np.floor(abs(r) + 0.5))

    if act == "RELU":
        return max(qmin, q(0.0)), qmax
    if act == "RELU6":
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if act == "RELU_N1_TO_1":
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    return qmin, qmax
