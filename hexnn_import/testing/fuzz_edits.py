"""The fuzzer's document-level edits: the seed is parsed, edited, and written back.

The result is well framed but inconsistent, which reaches past the parser
into the importer: ``onnx_*`` on the protobuf (an input renamed to another
tensor, nodes out of order, a dimension of 2**40, a type changed, an
initializer cut short or moved to a missing or escaping external file, an
attribute made huge or NaN, the opset changed); ``graph_*`` on the JSON
document (a leaf of the wrong type, a ref to a later node, a dtype numpy
cannot use, nesting deep enough to exhaust the stack, a number too long
to convert, nodes dropped or doubled).
"""
from __future__ import annotations

import copy
import functools
import json
import math
import random
from typing import Any, Callable

from hexnn_import.testing.fuzz_mutations import SPECIAL_F32, SPECIAL_I64, Mutation
from hexnn_import.testing.fuzz_structure import Structure


# ---- ONNX (protobuf) level -------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def _onnx_seed(data: bytes) -> Any:
    import onnx

    return onnx.load_from_string(data)


def _onnx_edit(edit: Callable[[Any, random.Random], None]) -> Mutation:
    def mutate(data: bytes, st: Structure, rng: random.Random) -> bytes:
        m = copy.deepcopy(_onnx_seed(data))
        edit(m, rng)
        return m.SerializeToString()

    mutate.__doc__ = edit.__doc__
    return mutate


def _names(m: Any) -> list[str]:
    g = m.graph
    out = [i.name for i in g.input] + [t.name for t in g.initializer]
    for n in g.node:
        out += list(n.output)
    return out or ["x"]


def _onnx_rewire(m: Any, rng: random.Random) -> None:
    """An input of a node renamed to another tensor (or a missing one), or two inputs swapped."""
    nodes = [n for n in m.graph.node if n.input]
    if not nodes:
        return
    n = rng.choice(nodes)
    k = rng.randrange(len(n.input))
    if len(n.input) > 1 and rng.random() < 0.4:
        j = rng.randrange(len(n.input))
        n.input[k], n.input[j] = n.input[j], n.input[k]
    else:
        n.input[k] = rng.choice(_names(m) + ["", "no_such_tensor"])


def _onnx_reorder(m: Any, rng: random.Random) -> None:
    """Two nodes exchanged (the graph is no longer in topological order), or a node dropped / doubled."""
    nodes = m.graph.node
    if len(nodes) < 2:
        return
    i, j = rng.sample(range(len(nodes)), 2)
    how = rng.randrange(3)
    if how == 0:
        a, b = copy.deepcopy(nodes[i]), copy.deepcopy(nodes[j])
        nodes[i].CopyFrom(b)
        nodes[j].CopyFrom(a)
    elif how == 1:
        del nodes[i]
    else:
        nodes.add().CopyFrom(nodes[i])


def _onnx_dims(m: Any, rng: random.Random) -> None:
    """A dimension of an initializer or graph input/output set to 0, -1, 2**40... or the shape dropped."""
    big = rng.choice((0, -1, 1 << 40, 1 << 31, 65536, 3, 1 << 62))
    g = m.graph
    if g.initializer and rng.random() < 0.5:
        t = rng.choice(g.initializer)
        if t.dims and rng.random() < 0.8:
            t.dims[rng.randrange(len(t.dims))] = big
        else:
            t.dims.extend([big] * rng.randint(1, 3))
        return
    vis = list(g.input) + list(g.output) + list(g.value_info)
    if not vis:
        return
    vi = rng.choice(vis)
    dims = vi.type.tensor_type.shape.dim
    if dims and rng.random() < 0.7:
        d = dims[rng.randrange(len(dims))]
        if rng.random() < 0.7:
            d.dim_value = big
        else:
            d.dim_param = "N"
    elif rng.random() < 0.5:
        vi.type.tensor_type.ClearField("shape")
    else:
        for _ in range(rng.randint(1, 4)):
            dims.add().dim_value = 1


def _onnx_types(m: Any, rng: random.Random) -> None:
    """An element type changed (initializer or graph input), or an initializer's data cut short / made external."""
    g = m.graph
    how = rng.randrange(4)
    if how == 0 and g.initializer:
        rng.choice(g.initializer).data_type = rng.randrange(0, 26)
    elif how == 1 and g.input:
        rng.choice(g.input).type.tensor_type.elem_type = rng.randrange(0, 26)
    elif how == 2 and g.initializer:
        t = rng.choice(g.initializer)
        if t.raw_data:
            t.raw_data = t.raw_data[: rng.randrange(len(t.raw_data))]
        else:
            del t.float_data[:]
    elif g.initializer:
        t = rng.choice(g.initializer)
        t.data_location = 1  # EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", rng.choice(("missing.bin", "../../../etc/passwd", "/etc/passwd", ""))


