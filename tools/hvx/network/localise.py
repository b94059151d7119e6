"""Localise a whole-network difference to its node (issue 36): run one input on the emulated DSP with nnlib's own
tensor print on (every node's outputs after it runs, in logical element order, d32 padding left out) and its
prepared graph listed (``driver.c``: id, op, input refs, output shapes per node), and the engine with every tensor
kept, then compare node by node in nnlib's execution order through an id map (:mod:`idmap`): a node both prepared
graphs hold under one id and op, or a node prepare created (numbered differently by nnlib and the project) matched
by op and its mapped inputs. A node both hold under one id but as different ops is where the two prepares part
(e.g. prepare.c fused a conv chain into a Supernode that the project keeps as a chain): its outputs are still
compared (the same tensor of the source graph), and the row says so.

    python3 tools/hvx/network/localise.py NNLIB_DIR GOLDEN_NAME [--run N] [--work DIR] [--fuse-as-prepare-c]

prints per compared output: device id (engine id where it differs), op, equal or how many elements differ and by
how much; the first differing node in nnlib's order is where to look. ``--fuse-as-prepare-c`` runs the engine on
the graph the project's prepare makes when every conv chain fuses as prepare.c fuses it (no bias_fit chain kept:
optimizer/supernodes.py), to look past that deliberate difference.
"""
from __future__ import annotations

import argparse
import contextlib
import pathlib
import shutil
import sys
from typing import Iterator

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import idmap
import inputs
import net

from hexnn_import import api
from hexnn_import.engine import Engine
from hexnn_import.graph import Ref

ROOT = HERE.parents[2]
#: one compared output: device id, engine id, device op, engine op, output index, equal, elements differing, max
Row = tuple[int, int, str, str, int, bool, int, float]


@contextlib.contextmanager
def fused_as_prepare_c(on: bool) -> Iterator[None]:
    """With ``on``: make_supernodes fuses every matching chain as prepare.c does (no chain kept for its bias)."""
    from hexnn_import.optimizer import supernodes
    keep = supernodes.unfused_reason
    if on:
        supernodes.unfused_reason = lambda ed, chain, k_ref, op: None
    try:
        yield
    finally:
        supernodes.unfused_reason = keep


def _compare(dev_file: pathlib.Path, val: object) -> tuple[bool, int, float]:
    e = np.ascontiguousarray(val.logical_view() if hasattr(val, "logical_view") else val).reshape(-1)
    raw = dev_file.read_bytes()
    if len(raw) % e.itemsize or len(raw) // e.itemsize != e.size:
        return False, -1, float("nan")
    d = np.frombuffer(raw, e.dtype)
    diff = np.abs(d.astype(np.float64) - e.astype(np.float64))
    return (bool((d.view(np.uint8) == e.view(np.uint8)).all()), int((diff > 0).sum()),
            float(np.nanmax(diff)) if diff.size else 0.0)


def node_table(nnlib: pathlib.Path, work: pathlib.Path, name: str, run: int, as_prepare_c: bool = False) -> list[Row]:
    """One row per compared output, in nnlib's execution order."""
    model = ROOT / inputs.MODELS[name]["file"]
    shapes = inputs.MODELS[name].get("input_shapes")
    with fused_as_prepare_c(as_prepare_c):
        graph = api.prepare(api.import_model(str(model), input_shapes=shapes))
    feeds, _ = inputs.feeds(name, graph)
    outs, every = Engine(graph).run(feeds[run], mark_all=True)
    built = net.build(nnlib, work, model, shapes, graph if net.emits_prepared(graph) else None)
    dump = work / "dump" / name
    shutil.rmtree(dump, ignore_errors=True)
    dump.mkdir(parents=True)
    net.run(built, [feeds[run]], [int(np.asarray(a).nbytes) + 256 for a in outs], dump=dump / "t")
    device = idmap.read_listing(dump / "t_graph.txt")
    mapping = idmap.map_ids(device, graph)
    eng_ops = {n.node_id: n.op for n in graph.nodes}
    rows: list[Row] = []
    for dnode in device:
        eid = mapping.get(dnode.node_id)
        if eid is None:
            continue
        for k in range(dnode.n_outputs):
            f = dump / f"t_{dnode.node_id:x}_{k}.dat"
            if not f.exists() or Ref(eid, k) not in every:
                continue
            rows.append((dnode.node_id, eid, dnode.op, eng_ops[eid], k, *_compare(f, every[Ref(eid, k)])))
    return rows


def first_divergence(nnlib: pathlib.Path, work: pathlib.Path, name: str, runs: int,
                     as_prepare_c: bool = False) -> dict:
    """The first run (in order) with a differing node: that run, the first node (nnlib's order) whose outputs
    differ (its device and engine op where the prepares part), every op with a differing output, and how many
    outputs were compared."""
    rows: list[Row] = []
    for run in range(runs):
        rows = node_table(nnlib, work, name, run, as_prepare_c)
        bad = [r for r in rows if not r[5]]
        if bad:
            did, eid, dop, eop, k, _, nd, md = bad[0]
            first = {"id": hex(did), "op": dop, "output": k, "elements": nd, "max_abs_diff": md}
            if eop != dop or eid != did:
                first.update({"engine_id": hex(eid), "engine_op": eop})
            return {"run": run, "compared": len(rows), "first": first, "ops_differing": sorted({r[2] for r in bad})}
    return {"run": None, "compared": len(rows), "first": None, "ops_differing": []}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nnlib", type=pathlib.Path)
    ap.add_argument("name")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/hxnet"))
    ap.add_argument("--fuse-as-prepare-c", action="store_true",
                    help="engine graph with every conv chain fused as prepare.c fuses it (module doc)")
    args = ap.parse_args()
    for did, eid, dop, eop, k, eq, nd, md in node_table(args.nnlib, args.work, args.name, args.run,
                                                         args.fuse_as_prepare_c):
        where = f"{did:#x}" + ("" if eid == did else f" (engine {eid:#x})")
        ops = dop if dop == eop else f"{dop} (engine {eop})"
        print(f"{where:24s} {ops:40s} out{k} " + ("equal" if eq else f"DIFFERS: {nd} elements, max {md:g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
