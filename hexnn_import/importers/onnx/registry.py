"""The ONNX importer's registries: op handlers and fusion planners (issue [Design]: handlers, decorators, types).

A handler module registers each ONNX op it imports with :func:`onnx_op` (a checker saying why a node cannot
be imported, and the handler that emits its hexagon_nn nodes) and, where it must look at the whole model
before the walk (a chain it imports as one layer), a planner with :func:`onnx_planner`. The importer core
(:mod:`.onnx.importer`, :mod:`.onnx.fuse`) reads these tables and imports no handler module.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from hexnn_import.importers.onnx.fusion_plan import FusionPlan
    from hexnn_import.importers.onnx.graph_builder import OnnxGraphBuilder
    from hexnn_import.importers.onnx.reader import ONode

Handler = Callable[["OnnxGraphBuilder", "ONode"], None]
Checker = Callable[["OnnxGraphBuilder", "ONode"], "str | None"]
#: given the importer and the plan so far, returns its own part of the plan (onnx.fuse.FusionPlan)
Planner = Callable[["OnnxGraphBuilder", "FusionPlan"], "FusionPlan"]

#: (domain, op_type) -> (checker, handler); filled by the handler modules
HANDLERS: dict[tuple[str, str], tuple[Checker, Handler]] = {}
#: hexagon_nn ops this importer can emit (for ``hexnn-import ops``)
EMITS: set[str] = {"INPUT", "OUTPUT", "Const"}
#: (domain, op_type) -> the hexagon_nn ops its handler may emit (for ``hexnn-import ops --source``)
OP_EMITS: dict[tuple[str, str], tuple[str, ...]] = {}
#: planners run before the walk, in registration order (handler modules register them beside their handlers)
PLANNERS: list[Planner] = []


def onnx_op(names: str | tuple[str, ...], emits: tuple[str, ...], check: Checker | None = None,
            domain: str = "") -> Callable[[Handler], Handler]:
    """Register a handler for ONNX op(s); ``check`` returns why a node cannot be imported (None: it can)."""

    def deco(fn: Handler) -> Handler:
        for name in (names,) if isinstance(names, str) else names:
            HANDLERS[(domain, name)] = (check or (lambda imp, node: None), fn)
            OP_EMITS[(domain, name)] = tuple(emits)
        EMITS.update(emits)
        return fn

    return deco


def onnx_planner(fn: Planner) -> Planner:
    """Register a planner: run before the walk (:func:`.onnx.fuse.plan_fusions`); it returns its part of the plan."""
    if fn not in PLANNERS:
        PLANNERS.append(fn)
    return fn
