"""A model resolved once, at the edge: which file, what format, which input shapes (issue 35 [Seams]).

The CLI and the API turn what the user named into a :class:`ModelSource` once; everything below them takes that
source or the :class:`~hexnn_import.graph.Graph` imported from it, and no layer sniffs a path again
(docs/architecture.md, "A model's trip"). The format comes from the file's first bytes: TFLite's ``TFL3``
identifier, the ``hexnn-graph`` marker of a saved graph file (:mod:`hexnn_import.serialize`), else the ``.onnx``
name (an ONNX file is a protobuf without a magic number).

The source model's quantization is not read here: the importer reads it with the model and it travels on the graph
(``graph.inputs`` / ``outputs`` scale and zero point, ``graph.source_layers``), saved graph files included.
:meth:`ModelSource.of_graph` finds the source model file a graph was imported from, while that file is still at
hand and unchanged, for the commands that run it in its own runtime (``compare``, ``xs3-export``'s agreement).
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hexnn_import.errors import ModelFormatError

#: the suffix of a saved graph file
GRAPH_SUFFIX = ".hexnn.json"
#: the model formats and the runtime that runs each (a saved graph runs only on the engine)
RUNTIME_OF = {"tflite": "litert", "onnx": "onnxruntime", "graph": None}


def detect_format(path: str | os.PathLike) -> str:
    """'tflite', 'onnx' or 'graph' from the file's first bytes (and name); ModelFormatError otherwise."""
    p = Path(path)
    if not p.exists():
        raise ModelFormatError(f"{p}: no such file")
    if p.is_dir():
        raise ModelFormatError(f"{p}: is a directory, not a model file")
    if not p.is_file():  # a FIFO, a socket or a device: reading it could block forever (issue 38 finding 3)
        raise ModelFormatError(f"{p}: not a regular file (a pipe, socket or device); give the model file itself")
    try:
        with open(p, "rb") as fh:
            head = fh.read(256)
    except OSError as exc:
        raise ModelFormatError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    if not head:
        raise ModelFormatError(f"{p}: file is empty")
    if head[4:8] == b"TFL3":
        return "tflite"
    if head.lstrip()[:1] == b"{" and b"hexnn-graph" in head:
        return "graph"
    name = p.name.lower()
    if name.endswith(".onnx"):
        return "onnx"
    if name.endswith(".tflite"):
        raise ModelFormatError(f"{p}: not a TFLite model (no TFL3 file identifier)")
    raise ModelFormatError(f"{p}: not a model file this tool reads (.tflite, .onnx or {GRAPH_SUFFIX})")


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class ModelSource:
    """One model file, resolved: its path, its format (``tflite`` / ``onnx`` / ``graph``) and the input shapes
    the user fixed (``--input-shape``; empty: the file's own, a dynamic batch 1)."""

    path: Path
    format: str
    input_shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: the path as the user spelled it (messages and ``graph.meta["source"]`` show it so)
    label: str = ""

    @classmethod
    def open(cls, path: "str | os.PathLike | ModelSource",
             input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> "ModelSource":
        """Resolve ``path`` (read its first bytes once); a ModelSource is returned as it is, or with
        ``input_shapes`` when those are given."""
        if isinstance(path, ModelSource):
            return path if input_shapes is None else path.with_shapes(input_shapes)
        return cls(Path(path), detect_format(path), dict(input_shapes or {}), os.fspath(path))

    def with_shapes(self, input_shapes: Mapping[str, tuple[int, ...]]) -> "ModelSource":
        """The same file with other input shapes (a data set's batch)."""
        return ModelSource(self.path, self.format, dict(input_shapes), self.label)

    @property
    def is_graph(self) -> bool:
        """A saved graph file (already imported; it may be prepared)."""
        return self.format == "graph"

    @property
    def runtime(self) -> str | None:
        """The runtime that runs the file itself: ``litert``, ``onnxruntime``, or None for a graph file."""
        return RUNTIME_OF[self.format]

    @property
    def stem(self) -> str:
        """The file's name without its suffix (``model`` for ``model.tflite`` and ``model.hexnn.json``)."""
        name = self.path.name
        return name[:-len(GRAPH_SUFFIX)] if self.is_graph and name.endswith(GRAPH_SUFFIX) else self.path.stem

    def read_bytes(self) -> bytes:
        """The file's bytes (a model's runtime reads the model from them)."""
        return self.path.read_bytes()

    def __str__(self) -> str:
        return self.label or str(self.path)

    @staticmethod
    def of_graph(graph: object) -> "ModelSource | None":
        """The source model file ``graph`` was imported from, when it is still at its recorded path with the
        recorded SHA-256 (``graph.meta["source_file"]``, kept in graph files); None otherwise."""
        meta = getattr(graph, "meta", {}) or {}
        rec = meta.get("source_file") if isinstance(meta, dict) else None
        if not isinstance(rec, dict) or not isinstance(rec.get("path"), str):
            return None
        p = Path(rec["path"])
        try:
            if not p.is_file() or (rec.get("sha256") and file_sha256(p) != rec["sha256"]):
                return None
            src = ModelSource.open(p)
        except (OSError, ModelFormatError):
            return None
        return None if src.is_graph else src

    def record(self) -> dict[str, str]:
        """What a graph keeps of its source file (``meta["source_file"]``): absolute path and SHA-256."""
        return {"path": os.path.abspath(self.path), "sha256": file_sha256(self.path)}

