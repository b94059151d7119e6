"""The ONNX importer: read, fix input shapes and fold the model, then map each op through its handler."""
