"""Calibration of float models: observed ranges of every activation tensor.

A float model first imports with run-time ranges (AutoQuantize,
QuantizeDownAndShrinkRange_32to8: SEMANTICS §2, §4), which runs without any
data. Calibration runs that graph on the user's samples, reads every source
tensor through the import mapping (``graph.tensor_map`` / ``tensor_ranges``),
dequantizes it and keeps its min / max (or a percentile); the model is then
imported again with those ranges fixed, which gives Supernodes with fixed
output ranges instead of per-run range searches.
"""
from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from hexnn_import.errors import InputDataError
from hexnn_import.graph import Graph
from hexnn_import.ops.quant import dequantize_u8

Ranges = dict[str, tuple[float, float]]


def load_samples(data: Mapping[str, np.ndarray], graph: Graph) -> list[dict[str, np.ndarray]]:
    """Split ``{input name: [N, ...] array}`` into N feeds (a single-input model also takes one unnamed array).

    An ``.npz`` whose only array is not named after the input (``arr_0``)
    feeds the single input; ``labels`` is ignored here.
    """
    names = [io.name for io in graph.inputs]
    arrays = {k: np.asarray(v) for k, v in data.items() if k != "labels"}
    if len(names) == 1 and names[0] not in arrays and len(arrays) == 1:
        arrays = {names[0]: next(iter(arrays.values()))}
    missing = [n for n in names if n not in arrays]
    if missing:
        raise InputDataError(f"calibration data has arrays {sorted(arrays)}; the model's inputs {missing} are missing")
    counts = {n: arrays[n].shape[0] if arrays[n].ndim else 0 for n in names}
    if len(set(counts.values())) != 1 or 0 in counts.values():
        raise InputDataError(f"calibration arrays need the same number of samples along axis 0, got {counts}")
    n = next(iter(counts.values()))
    feeds = []
    for i in range(n):
        feed = {}
        for io in graph.inputs:
            x = arrays[io.name][i]
            if int(np.prod(x.shape)) != int(np.prod(io.shape)):
                raise InputDataError(f"calibration sample of '{io.name}' has shape {list(x.shape)}, "
                                     f"the model takes {list(io.shape)} (one sample per row along axis 0)")
            if not np.all(np.isfinite(x.astype(np.float64))):
                raise InputDataError(f"calibration sample {i} of '{io.name}' holds NaN or Inf")
            feed[io.name] = x.reshape(io.shape).astype(np.float32)
        feeds.append(feed)
    return feeds


def observe_ranges(graph: Graph, feeds: list[dict[str, np.ndarray]], percentile: float | None = None,
                   progress: Callable[[int], None] | None = None) -> Ranges:
    """Run ``graph`` (run-time ranges) on every feed; return each mapped tensor's observed (min, max).

    ``percentile`` (e.g. 99.99) keeps that percentile of |values| on each side
    instead of the extreme values, which ignores rare outliers.
    """
    from hexnn_import.runner import Runner

    runner = Runner(graph)
    lo: dict[str, list[float]] = {}
    hi: dict[str, list[float]] = {}
    for k, feed in enumerate(feeds):
        _, every = runner.run_all(feed)
        for name, ref in graph.tensor_map.items():
            arr = every.get(ref)
            if arr is None:
                continue
            real = _real(arr, graph, name, every)
            if real is None or real.size == 0:
                continue
            if percentile is None:
                a, b = float(real.min()), float(real.max())
            else:
                a, b = (float(v) for v in np.percentile(real, [100.0 - percentile, percentile]))
            lo.setdefault(name, []).append(a)
            hi.setdefault(name, []).append(b)
        if progress is not None:
            progress(k + 1)
    return {n: (min(lo[n]), max(hi[n])) for n in lo}


def _real(arr: np.ndarray, graph: Graph, name: str, every: dict) -> np.ndarray | None:
    if arr.dtype == np.float32:
        return arr.astype(np.float64)
    rr = graph.tensor_ranges.get(name)
    if rr is None or arr.dtype != np.uint8:
        return None
    mn_arr, mx_arr = every.get(rr[0]), every.get(rr[1])
    if mn_arr is None or mx_arr is None:  # Const ranges are not in the marked tensors
        mn_arr = graph.node(rr[0].src_id).data if graph.node(rr[0].src_id).is_const else None
        mx_arr = graph.node(rr[1].src_id).data if graph.node(rr[1].src_id).is_const else None
        if mn_arr is None or mx_arr is None:
            return None
    return dequantize_u8(arr, float(np.asarray(mn_arr).reshape(-1)[0]), float(np.asarray(mx_arr).reshape(-1)[0]))
