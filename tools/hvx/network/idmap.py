"""Match nnlib's prepared graph, as ``driver.c`` lists it on the emulated DSP, to the project's prepared graph
(issue 36), so that ``localise.py`` compares each device tensor with the engine tensor it stands for.

nnlib numbers the nodes its prepare creates downwards from 0xffffffff (``Convert_to_d32``, ``-inf`` / ``+inf``
Consts, ...), the project upwards from past the model's ids; the nodes of the source graph keep their ids in both
(prepare.c and the project give a fused node the id of the chain's last node). So a device node maps to the engine
node of the same id where there is one (same op, or a node the two prepares made differently: the caller says
which), else to the first engine node not yet mapped with the same op reading the same non-Const outputs, as
mapped (Consts are left out of the match: prepare-made Consts carry different ids and no values in the listing).
"""
from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

Key = tuple[str, tuple[tuple[int, int], ...]]


@dataclasses.dataclass(frozen=True)
class DeviceNode:
    """One line of the listing: ``id op padding n_inputs src:idx ... | n_outputs b,h,w,d:size ...``."""

    node_id: int
    op: str
    padding: int
    inputs: tuple[tuple[int, int], ...]
    shapes: tuple[tuple[int, int, int, int], ...]

    @property
    def n_outputs(self) -> int:
        return len(self.shapes)


def parse_line(line: str) -> DeviceNode:
    """One listing line (driver.c ``print_graph``) as a :class:`DeviceNode`."""
    head, tail = line.split("|")
    f = head.split()
    refs = tuple((int(s, 16), int(i)) for s, i in (r.split(":") for r in f[4:4 + int(f[3])]))
    outs = tail.split()[1:]
    shapes = tuple(tuple(int(v) for v in o.split(":")[0].split(",")) for o in outs)
    return DeviceNode(int(f[0], 16), f[1], int(f[2]), refs, shapes)  # type: ignore[arg-type]


def read_listing(path: pathlib.Path) -> list[DeviceNode]:
    """The device's prepared graph in execution order."""
    return [parse_line(s) for s in path.read_text().splitlines() if s.strip()]


def _engine_key(node: Any, const_ids: set[int]) -> Key:
    return node.op, tuple((r.src_id, r.output_idx) for r in node.inputs if r.src_id not in const_ids)


def map_ids(device: list[DeviceNode], graph: Any) -> dict[int, int]:
    """device node id -> engine node id for every device node that has a counterpart (module doc)."""
    engine = {n.node_id: n for n in graph.nodes}
    const_ids = {n.node_id for n in graph.nodes if n.is_const}
    free: dict[Key, list[int]] = {}
    for n in graph.nodes:
        if not n.is_const:
            free.setdefault(_engine_key(n, const_ids), []).append(n.node_id)
    dev_const = {d.node_id for d in device if d.op == "Const"}
    mapping: dict[int, int] = {}
    for d in device:
        if d.node_id in engine and (d.op == "Const") == engine[d.node_id].is_const:
            mapping[d.node_id] = d.node_id
        elif d.op != "Const":
            refs = [(mapping.get(s), i) for s, i in d.inputs if s not in dev_const]
            if any(s is None for s, _ in refs):
                continue
            cands = [c for c in free.get((d.op, tuple(refs)), []) if c not in mapping.values()]  # type: ignore[arg-type]
            if cands:
                mapping[d.node_id] = cands[0]
    return mapping
