"""Long-chain hostile models for the scale findings of issue 38 ([Robust]): N quantized ADDs in a row.

Each ADD adds the running tensor to itself or to the graph input; with ``distinct_ranges`` every ADD's output
scale differs, so no two nodes share their 256x256 tables (op_add.c's scaling depends only on the ranges).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.testing.tflite_builder import TFLiteBuilder


def add_chain_tflite(n_adds: int, *, distinct_ranges: bool = False, shape: tuple[int, ...] = (1, 4, 4, 8)) -> bytes:
    """A uint8 TFLite model: ``x -> ADD(x, prev) -> ... `` n_adds times (one input, one output)."""
    b = TFLiteBuilder("hostile add chain")
    x = b.add_tensor("x", shape, np.uint8, scale=0.05, zero_point=128)
    prev = x
    for i in range(n_adds):
        scale = 0.1 * (1.0 + 1e-4 * i) if distinct_ranges else 0.1
        out = b.add_tensor(f"add{i}", shape, np.uint8, scale=scale, zero_point=128)
        b.add_operator("ADD", [prev, x], [out])
        prev = out
    b.set_io([x], [prev])
    return b.build()
