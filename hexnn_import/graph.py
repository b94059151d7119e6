"""The hexagon_nn IR: Graph, Node, input refs, output defs (docs/architecture.md, "The IR").

Mirrors hexagon_nn's node list as the prepare notes describe it
(hexagon_nn_prepare_notes.txt, "The following invariants must be
maintained"): an ordered list of nodes, each with a unique ``node_id``, an
``op`` from the catalog, a padding (NN_PAD_*), input refs ``(src_id,
output_idx)`` that point only to earlier nodes, and ``output_defs``. ``Const``
nodes carry their numpy data. The find_node hash (``id -> node``) and the
consumer index (the noderefhash idea: ``src_id -> ids of nodes reading it``)
are kept consistent by the methods here; :meth:`Graph.verify` checks all of it.
"""
from __future__ import annotations

import copy
import dataclasses
import enum
import math
from dataclasses import dataclass, field
from typing import Iterable, Iterator, NamedTuple

import numpy as np

from hexnn_import.errors import GraphError
from hexnn_import.graph_memory import CHECK_EVERY, check_growing
from hexnn_import.source_layers import LayerInfo


class NNPad(enum.IntEnum):
    """Padding enum of hexagon_nn's nn_graph_types.h."""

    NA = 0
    SAME = 1
    VALID = 2
    MIRROR_REFLECT = 3
    MIRROR_SYMMETRIC = 4
    SAME_CAFFE = 5


class Ref(NamedTuple):
    """An input ref: output ``output_idx`` of node ``src_id``."""

    src_id: int
    output_idx: int


#: element type -> numpy dtype, for Const data and output defs.
ELEMENT_DTYPES: dict[str, np.dtype] = {
    "quint8": np.dtype(np.uint8), "uint8": np.dtype(np.uint8), "int8": np.dtype(np.int8),
    "qint32": np.dtype(np.int32), "int32": np.dtype(np.int32), "float": np.dtype(np.float32),
    "qint16": np.dtype(np.int16), "int16": np.dtype(np.int16), "quint16": np.dtype(np.uint16),
    "int64": np.dtype(np.int64),
    # d32 layout (SEMANTICS §7): the value is a hexnn_import.ops.d32.D32Tensor of uint8 elements
    "quint8_d32": np.dtype(np.uint8),
    "quint16_d32": np.dtype(np.uint16),  # the 16-bit d32 layout (prepare.c's Convert_to_d32_16b)
    # zero-length elements: a Const that only initialises a Variable (op text of Variable)
    "void": np.dtype("V0"),
}


def element_type_of(arr: np.ndarray) -> str:
    """Element type name of a numpy array (the inverse of ELEMENT_DTYPES)."""
    for name in ("float", "uint8", "int32", "int16", "quint16", "int8", "int64", "void"):
        if arr.dtype == ELEMENT_DTYPES[name]:
            return name
    raise GraphError(f"no element type for numpy dtype {arr.dtype}")


def shape4(shape: Iterable[int]) -> tuple[int, int, int, int]:
    """Left-pad a shape of rank <= 4 with 1s to ``[b, h, w, d]``."""
    s = tuple(int(v) for v in shape)
    if len(s) > 4:
        raise GraphError(f"shape {s} has rank {len(s)} > 4")
    return (1,) * (4 - len(s)) + s


@dataclass(frozen=True, slots=True)
class OutputDef:
    """Output descriptor: max shape as 4-D ``[b, h, w, d]`` and element type.

    Immutable (a pass replaces a node's output def, it never edits one), so graphs and their clones share
    them (memory, issue 38: a 100,000-node graph keeps its records small).
    """

    shape: tuple[int, int, int, int]
    dtype: str

    @staticmethod
    def scalar() -> "OutputDef":
        """A float scalar ``[1,1,1,1]`` (hexagon_nn's Output_ScalarFloat)."""
        return OutputDef((1, 1, 1, 1), "float")


