"""Speed of DepthwiseSupernode_8x8p32to8_d32 on the 3x3 kernels with and without the output padding columns
(ops/kernels/dwise_pad_columns.py, issue 36).

    python bench/dwise_3x3_speed.py [--runs 20]

One 1x112x112x96 3x3 SAME stride-1 node on four random inputs, an auto output range and a fixed one, timed
interleaved with the padding-column path and without it (``pad_columns_plan`` replaced by one returning None,
the engine before issue 36); prints the minimum and median ms per run after a first run. A fixed range never
takes the path (the range cannot move); an auto range pays for the padding columns' sums and, where they lie
outside a channel's extremes, one pass over the sums.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.kernels import dwise_scaled
from hexnn_import.ops.registry import run_op


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    w = rng.integers(0, 256, (3, 3, 96, 1), dtype=np.uint8)
    bias = rng.integers(-1000, 1000, (1, 1, 1, 96)).astype(np.int32)
    xs = [to_d32(rng.integers(0, 256, (1, 112, 112, 96), dtype=np.uint8)) for _ in range(4)]

    def s(v: float) -> np.ndarray:
        return np.array(v, np.float32).reshape(1, 1, 1, 1)

    paths = {"with padding columns": dwise_scaled.pad_columns_plan, "without": lambda *a: None}
    times: dict[tuple[str, str], list[float]] = {}
    states: dict[tuple[str, str], dict] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(args.runs + 1):
            for label, plan in paths.items():
                dwise_scaled.pad_columns_plan = plan
                for mode, (lo, hi) in (("auto", (-np.inf, np.inf)), ("fixed", (-8.0, 8.0))):
                    ins = [xs[k % 4], w, s(-1), s(1), s(-0.5), s(0.7), np.zeros((1, 1, 1, 1), np.int32), bias,
                           s(-100), s(100), s(lo), s(hi)]
                    t0 = time.perf_counter()
                    run_op("DepthwiseSupernode_8x8p32to8_d32", ins, padding=1,
                           state=states.setdefault((label, mode), {}))
                    if k:
                        times.setdefault((mode, label), []).append(time.perf_counter() - t0)
    dwise_scaled.pad_columns_plan = paths["with padding columns"]
    for (mode, label), t in sorted(times.items()):
        print(f"{mode:5s} range, {label:20s}: min {min(t) * 1e3:.1f} ms, median {np.median(t) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
