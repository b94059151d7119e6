"""What a graph file may not hold beyond ``Graph.verify``: checks of a loaded or hand-edited file
(docs/graph_format.md).

Every failure is a GraphError naming the node, input or tensor; :mod:`hexnn_import.serialize` turns it into one
ModelFormatError line naming the file.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from hexnn_import.errors import GraphError
from hexnn_import.graph import ELEMENT_DTYPES, Graph


def check_node_entry(d: Any) -> None:
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


def check_shape(what: str, shape: Any, dtype: str | None, rank: int | None = None) -> None:
    """A shape is a list of non-negative JSON integers (not 1e308, 2.5 or true), ``rank`` long when given,
    whose elements fit in 4 GiB (:data:`MAX_TENSOR_BYTES`)."""
    if (not isinstance(shape, (list, tuple)) or (rank is not None and len(shape) != rank)
            or any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in shape)):
        want = f"{rank} non-negative integers" if rank is not None else "non-negative integers"
        raise GraphError(f"{what}: shape {short(shape)} is not {want}")
    size = ELEMENT_DTYPES[dtype].itemsize if dtype in ELEMENT_DTYPES else _itemsize(dtype)
    if math.prod(shape) * max(size, 1) > MAX_TENSOR_BYTES:
        raise GraphError(f"{what}: shape {short(list(shape))} holds more than 4 GiB")


def _itemsize(dtype: str | None) -> int:
    try:
        return np.dtype(dtype).itemsize if dtype else 1
    except TypeError:
        return 1


def short(value: Any, keep: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= keep else text[:keep - 3] + "..."


#: the largest tensor a graph file may declare (hexagon_nn sizes are 32-bit)
MAX_TENSOR_BYTES = 2 ** 32 - 1


def check_loaded(g: Graph) -> None:
    """What a hand-edited or damaged file can break beyond ``Graph.verify``: output defs (4 non-negative
    dims, a known element type), Const data of its def's type, and the refs of inputs, outputs and tensor maps."""
    outputs = {n.node_id: len(n.output_defs) for n in g.nodes}
    for n in g.nodes:
        for od in n.output_defs:
            if not isinstance(od.dtype, str) or od.dtype not in ELEMENT_DTYPES:
                raise GraphError(f"node {n.label} ({n.op}): unknown element type {short(od.dtype)}")
            check_shape(f"node {n.label} ({n.op}): output", od.shape, od.dtype, rank=4)
        if n.is_const and n.data is not None and n.data.dtype != ELEMENT_DTYPES[n.output_defs[0].dtype]:
            raise GraphError(f"Const node {n.label}: data of dtype {n.data.dtype} under output type "
                             f"{n.output_defs[0].dtype}")
    ins = [n for n in g.nodes if n.op == "INPUT"]
    outs = [n for n in g.nodes if n.op == "OUTPUT"]
    n_in = len(ins[0].output_defs) if ins else 0
    n_out = len(outs[0].inputs) if outs else 0
    for io in g.inputs + g.outputs:
        check_shape(f"graph {'input' if io in g.inputs else 'output'} {io.name}", io.shape, io.dtype)
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


def one_line(text: str) -> str:
    """A message on one line (a damaged file can put newlines in names and values)."""
    return " ".join(text.split())
