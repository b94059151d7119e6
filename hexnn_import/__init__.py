"""hexnn-import: ONNX / TFLite models to hexagon_nn graphs, run bit-faithfully in numpy.

Public API: :func:`import_model`, :func:`prepare`, :class:`Runner`,
:func:`save_graph`, :func:`load_graph`, :func:`example_file` (the bundled example models), the IR classes in
:mod:`hexnn_import.graph` and the errors in :mod:`hexnn_import.errors`.
"""
import os as _os

# In a source checkout, ``ops/``, ``optimizer/`` and ``xs3/`` sit beside this folder and pyproject.toml maps them
# into this package when it is installed. Run from the repository root, Python finds this folder first, not the
# installed package: map the siblings here too, so ``hexnn_import.ops`` imports from the root as from a wheel.
_ROOT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "ops")) and all(
        _os.path.isfile(_os.path.join(_ROOT, d, "__init__.py")) for d in ("ops", "optimizer", "xs3")):
    __path__.append(_ROOT)  # noqa: F821 - the package's own search path

from hexnn_import.api import Runner, import_model, prepare
from hexnn_import.errors import HexnnError
from hexnn_import.examples import example_file, example_files
from hexnn_import.graph import Graph, Node, NNPad, Ref
from hexnn_import.serialize import load_graph, save_graph

__version__ = "0.1.0"

__all__ = ["Runner", "import_model", "prepare", "example_file", "example_files", "HexnnError", "Graph", "Node", "NNPad", "Ref", "load_graph",
           "save_graph", "__version__"]
