"""Save and load a Graph as one JSON file that round-trips exactly.

Format (``"format": "hexnn-graph"``, ``"version": 2``; docs/graph_format.md):

- ``nodes``: in list order, each ``{"id", "op", "name", "padding"
  (NN_PAD_* name), "inputs": [[src_id, output_idx], ...], "outputs":
  [{"shape": [b,h,w,d], "dtype": element type}, ...]}``; Const nodes add
  ``"data": {"dtype": numpy dtype str, "shape": [...], "blob": key}``, the
  key of the raw little-endian bytes in the ``blobs`` table (base64), so
  every bit survives and an array two graphs share is stored once.
- ``inputs`` / ``outputs``: the source model's graph inputs and outputs
  (:class:`GraphIO` fields), ``tensor_map``: source tensor name -> ref,
  ``meta``: free-form JSON (source format, source file, importer notes).
- ``prepared`` (the prepare passes ran), ``source_layers`` (the importer's
  records of the quantized source layers) and ``imported`` (the graph as
  imported, nodes and tables as above, when it was prepared): what the XS3
  lowering needs (:mod:`hexnn_import.serialize_layers`).

Version 1 files (Const bytes inline as ``"b64"``, no layers) still load.
Floats are written with Python's shortest round-trip repr; non-finite
floats as ``Infinity``/``NaN`` (Python's json extension). Files are written
atomically: a temporary file in the target folder, then a rename.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from hexnn_import.errors import GraphError, HexnnError, ModelFormatError
from hexnn_import.graph import Graph, GraphIO, NNPad, Node, OutputDef, Ref
from hexnn_import.graph_file_checks import check_loaded, check_node_entry, check_shape, one_line, short
from hexnn_import.graph_memory import check_graph
from hexnn_import.json_stream import LazyDict, LazyList, iter_bytes
from hexnn_import.serialize_layers import Blobs, layers_from_list, layers_to_list

FORMAT = "hexnn-graph"
VERSION = 2
#: the versions this release reads
READS = (1, 2)


def graph_to_dict(graph: Graph) -> dict[str, Any]:
    """The JSON-ready dict of a graph (and of the graph it was imported as, sharing one blobs table)."""
    blobs = Blobs()
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, **_body(graph, blobs), "prepared": graph.prepared}
    if graph.source_layers:
        doc["source_layers"] = layers_to_list(graph.source_layers, blobs)
    if graph.imported is not None:
        doc["imported"] = _body(graph.imported, blobs)
    doc["blobs"] = blobs.table
    return doc


def graph_document(graph: Graph) -> LazyDict:
    """:func:`graph_to_dict` as a lazy document (:mod:`hexnn_import.json_stream`): the nodes and layers are
    made one at a time as the file is written, in the order ``graph_to_dict`` makes them (so the blobs
    table, written last, is the same), and the text is the same (memory, issue 38)."""
    blobs = Blobs()

    def items() -> Iterator[tuple[str, Any]]:
        yield from (("format", FORMAT), ("version", VERSION))
        yield from _body_items(graph, blobs)
        yield "prepared", graph.prepared
        if graph.source_layers:
            yield "source_layers", LazyList(lambda: (layers_to_list([layer], blobs)[0]
                                                      for layer in graph.source_layers))
        if graph.imported is not None:
            yield "imported", LazyDict(lambda: _body_items(graph.imported, blobs))  # type: ignore[arg-type]
        yield "blobs", LazyDict(lambda: iter(blobs.table.items()))

    return LazyDict(items)


def _body(graph: Graph, blobs: Blobs) -> dict[str, Any]:
    """A graph's nodes and tables."""
    return {k: _made(v) for k, v in _body_items(graph, blobs)}


def _made(value: Any) -> Any:
    """A lazy container made whole (the dict :func:`graph_to_dict` returns)."""
    if isinstance(value, LazyList):
        return list(value.make())
    return dict(value.make()) if isinstance(value, LazyDict) else value


def _body_items(graph: Graph, blobs: Blobs) -> Iterator[tuple[str, Any]]:
    """A graph's tables, then its nodes (lazily: each made when it is written)."""
    yield "inputs", [_io_to_dict(io) for io in graph.inputs]
    yield "outputs", [_io_to_dict(io) for io in graph.outputs]
    yield "tensor_map", LazyDict(lambda: ((k, [r.src_id, r.output_idx]) for k, r in graph.tensor_map.items()))
    yield "tensor_ranges", LazyDict(lambda: ((k, [[a.src_id, a.output_idx], [b.src_id, b.output_idx]])
                                             for k, (a, b) in graph.tensor_ranges.items()))
    yield "meta", graph.meta
    yield "nodes", LazyList(lambda: (_node_dict(n, blobs) for n in graph.nodes))


def _node_dict(n: Node, blobs: Blobs) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": n.node_id, "op": n.op, "name": n.name, "padding": f"NN_PAD_{NNPad(n.padding).name}",
        "inputs": [[r.src_id, r.output_idx] for r in n.inputs],
        "outputs": [{"shape": list(o.shape), "dtype": o.dtype} for o in n.output_defs],
    }
    if n.data is not None:
        d["data"] = blobs.put(n.data)
    return d


def _io_to_dict(io: GraphIO) -> dict[str, Any]:
    return {"name": io.name, "shape": list(io.shape), "dtype": io.dtype, "scale": io.scale,
            "zero_point": io.zero_point, "index": io.index, "refs": list(io.refs)}