def _onnx_attrs(m: Any, rng: random.Random) -> None:
    """An attribute's value made huge, negative, NaN, or of another type; or the opset changed."""
    nodes = [n for n in m.graph.node if n.attribute]
    if rng.random() < 0.2 or not nodes:
        if m.opset_import:
            m.opset_import[0].version = rng.choice((0, 1, 6, 99, 1 << 40))
        return
    a = rng.choice(rng.choice(nodes).attribute)
    if a.ints:
        a.ints[rng.randrange(len(a.ints))] = rng.choice(SPECIAL_I64)
    elif a.type == 2:  # INT
        a.i = rng.choice(SPECIAL_I64)
    elif a.type == 1:  # FLOAT
        a.f = rng.choice(SPECIAL_F32)
    else:
        a.type = rng.randrange(0, 15)


ONNX_MUTATIONS: tuple[tuple[str, Mutation], ...] = (
    ("onnx_rewire", _onnx_edit(_onnx_rewire)), ("onnx_reorder", _onnx_edit(_onnx_reorder)),
    ("onnx_dims", _onnx_edit(_onnx_dims)), ("onnx_types", _onnx_edit(_onnx_types)),
    ("onnx_attrs", _onnx_edit(_onnx_attrs)),
)


# ---- graph-file (JSON document) level -------------------------------------------------------
_ODD_LEAVES: tuple[Any, ...] = (None, -1, 0, 1 << 31, 1 << 64, 10 ** 30, 1e308, math.nan, math.inf, -math.inf,
                                0.5, "", "x", [], {}, True, [1, 2, 3, 4, 5], [[0, 0]], "NN_PAD_BOGUS")
_ODD_DTYPES = ("|O", "<U4", "V8", ">i4", "<c16", "foo", "<f8", "|b1", "<M8[s]", "V0", "<i8")


@functools.lru_cache(maxsize=16)
def _graph_seed(data: bytes) -> Any:
    return json.loads(data)


def _doc_edit(edit: Callable[[Any, random.Random], Any]) -> Mutation:
    def mutate(data: bytes, st: Structure, rng: random.Random) -> bytes:
        doc = copy.deepcopy(_graph_seed(data))
        doc = edit(doc, rng)
        return doc if isinstance(doc, bytes) else json.dumps(doc).encode()

    mutate.__doc__ = edit.__doc__
    return mutate


def _leaves(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _leaves(v, path + (k,))] or [path]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _leaves(v, path + (i,))] or [path]
    return [path]


