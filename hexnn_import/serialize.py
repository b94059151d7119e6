"""Save and load a Graph as one JSON file that round-trips exactly.

Format (``"format": "hexnn-graph"``, ``"version": 1``):

- ``nodes``: in list order, each ``{"id", "op", "name", "padding"
  (NN_PAD_* name), "inputs": [[src_id, output_idx], ...], "outputs":
  [{"shape": [b,h,w,d], "dtype": element type}, ...]}``; Const nodes add
  ``"data": {"dtype": numpy dtype str, "shape": [...], "b64": raw
  little-endian bytes in base64}`` so every bit survives.
- ``inputs`` / ``outputs``: the source model's graph inputs and outputs
  (:class:`GraphIO` fields), ``tensor_map``: source tensor name -> ref,
  ``meta``: free-form JSON (source format, importer notes).

Floats are written with Python's shortest round-trip repr; non-finite
floats as ``Infinity``/``NaN`` (Python's json extension). Files are written
atomically: a temporary file in the target folder, then a rename.
"""
from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hexnn_import.errors import GraphError, HexnnError, ModelFormatError
from hexnn_import.graph import ELEMENT_DTYPES, Graph, GraphIO, NNPad, OutputDef, Ref

FORMAT = "hexnn-graph"
VERSION = 1


def graph_to_dict(graph: Graph) -> dict[str, Any]:
    """The JSON-ready dict of a graph."""
    nodes = []
    for n in graph.nodes:
        d: dict[str, Any] = {
            "id": n.node_id, "op": n.op, "name": n.name, "padding": f"NN_PAD_{NNPad(n.padding).name}",
            "inputs": [[r.src_id, r.output_idx] for r in n.inputs],
            "outputs": [{"shape": list(o.shape), "dtype": o.dtype} for o in n.output_defs],
        }
        if n.data is not None:
            arr = np.ascontiguousarray(n.data)
            le = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
            d["data"] = {"dtype": le.dtype.str, "shape": list(arr.shape),
                         "b64": base64.b64encode(le.tobytes()).decode("ascii")}
        nodes.append(d)
    return {
        "format": FORMAT, "version": VERSION,
        "inputs": [_io_to_dict(io) for io in graph.inputs],
        "outputs": [_io_to_dict(io) for io in graph.outputs],
        "tensor_map": {k: [r.src_id, r.output_idx] for k, r in graph.tensor_map.items()},
        "tensor_ranges": {k: [[a.src_id, a.output_idx], [b.src_id, b.output_idx]]
                          for k, (a, b) in graph.tensor_ranges.items()},
        "meta": graph.meta,
        "nodes": nodes,
    }


def _io_to_dict(io: GraphIO) -> dict[str, Any]:
    return {"name": io.name, "shape": list(io.shape), "dtype": io.dtype, "scale": io.scale,
            "zero_point": io.zero_point, "index": io.index, "refs": list(io.refs)}


