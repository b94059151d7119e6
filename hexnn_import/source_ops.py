"""The supported source ops (TFLite builtins and custom ops, ONNX ops) as a Markdown page or JSON.

Everything here is read from the importers' registries
(:func:`hexnn_import.importers.coverage.source_ops`: the ``@tflite_op`` and
``@onnx_op`` registrations, the hexagon_nn ops each handler declares, the
docstrings of the check functions) and from the constant folders, so the page
cannot drift from the code: ``docs/source_ops.md`` is exactly
:func:`source_op_table` (a test holds it), printed by
``hexnn-import ops --source``.
"""
from __future__ import annotations

import inspect
from typing import Any

REGENERATE = "hexnn-import ops --source > docs/source_ops.md"


def source_op_data() -> dict[str, Any]:
    """The page as data (``hexnn-import ops --source --json``): ``ops`` (one record per registered source
    op, :func:`~hexnn_import.importers.coverage.source_ops`) and ``folded_only`` (the ops known only as
    constant folds, :func:`~hexnn_import.importers.coverage.folded_only_ops`)."""
    from hexnn_import.importers.coverage import folded_only_ops, source_ops

    return {"ops": source_ops(), "folded_only": folded_only_ops()}


def source_op_table(data: dict[str, Any] | None = None) -> str:
    """``docs/source_ops.md``: a section per format with a table of op, the hexagon_nn ops it may emit and
    its conditions, then the ops the importer only folds on constants."""
    data = data if data is not None else source_op_data()
    tflite = [r for r in data["ops"] if r["format"] == "tflite"]
    onnx = [r for r in data["ops"] if r["format"] == "onnx"]
    n_custom = sum(r["op"].startswith("CUSTOM:") for r in tflite)
    lines = [
        "# Supported source ops",
        "",
        f"Generated from the importers' registries by `hexnn-import ops --source` (`--json` for the same as "
        f"data); a test keeps this page current (`{REGENERATE}`).",
        "",
        f"{len(tflite)} TFLite ops ({len(tflite) - n_custom} builtin, {n_custom} custom) and {len(onnx)} ONNX ops "
        "have a handler. Before any node is built, every operator of a model is checked against the conditions "
        "below, and a model with unsupported operators fails with one error listing each of them with the "
        "reason, its count and tensor names. *May emit* lists the hexagon_nn ops the handler declares (one list "
        "per family of handlers, so a single layer uses only some of them; the prepare passes then fuse them, "
        "see the README's op coverage table). Operators on constants fold before op mapping (last section of "
        "each format).",
        "",
        "## TFLite",
        "",
        "Every operator: int8 (per-tensor activations, per-tensor or per-channel weights), legacy uint8, or "
        "float32 (ranges calibrated or computed at run time); hybrid weights (int8 weights with float "
        "activations) are dequantized first.",
        "",
        *_table(tflite, with_domain=False),
        "",
        "### TFLite ops folded only on constants",
        "",
        "No handler, but folded before op mapping when every input is constant "
        f"({_names(data['folded_only']['tflite']['shape_only'])}: when the input's shape is known):",
        "",
        _names(data["folded_only"]["tflite"]["ops"]) + ".",
        "",
        "## ONNX",
        "",
        f"Every node: {_generic_onnx_rule()} Opset 7 and up; the model is shape-inferred and folded first, "
        "NCHW tensors are laid out NHWC, BatchNormalization and clipping activations fuse into the preceding "
        "layer.",
        "",
        *_table(onnx, with_domain=True),
        "",
        "### ONNX ops folded only on constants",
        "",
        "Any other op of the default domain folds before op mapping when every input is constant (after "
        "earlier folds), evaluated by onnx's reference evaluator (`onnx.reference`), so it follows the ONNX "
        "specification of its opset (the shape arithmetic of exported models: Constant, ConstantOfShape, "
        f"Range, Expand, Where, Equal, ...). {_names(data['folded_only']['onnx']['shape_only'])} fold when the input's shape is "
        "static. Folded results may take up to the memory budget together (docs/limits.md); a larger one "
        "stays in the graph. Never folded (random, control flow, sequences):",
        "",
        _names(data["folded_only"]["onnx"]["never"]) + ".",
    ]
    return "\n".join(lines) + "\n"


def _table(rows: list[dict[str, Any]], with_domain: bool) -> list[str]:
    head = ["| op | domain | may emit | conditions |", "|---|---|---|---|"] if with_domain else \
        ["| op | may emit | conditions |", "|---|---|---|"]
    out = head
    for r in rows:
        cells = [f"`{r['op']}`"] + ([r["domain"] or "ai.onnx"] if with_domain else [])
        cells += [", ".join(r["emits"]) or "no node of its own (the value passes through)", _cell(r["conditions"]) or "-"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def _cell(text: str) -> str:
    """Docstring text as a table cell: ``x`` becomes `x`, a pipe is escaped."""
    return text.replace("``", "`").replace("|", "\\|")


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _generic_onnx_rule() -> str:
    """The checks every ONNX node passes (the docstring of ``onnx.common.generic_reason``)."""
    from hexnn_import.importers.onnx.common import generic_reason

    doc = " ".join((inspect.getdoc(generic_reason) or "").split())
    rule = doc.split(":", 1)[1].strip() if ":" in doc else doc
    return rule.rstrip(".") + "."
