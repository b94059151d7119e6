"""Localise a whole-network difference to its node (issue 36): run one input on the emulated DSP with nnlib's own
tensor print on (every node's outputs after it runs, in logical element order, d32 padding left out) and the
engine with every tensor kept, then compare node by node in the engine's order where both graphs hold the node id
(nodes prepare created are numbered differently by nnlib and the project, so only ids both keep are compared).

    python3 tools/hvx/network/localise.py NNLIB_DIR GOLDEN_NAME [--run N] [--work DIR]

prints per compared node: id, op, outputs equal or how many elements differ and by how much; the first differing
node in graph order is where to look.
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import inputs
import net

from hexnn_import import api
from hexnn_import.engine import Engine
from hexnn_import.graph import Ref

ROOT = HERE.parents[2]


def node_table(nnlib: pathlib.Path, work: pathlib.Path, name: str, run: int) -> list[tuple]:
    """``(node id, op, output index, equal, elements differing, max |difference|)`` per compared output."""
    model = ROOT / inputs.MODELS[name]["file"]
    shapes = inputs.MODELS[name].get("input_shapes")
    graph = api.prepare(api.import_model(str(model), input_shapes=shapes))
    feeds, _ = inputs.feeds(name, graph)
    outs, every = Engine(graph).run(feeds[run], mark_all=True)
    built = net.build(nnlib, work, model, shapes)
    dump = work / "dump" / name
    shutil.rmtree(dump, ignore_errors=True)
    dump.mkdir(parents=True)
    net.run(built, [feeds[run]], [int(np.asarray(a).nbytes) + 256 for a in outs], dump=dump / "t")
    rows = []
    for node in graph.nodes:
        if node.is_const:
            continue
        for k in range(len(node.output_defs)):
            f = dump / f"t_{node.node_id:x}_{k}.dat"
            ref = Ref(node.node_id, k)
            if not f.exists() or ref not in every:
                continue
            val = every[ref]
            e = np.ascontiguousarray(val.logical_view() if hasattr(val, "logical_view") else val).reshape(-1)
            d = np.frombuffer(f.read_bytes(), e.dtype) if f.stat().st_size % e.itemsize == 0 else None
            if d is None or d.size != e.size:
                rows.append((node.node_id, node.op, k, False, -1, float("nan")))
                continue
            diff = np.abs(d.astype(np.float64) - e.astype(np.float64))
            rows.append((node.node_id, node.op, k, bool((d.view(np.uint8) == e.view(np.uint8)).all()),
                         int((diff > 0).sum()), float(np.nanmax(diff)) if diff.size else 0.0))
    return rows


def first_divergence(nnlib: pathlib.Path, work: pathlib.Path, name: str, runs: int) -> dict:
    """The first run (in order) with a differing node: that run, the first node (graph order) whose outputs
    differ, every op with a differing output, and how many nodes were compared."""
    for run in range(runs):
        rows = node_table(nnlib, work, name, run)
        bad = [r for r in rows if not r[3]]
        if bad:
            return {"run": run, "compared": len(rows), "first": {"id": hex(bad[0][0]), "op": bad[0][1],
                    "output": bad[0][2], "elements": bad[0][4], "max_abs_diff": bad[0][5]},
                    "ops_differing": sorted({r[1] for r in bad})}
    return {"run": None, "compared": len(rows), "first": None, "ops_differing": []}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nnlib", type=pathlib.Path)
    ap.add_argument("name")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/hxnet"))
    args = ap.parse_args()
    for nid, op, k, eq, nd, md in node_table(args.nnlib, args.work, args.name, args.run):
        print(f"{nid:#x} {op:32s} out{k} " + ("equal" if eq else f"DIFFERS: {nd} elements, max {md:g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
