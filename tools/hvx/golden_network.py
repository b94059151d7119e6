"""Record whole networks on the emulated DSP (issue 36): nnlib's own graph API (``hexagon_nn_init``, the append
calls of the project's ``--emit c --no-optimize`` graph - of its prepared graph for a model whose prepare keeps a
conv chain prepare.c would fuse, ``network/net.py`` emits_prepared -, ``hexagon_nn_prepare`` with every op's ``check()``,
``hexagon_nn_execute_new``) built for Hexagon v66 / HVX 128 and run in ``qemu-hexagon`` on real inputs
(``tools/hvx/network``); the engine runs the same inputs and the outputs are compared bit for bit.

    python3 tools/hvx/golden_network.py NNLIB_DIR [--work DIR] [--only NAME ...] [--no-write]

writes ``tests/data/golden/hvx_network/<name>.npz`` (the device's outputs per run; the inputs are made again from
committed data by ``network/inputs.py``, their SHA-256 recorded) and ``provenance.json`` (nnlib commit,
clang / qemu versions, command, per-model figures). The replay test is ``tests/ops/test_hvx_network.py``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "network"))
import hvx_build
import inputs as network_inputs
import localise
import net
import refigure as network_refigure

from hexnn_import import api
from hexnn_import.engine import Engine
from hexnn_import.errors import HexnnError

ROOT = HERE.parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden" / "hvx_network"


def engine_outputs(graph, feeds: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """The engine's OUTPUT-node inputs per run, runs in order on one engine (state carries, as on the device)."""
    eng = Engine(graph)
    return [[np.asarray(a) for a in eng.run(f)[0]] for f in feeds]


def device_arrays(res: dict, like: list[np.ndarray]) -> list[np.ndarray]:
    """The device's output bytes as arrays of the engine output's element type, in the device's 4-d shape."""
    out = []
    for (shape, data), e in zip(res["outputs"], like):
        a = np.frombuffer(data, e.dtype)
        out.append(a.reshape(shape) if a.size == int(np.prod(shape)) else a)
    return out


def compare(dev: list[list[np.ndarray]], eng: list[list[np.ndarray]]) -> dict:
    """Per output: runs equal bit for bit, elements differing, largest difference (codes or float values)."""
    rows = []
    for k in range(len(eng[0])):
        equal, ndiff, maxd = 0, 0, 0.0
        for d, e in zip(dev, eng):
            a, b = d[k].reshape(-1), e[k].reshape(-1)
            if a.size != b.size:
                ndiff += max(a.size, b.size)
                maxd = float("inf")
                continue
            same = a.view(np.uint8).tobytes() == np.ascontiguousarray(b).view(np.uint8).tobytes()
            equal += int(same)
            if not same:
                diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
                ndiff += int((diff > 0).sum() + (np.isnan(a) != np.isnan(b)).sum() if a.dtype.kind == "f" else
                             (diff > 0).sum())
                maxd = max(maxd, float(np.nanmax(diff)) if diff.size else 0.0)
        rows.append({"output": k, "dtype": str(eng[0][k].dtype), "runs_equal": equal, "runs": len(eng),
                     "elements_differing": ndiff, "max_abs_diff": maxd})
    return {"outputs": rows, "all_equal": all(r["runs_equal"] == r["runs"] for r in rows)}


def record(name: str, nnlib: pathlib.Path, work: pathlib.Path, write: bool) -> dict:
    spec = network_inputs.MODELS[name]
    model = ROOT / spec["file"]
    shapes = spec.get("input_shapes")
    graph = api.prepare(api.import_model(str(model), input_shapes=shapes))
    feeds, provenance_inputs = network_inputs.feeds(name, graph)
    eng = engine_outputs(graph, feeds)
    prepared = net.emits_prepared(graph)
    built = net.build(nnlib, work, model, shapes, graph if prepared else None)
    caps = [int(a.nbytes) + 256 for a in eng[0]]
    res, wall, err = net.run(built, feeds, caps)
    bad = [i for i, r in enumerate(res) if r["rc"] != 0]
    if bad:
        raise hvx_build.BuildError(f"{name}: hexagon_nn_execute_new failed on runs {bad}: {err[-2000:]}")
    dev = [device_arrays(r, e) for r, e in zip(res, eng)]
    figures = {"model": spec["file"], "input_shapes": shapes, "emitted": "prepared" if prepared else "imported",
               "nodes_emitted": built.nodes, "nodes_engine": len(graph.nodes),
               "runs": len(feeds), "qemu_seconds": round(wall, 2), "inputs": provenance_inputs,
               "input_sha256": hashlib.sha256(b"".join(a.tobytes() for f in feeds for a in f)).hexdigest(),
               **compare(dev, eng)}
    if write:
        store(name, dev)
    return figures


