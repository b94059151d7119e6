"""Which hexagon_nn ops each importer can emit (for ``hexnn-import ops``)."""
from __future__ import annotations


def emitted_ops() -> dict[str, set[str]]:
    """importer name -> set of hexagon_nn op names its handlers append."""
    from hexnn_import.importers import tflite_ops  # noqa: F401  (fills EMITS)
    from hexnn_import.importers.tflite_import import EMITS as TFLITE

    return {"tflite": set(TFLITE)}