@dataclass(eq=False, slots=True)
class Node:
    """One node of the list. ``name`` is the source-model name used in messages (slots: no per-node dict)."""

    node_id: int
    op: str
    inputs: list[Ref] = field(default_factory=list)
    output_defs: list[OutputDef] = field(default_factory=list)
    padding: NNPad = NNPad.NA
    name: str = ""
    data: np.ndarray | None = None  # Const only

    @property
    def label(self) -> str:
        """``name`` if set, else ``#id`` - what error messages call the node."""
        return self.name or f"#{self.node_id}"

    @property
    def is_const(self) -> bool:
        return self.op == "Const"


@dataclass
class GraphIO:
    """A graph input or output as the source model names it.

    ``dtype`` is the source model's element type (``int8``, ``uint8``,
    ``float32``...), ``shape`` its shape (any rank); ``scale``/``zero_point``
    its quantization when quantized. For inputs, ``index`` is the INPUT node's
    output slot; for outputs, ``refs`` are the OUTPUT node's input positions:
    one (float/int data) or three (quint8 data, min, max). The runners of
    :mod:`hexnn_import.compare` and the samples of :mod:`hexnn_import.datasets`
    describe any model's inputs this way (a reference model's with ``index``
    and ``refs`` at their defaults).
    """

    name: str
    shape: tuple[int, ...]
    dtype: str
    scale: float | None = None
    zero_point: int | None = None
    index: int = 0
    refs: tuple[int, ...] = ()

    @property
    def quantized(self) -> bool:
        return self.scale is not None


