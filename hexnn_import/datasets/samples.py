"""Samples in real units: read from DATA.npz, drawn at random, and fed to a runner in its own input types.

Samples are held as real values (float64) in the tested model's input shapes
so that each runner can receive them in its own input type
(:func:`feed_for`): quantized inputs get ``clamp(round_half_away(x / scale)
+ zero_point)`` (TFLite QUANTIZE), float inputs get float32. An npz array
of the input's own integer type holds codes, which are dequantized with the
tested model's input scale first (and quantize back to the same codes).
A model's inputs are described by :class:`hexnn_import.graph.GraphIO` (name, shape, dtype, quantization).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from hexnn_import.errors import InputDataError
from hexnn_import.graph import GraphIO
from hexnn_import.memory import NPZ_READ_ERRORS, check_array_file, check_bytes
from hexnn_import.ops.quant import round_away

_INT_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535)}


@dataclass
class Dataset:
    """N samples ``{input name: real array}`` and optional integer class labels."""

    samples: list[dict[str, np.ndarray]]
    labels: np.ndarray | None
    source: str


def _to_real(arr: np.ndarray, spec: GraphIO) -> np.ndarray:
    if spec.scale is not None and arr.dtype == np.dtype(spec.dtype):
        return (arr.astype(np.float64) - float(spec.zero_point or 0)) * spec.scale
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise InputDataError(f"input '{spec.name}': data of dtype {arr.dtype} is not numeric")
    return arr.astype(np.float64)


def _labels(raw: np.ndarray, n: int) -> np.ndarray:
    y = np.asarray(raw)
    if y.ndim == 2 and y.shape[0] == n and y.shape[1] > 1:  # one-hot
        y = np.argmax(y, axis=1)
    y = y.reshape(-1) if y.size == n else y
    if y.shape != (n,) or not np.all(np.isfinite(y.astype(np.float64))) or np.any(y != np.round(y)):
        raise InputDataError(f"'labels' must hold {n} integer class labels (or one-hot rows), "
                             f"got shape {list(raw.shape)}")
    return y.astype(np.int64)


def load_dataset(path: "str | os.PathLike", inputs: Sequence[GraphIO]) -> Dataset:
    """Read DATA.npz: N samples along axis 0 keyed by input name (one unnamed array for a single input)."""
    p = Path(path)
    if p.is_file():  # headers first: the budget and the inputs' shapes, before any array is read
        check_array_file(p, {s.name: tuple(s.shape) for s in inputs}, role="samples")
    try:
        loaded = np.load(p, allow_pickle=False)
        if isinstance(loaded, np.ndarray):  # a .npy: one unnamed array, for a single-input model
            arrays = {"arr_0": loaded}
        else:
            with loaded as z:
                arrays = {k: z[k] for k in z.files}
    except FileNotFoundError as exc:
        raise InputDataError(f"{p}: no such file") from exc
    except NPZ_READ_ERRORS as exc:  # a bad CRC shows on reading
        raise InputDataError(f"{p}: not a readable .npz file ({exc})") from exc
    labels = arrays.pop("labels", None)
    names = [s.name for s in inputs]
    if len(names) == 1 and names[0] not in arrays and len(arrays) == 1:
        arrays = {names[0]: next(iter(arrays.values()))}
    missing = [n for n in names if n not in arrays]
    if missing:
        raise InputDataError(f"{p}: has arrays {sorted(arrays)}; the model's inputs {missing} are missing")
    counts = {n: int(arrays[n].shape[0]) if arrays[n].ndim else 0 for n in names}
    if len(set(counts.values())) != 1 or 0 in counts.values():
        raise InputDataError(f"{p}: inputs need the same number (> 0) of samples along axis 0, got {counts}")
    n = next(iter(counts.values()))
    # the samples are held in real units (float64): up to 8x the bytes of uint8 data
    check_bytes(sum(int(arrays[k].size) for k in names) * 8, f"{p}: {n} samples as float64")
    samples = [{spec.name: real_sample(arrays[spec.name][i], spec, f"{p}: sample {i} of '{spec.name}'",
                                       " (one sample per row along axis 0)") for spec in inputs} for i in range(n)]
    return Dataset(samples, None if labels is None else _labels(labels, n), str(p))


def real_sample(x: np.ndarray, spec: GraphIO, where: str, hint: str = "") -> np.ndarray:
    """One sample of input ``spec`` in real units and its shape (codes of the input's own integer type are
    dequantized); InputDataError naming ``where`` when its size or values do not fit."""
    if x.size != int(np.prod(spec.shape)):
        raise InputDataError(f"{where} has shape {list(x.shape)}, the model takes {list(spec.shape)}{hint}")
    real = _to_real(x, spec).reshape(spec.shape)
    if not np.all(np.isfinite(real)):
        raise InputDataError(f"{where} holds NaN or Inf")
    return real


def random_dataset(n: int, inputs: Sequence[GraphIO], seed: int = 0) -> Dataset:
    """``n`` seeded random samples: every code of a quantized input equally likely, floats uniform in [-1, 1)."""
    if n <= 0:
        raise InputDataError(f"--random {n}: expected a positive number of samples")
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(n):
        sample = {}
        for spec in inputs:
            if spec.scale is not None and spec.dtype in _INT_RANGES:
                lo, hi = _INT_RANGES[spec.dtype]
                codes = rng.integers(lo, hi + 1, size=spec.shape)
                sample[spec.name] = (codes - float(spec.zero_point or 0)) * spec.scale
            else:
                sample[spec.name] = rng.uniform(-1.0, 1.0, size=spec.shape)
        samples.append(sample)
    return Dataset(samples, None, f"random {n} (seed {seed})")


def feed_for(inputs: Sequence[GraphIO], sample: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The sample in a runner's input types; a single input is matched by position if the names differ."""
    if len(inputs) == 1 and len(sample) == 1 and inputs[0].name not in sample:
        sample = {inputs[0].name: next(iter(sample.values()))}
    feed = {}
    for spec in inputs:
        if spec.name not in sample:
            raise InputDataError(f"input '{spec.name}' of a reference model is not an input of the tested model "
                                 f"({sorted(sample)})")
        real = np.asarray(sample[spec.name], dtype=np.float64)
        if all(d > 0 for d in spec.shape) and real.size == int(np.prod(spec.shape)):
            real = real.reshape(spec.shape)
        if spec.scale is not None and spec.dtype in _INT_RANGES:
            lo, hi = _INT_RANGES[spec.dtype]
            codes = np.clip(round_away(real / spec.scale) + (spec.zero_point or 0), lo, hi)
            feed[spec.name] = codes.astype(np.dtype(spec.dtype))
        else:
            feed[spec.name] = real.astype(np.dtype(spec.dtype))
    return feed