def store(name: str, dev: list[list[np.ndarray]]) -> None:
    """The device's outputs in ``<name>.npz`` (the inputs are made again from committed data by
    ``network/inputs.py``; ``input_sha256`` pins their bytes)."""
    GOLDEN.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(GOLDEN / f"{name}.npz",
                        **{f"dev_{r}_{k}": a for r, outs in enumerate(dev) for k, a in enumerate(outs)})


def table(prov: dict) -> str:
    """Markdown rows: model, nodes, runs, outputs equal / total, largest difference, qemu seconds, first divergence."""
    div_path = GOLDEN / "divergence.json"
    div = json.loads(div_path.read_text()) if div_path.exists() else {}
    head = ("| model | nodes (emitted) | runs | outputs equal / total | elements differing | max difference | "
            "qemu s (all runs) | first differing node (compared nodes) |")
    rows = [head, "|---|---|---|---|---|---|---|---|"]
    for name, fig in sorted(prov["models"].items()):
        outs = fig["outputs"]
        eq = sum(o["runs_equal"] for o in outs)
        tot = sum(o["runs"] for o in outs)
        nd = sum(o["elements_differing"] for o in outs)
        md = max(o["max_abs_diff"] for o in outs)
        d = div.get(name, {})
        first = d.get("first")
        where = "-" if fig["all_equal"] else (f"{first['op']} {first['id']} ({d['compared']})" if first else "?")
        if first and first.get("engine_op", first["op"]) != first["op"]:
            where += f", engine {first['engine_op']}: prepared differently"
        nodes = f"{fig['nodes_emitted']}" + (" (prepared)" if fig.get("emitted") == "prepared" else "")
        rows.append(f"| {name} | {nodes} | {fig['runs']} | {eq} / {tot} | {nd} | {md:.4g} | "
                    f"{fig['qemu_seconds']} | {where} |")
    for name, why in sorted(prov.get("not_held", {}).items()):
        rows.append(f"| {name} | - | - | not held | - | - | - | {why.splitlines()[0][:160]} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nnlib", type=pathlib.Path)
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/hxnet"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--table", action="store_true", help="only print docs/verification.md's per-model table")
    ap.add_argument("--localise", action="store_true",
                    help="only localise the recorded models that differ (network/localise.py) into divergence.json; "
                         "where the first differing node is one the two prepares make differently, also the first "
                         "difference with every conv chain fused as prepare.c fuses it ('past_prepare')")
    ap.add_argument("--refigure", action="store_true",
                    help="only compare the current engine with the recorded device outputs, without qemu "
                         "(network/refigure.py): provenance.json's per-model figures made again, divergence.json "
                         "entries of models now equal dropped")
    args = ap.parse_args(argv)
    if args.refigure:
        network_refigure.refigure(ROOT, GOLDEN, args.only, network_inputs.feeds, engine_outputs, compare)
        return 0
    prov_path = GOLDEN / "provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.exists() else {"models": {}}
    prov.update({"nnlib_commit": hvx_build.nnlib_commit(args.nnlib), **hvx_build.tool_versions(),
                 "command": "python3 tools/hvx/golden_network.py NNLIB_DIR" + (" --only " + " ".join(args.only)
                                                                              if args.only else ""),
                 "build": "tools/hvx/network/build_lib.py (flags: " + " ".join(net.build_lib.CFLAGS) + ")"})
    if args.table:
        print(table(prov))
        return 0
    if args.localise:
        div_path = GOLDEN / "divergence.json"
        div = json.loads(div_path.read_text()) if div_path.exists() else {}
        for name, fig in sorted(prov["models"].items()):
            if fig["all_equal"] or (args.only and name not in args.only):
                continue
            div[name] = localise.first_divergence(args.nnlib, args.work, name, fig["runs"])
            first = div[name]["first"] or {}
            if "engine_op" in first and first["engine_op"] != first["op"]:
                # the prepares part there (e.g. a chain bias_fit keeps, which prepare.c fuses): look past it
                div[name]["past_prepare"] = localise.first_divergence(args.nnlib, args.work, name, fig["runs"],
                                                                      as_prepare_c=True)
            print(name, json.dumps(div[name]), flush=True)
            div_path.write_text(json.dumps(div, indent=1, sort_keys=True) + "\n")
        return 0
    for name in args.only or list(network_inputs.MODELS):
        try:
            fig = record(name, args.nnlib, args.work, not args.no_write)
        except (hvx_build.BuildError, subprocess.TimeoutExpired, HexnnError, ValueError) as exc:
            print(f"{name}: FAILED {type(exc).__name__}: {str(exc)[:1500]}", flush=True)
            prov.setdefault("not_held", {})[name] = f"{type(exc).__name__}: {str(exc)[:600]}"
            continue
        prov["models"][name] = fig
        prov.get("not_held", {}).pop(name, None)
        print(name, json.dumps({k: fig[k] for k in ("nodes_emitted", "runs", "qemu_seconds", "all_equal")}),
              [(r["runs_equal"], r["elements_differing"], r["max_abs_diff"]) for r in fig["outputs"]], flush=True)
    if not args.no_write:
        prov_path.write_text(json.dumps(prov, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
