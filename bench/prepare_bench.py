"""Prepare is linear in the node count: time hx.prepare on synthetic graphs of ~2k and ~20k nodes.

    python bench/prepare_bench.py [--small 2000] [--large 20000] [--repeat 3] [--limit 12]

The graph is a float-model-style network (what the importers make) of
repeated blocks, each with work for most passes:

    conv -> BiasAdd_32p32to32 -> Requantize_32to8 -> Relu -> Dequantize -> Quantize
    (every 3rd block: a second conv branch, QuantizedConcat_8 of both; every
    4th: RequantizationRange_32 + Requantize_32to8 instead of one Requantize)

so the passes fuse supernodes, bypass Dequantize/Quantize pairs, convert to
d32 (with concats), remove dead nodes and gather Consts. Prints one JSON
line per size (nodes before/after, the best of ``repeat`` runs of the whole
hx.prepare in CPU seconds - the measure least disturbed by other processes -
and in wall seconds; ``--verify`` adds verify() after every pass, as in
tests) and one with the ratio of the CPU times; exits 1 when the large
graph takes more than ``limit`` times as long as the small one (10x the
nodes: linear is ~10x). Each prepare starts with cold CPU caches (a 64 MiB
buffer is written after the graph is built): a just-built 2k-node graph
(~2 MB) would otherwise sit in cache while a 20k-node one (~22 MB) cannot,
which is a property of the machine, not of prepare. Even so the large
graph's data outgrows the caches during the run, which costs it ~10-20% per
node on a 1 MiB-L2 machine.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import hexnn_import as hx
from hexnn_import.graph import Graph, Ref
from hexnn_import.testing.prepare_graphs import QBuilder, q3

SHAPE = (1, 8, 8, 8)
ONE = 2.0 ** 31 * (2.0 / 255.0) * (1.0 / 255.0)


def block(b: QBuilder, x: list[Ref], k: int, w: np.ndarray) -> list[Ref]:
    """One conv -> bias -> requantize -> relu -> dequantize -> quantize block (plus extras by ``k``)."""
    def conv_bias(src: list[Ref]) -> list[Ref]:
        conv = b.conv(src, w, (-0.5, 0.5))
        bias = b.op("QuantizedBiasAdd_32p32to32", [Ref(conv.node_id, 0), b.c(np.full((1, 1, 1, 8), k % 97), np.int32),
                                                   Ref(conv.node_id, 1), Ref(conv.node_id, 2), b.c(-ONE), b.c(ONE)],
                    SHAPE, "qint32")
        if k % 4 == 0:
            rr = b.op("RequantizationRange_32", q3(bias), (1, 1, 1, 1), "float", n_out=2)
            return q3(b.op("Requantize_32to8", [*q3(bias), Ref(rr.node_id, 0), Ref(rr.node_id, 1)], SHAPE))
        return q3(b.op("Requantize_32to8", [*q3(bias), b.c(-4.0), b.c(4.0)], SHAPE))

    y = q3(b.op("QuantizedRelu_8", conv_bias(x), SHAPE, name=f"relu{k}"))
    if k % 3 == 0:
        z = conv_bias(x)
        cat = b.op("QuantizedConcat_8", [b.c(3, np.int32), y[0], z[0], y[1], z[1], y[2], z[2]], (1, 8, 8, 16))
        y = q3(b.op("QuantizedMaxPool_8", [*q3(cat), b.g.shape_ref((1, 1, 1, 2)), b.g.shape_ref((1, 1, 1, 2))],
                    SHAPE, name=f"pool{k}"))
    d = b.op("Dequantize", y, SHAPE, "float", n_out=1)
    return q3(b.op("Quantize", [Ref(d.node_id, 0), b.c(-4.0), b.c(4.0)], SHAPE))


def synthetic(nodes: int) -> Graph:
    """A graph of about ``nodes`` nodes."""
    b = QBuilder()
    w = (128 + np.random.default_rng(0).integers(-9, 10, (3, 3, 8, 8))).astype(np.uint8)
    x = b.input(SHAPE, "float")
    y = q3(b.op("AutoQuantize", x, SHAPE))
    k = 0
    while len(b.g) < nodes - 2:
        y = block(b, y, k, w)
        k += 1
    d = b.op("Dequantize", y, SHAPE, "float", n_out=1)
    b.output([Ref(d.node_id, 0)])
    return b.g


#: Bytes written between building a graph and preparing it: more than the CPU caches hold.
EVICT_BYTES = 64 << 20


def evict_caches(buf: np.ndarray) -> None:
    """Touch every cache line of a buffer larger than the caches, so each prepare starts cold."""
    buf[::8] += 1


def measure(sizes: tuple[int, int], repeat: int, verify: bool) -> list[dict]:
    """Best CPU and wall seconds of hx.prepare per size; the sizes alternate, so both see the same load."""
    rows = [{"nodes": 0, "nodes_after": 0, "cpu_seconds": float("inf"), "wall_seconds": float("inf")} for _ in sizes]
    buf = np.zeros(EVICT_BYTES // 8)
    for _ in range(repeat):
        for row, size in zip(rows, sizes):
            g = synthetic(size)
            row["nodes"] = len(g)
            evict_caches(buf)
            cpu, wall = time.process_time(), time.perf_counter()
            hx.prepare(g, verify=verify)
            row["cpu_seconds"] = min(row["cpu_seconds"], time.process_time() - cpu)
            row["wall_seconds"] = min(row["wall_seconds"], time.perf_counter() - wall)
            row["nodes_after"] = len(g)
    for row in rows:
        row["us_per_node"] = round(row["cpu_seconds"] / row["nodes"] * 1e6, 2)
        row["cpu_seconds"], row["wall_seconds"] = round(row["cpu_seconds"], 4), round(row["wall_seconds"], 4)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=2000)
    ap.add_argument("--large", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--limit", type=float, default=12.0)
    ap.add_argument("--verify", action="store_true", help="verify the graph after every pass (as tests do)")
    args = ap.parse_args()
    small, large = measure((args.small, args.large), args.repeat, args.verify)
    print(json.dumps(small), flush=True)
    print(json.dumps(large), flush=True)
    ratio = large["cpu_seconds"] / small["cpu_seconds"]
    ok = ratio <= args.limit
    print(json.dumps({"ratio": round(ratio, 2), "wall_ratio": round(large["wall_seconds"] / small["wall_seconds"], 2),
                      "node_ratio": round(large["nodes"] / small["nodes"], 2), "limit": args.limit,
                      "verify": args.verify, "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