def graph_from_dict(doc: dict[str, Any]) -> Graph:
    """Rebuild a graph from :func:`graph_to_dict` output; ModelFormatError if malformed."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelFormatError("not a hexnn graph file (no 'format': 'hexnn-graph')")
    if doc.get("version") != VERSION:
        raise ModelFormatError(f"hexnn graph file version {doc.get('version')} is not supported (expected {VERSION})")
    try:
        g = Graph()
        for d in doc["nodes"]:
            _check_node_entry(d)
            if "data" in d:
                spec = d["data"]
                raw = base64.b64decode(spec["b64"], validate=True)
                dt = np.dtype(spec["dtype"])
                if dt.itemsize == 0:  # zero-length Const (Variable initialisation, op text of Variable)
                    arr = np.zeros(spec["shape"], dtype=dt)
                else:
                    arr = np.frombuffer(raw, dtype=dt).reshape(spec["shape"])
                arr = arr.astype(arr.dtype.newbyteorder("="))
                node = g.add_const(arr, name=d.get("name", ""), node_id=int(d["id"]))
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
        _check_loaded(g)
    except HexnnError as exc:
        raise ModelFormatError(f"graph file is inconsistent: {_one_line(str(exc))}") from exc
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, SyntaxError) as exc:
        # SyntaxError: numpy parses a dtype string such as "i1,(" as Python (the graph fuzz, case 573)
        raise ModelFormatError(f"graph file is malformed: {type(exc).__name__}: {_one_line(str(exc))}") from exc
    return g


def _check_node_entry(d: Any) -> None:
    """What docs/graph_format.md ("Node") says of one entry before it becomes a node: an object with an
    integer ``id``, a string ``name``; ``data`` on a Const only, and a Const with no ``inputs`` (hexagon_nn's
    ``append_const_node`` takes none: inputs there would be dropped without a word)."""
    if not isinstance(d, dict):
        raise GraphError(f"a node entry is a JSON {type(d).__name__}, not an object")
    nid = d.get("id")
    if not isinstance(nid, int) or isinstance(nid, bool):
        raise GraphError(f"node id {nid!r} is not an integer")
    name = d.get("name", "")
    if not isinstance(name, str):
        raise GraphError(f"node {nid}: name {name!r} is not a string")
    label = f"node {name or '#' + str(nid)} ({d.get('op')!r})"
    if "data" in d and d.get("op") != "Const":
        raise GraphError(f"{label}: only a Const node carries 'data'")
    if d.get("op") == "Const":
        if "data" not in d:
            raise GraphError(f"{label}: a Const node needs its 'data'")
        if d.get("inputs"):
            raise GraphError(f"{label}: a Const node has no inputs, the file gives {len(d['inputs'])} "
                             f"(docs/graph_format.md, Node)")


def _check_shape(what: str, shape: Any, dtype: str | None, rank: int | None = None) -> None:
    """A shape is a list of non-negative JSON integers (not 1e308, 2.5 or true), ``rank`` long when given,
    whose elements fit in 4 GiB (:data:`MAX_TENSOR_BYTES`)."""
    if (not isinstance(shape, (list, tuple)) or (rank is not None and len(shape) != rank)
            or any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in shape)):
        want = f"{rank} non-negative integers" if rank is not None else "non-negative integers"
        raise GraphError(f"{what}: shape {_short(shape)} is not {want}")
    size = ELEMENT_DTYPES[dtype].itemsize if dtype in ELEMENT_DTYPES else _itemsize(dtype)
    if math.prod(shape) * max(size, 1) > MAX_TENSOR_BYTES:
        raise GraphError(f"{what}: shape {_short(list(shape))} holds more than 4 GiB")


def _itemsize(dtype: str | None) -> int:
    try:
        return np.dtype(dtype).itemsize if dtype else 1
    except TypeError:
        return 1


def _short(value: Any, keep: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= keep else text[:keep - 3] + "..."


#: the largest tensor a graph file may declare (hexagon_nn sizes are 32-bit)
MAX_TENSOR_BYTES = 2 ** 32 - 1


def _check_loaded(g: Graph) -> None:
    """What a hand-edited or damaged file can break beyond ``Graph.verify``: output defs (4 non-negative
    dims, a known element type), Const data of its def's type, and the refs of inputs, outputs and tensor maps."""
    outputs = {n.node_id: len(n.output_defs) for n in g.nodes}
    for n in g.nodes:
        for od in n.output_defs:
            if not isinstance(od.dtype, str) or od.dtype not in ELEMENT_DTYPES:
                raise GraphError(f"node {n.label} ({n.op}): unknown element type {_short(od.dtype)}")
            _check_shape(f"node {n.label} ({n.op}): output", od.shape, od.dtype, rank=4)
        if n.is_const and n.data is not None and n.data.dtype != ELEMENT_DTYPES[n.output_defs[0].dtype]:
            raise GraphError(f"Const node {n.label}: data of dtype {n.data.dtype} under output type "
                             f"{n.output_defs[0].dtype}")
    ins = [n for n in g.nodes if n.op == "INPUT"]
    outs = [n for n in g.nodes if n.op == "OUTPUT"]
    n_in = len(ins[0].output_defs) if ins else 0
    n_out = len(outs[0].inputs) if outs else 0
    for io in g.inputs + g.outputs:
        _check_shape(f"graph {'input' if io in g.inputs else 'output'} {io.name}", io.shape, io.dtype)
    for io in g.inputs:
        if not 0 <= io.index < n_in or any(v < 0 for v in io.shape):
            raise GraphError(f"graph input {io.name}: index {io.index} or shape {list(io.shape)} does not fit the "
                             f"INPUT node's {n_in} outputs")
    for io in g.outputs:
        if not io.refs or any(not 0 <= r < n_out for r in io.refs) or any(v < 0 for v in io.shape):
            raise GraphError(f"graph output {io.name}: refs {list(io.refs)} or shape {list(io.shape)} does not fit "
                             f"the OUTPUT node's {n_out} inputs")
    for io in g.inputs + g.outputs:
        try:
            np.dtype(io.dtype)
        except TypeError as exc:
            raise GraphError(f"graph input/output {io.name}: {io.dtype!r} is not a dtype") from exc
        if io.scale is not None and not (math.isfinite(io.scale) and io.scale > 0):
            raise GraphError(f"graph input/output {io.name}: scale {io.scale} is not a positive finite number")
        lo, hi = {"int8": (-128, 127), "uint8": (0, 255)}.get(io.dtype, (-2 ** 63, 2 ** 63))
        if io.zero_point is not None and not lo <= io.zero_point <= hi:
            raise GraphError(f"graph input/output {io.name}: zero point {io.zero_point} is outside the {io.dtype} "
                             f"range [{lo}, {hi}]")
    refs = [(k, r) for k, r in g.tensor_map.items()] + [(k, r) for k, pair in g.tensor_ranges.items() for r in pair]
    for name, r in refs:
        if not 0 <= r.output_idx < outputs.get(r.src_id, 0):
            raise GraphError(f"tensor map entry {name!r} names {tuple(r)}, which is no node output")


