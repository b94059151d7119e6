"""The TFLite builtin handlers: each module registers its builtins with ``registry.tflite_op`` (listed in ``importer.HANDLER_MODULES``)."""
