"""The TFLite importer: read the flatbuffer, fix input shapes and fold, then map each builtin through its handler."""
