"""Source-model importers: a source model in, a hexagon_nn Graph out, one sub-package per format.

- ``onnx/``: the ONNX importer (``reader`` ... ``importer``; its op handlers in ``onnx/handlers/``, listed in
  ``onnx/importer.py`` ``HANDLER_MODULES``, registered in ``onnx/registry.py``);
- ``tflite/``: the TFLite importer, laid out alike (``tflite/handlers/``, ``tflite/importer.py``,
  ``tflite/registry.py``);
- ``nodes/``: the node builders both formats share (each appends the hexagon_nn nodes of one lowering);
- ``coverage.py``: what the two registries accept, read back for ``hexnn-import ops``.
"""
