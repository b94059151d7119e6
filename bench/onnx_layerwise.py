"""Every QDQ / QOperator ONNX model of models/real and models/real/families layer by layer against onnxruntime.

    python bench/onnx_layerwise.py [--n 3] [--only SUBSTRING] [--json out.json] [--verbose]

Each engine layer runs on onnxruntime's own input for it (teacher forcing,
``hexnn_import.testing.layerwise_onnx``). Inputs: the families' held-out
digits (their manifest's ``data`` npz), crops of scikit-learn's photographs
for models/real (normalized as its manifest says; models whose height and width
are dynamic at the manifest's shape, as ``--input-shape`` would give). Columns:
layers compared / 8-bit activation tensors of the ONNX model, tensors covered,
the share of layers entirely within 1 LSB on every input, the worst layer and
its largest difference in LSBs (steps of the ONNX tensor's scale); for
QOperator files also against onnxruntime running QLinearConv / QLinearMatMul
as their specification's DequantizeLinear -> Conv / MatMul -> QuantizeLinear
(``hexnn_import.testing.onnx_qlinear_exact``: onnxruntime's x86 U8S8 kernel
saturates 16-bit pair sums on CPUs without AVX-VNNI).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hexnn_import.testing.families import FAMILIES
from hexnn_import.testing.layerwise_onnx import forced_layers_onnx
from hexnn_import.testing.real_models import (
    REAL,
    float_inputs,
    load_manifest,
    manifest_shape,
)


def quantized_onnx(entry: dict[str, Any]) -> bool:
    return entry["file"].endswith(".onnx") and str(entry.get("quant")) in ("qdq", "qoperator")


def cases(n: int, folders: tuple[Path, ...] = (REAL,)
          ) -> Iterator[tuple[dict[str, Any], Path, list[dict[str, np.ndarray]], Any]]:
    """(manifest entry, file, feeds, input shapes) for every quantized ONNX model (families, then ``folders``)."""
    for e in load_manifest(FAMILIES) if REAL in folders else []:
        if quantized_onnx(e):
            spec = e["inputs"][0]
            data = np.load(FAMILIES / e["data"])[spec["name"]]
            feeds = [{spec["name"]: data[k:k + 1].astype(np.float32).reshape(spec["shape"])} for k in range(n)]
            yield e, FAMILIES / e["file"], feeds, None
    for folder, e in ((f, e) for f in folders for e in load_manifest(f)):
        if quantized_onnx(e):
            import onnx

            m = onnx.load(str(folder / e["file"]), load_external_data=False)
            inits = {t.name for t in m.graph.initializer}
            name = next(i.name for i in m.graph.input if i.name not in inits)
            dims = m.graph.input[0].type.tensor_type.shape.dim
            shapes = None if all(d.HasField("dim_value") for d in dims) else {name: manifest_shape(e)}
            x = float_inputs(e, n)
            yield e, folder / e["file"], [{name: x[k:k + 1]} for k in range(n)], shapes


def measure(path: Path, feeds: list[dict[str, np.ndarray]], shapes: Any, exact: bool = False) -> dict[str, Any]:
    """Per layer over all inputs: the least within-1 share and the worst difference."""
    worst: dict[str, tuple[str, float, int]] = {}
    skipped: dict[str, str] = {}
    int8 = covered = 0
    how = ""
    for feed in feeds:
        r = forced_layers_onnx(path, feed, shapes, exact_qlinear=exact)
        int8, covered, skipped, how = r.int8_tensors, r.covered, dict(r.skipped), r.reference
        for lay in r.float_layers:
            skipped[lay.name] += f"; worst {lay.worst} LSB"
        for lay in r.layers:
            op, w1, wl = worst.get(lay.name, (lay.op, 1.0, 0))
            worst[lay.name] = (op, min(w1, lay.within1), max(wl, lay.worst))
    ok = sum(1 for _, _, wl in worst.values() if wl <= 1)
    bad = max(worst.items(), key=lambda kv: (kv[1][2], -kv[1][1]), default=("-", ("-", 1.0, 0)))
    return {"layers": len(worst), "int8_tensors": int8, "covered": covered,
            "share_within1": ok / len(worst) if worst else 0.0,
            "worst_layer": bad[0], "worst_op": bad[1][0], "worst_lsb": bad[1][2],
            "past1": {k: v for k, v in worst.items() if v[2] > 1}, "skipped": skipped, "reference": how}


def _spec(row: dict[str, Any]) -> str:
    s = row.get("as_specified")
    return f"{100 * s['share_within1']:.1f}% / {s['worst_lsb']} ({s['reference']})" if s else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=3, help="inputs per model")
    ap.add_argument("--only", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--folder", default=None, help="models of this folder's manifest_*.json instead (photo inputs; "
                    "e.g. the MobileNetV2 twins of bench/make_dynamo_twins.py)")
    ap.add_argument("--verbose", action="store_true", help="list the layers past 1 LSB and the tensors not compared")
    args = ap.parse_args()
    rows = []
    print("| model | MACs | params | layers / int8 tensors | covered | layers within 1 LSB | worst layer (op) | max LSB | exact U8S8: within 1 / max (reference) | s |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for e, path, feeds, shapes in cases(args.n, (Path(args.folder),) if args.folder else (REAL,)):
        if args.only and args.only not in e["file"]:
            continue
        t0 = time.perf_counter()
        row = dict(measure(path, feeds, shapes), file=e["file"], macs=e.get("macs"), params=e.get("params"))
        if e["quant"] == "qoperator":
            spec = measure(path, feeds, shapes, exact=True)
            row["as_specified"] = {k: spec[k] for k in ("share_within1", "worst_lsb", "past1", "reference")}
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(f"| {e['file']} | {row['macs']} | {row['params']} | {row['layers']} / {row['int8_tensors']} | "
              f"{row['covered']} | {100 * row['share_within1']:.1f}% | {row['worst_layer']} ({row['worst_op']}) | "
              f"{row['worst_lsb']} | {_spec(row)} | {row['seconds']} |", flush=True)
        if args.verbose:
            for k, v in row["past1"].items():
                print(f"    past 1 LSB: {k} {v}")
            for k, v in row["skipped"].items():
                print(f"    not compared: {k}: {v}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
