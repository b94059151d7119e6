"""Node inputs by the op catalog's slot names: ``slot(conv, "in_min")``, not a position in ``conv.inputs``.

Each op's input slots are named in :mod:`hexnn_import.ops.catalog_data` (from hexagon_nn_ops.txt and
hexagon_nn_ops_early.txt; :func:`hexnn_import.ops.catalog.get_spec`): :func:`slot_index` resolves a name
once per op and caches it. Where one site serves several ops whose slot at the same place has different
names (a conv's ``filter`` is a matmul's ``b``), it passes a name-per-op table (:data:`PRODUCT_FILTER`
and its siblings) instead of a position. A name the catalog does not give the op is a GraphError naming
the node, the op and the slot. Variadic ops whose repeated slots come in runs (QuantizedConcat_8: ``dim``,
then n ``data``, n ``in_min``, n ``in_max``; the catalog lists one of each) are read with :func:`part`.
"""
from __future__ import annotations

from typing import Mapping, Union

from hexnn_import.errors import GraphError
from hexnn_import.graph import Node, Ref
from hexnn_import.ops.catalog import get_spec
from hexnn_import.ops.op_groups import FUSED_OPS

#: a slot name, or a table op -> slot name for a site that serves several ops
SlotName = Union[str, Mapping[str, str]]

_INDEX: dict[tuple[str, str], int] = {}


def _per_product(conv: str, matmul: str) -> dict[str, str]:
    """The name of one operand in each product op (:data:`.op_groups.FUSED_OPS`): a conv's or a matmul's."""
    return {op: matmul if op == "QuantizedMatMul_8x8to32" else conv for op in FUSED_OPS}


#: a product's operands by role (QuantizedConv2d / QuantizedDepthwiseConv2d: data, filter, in_min, in_max,
#: filter_min, filter_max; QuantizedMatMul: a, b, a_min, a_max, b_min, b_max)
PRODUCT_DATA = _per_product("data", "a")
PRODUCT_FILTER = _per_product("filter", "b")
PRODUCT_IN_MIN = _per_product("in_min", "a_min")
PRODUCT_IN_MAX = _per_product("in_max", "a_max")
PRODUCT_FILTER_MIN = _per_product("filter_min", "b_min")
PRODUCT_FILTER_MAX = _per_product("filter_max", "b_max")
#: a product's six operands in the order a supernode takes them (data, weights, in_min, in_max, w_min, w_max)
PRODUCT_OPERANDS = (PRODUCT_DATA, PRODUCT_FILTER, PRODUCT_IN_MIN, PRODUCT_IN_MAX, PRODUCT_FILTER_MIN,
                    PRODUCT_FILTER_MAX)
#: the roles of a product's quantized data triple, for :func:`with_slots`
PRODUCT_QTRIPLE = {"data": PRODUCT_DATA, "in_min": PRODUCT_IN_MIN, "in_max": PRODUCT_IN_MAX}

#: the slots of a quantized data triple (a channel scale's or bias add's 0, 2, 3; a requantize's 0, 1, 2)
QTRIPLE = ("data", "in_min", "in_max")

#: variadic ops whose repeated slots come in runs of n, after this many leading single slots
RUNS: dict[str, int] = {"QuantizedConcat_8": 1, "QuantizedConcat_8_d32": 1}


def _names(op: str) -> list[str]:
    spec = get_spec(op)
    return [] if spec is None else [s.name for s in spec.inputs]


def slot_index(op: str, name: SlotName, where: str = "") -> int:
    """Position of ``op``'s input slot ``name`` (a name, or a table op -> name) per the op catalog.

    GraphError naming ``where`` (a node), the op and the slot when the catalog gives the op no such slot."""
    own = name if isinstance(name, str) else name.get(op)
    key = (op, own or "")
    got = _INDEX.get(key)
    if got is not None:
        return got
    names = _names(op)
    if own not in names:
        head = f"node {where} ({op})" if where else f"op {op}"
        raise GraphError(f"{head}: the op catalog names no input slot {own or dict(name)!r} "
                         f"(its slots: {', '.join(names) or 'none'})")
    got = _INDEX[key] = names.index(own)  # type: ignore[arg-type]
    return got


def _at(node: Node, name: SlotName) -> int:
    i = slot_index(node.op, name, node.label)
    if i >= len(node.inputs):
        raise GraphError(f"node {node.label} ({node.op}): input slot {node_slot_name(node, name)!r} "
                         f"(input {i}) is absent: the node has {len(node.inputs)} inputs")
    return i


def node_slot_name(node: Node, name: SlotName) -> str:
    """The slot name ``name`` means for ``node``'s op."""
    return name if isinstance(name, str) else name.get(node.op, "?")


def slot(node: Node, name: SlotName) -> Ref:
    """The Ref ``node`` reads in its input slot ``name`` (GraphError when the slot is absent or unknown)."""
    return node.inputs[_at(node, name)]


def slots(node: Node, *names: SlotName) -> list[Ref]:
    """The Refs of several named slots, in the order given."""
    return [node.inputs[_at(node, n)] for n in names]


def slot_indices(node: Node, *names: SlotName) -> tuple[int, ...]:
    """The positions of several named slots of ``node`` (for the lookups that take positions)."""
    return tuple(_at(node, n) for n in names)


def has_slot(node: Node, name: SlotName) -> bool:
    """True when ``node`` carries its (possibly optional) input slot ``name``."""
    return slot_index(node.op, name, node.label) < len(node.inputs)


def with_slots(node: Node, refs: Mapping[str, Ref], names: Mapping[str, SlotName] | None = None) -> list[Ref]:
    """A copy of ``node``'s inputs with the slots named in ``refs`` replaced (for ``ed.rewire``); ``names``
    maps a key of ``refs`` to a name-per-op table where the key is a role, not the op's own name."""
    out = list(node.inputs)
    for key, ref in refs.items():
        out[_at(node, (names or {}).get(key, key))] = ref
    return out


def run_count(node: Node) -> int:
    """n, the length of each run of repeated slots of a :data:`RUNS` op (0 when the count does not divide)."""
    lead = RUNS[node.op]
    per = len(_names(node.op)) - lead
    rest = len(node.inputs) - lead
    return rest // per if rest % per == 0 else 0


def part_index(node: Node, name: str, k: int) -> int:
    """Position of the ``k``-th ``name`` slot of a :data:`RUNS` op (QuantizedConcat_8's ``in_min`` of input k)."""
    lead = RUNS[node.op]
    return lead + (slot_index(node.op, name, node.label) - lead) * run_count(node) + k


def part(node: Node, name: str, k: int) -> Ref:
    """The Ref in the ``k``-th ``name`` slot of a :data:`RUNS` op."""
    return node.inputs[part_index(node, name, k)]
