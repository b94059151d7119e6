"""The TFLite importer's registries: builtin handlers and fused chains (as :mod:`.onnx.registry` is ONNX's).

A handler module (one of :data:`.tflite.importer.HANDLER_MODULES`) registers each TFLite builtin it imports with
:func:`tflite_op` (a checker saying why an operator cannot be imported, and the handler that emits its
hexagon_nn nodes) and, where a chain of operators imports as one layer, a fuser in :data:`FUSERS`. The
importer core (:mod:`.tflite.importer`) reads these tables and imports no handler module.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from hexnn_import.importers.tflite.reader import TFOperator

#: the importer (:class:`.tflite.importer.TFLiteImporter`) is ``Any`` here: the registry sits below the importer
#: core and imports nothing of it, not even for type checking
Importer = Any
Handler = Callable[[Importer, TFOperator], None]
Checker = Callable[[Importer, TFOperator], "str | None"]

#: builtin name -> (checker, handler); filled by the handler modules
HANDLERS: dict[str, tuple[Checker, Handler]] = {}
#: hexagon_nn ops this importer can emit (for ``hexnn-import ops``)
EMITS: set[str] = {"INPUT", "OUTPUT", "Const"}
#: builtin name -> the hexagon_nn ops its handler may emit (for ``hexnn-import ops --source``)
OP_EMITS: dict[str, tuple[str, ...]] = {}


def tflite_op(name: str, emits: tuple[str, ...], check: Checker | None = None) -> Callable[[Handler], Handler]:
    """Register a handler for a TFLite builtin; ``check`` returns why an instance is unsupported."""

    def deco(fn: Handler) -> Handler:
        HANDLERS[name] = (check or (lambda imp, op: None), fn)
        OP_EMITS[name] = tuple(emits)
        EMITS.update(emits)
        return fn

    return deco


@dataclass(frozen=True)
class Fused:
    """A chain of operators imported as one (e.g. keras's decomposed LayerNorm): the walk skips them all
    and calls ``emit`` on the turn of ``anchor``, the chain's last operator."""

    anchor: int
    ops: frozenset[int]
    emit: Callable[[Importer], None]


#: run before the checks; each returns the chains it imports as one (registered by handler modules)
FUSERS: list[Callable[[Importer], list[Fused]]] = []
