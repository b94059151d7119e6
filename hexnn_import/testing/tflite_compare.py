"""Compare one TFLite model in our importer + engine against LiteRT on the same inputs (tests only).

:func:`compare_tflite` feeds random inputs (integer codes over the whole
type range for int8/uint8 inputs, uniform reals for float inputs), runs the
imported graph and LiteRT, and returns per-output agreement:
``within1`` (fraction of elements within 1 LSB), ``worst`` (max difference
in output codes) for quantized outputs, ``sqnr`` (dB) for float outputs.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from hexnn_import.testing.litert import run_litert


@dataclass
class Agreement:
    """Agreement of one output over all runs."""

    name: str
    within1: float = 1.0
    worst: int = 0
    sqnr: float = float("inf")
    diffs: list[np.ndarray] = field(default_factory=list, repr=False)


def random_feed(graph, rng: np.random.Generator, low: float = -1.0, high: float = 1.0) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """One random input per graph input, in the source model's dtype."""
    feed = {}
    for io in graph.inputs:
        if io.dtype in ("int8", "uint8"):
            info = np.iinfo(np.dtype(io.dtype))
            feed[io.name] = rng.integers(info.min, info.max + 1, size=io.shape, dtype=np.dtype(io.dtype))
        else:
            feed[io.name] = rng.uniform(low, high, size=io.shape).astype(np.float32)
    return feed


def compare_tflite(model: bytes, n: int = 4, seed: int = 0, calibration: Mapping[str, np.ndarray] | None = None,
                   feed_fn: Callable[[np.random.Generator], dict[str, np.ndarray]] | None = None,
                   prepare: bool = True) -> dict[str, Agreement]:
    """Import ``model`` (bytes), run it and LiteRT on ``n`` random feeds; agreement per output name."""
    import hexnn_import as hx

    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "model.tflite"
        path.write_bytes(model)
        g = hx.import_model(path, calibration=calibration)
    if prepare:
        g = hx.prepare(g)
    runner = hx.Runner(g)
    result = {io.name: Agreement(io.name) for io in g.outputs}
    refs: dict[str, list[np.ndarray]] = {io.name: [] for io in g.outputs}
    gots: dict[str, list[np.ndarray]] = {io.name: [] for io in g.outputs}
    for _ in range(n):
        feed = feed_fn(rng) if feed_fn is not None else random_feed(g, rng)
        ours = runner.run(feed)
        ref = run_litert(model, feed, as_dict=True)
        for io in g.outputs:
            a, r = np.asarray(ours[io.name]), np.asarray(ref[io.name])
            if a.shape != r.shape or a.dtype != r.dtype:
                raise AssertionError(f"output {io.name}: ours {a.dtype}{list(a.shape)}, LiteRT {r.dtype}{list(r.shape)}")
            gots[io.name].append(a.astype(np.float64).reshape(-1))
            refs[io.name].append(r.astype(np.float64).reshape(-1))
    for io in g.outputs:
        a, r = np.concatenate(gots[io.name]), np.concatenate(refs[io.name])
        res = result[io.name]
        if io.dtype in ("float32",):
            noise = float(np.sum((a - r) ** 2))
            res.sqnr = float("inf") if noise == 0 else 10 * np.log10(max(float(np.sum(r ** 2)), 1e-30) / noise)
        else:
            d = np.abs(a - r)
            res.within1, res.worst = float(np.mean(d <= 1)), int(d.max()) if d.size else 0
            res.diffs = [d]
    return result


def assert_agrees(model: bytes, n: int = 4, seed: int = 0, min_within1: float = 0.99, max_worst: int = 2,
                  **kw) -> dict[str, Agreement]:  # type: ignore[no-untyped-def]
    """:func:`compare_tflite` and assert the issue's bar on every quantized output (>= 99% within 1, none > 2)."""
    res = compare_tflite(model, n=n, seed=seed, **kw)
    for a in res.values():
        assert a.within1 >= min_within1 and a.worst <= max_worst, a
    return res
