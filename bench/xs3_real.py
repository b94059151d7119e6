"""The XS3 lowering of the real keras MobileNetV2 1.0 224 int8 and of its onnxruntime QDQ twin, per layer.

    python bench/xs3_real.py [--photos 4]

For ``models/real/keras_mobilenet_v2_1.0_224_int8.tflite`` (300.8 M MACs,
3.49 M parameters) and the QDQ model onnxruntime's ``quantize_static``
makes of its float twin (``bench/onnx_twin.py``, built in a temporary
folder, calibrated on 8 other photo crops, per-channel, onnxruntime's
defaults: int8 activations and weights): the layers lowered per source op,
the ones left on Hexagon with their reasons, and each lowered layer's
agreement with the source model's own runtime (LiteRT's builtin kernels /
onnxruntime with graph optimizations off) on that runtime's input for the
layer, over ``--photos`` photo crops: the share of outputs exactly equal
and the largest difference. Then the network's arena plan.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "real" / "keras_mobilenet_v2_1.0_224_int8.tflite"
sys.path.insert(0, str(Path(__file__).resolve().parent))


def report(path: Path, feeds: list[dict[str, np.ndarray]], label: str) -> None:
    from hexnn_import.xs3.layer_agreement import layer_agreement
    from hexnn_import.xs3.network_desc import network_desc
    from hexnn_import.xs3.run import lowered_graph
    from hexnn_import.api import import_model
    from hexnn_import.model_source import ModelSource

    t0 = time.perf_counter()
    graph, plan, placements = lowered_graph(import_model(path))
    t_lower = time.perf_counter() - t0
    on = [p for p in placements if p.target == "xs3"]
    print(f"\n{label}: {path.name}: {len(on)} of {len(placements)} layers on XS3 (import + lower {t_lower:.2f} s)")
    print("  lowered per source op:", dict(Counter(p.op for p in on)))
    print("  kernels:", dict(Counter(p.kernel for p in on)))
    for p in placements:
        if p.target != "xs3":
            print(f"  on Hexagon: {p.name} ({p.op}): {p.reason}")
    t0 = time.perf_counter()
    agree = layer_agreement(plan, ModelSource.open(path), feeds)
    t_agree = time.perf_counter() - t0
    by_op: dict[str, list] = {}
    for r in plan.lowered:
        by_op.setdefault(r.layer.opname, []).append(agree[r.name])
    for op, rows in by_op.items():
        worst = min(rows, key=lambda a: a.exact_fraction)
        print(f"  {op:18s} {len(rows):3d} layers: exact {100 * min(a.exact_fraction for a in rows):6.2f}%.."
              f"{100 * max(a.exact_fraction for a in rows):6.2f}%, max diff {max(a.max_abs_diff for a in rows)}"
              f" (worst {worst.name[-40:]})")
    below = [(n, a) for n, a in agree.items() if a.exact_fraction < 0.99 or a.max_abs_diff > 1]
    print(f"  layers below 99% exact or off by more than 1: {len(below)} of {len(agree)} "
          f"({t_agree:.1f} s for {len(feeds)} photos)")
    for n, a in below:
        print(f"    {n[-60:]}: {100 * a.exact_fraction:.2f}% exact, max diff {a.max_abs_diff}")
    net, arena = network_desc(graph, path.stem)
    print(f"  network: {len(net.layers)} XS3 layers, arena {arena.size:,} B, largest live {arena.largest_live:,} B, "
          f"weights and BSO {net.weight_bytes:,} B")


def main(argv: list[str]) -> int:
    from onnx_twin import float_onnx, quantized_onnx
    from speed_real import Int8Model

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--photos", type=int, default=4)
    args = ap.parse_args(argv)
    m = Int8Model(MODEL)
    x = m.float_images(args.photos)
    report(MODEL, [{m.input_name: m.quantize(x[i:i + 1])} for i in range(len(x))], "TFLite (LiteRT)")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        fm = float_onnx(MODEL, dynamic_batch=False)
        qdq = quantized_onnx(fm, m.float_images(8, "calib"), Path(tmp) / "twin_qdq.onnx", "QDQ", explicit_int8=False)
        print(f"\nQDQ twin built in {time.perf_counter() - t0:.1f} s")
        name = fm.graph.input[0].name
        # the twin takes the same photos as floats, NCHW (its input QuantizeLinear quantizes them)
        nchw = np.ascontiguousarray(m.dequantize(m.quantize(x)).transpose(0, 3, 1, 2))
        report(qdq, [{name: nchw[i:i + 1]} for i in range(len(x))], "ONNX QDQ (onnxruntime)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
