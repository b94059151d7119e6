"""Optional dependencies: which extra installs each, and the one-line error when one is missing (issue 34).

The reference runtimes (LiteRT for ``.tflite``, onnxruntime for ``.onnx``) are default dependencies where their
wheels exist (``pyproject.toml``: Linux x86_64 / aarch64, macOS arm64, Windows x64); elsewhere, and for the
other extras, a command that needs one stops with :class:`MissingDependencyError`: one line naming the package
and the ``pip`` command, exit 2 (docs/architecture.md, "Habits": errors a user can provoke are one line).
:data:`EXTRAS` is the one table: module -> (package, extra, what it is for).
"""
from __future__ import annotations

import importlib
from types import ModuleType

from hexnn_import.errors import HexnnError

#: importable module -> (PyPI package, the extra of hexnn-import that installs it, what needs it)
EXTRAS: dict[str, tuple[str, str, str]] = {
    "ai_edge_litert": ("ai-edge-litert", "reference", "LiteRT, the reference runtime of .tflite models"),
    "onnxruntime": ("onnxruntime", "reference", "onnxruntime, the reference runtime of .onnx models"),
    "numba": ("numba", "fast", "the compiled loops of the fastest engine path"),
    "PIL": ("pillow", "images", "decoding image folders (compare --data DIR, --calibration DIR)"),
    "dask": ("dask[distributed]", "cluster", "compare --scheduler (a Dask cluster)"),
    "distributed": ("dask[distributed]", "cluster", "compare --scheduler (a Dask cluster)"),
}


class MissingDependencyError(HexnnError, ImportError):
    """An optional package a command needs is not installed (one line, exit 2; still an ImportError)."""


def install_hint(module: str) -> str:
    """``ai-edge-litert (LiteRT, ...) is not installed: python3 -m pip install 'hexnn-import[reference]'``."""
    package, extra, what = EXTRAS[module]
    return (f"{package} ({what}) is not installed on this machine: install it with "
            f"python3 -m pip install '{package}' (or the extra: python3 -m pip install 'hexnn-import[{extra}]')")


def require(module: str, needed_for: str = "") -> ModuleType:
    """Import ``module`` (a key of :data:`EXTRAS`) or raise :class:`MissingDependencyError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if missing and missing.split(".")[0] != module.split(".")[0]:
            raise  # the package is there but something it imports is broken: not ours to rename
        raise MissingDependencyError((f"{needed_for}: " if needed_for else "") + install_hint(module)) from exc


def as_missing_dependency(exc: BaseException) -> MissingDependencyError | None:
    """The one-line error for a ModuleNotFoundError of a package in :data:`EXTRAS`, else None (the CLI's last
    net: an import deep in a command still ends as one line and exit 2, never an internal error)."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    root = exc.name.split(".")[0]
    return MissingDependencyError(install_hint(root)) if root in EXTRAS else None