class Graph:
    """Ordered node list with the find_node hash and the consumer index."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self._by_id: dict[int, Node] = {}
        # src_id -> {consumer id: ref count}, or the one consumer's id when a single node reads it once
        self._consumers: dict[int, int | dict[int, int]] = {}
        self.inputs: list[GraphIO] = []
        self.outputs: list[GraphIO] = []
        self.tensor_map: dict[str, Ref] = {}  # source tensor name -> graph ref (per-layer compare)
        # source tensor name -> (min ref, max ref) for quantized tensors in tensor_map
        self.tensor_ranges: dict[str, tuple[Ref, Ref]] = {}
        self.meta: dict[str, object] = {}
        #: the source model's quantized layers as the importer read them (model order); graph files keep them
        self.source_layers: list[LayerInfo] = []
        #: True once the prepare passes ran on this graph (:func:`hexnn_import.api.prepare`)
        self.prepared = False
        #: the graph as the importer made it, before prepare: what the XS3 lowering replaces layers of (the
        #: tensors ``source_layers`` name); kept by ``prepare`` when there are source layers, and in graph files
        self.imported: Graph | None = None
        self._next_id = 0x1000

    def clone(self) -> "Graph":
        """An independent copy: its node list, nodes, tables and meta can be edited without touching this graph.
        Const arrays are shared as read-only views (a pass replaces a Const, it never writes into one)."""
        g = Graph()
        for n in self.nodes:
            data = None
            if n.data is not None:
                data = n.data.view()
                data.flags.writeable = False
            # output defs are immutable: shared (memory, issue 38)
            g._insert(len(g.nodes), Node(n.node_id, n.op, list(n.inputs), list(n.output_defs), n.padding, n.name,
                                         data))
        g.inputs = [dataclasses.replace(io) for io in self.inputs]
        g.outputs = [dataclasses.replace(io) for io in self.outputs]
        g.tensor_map = dict(self.tensor_map)
        g.tensor_ranges = dict(self.tensor_ranges)
        g.meta = copy.deepcopy(self.meta)
        g.source_layers = list(self.source_layers)
        g.prepared = self.prepared
        g._next_id = self._next_id
        return g

    # ---- ids and lookup -------------------------------------------------
    def new_id(self) -> int:
        """A fresh node id (nn_graph_new_internal_node_id)."""
        while self._next_id in self._by_id:
            self._next_id += 1
        nid = self._next_id
        self._next_id += 1
        return nid

    def find_node(self, node_id: int) -> Node | None:
        """The node with this id, or None (find_node)."""
        return self._by_id.get(node_id)

    def node(self, node_id: int) -> Node:
        """The node with this id; GraphError if absent."""
        n = self._by_id.get(node_id)
        if n is None:
            raise GraphError(f"no node with id {node_id}")
        return n

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    # ---- building -------------------------------------------------------
    def append(self, op: str, inputs: Iterable[Ref | tuple[int, int]] = (), output_defs: Iterable[OutputDef] = (),
               padding: NNPad = NNPad.NA, name: str = "", node_id: int | None = None) -> Node:
        """Append an op node (hexagon_nn_append_node); refs must point to earlier nodes."""
        nid = self.new_id() if node_id is None else node_id
        if nid in self._by_id:
            raise GraphError(f"node id {nid} already in the graph")
        refs = [Ref(int(s), int(i)) for s, i in inputs]
        for r in refs:
            src = self._by_id.get(r.src_id)
            if src is None:
                raise GraphError(f"node {name or nid} ({op}): input ref {r} names no earlier node")
            if not 0 <= r.output_idx < len(src.output_defs):
                raise GraphError(f"node {name or nid} ({op}): input ref {r} names no output of {src.op}")
        node = Node(nid, op, refs, list(output_defs), NNPad(padding), name)
        self._insert(len(self.nodes), node)
        return node

    def add_const(self, data: np.ndarray, name: str = "", node_id: int | None = None) -> Node:
        """Append a Const node holding ``data`` (shape left-padded to 4-D)."""
        arr = np.ascontiguousarray(data)
        arr = arr.reshape(shape4(arr.shape))
        nid = self.new_id() if node_id is None else node_id
        if nid in self._by_id:
            raise GraphError(f"node id {nid} already in the graph")
        node = Node(nid, "Const", [], [OutputDef(arr.shape, element_type_of(arr))], NNPad.NA, name, arr)
        self._insert(len(self.nodes), node)
        return node

    def const_ref(self, data: np.ndarray | float, name: str = "") -> Ref:
        """Append a Const and return its ref; Python floats become float32 scalars."""
        if isinstance(data, (float, int)) and not isinstance(data, bool):
            data = np.full((1, 1, 1, 1), data, dtype=np.float32 if isinstance(data, float) else np.int32)
        return Ref(self.add_const(np.asarray(data), name).node_id, 0)

    def shape_ref(self, shape: Iterable[int], name: str = "") -> Ref:
        """A 'shape tensor' Const: only its shape is read (stride, window)."""
        return self.const_ref(np.zeros(shape4(shape), dtype=np.uint8), name)

    def _insert(self, pos: int, node: Node) -> None:
        self.nodes.insert(pos, node)
        self._by_id[node.node_id] = node
        self._index_inputs(node)
        if not len(self._by_id) % CHECK_EVERY:  # the records of a growing graph, within the memory budget
            check_growing(len(self._by_id))

    def remove(self, node: Node) -> None:
        """Remove a node from the list, the hash and the consumer index."""
        self.nodes.remove(node)
        del self._by_id[node.node_id]
        self._unindex_inputs(node)
        self._consumers.pop(node.node_id, None)

    def set_inputs(self, node: Node, refs: Iterable[Ref | tuple[int, int]]) -> None:
        """Replace a node's input refs keeping the consumer index (node_rehash_inputrefs)."""
        self._unindex_inputs(node)
        node.inputs = [Ref(int(s), int(i)) for s, i in refs]
        self._index_inputs(node)

    def _index_inputs(self, node: Node) -> None:
        """Count ``node`` as a reader of each of its input refs' sources (a source read once by one node
        holds that node's id alone, not a dict: memory, issue 38)."""
        table, nid = self._consumers, node.node_id
        for r in node.inputs:
            cons = table.get(r.src_id)
            if cons is None:
                table[r.src_id] = nid
            elif type(cons) is not dict:
                table[r.src_id] = {nid: 2} if cons == nid else {cons: 1, nid: 1}
            else:
                cons[nid] = cons.get(nid, 0) + 1

    def _unindex_inputs(self, node: Node) -> None:
        table, nid = self._consumers, node.node_id
        for r in node.inputs:
            cons = table.get(r.src_id)
            if cons is None:
                continue
            if type(cons) is not dict:
                if cons == nid:
                    del table[r.src_id]
            elif nid in cons:
                cons[nid] -= 1
                if cons[nid] <= 0:
                    del cons[nid]
                    if not cons:
                        del table[r.src_id]

    def _readers(self, src_id: int) -> "dict[int, int]":
        """``{consumer id: ref count}`` of ``src_id`` (a copy when the index holds a single id)."""
        cons = self._consumers.get(src_id)
        if cons is None:
            return {}
        return cons if type(cons) is dict else {cons: 1}

    def consumers(self, src_id: int) -> list[Node]:
        """Nodes that read any output of ``src_id``, in list order of discovery."""
        return [self._by_id[c] for c in self._readers(src_id)]

    def is_referenced(self, node_id: int) -> bool:
        """True while some indexed node still reads an output of ``node_id``."""
        return node_id in self._consumers

    # ---- index-only edits (the optimizer batches list changes; optimizer/editor.py)
    def index_node(self, node: Node) -> None:
        """Enter a node in the id hash and the consumer index without placing it in the list."""
        if node.node_id in self._by_id:
            raise GraphError(f"node id {node.node_id} already in the graph ({self._by_id[node.node_id].op})")
        self._by_id[node.node_id] = node
        self._index_inputs(node)
        if not len(self._by_id) % CHECK_EVERY:
            check_growing(len(self._by_id))

    def unindex_node(self, node: Node) -> None:
        """Drop a node from the id hash and its input refs from the consumer index; the list is left alone.

        Refs *to* the node stay indexed: a replacement node may take over its id.
        """
        if self._by_id.get(node.node_id) is node:
            del self._by_id[node.node_id]
        self._unindex_inputs(node)

    # ---- invariants -----------------------------------------------------
    def verify(self) -> None:
        """Check the invariants of the prepare notes; GraphError names the first break.

        (a) every input ref names an output of an earlier node; (b) ids are
        unique; (c) the id hash holds exactly the nodes of the list; (d) the
        consumer index matches the input refs. Also: Const nodes carry data
        matching their output def, op nodes name an op in the catalog and have
        as many inputs and outputs as its entry allows (:func:`_check_counts`), of the
        element types its slots name (:func:`_check_types`).
        """
        from hexnn_import.ops.catalog import get_spec

        seen: dict[int, Node] = {}
        expected: dict[int, dict[int, int]] = {}
        for node in self.nodes:
            if node.node_id in seen:
                raise GraphError(f"node id {node.node_id} appears twice ({seen[node.node_id].op}, {node.op})")
            spec = get_spec(node.op)
            if spec is None:
                raise GraphError(f"node {node.label}: op {node.op} is not in the op catalog")
            for r in node.inputs:
                src = seen.get(r.src_id)
                if src is None:
                    raise GraphError(f"node {node.label} ({node.op}): input {tuple(r)} does not name an earlier node")
                if not 0 <= r.output_idx < len(src.output_defs):
                    raise GraphError(f"node {node.label} ({node.op}): input {tuple(r)} names no output of {src.op}")
                cons = expected.setdefault(r.src_id, {})
                cons[node.node_id] = cons.get(node.node_id, 0) + 1
            if node.is_const:
                if node.data is None or tuple(node.data.shape) != tuple(node.output_defs[0].shape):
                    raise GraphError(f"Const node {node.label}: data does not match its output def")
            else:
                _check_counts(node, spec)
                _check_types(node, spec, seen)
                _check_shapes(node, spec, seen)
            seen[node.node_id] = node
        if set(seen) != set(self._by_id) or any(self._by_id[k] is not v for k, v in seen.items()):
            raise GraphError("find_node hash does not hold exactly the nodes of the list")
        actual = {k: self._readers(k) for k in self._consumers}
        if actual != expected:
            raise GraphError("consumer index is inconsistent with the input refs")

    # ---- summaries --------------------------------------------------------
    def op_counts(self) -> dict[str, int]:
        """Node count per op, sorted by op name."""
        counts: dict[str, int] = {}
        for n in self.nodes:
            counts[n.op] = counts.get(n.op, 0) + 1
        return dict(sorted(counts.items()))

    def const_bytes(self) -> int:
        """Total bytes held by Const nodes."""
        return sum(int(n.data.nbytes) for n in self.nodes if n.is_const and n.data is not None)


