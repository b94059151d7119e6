"""ONNX -> hexagon_nn Graph: float models, QDQ models and QOperator models (issue [ONNX import]).

The importer walks the folded, shape-inferred model (:mod:`onnx.reader`) in
order and asks a handler per op (the ``onnx/handlers/*.py``, ``onnx/handlers/qdq.py`` and
``onnx/handlers/qop*.py`` modules) to append hexagon_nn nodes. Before any node is
built every live node is checked, so an unsupported model fails with one
:class:`UnsupportedOpsError` listing every unsupported op with counts and
first tensor names, as the TFLite importer does.

Values: every ONNX activation becomes a quint8 :class:`Value` in an NHWC-ish
graph layout tracked per tensor (:mod:`onnx.layout`). Ranges follow
builder.py's range policy: an int8/uint8 tensor's range comes from the
scale / zero point some node declares for it; a float tensor that a
QuantizeLinear reads takes that QuantizeLinear's range (QDQ: the float op
writes straight onto the range its output is quantized to); otherwise a
float tensor is calibrated or only known at run time. int8 data is quint8
by XOR 0x80 (SEMANTICS §1), done at the graph boundary by the API.

For the per-layer compare every ONNX tensor is recorded in
``graph.tensor_map`` under its ONNX name, in the graph's layout;
``graph.meta["layouts"][name]`` holds the 4-axis permutation when it is not
the ONNX order: graph axis ``i`` is axis ``perm[i]`` of the ONNX tensor's
shape left-padded with 1s to rank 4.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from hexnn_import.errors import HexnnError, ModelFormatError, UnsupportedOpsError
from hexnn_import.graph import Graph
from hexnn_import.graph_memory import check_node_count
from hexnn_import.importers.onnx.common import generic_reason
from hexnn_import.importers.onnx.fold import fold_model
from hexnn_import.importers.onnx.fuse import plan_fusions
from hexnn_import.importers.onnx.fusion_plan import FusionPlan
from hexnn_import.importers.onnx.graph_builder import OnnxGraphBuilder
from hexnn_import.importers.onnx.inputs import fix_input_shapes
from hexnn_import.importers.onnx.layer_records import record_layers
from hexnn_import.importers.onnx.reader import MS_DOMAIN, OnnxModel, load_model, model_opset, printable
from hexnn_import.importers.onnx.structure import check_structure

# the registries live in onnx.registry (handler modules register there); re-exported for the handlers' imports
from hexnn_import.importers.onnx.registry import (EMITS, HANDLERS, OP_EMITS, Checker, Handler,  # noqa: E402,F401
                                                  onnx_op, onnx_planner)


class OnnxImporter(OnnxGraphBuilder):
    """Builds a Graph from an :class:`OnnxModel` (module doc): the checks and the walk over the state of
    :class:`~hexnn_import.importers.onnx.graph_builder.OnnxGraphBuilder`."""

    def check_supported(self) -> None:
        """Raise one UnsupportedOpsError naming every node (and graph input) that cannot be imported."""
        bad: dict[str, list[str]] = {}
        for node in self.live:
            if node.index in self.plan.absorbed or node.index in self.plan.chains:
                continue  # a chain's planner checked what it imports
            entry = HANDLERS.get((node.domain if node.domain != "ai.onnx" else "", node.op_type))
            key = printable(node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}")
            if entry is None:
                bad.setdefault(key, []).append(node.label)
                continue
            try:
                reason = generic_reason(self, node) or entry[0](self, node)
            except (IndexError, AttributeError, KeyError, TypeError, ValueError) as exc:
                reason = f"malformed node: {type(exc).__name__}: {exc}"
            if reason is not None:
                bad.setdefault(f"{key} ({printable(reason)})", []).append(node.label)
        for why, name in self.tensors.input_problems():
            bad.setdefault(why, []).append(printable(name))
        if bad:
            raise UnsupportedOpsError("ONNX", bad)

    def run(self) -> Graph:
        """Import the model; returns the verified graph."""
        load_handlers()
        try:
            self.plan = plan_fusions(self)
        except (IndexError, AttributeError, KeyError, TypeError, ValueError):  # a malformed node: import it
            self.plan = FusionPlan()  # unfused, so that the checks below name it
        self.tensors.range_override = self.plan.range_override
        self.check_supported()
        self.tensors.emit_inputs()
        for node in self.live:
            if node.index in self.plan.absorbed:
                continue
            try:
                chain = self.plan.chains.get(node.index)
                if chain is not None:
                    chain(self, node)
                else:
                    HANDLERS[(node.domain if node.domain != "ai.onnx" else "", node.op_type)][1](self, node)
            except HexnnError:
                raise
            except (ValueError, KeyError, IndexError) as exc:
                raise ModelFormatError(f"{self.label}: node {node.label} ({printable(node.op_type)}): "
                                       f"{printable(exc)}") from exc
        self.tensors.emit_outputs()
        self.fuse_fixed_chains()
        self.graph.source_layers = record_layers(self)
        if self.m.notes:
            notes = self.graph.meta.setdefault("notes", [])
            notes.extend(n for n in self.m.notes if n not in notes)
        self.graph.verify()
        return self.graph


#: the package of the handler modules (one table per format: the names below, in load order)
HANDLER_PACKAGE = "hexnn_import.importers.onnx.handlers"
#: the modules whose ``@onnx_op`` functions handle ONNX ops: a new handler file is added here
#: (tests/importers/test_handler_modules.py fails on a file that uses ``@onnx_op`` and is not listed)
HANDLER_MODULES = ("act", "binary", "conv", "dense", "math", "move", "pool", "reduce", "resize", "shape", "qdq",
                   "qop", "qop_dynamic", "recurrent", "transformer")


def load_handlers() -> None:
    """Import the handler modules of :data:`HANDLER_MODULES` (each registers its ops with ``@onnx_op``)."""
    import importlib

    for name in HANDLER_MODULES:
        importlib.import_module(f"{HANDLER_PACKAGE}.{name}")


def emitted_ops() -> set[str]:
    """The hexagon_nn op names the ONNX handlers can append (for ``hexnn-import ops``)."""
    load_handlers()
    return set(EMITS)


def read_onnx(path: str | Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> OnnxModel:
    """Load, validate and fold an .onnx file into an :class:`OnnxModel` (module doc)."""
    label = str(path)
    model = load_model(path)
    check_node_count(len(model.graph.node), f"model {label}")  # the graph it makes, within the memory budget
    opset = model_opset(model, label)
    check_structure(model, opset, label)
    notes, batches = fix_input_shapes(model, input_shapes or {}, label)
    out = fold_model(model, opset, label, batches)
    out.notes = notes + out.notes
    return out


def import_onnx(path: str | Path, calibration: Mapping[str, tuple[float, float]] | None = None,
                input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Graph:
    """Read and import an .onnx file (``calibration``: float tensor name -> observed (min, max))."""
    model = read_onnx(path, input_shapes)
    return OnnxImporter(model, calibration).run()


__all__ = ["OnnxImporter", "onnx_op", "HANDLERS", "EMITS", "OP_EMITS", "import_onnx", "emitted_ops", "load_handlers",
           "MS_DOMAIN", "read_onnx"]
