"""Which hexagon_nn ops each importer can emit (for ``hexnn-import ops``)."""
from __future__ import annotations


def emitted_ops() -> dict[str, set[str]]:
    """importer name -> set of hexagon_nn op names its handlers append."""
    from hexnn_import.importers.tflite_import import EMITS as TFLITE
    from hexnn_import.importers.tflite_import import load_handlers

    load_handlers()
    out = {"tflite": set(TFLITE)}
    try:
        from hexnn_import.importers.onnx_import import emitted_ops as onnx_emitted
    except ImportError:  # the ONNX importer is optional until it lands
        return out
    out["onnx"] = set(onnx_emitted())
    return out
