"""The XS3 execution path: lowered layers run through the simulated kernels, the rest on the Hexagon engine.

The model is imported as usual (one hexagon graph); every lowered layer's
output node (``graph.tensor_map[output name]``) is replaced at run time by
its XS3 kernel, reading the layer's input tensor (``tensor_map[input
name]``, quint8 -> int8 by XOR 0x80) and writing the int8 result back as
quint8 with the output tensor's TFLite range. Nodes that only fed replaced
layers (the hexagon conv chains and their constants) are skipped. Layers that
were not lowered, and every other op, stay on the Hexagon engine, so a whole
model runs either way.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hexnn_import.api import import_model
from hexnn_import.runner import Runner
from hexnn_import.engine import Engine, blas_limit, flat_value
from hexnn_import.ops import compiled
from hexnn_import.graph import Graph, Ref
from hexnn_import.ops.quant import scale_zp_to_range
from hexnn_import.ops.registry import KernelContext
from hexnn_import.xs3.fast import FastLayer, fast_layer
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.legalize import LoweredLayer
from hexnn_import.xs3.lower import LoweringPlan, lower_model
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions


@dataclass
class Override:
    """One graph node whose outputs come from an XS3 kernel instead of its hexagon kernel."""

    node_id: int
    data_idx: int
    input_ref: Ref
    layer: LoweredLayer
    out_range: tuple[float, float]
    fast: FastLayer | None = None
    _ranges: list[np.ndarray] | None = field(default=None, init=False, repr=False)

    def outputs(self, x_quint8: np.ndarray, n_outputs: int, shape: tuple[int, ...],
                options: VPUOptions) -> list[np.ndarray]:
        """The node's outputs: data as quint8 in its declared shape, then min / max scalars.

        With ``fast`` (built for the same options) the layer runs as a
        :class:`FastLayer` on the quint8 values, otherwise through the literal
        kernel on int8 codes; both give the same integers.
        """
        xq = np.asarray(flat_value(x_quint8)).astype(np.uint8, copy=False)
        want_in, want_out = math.prod(self.layer.op.layer.x.shape), math.prod(self.layer.op.layer.y.shape)
        if xq.size != want_in or math.prod(shape) != want_out:
            raise XS3Error(f"layer {self.layer.op.layer.name}: the graph holds {xq.size} input and "
                           f"{int(np.prod(shape))} output values, the model declares {list(self.layer.op.layer.x.shape)}"
                           f" -> {list(self.layer.op.layer.y.shape)}")
        if self.fast is not None:
            data = self.fast.run_quint8(xq).reshape(shape)
        else:
            y = self.layer.run((xq ^ np.uint8(0x80)).view(np.int8).reshape(self.layer.op.layer.x.shape), options)
            data = (y.view(np.uint8) ^ np.uint8(0x80)).reshape(shape)
        if self._ranges is None:   # the (min, max) pair of the node3 convention: the same read-only arrays every run
            self._ranges = [np.full((1, 1, 1, 1), self.out_range[0 if i == self.data_idx + 1 else 1], np.float32)
                            for i in range(n_outputs)]
            for a in self._ranges:
                a.flags.writeable = False
        outs = list(self._ranges)
        outs[self.data_idx] = data
        return outs


@dataclass
class Placement:
    """Where one layer runs: "xs3" (with its kernel) or "hexagon" (with the reason)."""

    name: str
    op: str
    target: str
    kernel: str | None = None
    reason: str | None = None


def plan_overrides(graph: Graph, plan: LoweringPlan, options: VPUOptions | None = None
                   ) -> tuple[dict[int, Override], list[Placement]]:
    """Overrides for the lowered layers the graph exposes; the placement of every layer.

    With ``options`` each override also gets its :class:`FastLayer` for them
    (when :func:`fast_layer` offers one); without, every layer runs through
    its literal kernel.
    """
    overrides: dict[int, Override] = {}
    placements = []
    for r in plan.results:
        layer = r.layer
        if r.lowered is None:
            placements.append(Placement(layer.name, layer.opname, "hexagon", reason=r.reason))
            continue
        out_ref = graph.tensor_map.get(layer.y.name)
        in_ref = graph.tensor_map.get(layer.x.name)
        why = None
        if out_ref is None or in_ref is None:
            why = "the graph has no node for its input or output tensor"
        elif layer.y.dtype != "int8":
            why = f"its {layer.y.dtype} output has no quint8 graph value"
        elif len(graph.node(out_ref.src_id).output_defs) != out_ref.output_idx + 3:
            why = "its graph node is not a (data, min, max) node"
        if why:
            placements.append(Placement(layer.name, layer.opname, "hexagon", reason=why))
            continue
        assert out_ref is not None and in_ref is not None
        rng = scale_zp_to_range(float(layer.y.scale), int(layer.y.zero_point or 0), True)  # type: ignore[arg-type]
        fast = fast_layer(r.lowered, options) if options is not None else None
        overrides[out_ref.src_id] = Override(out_ref.src_id, out_ref.output_idx, in_ref, r.lowered, rng, fast)
        placements.append(Placement(layer.name, layer.opname, "xs3", kernel=r.lowered.kernel))
    return overrides, placements


class XS3Engine(Engine):
    """The Hexagon engine with some nodes replaced by XS3 kernels (and their dead feeders skipped)."""

    def __init__(self, graph: Graph, overrides: Mapping[int, Override], options: VPUOptions = DEFAULT_OPTIONS):
        super().__init__(graph)
        self.overrides = dict(overrides)
        self.options = options
        self.live = self._live_nodes()
        # last position reading each ref, counting the overrides' reads instead of their nodes' inputs
        self._last_use = {}
        for pos, node in enumerate(graph.nodes):
            if node.node_id in self.live:
                for r in self._reads(node.node_id):
                    self._last_use[r] = pos

    def _reads(self, node_id: int) -> list[Ref]:
        ov = self.overrides.get(node_id)
        return [ov.input_ref] if ov is not None else list(self.graph.node(node_id).inputs)

    def _live_nodes(self) -> set[int]:
        live: set[int] = set()
        for node in reversed(self.graph.nodes):
            if node.node_id in live or not node.output_defs or node.op == "OUTPUT":
                live.add(node.node_id)
                live.update(r.src_id for r in self._reads(node.node_id))
        return live

    def run(self, feeds: Sequence[np.ndarray], mark_all: bool = False
            ) -> tuple[list[np.ndarray], dict[Ref, np.ndarray]]:
        """As :meth:`Engine.run`, with the overridden nodes computed by their XS3 kernels (BLAS held to
        the engine's threads, :func:`~hexnn_import.engine.blas_limit`)."""
        with blas_limit():
            got = self._run(feeds, mark_all)
        compiled.warm()
        return got

    def _run(self, feeds: Sequence[np.ndarray], mark_all: bool) -> tuple[list[np.ndarray], dict[Ref, np.ndarray]]:
        values: dict[Ref, Any] = {}
        keep_all: dict[Ref, np.ndarray] = {}
        outs: list[np.ndarray] = []
        for pos, node in enumerate(self.graph.nodes):
            if node.node_id not in self.live:
                continue
            if node.is_const:
                values[Ref(node.node_id, 0)] = node.data
                continue
            if node.op == "INPUT":
                self._feed(node, feeds, values)
                continue
            if node.op == "OUTPUT":
                outs = [flat_value(values[r]) for r in node.inputs]
                continue
            ov = self.overrides.get(node.node_id)
            if ov is not None:
                results = ov.outputs(values[ov.input_ref], len(node.output_defs),
                                     tuple(node.output_defs[ov.data_idx].shape), self.options)
            else:
                ctx = KernelContext(node=node.label, op=node.op, padding=int(node.padding),
                                    state=self.state.setdefault(node.node_id, {}), n_outputs=len(node.output_defs),
                                    out_shapes=tuple(tuple(od.shape) for od in node.output_defs))
                results = self._kernels[node.node_id](ctx, [values[r] for r in node.inputs])
            for i, arr in enumerate(results):
                values[Ref(node.node_id, i)] = arr
                if mark_all:
                    keep_all[Ref(node.node_id, i)] = flat_value(arr)
            for r in self._reads(node.node_id):
                if self._last_use.get(r) == pos and not self.graph.node(r.src_id).is_const:
                    values.pop(r, None)
        return outs, keep_all


class XS3Runner(Runner):
    """Runs an int8 TFLite model with lowered layers on the simulated XS3 kernels (source dtypes in and out).

    ``placements`` says where every layer runs and, for the Hexagon ones, why.
    ``literal=True`` runs every lowered layer through its literal kernel
    (the VPU step by step) instead of the exact fast form of :mod:`.fast`.
    """

    def __init__(self, model: str | os.PathLike, options: VPUOptions = DEFAULT_OPTIONS,
                 graph: Graph | None = None, plan: LoweringPlan | None = None, literal: bool = False,
                 input_shapes: Mapping[str, tuple[int, ...]] | None = None):
        self.plan = plan if plan is not None else lower_model(model, input_shapes=input_shapes)
        self.graph = graph if graph is not None else import_model(model, input_shapes=input_shapes)
        self.options = options
        overrides, self.placements = plan_overrides(self.graph, self.plan, None if literal else options)
        self.engine = XS3Engine(self.graph, overrides, options)

    @property
    def xs3_layers(self) -> list[str]:
        return [p.name for p in self.placements if p.target == "xs3"]
