"""Graph files, version 2: arrays kept once by content, and the source-layer records (issue 35 [Seams]).

A prepared graph file also carries the graph as imported (``Graph.imported``: what the XS3 lowering works on) and
the importer's records of the source model's quantized layers (``Graph.source_layers``,
:class:`~hexnn_import.source_layers.LayerInfo`), so ``run --xs3``, ``xs3-export`` and ``compare --targets xs3``
take a saved graph as they take the model file. Both graphs hold mostly the same constants, so every array is
stored once in the file's ``blobs`` table, under the SHA-1 of its dtype, shape and bytes, and referenced by that
key (docs/graph_format.md, "Version 2").

Record fields are written as JSON with tags where JSON has no type of its own, so that every value comes back
with its Python type: ``{"tuple": [...]}``, ``{"ref": [src_id, output_idx]}``, ``{"array": blob spec}``, and a
tensor record as ``{"tensor": {...}}``.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
from typing import Any

import numpy as np

from hexnn_import.errors import GraphError
from hexnn_import.graph import Ref
from hexnn_import.source_layers import LayerInfo, TensorQ

_LAYER_FIELDS = {f.name for f in dataclasses.fields(LayerInfo)}
_TENSOR_FIELDS = {f.name for f in dataclasses.fields(TensorQ)}


class Blobs:
    """The file's array table: key -> base64 of the little-endian bytes; specs name a key, dtype and shape."""

    def __init__(self, table: dict[str, str] | None = None):
        self.table: dict[str, str] = dict(table or {})

    def put(self, arr: np.ndarray) -> dict[str, Any]:
        """Store ``arr`` (once per content) and return its spec ``{"dtype", "shape", "blob"}``."""
        a = np.ascontiguousarray(arr)
        le = a.astype(a.dtype.newbyteorder("<"), copy=False)
        raw = le.tobytes()
        key = hashlib.sha1(f"{le.dtype.str}{list(a.shape)}".encode() + raw).hexdigest()
        if key not in self.table:
            self.table[key] = base64.b64encode(raw).decode("ascii")
        return {"dtype": le.dtype.str, "shape": list(a.shape), "blob": key}

    def get(self, spec: dict[str, Any]) -> np.ndarray:
        """The array of a spec: a ``blob`` key of the table, or (version 1) the bytes inline as ``b64``."""
        if "blob" in spec:
            text = self.table.get(spec["blob"])
            if not isinstance(text, str):
                raise GraphError(f"array blob {str(spec['blob'])[:16]!r} is not in the file's blobs table")
        else:
            text = spec["b64"]
        raw = base64.b64decode(text, validate=True)
        dt = np.dtype(spec["dtype"])
        if dt.itemsize == 0:  # zero-length Const (Variable initialisation, op text of Variable)
            return np.zeros(spec["shape"], dtype=dt)
        arr = np.frombuffer(raw, dtype=dt).reshape(spec["shape"])
        return arr.astype(arr.dtype.newbyteorder("="))


def encode(value: Any, blobs: Blobs) -> Any:
    """A record value as tagged JSON (see the module docstring)."""
    if isinstance(value, Ref):
        return {"ref": [int(value.src_id), int(value.output_idx)]}
    if isinstance(value, TensorQ):
        return {"tensor": {f: encode(getattr(value, f), blobs) for f in sorted(_TENSOR_FIELDS)}}
    if isinstance(value, np.ndarray):
        return {"array": blobs.put(value)}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"tuple": [encode(v, blobs) for v in value]}
    if isinstance(value, list):
        return [encode(v, blobs) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise GraphError(f"a source-layer record holds a dict with non-string keys: {list(value)[:3]}")
        return {"dict": {k: encode(v, blobs) for k, v in value.items()}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise GraphError(f"a source-layer record holds a {type(value).__name__}, which graph files do not keep")


def decode(doc: Any, blobs: Blobs) -> Any:
    """The inverse of :func:`encode`; GraphError on an unknown tag."""
    if isinstance(doc, list):
        return [decode(v, blobs) for v in doc]
    if not isinstance(doc, dict):
        return doc
    if len(doc) != 1:
        raise GraphError(f"a source-layer value {sorted(doc)[:4]} is not one tagged value")
    (tag, body), = doc.items()
    if tag == "ref":
        return Ref(int(body[0]), int(body[1]))
    if tag == "tensor":
        return TensorQ(**_fields(body, _TENSOR_FIELDS, "tensor", blobs))
    if tag == "array":
        return blobs.get(body)
    if tag == "tuple":
        return tuple(decode(v, blobs) for v in body)
    if tag == "dict":
        return {str(k): decode(v, blobs) for k, v in body.items()}
    raise GraphError(f"a source-layer value has the unknown tag {tag[:20]!r}")


def _fields(body: Any, allowed: set[str], what: str, blobs: Blobs) -> dict[str, Any]:
    if not isinstance(body, dict) or not set(body) <= allowed:
        raise GraphError(f"a {what} record has unknown fields {sorted(set(body) - allowed)[:4]}")
    return {k: decode(v, blobs) for k, v in body.items()}


def layers_to_list(layers: list[LayerInfo], blobs: Blobs) -> list[dict[str, Any]]:
    """The ``source_layers`` section: one object per record, every field."""
    return [{f: encode(getattr(layer, f), blobs) for f in sorted(_LAYER_FIELDS)} for layer in layers]


def layers_from_list(items: Any, blobs: Blobs) -> list[LayerInfo]:
    """The records of a ``source_layers`` section."""
    if not isinstance(items, list):
        raise GraphError("'source_layers' is not a list")
    return [LayerInfo(**_fields(d, _LAYER_FIELDS, "source layer", blobs)) for d in items]
