"""The three-target report and the XS3 memory plan of the bundled MobileNetV2 (the README's XS3 figures).

    python bench/xs3_report.py [--images 50]

1. ``hexnn-import compare models/mobilenet_v2_int8.tflite --float-model
   models/mobilenet_v2_float.tflite --data DIGITS.npz --targets hexagon,xs3 --per-layer``
   on the first ``--images`` held-out digits (``models/make_mobilenet.py``'s
   ``held_out``: 8x8 digits upsampled to 96x96x3, with their labels), written
   to a temporary .npz: per layer, the SQNR of the Hexagon engine, the XS3 path
   and LiteRT's int8 run against the float model, and each target's largest
   difference from LiteRT's int8 run, in LSB; per output the same with top-1
   agreement, and each runner's accuracy on the labels.
2. ``hexnn-import xs3-export`` of the same model to a temporary folder: the
   layers lowered, the tensor arena, the largest live set and the weight bytes.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "mobilenet_v2_int8.tflite"
FLOAT = ROOT / "models" / "mobilenet_v2_float.tflite"


def digits_npz(path: Path, n: int) -> None:
    """The first ``n`` held-out digits at 96x96x3 in [-1, 1] with their labels, as compare --data reads them."""
    sys.path.insert(0, str(ROOT / "models"))
    from make_mobilenet import held_out  # noqa: E402 - the bundled model's own preprocessing

    x, y = held_out(96)
    np.savez(path, input=x[:n], labels=y[:n])


def main(argv: list[str]) -> int:
    from hexnn_import.compare import CompareOptions, compare
    from hexnn_import.compare.report import print_report
    from hexnn_import.xs3.export import build_export, manifest_lines
    from hexnn_import.api import import_model
    from hexnn_import.model_source import ModelSource

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=50)
    args = ap.parse_args(argv)
    out = Console(width=200)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "digits.npz"
        digits_npz(data, args.images)
        t0 = time.perf_counter()
        result = compare(CompareOptions(str(MODEL), str(data), float_model=str(FLOAT), per_layer=True,
                                        targets=("hexagon", "xs3")), Console(stderr=True))
        print_report(result, out)
        out.print(f"compare: {time.perf_counter() - t0:.1f} s for {args.images} images", highlight=False)
    manifest, _ = build_export(ModelSource.open(MODEL), import_model(MODEL))
    for line in manifest_lines(manifest)[-3:]:
        print(line)
    net = manifest["network"]
    print(f"arena {net['arena_bytes']} B, largest live set {net['largest_live_bytes']} B, weights and BSO "
          f"{net['weight_bytes']} B, {net['layers']} XS3 layers, {net['tensors']} tensors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