def graph_from_dict(doc: dict[str, Any]) -> Graph:
    """Rebuild a graph from :func:`graph_to_dict` output; ModelFormatError if malformed."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelFormatError("not a hexnn graph file (no 'format': 'hexnn-graph')")
    if doc.get("version") not in READS:
        raise ModelFormatError(f"hexnn graph file version {doc.get('version')} is not supported (expected "
                               f"{' or '.join(map(str, READS))})")
    try:
        blobs = Blobs(doc.get("blobs") if doc.get("version") >= 2 else None)
        if not isinstance(blobs.table, dict):
            raise GraphError("'blobs' is not an object")
        g = _graph_of(doc, blobs)
        g.prepared = bool(doc.get("prepared", False))
        g.source_layers = layers_from_list(doc.get("source_layers", []), blobs)
        if doc.get("imported") is not None:
            g.imported = _graph_of(doc["imported"], blobs)
            g.imported.source_layers = g.source_layers
    except HexnnError as exc:
        raise ModelFormatError(f"graph file is inconsistent: {one_line(str(exc))}") from exc
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, SyntaxError) as exc:
        # SyntaxError: numpy parses a dtype string such as "i1,(" as Python (the graph fuzz, case 573)
        raise ModelFormatError(f"graph file is malformed: {type(exc).__name__}: {one_line(str(exc))}") from exc
    return g


def _graph_of(doc: dict[str, Any], blobs: Blobs) -> Graph:
    """One graph's nodes and tables, verified."""
    g = Graph()
    for d in doc["nodes"]:
        check_node_entry(d)
        if "data" in d:
            node = g.add_const(blobs.get(d["data"]), name=d.get("name", ""), node_id=int(d["id"]))
            node.output_defs = [OutputDef(tuple(o["shape"]), o["dtype"]) for o in d["outputs"]]
        else:
            g.append(d["op"], [tuple(r) for r in d["inputs"]],
                     [OutputDef(tuple(o["shape"]), o["dtype"]) for o in d["outputs"]],
                     NNPad[d["padding"].removeprefix("NN_PAD_")], d.get("name", ""), int(d["id"]))
    g.inputs = [_io_from_dict(x) for x in doc.get("inputs", [])]
    g.outputs = [_io_from_dict(x) for x in doc.get("outputs", [])]
    g.tensor_map = {k: Ref(int(v[0]), int(v[1])) for k, v in doc.get("tensor_map", {}).items()}
    g.tensor_ranges = {k: (Ref(int(a[0]), int(a[1])), Ref(int(b[0]), int(b[1])))
                       for k, (a, b) in doc.get("tensor_ranges", {}).items()}
    g.meta = dict(doc.get("meta", {}))
    g.verify()
    check_loaded(g)
    return g


def _io_from_dict(d: dict[str, Any]) -> GraphIO:
    name = d["name"]
    if not isinstance(name, str):
        raise GraphError(f"graph input/output name {short(name)} is not a string")
    check_shape(f"graph input/output {name}", d["shape"], None)  # before int(): 1e308 and 2.5 are refused
    return GraphIO(name=name, shape=tuple(d["shape"]), dtype=str(d["dtype"]),
                   scale=None if d.get("scale") is None else float(d["scale"]),
                   zero_point=None if d.get("zero_point") is None else int(d["zero_point"]),
                   index=int(d.get("index", 0)), refs=tuple(int(v) for v in d.get("refs", ())))


def atomic_write_bytes(path: str | os.PathLike, payload: bytes | Iterable[bytes]) -> None:
    """Write ``payload`` (bytes, or pieces of them written as they come) to ``path`` via a temporary file and a
    rename: never half a file."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise HexnnError(f"cannot write {target}: folder {folder} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise HexnnError(f"cannot write {target}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in ((payload,) if isinstance(payload, (bytes, bytearray, memoryview)) else payload):
                fh.write(piece)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode of a new file
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):  # the temporary file may already be gone
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise HexnnError(f"cannot write {target}: {exc.strerror or exc}") from exc
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save_graph(graph: Graph, path: str | os.PathLike) -> None:
    """Write the graph file atomically: ``json.dumps(graph_to_dict(graph), indent=1)`` in UTF-8, written as
    it is made (:func:`graph_document`; memory, issue 38)."""
    check_graph(graph, "writing the graph file", *_blob_bytes(graph))
    atomic_write_bytes(path, iter_bytes(graph_document(graph)))


def _blob_bytes(graph: Graph) -> tuple[int, str]:
    """An upper bound of the blobs table's characters (base64 of every array once) and its description."""
    arrays = [n.data for g in (graph, graph.imported) if g is not None for n in g.nodes if n.data is not None]
    arrays += [v for layer in graph.source_layers for v in (layer.weights, layer.bias, layer.w_scales,
                                                              layer.w_zero_points) if isinstance(v, np.ndarray)]
    seen: set[int] = set()
    total = 0
    for a in arrays:
        key = id(a.base if a.base is not None else a)
        if key not in seen:
            seen.add(key)
            total += int(a.nbytes)
    return total * 4 // 3 + 4 * len(seen), "its arrays as base64"


def load_graph(path: str | os.PathLike) -> Graph:
    """Read a graph file written by :func:`save_graph`."""
    p = Path(path)
    try:
        text = p.read_bytes()
    except FileNotFoundError as exc:
        raise ModelFormatError(f"{p}: no such file") from exc
    except OSError as exc:
        raise ModelFormatError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    if not text.strip():
        raise ModelFormatError(f"{p}: file is empty")
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError, or a number too long to convert
        raise ModelFormatError(f"{p}: not a hexnn graph file (invalid JSON: {one_line(str(exc))})") from exc
    except RecursionError as exc:
        raise ModelFormatError(f"{p}: not a hexnn graph file (JSON nested too deeply)") from exc
    try:
        return graph_from_dict(doc)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{p}: {exc}") from exc


__all__ = ["save_graph", "load_graph", "graph_to_dict", "graph_from_dict", "atomic_write_bytes", "GraphError"]