def _check_counts(node: Node, spec: object) -> None:
    """GraphError when ``node`` has fewer or more inputs / outputs than its catalog entry allows
    (``OpSpec.min_inputs .. max_inputs``, ``max`` None for "n"), so a pass cannot build a node that
    only fails when run."""
    for what, have, lo, hi in (("inputs", len(node.inputs), spec.min_inputs, spec.max_inputs),  # type: ignore[attr-defined]
                               ("outputs", len(node.output_defs), spec.min_outputs, spec.max_outputs)):  # type: ignore[attr-defined]
        if have < lo or (hi is not None and have > hi):
            want = f"{lo}" if lo == hi else f"{lo} to {'n' if hi is None else hi}"
            raise GraphError(f"node {node.label} ({node.op}): {have} {what}, the op takes {want}")


def _is_range_slot(name: str) -> bool:
    """A catalog slot holding one end of a range (``in_min``, ``bias_max``, ``out_min`` ...)."""
    return name in ("min", "max") or name.endswith(("_min", "_max"))


def _check_shapes(node: Node, spec: object, seen: dict[int, Node]) -> None:
    """GraphError when an output of ``node`` is not 4-D (hexagon_nn's ``[b, h, w, d]``, the one rank every
    tensor has) or a range slot of its catalog entry (``*_min`` / ``*_max``) reads more than one value."""
    for i, od in enumerate(node.output_defs):
        if len(od.shape) != 4:
            raise GraphError(f"node {node.label} ({node.op}): output {i} has shape {list(od.shape)}, not 4-D")
    if spec.max_inputs is None:  # type: ignore[attr-defined]
        return
    for i, (r, slot) in enumerate(zip(node.inputs, spec.inputs)):  # type: ignore[attr-defined]
        if _is_range_slot(slot.name):
            shape = seen[r.src_id].output_defs[r.output_idx].shape
            if math.prod(shape) != 1:
                raise GraphError(f"node {node.label} ({node.op}): input {i} ({slot.name}) has shape {list(shape)}, "
                                 f"the op reads one value there")