def _set(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = new
    return doc


def _graph_leaf(doc: Any, rng: random.Random) -> Any:
    """A random leaf (id, shape entry, dtype, scale, ref...) replaced by a value of the wrong kind or size."""
    return _set(doc, rng.choice(_leaves(doc)), rng.choice(_ODD_LEAVES))


def _graph_refs(doc: Any, rng: random.Random) -> Any:
    """A node input ref pointed at a later node, a missing id or output; or two refs swapped."""
    nodes = [n for n in doc.get("nodes", []) if n.get("inputs")]
    if not nodes:
        return doc
    n = rng.choice(nodes)
    k = rng.randrange(len(n["inputs"]))
    other = rng.choice(nodes)
    how = rng.randrange(3)
    if how == 0:
        j = rng.randrange(len(other["inputs"]))
        n["inputs"][k], other["inputs"][j] = other["inputs"][j], n["inputs"][k]
    elif how == 1:
        n["inputs"][k] = [rng.choice([x["id"] for x in doc["nodes"]] + [-1, 1 << 40]), rng.choice((0, 1, 7, -1))]
    else:
        key = rng.choice(("tensor_map", "outputs", "inputs"))
        if key == "tensor_map" and doc.get("tensor_map"):
            name = rng.choice(sorted(doc["tensor_map"]))
            doc["tensor_map"][name] = [rng.choice((-1, 1 << 40, doc["nodes"][-1]["id"])), rng.choice((0, 9))]
        elif doc.get(key):
            rng.choice(doc[key])["refs"] = [rng.choice((-1, 99, 1 << 40))]
    return doc


def _graph_data(doc: Any, rng: random.Random) -> Any:
    """A Const's data: dtype numpy cannot read, shape of the wrong size/rank, its blob cut, invalid or missing
    (version 2: the bytes live in the ``blobs`` table; version 1 inline as ``b64``)."""
    consts = [n for n in doc.get("nodes", []) if "data" in n]
    if not consts:
        return doc
    spec = rng.choice(consts)["data"]
    blobs = doc.get("blobs") if isinstance(doc.get("blobs"), dict) else {}
    key = spec.get("blob")
    holder, field = (blobs, key) if key in blobs else (spec, "b64")
    how = rng.randrange(5)
    if how == 0:
        spec["dtype"] = rng.choice(_ODD_DTYPES)
    elif how == 1:
        spec["shape"] = rng.choice(([1 << 40], [-1], [], [1, 1, 1, 1, 1, 1], [0], [1 << 20, 1 << 20, 1 << 20]))
    elif how == 2 and field in holder:
        holder[field] = holder[field][: rng.randrange(len(holder[field]) + 1)]
    elif how == 3 and field in holder:
        holder[field] = holder[field][:4] + rng.choice(("!!", "====", "\u00e9")) + holder[field][4:]
    else:
        spec["blob"] = rng.choice(("0" * 40, "", 7, None))
    return doc


def _graph_layers(doc: Any, rng: random.Random) -> Any:
    """A source-layer record (version 2) with a field of another type, an unknown field or tag, or the
    imported graph's section damaged."""
    layers = doc.get("source_layers") or []
    if not layers or rng.random() < 0.2:
        if isinstance(doc.get("imported"), dict):
            doc["imported"][rng.choice(("nodes", "tensor_map", "inputs"))] = rng.choice((None, 3, "x", [[]]))
        return doc
    layer = rng.choice(layers)
    how = rng.randrange(4)
    if how == 0:
        layer[rng.choice(sorted(layer))] = rng.choice((None, -1, "x", [1, 2], {"tuple": 5}, {"ref": [1]}))
    elif how == 1:
        layer[rng.choice(("nonsense", "__class__", ""))] = 1
    elif how == 2:
        layer["attrs"] = rng.choice(({"what": 1}, {"dict": {"k": {"set": [1]}}}, {"dict": []}))
    else:
        layer["inputs"] = [rng.choice(({"tensor": {"name": 3}}, {"tensor": {"index": 0}}, {"tensor": []}))]
    return doc


def _graph_shape(doc: Any, rng: random.Random) -> Any:
    """An output def or graph io of another rank / size, or an element type that does not exist."""
    nodes = [n for n in doc.get("nodes", []) if n.get("outputs")]
    if not nodes:
        return doc
    od = rng.choice(rng.choice(nodes)["outputs"])
    if rng.random() < 0.5:
        od["shape"] = rng.choice(([1, 1], [1, 1, 1, 1, 1], [1 << 40, 1, 1, 1], [-1, 1, 1, 1], [0, 0, 0, 0]))
    else:
        od["dtype"] = rng.choice(("quint9", "", "float", "int64", "void", "quint8_d32"))
    return doc


def _graph_nesting(doc: Any, rng: random.Random) -> Any:
    """Nesting deep enough to exhaust the parser's stack, or a number too long to convert."""
    depth = rng.choice((5000, 50000, 200000))
    if rng.random() < 0.5:
        text = json.dumps(doc)
        return text.replace('"meta": {', '"meta": {"deep": ' + "[" * depth + "]" * depth + ", ", 1).encode()
    return json.dumps(doc).replace('"id": ', '"id": ' + "9" * rng.choice((5000, 20000)) + ", \"x\": ", 1).encode()


def _graph_nodes(doc: Any, rng: random.Random) -> Any:
    """Nodes dropped, doubled (duplicate ids) or reordered; a top-level key dropped; the version changed."""
    nodes = doc.get("nodes", [])
    how = rng.randrange(4)
    if how == 0 and nodes:
        del nodes[rng.randrange(len(nodes))]
    elif how == 1 and nodes:
        nodes.insert(rng.randrange(len(nodes) + 1), copy.deepcopy(rng.choice(nodes)))
    elif how == 2 and len(nodes) > 1:
        i, j = rng.sample(range(len(nodes)), 2)
        nodes[i], nodes[j] = nodes[j], nodes[i]
    else:
        key = rng.choice(sorted(doc))
        if key in ("format",):
            doc["version"] = rng.choice((0, 3, "1", None))
        else:
            del doc[key]
    return doc


GRAPH_MUTATIONS: tuple[tuple[str, Mutation], ...] = (
    ("graph_leaf", _doc_edit(_graph_leaf)), ("graph_refs", _doc_edit(_graph_refs)),
    ("graph_data", _doc_edit(_graph_data)), ("graph_shape", _doc_edit(_graph_shape)),
    ("graph_nesting", _doc_edit(_graph_nesting)), ("graph_nodes", _doc_edit(_graph_nodes)),
    ("graph_layers", _doc_edit(_graph_layers)),
)


__all__ = ["GRAPH_MUTATIONS", "ONNX_MUTATIONS"]
