"""What the importers register, read back for ``hexnn-import ops``: which hexagon_nn ops each importer
can emit, and every source op (TFLite builtin / custom, ONNX op) with its emitted ops and conditions."""
from __future__ import annotations

import inspect
from typing import Any, Callable

from hexnn_import.importers.onnx import fold as onnx_fold
from hexnn_import.importers.onnx import importer as onnx_import
from hexnn_import.importers.tflite import fold as tflite_fold
from hexnn_import.importers.tflite import importer as tflite_import


def emitted_ops() -> dict[str, set[str]]:
    """importer name -> set of hexagon_nn op names its handlers append."""
    tflite_import.load_handlers()
    return {"tflite": set(tflite_import.EMITS), "onnx": set(onnx_import.emitted_ops())}


def source_ops() -> list[dict[str, Any]]:
    """Every source op an importer registers, one record each (for ``hexnn-import ops --source``).

    A record holds ``format`` (``tflite`` / ``onnx``), ``op`` (the TFLite builtin or ``CUSTOM:<code>``, or
    the ONNX op type), ``domain`` (ONNX; ``""`` is the default domain), ``emits`` (the hexagon_nn ops its
    handler declares it may append, sorted) and ``conditions`` (what the op's check accepts:
    :func:`check_text`). TFLite ops come first, each format in name order.
    """
    tflite_import.load_handlers()
    onnx_import.load_handlers()
    rows: list[dict[str, Any]] = []
    for name in sorted(tflite_import.HANDLERS, key=lambda n: (n.startswith("CUSTOM:"), n)):
        rows.append({"format": "tflite", "op": name, "domain": "",
                     "emits": sorted(set(tflite_import.OP_EMITS.get(name, ()))),
                     "conditions": check_text(tflite_import.HANDLERS[name][0])})
    for domain, name in sorted(onnx_import.HANDLERS, key=lambda k: (k[0] != "", k[0], k[1])):
        rows.append({"format": "onnx", "op": name, "domain": domain,
                     "emits": sorted(set(onnx_import.OP_EMITS.get((domain, name), ()))),
                     "conditions": check_text(onnx_import.HANDLERS[(domain, name)][0])})
    return rows


def check_text(check: Callable[..., Any]) -> str:
    """What a registered check function accepts, in one paragraph: its docstring's first paragraph; for a
    lambda, the docstring of the first documented function it calls, or the refusal it always returns
    (``refused: ...``); ``""`` when the check accepts every instance (no check was registered)."""
    doc = inspect.getdoc(check) if check.__name__ != "<lambda>" else None
    if doc is None and check.__name__ == "<lambda>":
        for name in check.__code__.co_names:
            fn = check.__globals__.get(name)
            if callable(fn) and inspect.getdoc(fn):
                doc = inspect.getdoc(fn)
                break
        else:
            refusals = [c for c in check.__code__.co_consts if isinstance(c, str)]
            doc = f"refused: {refusals[0]}" if refusals else None
    if not doc:
        return ""
    return " ".join(doc.split("\n\n")[0].split())


def folded_only_ops() -> dict[str, Any]:
    """The source ops the importers know only as constant folds (evaluated before op mapping, no handler).

    ``tflite``: the TFLite builtins :mod:`tflite.fold` evaluates that have no handler, with ``shape_only``
    (those folded from a known input shape, not values). ``onnx``: the rule of :mod:`onnx.fold` (every
    default-domain op folds on constant inputs, by onnx's reference evaluator) with ``shape_only`` and
    ``never`` (the ops it never folds).
    """
    tflite_import.load_handlers()
    return {
        "tflite": {"ops": sorted(set(tflite_fold.FOLDERS) - set(tflite_import.HANDLERS)),
                   "shape_only": sorted(tflite_fold.SHAPE_ONLY)},
        "onnx": {"shape_only": ["Shape", "Size"], "never": sorted(onnx_fold.NO_FOLD)},
    }
