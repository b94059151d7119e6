"""Per-layer agreement of the simulated XS3 kernels with LiteRT on the MobileNetV2-style int8 model.

Every lowered layer runs on the input tensor LiteRT gave it (3 smooth
seeded images and 1 random one) and is compared with LiteRT's output
tensor: percentage of outputs exactly equal and largest difference, with
the default arithmetic (lib_nn's: one rounding final shift, outputs in
[-128, 127]) and with symmetric outputs ([-127, 127], lib_nn's other build
setting). Layers not lowered are listed with their reason.

    python bench/xs3_layers.py [MODEL.tflite]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from hexnn_import.xs3.layer_agreement import layer_agreement, random_inputs, smooth_inputs
from hexnn_import.xs3.lower import lower_model
from hexnn_import.api import import_model
from hexnn_import.model_source import ModelSource
from hexnn_import.xs3.vpu import VPUOptions

MODEL = Path(__file__).resolve().parent.parent / "models" / "mobilenet_v2_int8.tflite"
VARIANTS = {"default": VPUOptions(), "symmetric": VPUOptions(symmetric_output=True)}


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else MODEL
    t0 = time.perf_counter()
    plan = lower_model(import_model(path))
    t_lower = time.perf_counter() - t0
    feeds = smooth_inputs(plan, 3, seed=11) + random_inputs(plan, 1, seed=12)
    source = ModelSource.open(path)
    results, times = {}, {}
    for label, opts in VARIANTS.items():
        t0 = time.perf_counter()
        results[label] = layer_agreement(plan, source, feeds, opts)
        times[label] = time.perf_counter() - t0
    head = f"{'layer':22s} {'kernel':18s} {'outputs':>8s} " + " ".join(f"{k:>18s}" for k in VARIANTS)
    print(f"{path.name}: {len(plan.lowered)} of {len(plan.results)} layers lowered (lowering {t_lower:.2f} s)")
    print(head)
    for name, a in results["default"].items():
        cells = " ".join(f"{100 * results[k][name].exact_fraction:10.2f}% max {results[k][name].max_abs_diff:d}"
                         for k in VARIANTS)
        print(f"{name:22s} {a.kernel:18s} {a.total:8d} {cells}")
    for k in VARIANTS:
        worst = min(results[k].values(), key=lambda a: a.exact_fraction)
        print(f"{k:>18s}: worst layer {worst.name} {100 * worst.exact_fraction:.2f}% exact, "
              f"max diff {max(a.max_abs_diff for a in results[k].values())}, {times[k]:.2f} s for {len(feeds)} inputs")
    print("not lowered:")
    for r in plan.not_lowered:
        print(f"  {r.name:22s} {r.layer.opname:18s} {r.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