#: element types by storage: the importers tag constant codes "uint8" / "int32" where the op documents say
#: "quint8" / "qint32" (the same bytes; the range travels on separate inputs)
_STORAGE = {"uint8": "u8", "quint8": "u8", "int32": "i32", "qint32": "i32", "int16": "i16", "qint16": "i16",
            "quint16": "u16", "float": "f32", "quint8_d32": "u8d32",
            "quint16_d32": "u16d32"}


#: (op, input element types, output element types) that passed :func:`_check_types` (a 10,000-node chain checks a
#: handful of distinct ones; issue 38)
_TYPES_OK: set[tuple[str, tuple[str, ...], tuple[str, ...]]] = set()


def _check_types(node: Node, spec: object, seen: dict[int, Node]) -> None:
    """GraphError when an input or output of ``node`` has an element type its catalog slot does not allow
    (compared by storage, :data:`_STORAGE`; slots of "any" / "shape", and the inputs / outputs of ops
    that take or give "n" of them, are not checked)."""
    key = (node.op, tuple(seen[r.src_id].output_defs[r.output_idx].dtype for r in node.inputs),
           tuple(od.dtype for od in node.output_defs))
    if key in _TYPES_OK:  # the check depends on the op's catalog entry and these types only
        return
    slots_in, slots_out = spec.inputs, spec.outputs  # type: ignore[attr-defined]
    pairs = [] if spec.max_inputs is None else [  # type: ignore[attr-defined]
        (f"input {i} ({slot.name})", seen[r.src_id].output_defs[r.output_idx].dtype, slot)
        for i, (r, slot) in enumerate(zip(node.inputs, slots_in))]
    if spec.max_outputs is not None and spec.min_outputs == spec.max_outputs:  # type: ignore[attr-defined]
        pairs += [(f"output {i} ({slot.name})", od.dtype, slot)
                  for i, (od, slot) in enumerate(zip(node.output_defs, slots_out))]
    for what, dtype, slot in pairs:
        if any(t not in _STORAGE for t in slot.types):
            continue
        if _STORAGE.get(dtype) not in {_STORAGE[t] for t in slot.types}:
            raise GraphError(f"node {node.label} ({node.op}): {what} is {dtype}, the op takes "
                             f"{' or '.join(slot.types)}")
    _TYPES_OK.add(key)