def _one_line(text: str) -> str:
    """A message on one line (a damaged file can put newlines in names and values)."""
    return " ".join(text.split())


def _io_from_dict(d: dict[str, Any]) -> GraphIO:
    name = d["name"]
    if not isinstance(name, str):
        raise GraphError(f"graph input/output name {_short(name)} is not a string")
    _check_shape(f"graph input/output {name}", d["shape"], None)  # before int(): 1e308 and 2.5 are refused
    return GraphIO(name=name, shape=tuple(d["shape"]), dtype=str(d["dtype"]),
                   scale=None if d.get("scale") is None else float(d["scale"]),
                   zero_point=None if d.get("zero_point") is None else int(d["zero_point"]),
                   index=int(d.get("index", 0)), refs=tuple(int(v) for v in d.get("refs", ())))


def atomic_write_bytes(path: str | os.PathLike, payload: bytes) -> None:
    """Write ``payload`` to ``path`` via a temporary file and a rename: never half a file."""
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
            fh.write(payload)
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
    """Write the graph file atomically."""
    text = json.dumps(graph_to_dict(graph), indent=1)
    atomic_write_bytes(path, text.encode("utf-8"))


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
        raise ModelFormatError(f"{p}: not a hexnn graph file (invalid JSON: {_one_line(str(exc))})") from exc
    except RecursionError as exc:
        raise ModelFormatError(f"{p}: not a hexnn graph file (JSON nested too deeply)") from exc
    try:
        return graph_from_dict(doc)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{p}: {exc}") from exc


__all__ = ["save_graph", "load_graph", "graph_to_dict", "graph_from_dict", "atomic_write_bytes", "GraphError"]
