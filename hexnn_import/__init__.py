"""hexnn-import: ONNX / TFLite models to hexagon_nn graphs, run bit-faithfully in numpy.

Public API: :func:`import_model`, :func:`prepare`, :class:`Runner`,
:func:`save_graph`, :func:`load_graph`, the IR classes in
:mod:`hexnn_import.graph` and the errors in :mod:`hexnn_import.errors`.
"""
from hexnn_import.api import Runner, import_model, prepare
from hexnn_import.errors import HexnnError
from hexnn_import.graph import Graph, Node, NNPad, Ref
from hexnn_import.serialize import load_graph, save_graph

__version__ = "0.1.0"

__all__ = ["Runner", "import_model", "prepare", "HexnnError", "Graph", "Node", "NNPad", "Ref", "load_graph",
           "save_graph", "__version__"]
