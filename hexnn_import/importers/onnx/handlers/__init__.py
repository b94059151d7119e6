"""The ONNX op handlers: each module registers its ops with ``registry.onnx_op`` (listed in ``importer.HANDLER_MODULES``)."""
