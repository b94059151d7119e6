"""The op catalog: every op named in hexagon_nn_ops.txt and hexagon_nn_ops_early.txt, plus the ops
hexagon_nn's prepare.c creates that neither names (source "nnlib").

The raw entries live in :mod:`hexnn_import.ops.catalog_data` (written from the
op documents by hand, one entry per op); this module turns them into
:class:`OpSpec` objects and answers "what does this op take and give".

Entry format in ``catalog_data.OPS`` (name -> dict):

- ``inputs``: list of ``"name:type"`` strings in order; a leading ``?`` marks
  an optional input (optional inputs are trailing). ``type`` may list
  alternatives with ``|`` (``"quint8|qint32"``).
- ``outputs``: same form (no optional outputs).
- ``n_inputs`` / ``n_outputs`` (optional): ``(min, max)`` counts, ``max`` None
  for "n"; defaults derive from the lists.
- ``source``: ``"ops"``, ``"early"`` or ``"both"`` (which document), or ``"nnlib"`` for the few
  ops no document names that hexagon_nn 2.14.1's prepare.c creates (taken from nnlib's op table;
  the notes cite the file); ``doc``: one line;
  ``notes``: errata and conventions.

Element types: quint8, qint32, qint16, quint16, int32, uint8, int16, float,
any, shape (only the shape is read), quint8_d32 (d32 layout, SEMANTICS §7).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hexnn_import.ops.catalog_data import OPS

#: numpy dtype that holds each element type in the flat layout.
NUMPY_DTYPES: dict[str, np.dtype] = {
    "quint8": np.dtype(np.uint8),
    "uint8": np.dtype(np.uint8),
    "qint32": np.dtype(np.int32),
    "int32": np.dtype(np.int32),
    "qint16": np.dtype(np.int16),
    "int16": np.dtype(np.int16),
    "quint16": np.dtype(np.uint16),
    "float": np.dtype(np.float32),
}


@dataclass(frozen=True)
class TensorSpec:
    """One input or output slot of an op: its name, allowed types, optionality."""

    name: str
    types: tuple[str, ...]
    optional: bool = False

    def numpy_dtypes(self) -> tuple[np.dtype, ...] | None:
        """numpy dtypes accepted in this slot, or None when any is fine."""
        if any(t not in NUMPY_DTYPES for t in self.types):
            return None
        return tuple(NUMPY_DTYPES[t] for t in self.types)


@dataclass(frozen=True)
class OpSpec:
    """What an op takes and gives, per its text in the op documents."""

    name: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    min_inputs: int
    max_inputs: int | None
    min_outputs: int
    max_outputs: int | None
    source: str = "ops"
    doc: str = ""
    notes: str = field(default="", compare=False)


def _parse_slot(text: str) -> TensorSpec:
    optional = text.startswith("?")
    body = text[1:] if optional else text
    name, _, types = body.partition(":")
    return TensorSpec(name=name.strip(), types=tuple(t.strip() for t in (types or "any").split("|")), optional=optional)


def _build(name: str, entry: dict) -> OpSpec:
    inputs = tuple(_parse_slot(s) for s in entry.get("inputs", []))
    outputs = tuple(_parse_slot(s) for s in entry.get("outputs", []))
    n_req = sum(1 for s in inputs if not s.optional)
    min_in, max_in = entry.get("n_inputs", (n_req, len(inputs)))
    min_out, max_out = entry.get("n_outputs", (len(outputs), len(outputs)))
    return OpSpec(name, inputs, outputs, min_in, max_in, min_out, max_out,
                  entry.get("source", "ops"), entry.get("doc", ""), entry.get("notes", ""))


CATALOG: dict[str, OpSpec] = {name: _build(name, entry) for name, entry in OPS.items()}


#: ops outside the hexagon_nn documents that a target adds to the same graph (source ``"lib_nn"``: the XS3
#: kernels of :mod:`hexnn_import.xs3.graph_ops`); registered with :func:`register_spec`, never in CATALOG
EXTENSIONS: dict[str, OpSpec] = {}


def register_spec(name: str, entry: dict) -> OpSpec:
    """Add an extension op (same entry format as ``catalog_data.OPS``); its name may not shadow a documented op."""
    if name in CATALOG:
        raise ValueError(f"extension op {name} shadows a documented op")
    spec = EXTENSIONS.get(name)
    if spec is None:
        spec = EXTENSIONS[name] = _build(name, entry)
    return spec


def get_spec(op: str) -> OpSpec | None:
    """The spec of ``op`` (a documented op or a registered extension), or None when neither names it."""
    spec = CATALOG.get(op)
    return spec if spec is not None else EXTENSIONS.get(op)
