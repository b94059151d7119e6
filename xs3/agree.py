"""Per-layer agreement of the simulated XS3 kernels with LiteRT, on each layer's LiteRT input.

LiteRT runs the whole model with every tensor preserved; each lowered layer
then runs on the simulated VPU from exactly the input tensor LiteRT gave
that layer, and its output is compared with LiteRT's output tensor
(SEMANTICS §8: >= 99% of outputs exact, none off by more than 1). Metrics
are separate functions (Polygraphy habit).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from hexnn_import.errors import InputDataError
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.lower import LoweringPlan
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions


@dataclass
class LayerAgreement:
    """Counts over all runs of one layer: outputs compared, exactly equal, largest |difference|."""

    name: str
    kernel: str
    total: int = 0
    exact: int = 0
    max_abs_diff: int = 0

    @property
    def exact_fraction(self) -> float:
        return self.exact / self.total if self.total else 1.0

    def add(self, got: np.ndarray, ref: np.ndarray) -> None:
        d = np.abs(got.astype(np.int64) - ref.astype(np.int64))
        self.total += int(d.size)
        self.exact += int(np.count_nonzero(d == 0))
        self.max_abs_diff = max(self.max_abs_diff, int(d.max()) if d.size else 0)

    def as_dict(self) -> dict[str, float | int]:
        return {"exact_fraction": self.exact_fraction, "max_abs_diff": self.max_abs_diff, "compared": self.total}


def random_inputs(plan: LoweringPlan, n: int = 1, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``n`` seeded feeds for the model's inputs: integer codes over the whole range, floats in [-1, 1)."""
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(n):
        feed = {}
        for i in plan.model.inputs:
            t = plan.model.tensors[i]
            if t.dtype in ("int8", "uint8", "int16"):
                info = np.iinfo(np.dtype(t.dtype))
                feed[t.name] = rng.integers(info.min, info.max + 1, size=t.shape, dtype=np.dtype(t.dtype))
            else:
                feed[t.name] = rng.uniform(-1, 1, size=t.shape).astype(np.float32)
        feeds.append(feed)
    return feeds


def smooth_inputs(plan: LoweringPlan, n: int = 1, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``n`` seeded image-like feeds: NHWC integer inputs get smooth random images over the whole code range.

    A coarse 6x6 grid of uniform values, upsampled and with a little noise
    (as ``models/make_mobilenet.py`` calibrates), so that every layer sees
    activations shaped like a real image's rather than white noise. Other
    inputs get :func:`random_inputs`.
    """
    rng = np.random.default_rng(seed)
    feeds = random_inputs(plan, n, seed)
    for feed in feeds:
        for i in plan.model.inputs:
            t = plan.model.tensors[i]
            if len(t.shape) != 4 or t.dtype not in ("int8", "uint8"):
                continue
            b, h, w, c = t.shape
            coarse = rng.uniform(-1, 1, size=(b, 6, 6, c))
            img = np.repeat(np.repeat(coarse, -(-h // 6), axis=1), -(-w // 6), axis=2)[:, :h, :w]
            img = np.clip(img + rng.normal(0, 0.15, size=img.shape), -1, 1)
            info = np.iinfo(np.dtype(t.dtype))
            codes = np.round((img + 1) / 2 * (int(info.max) - int(info.min))) + int(info.min)
            feed[t.name] = codes.astype(np.dtype(t.dtype))
    return feeds


def layer_agreement(plan: LoweringPlan, model_bytes: bytes, feeds: Iterable[Mapping[str, np.ndarray]],
                    options: VPUOptions = DEFAULT_OPTIONS, kernels: str = "builtin") -> dict[str, LayerAgreement]:
    """Agreement of every lowered layer with LiteRT, by layer name, over all ``feeds``.

    LiteRT computes its tensors' shapes itself; a layer whose input or output
    there differs from the shape the file declares (which the kernel was
    lowered for) is an :class:`XS3Error` naming the layer, as is a model
    LiteRT refuses (:class:`hexnn_import.litert_runtime.RuntimeLoadError`).
    """
    from hexnn_import.litert_runtime import RuntimeLoadError, invoke, make_interpreter, runtime_why

    interp = make_interpreter(model_bytes, kernels=kernels, preserve_all_tensors=True, model=plan.label,
                              probe=True)
    try:  # LiteRT decodes names strictly as UTF-8 (the importer replaces what it cannot decode)
        details = {d["name"]: d for d in interp.get_input_details()}
    except ValueError as exc:
        raise RuntimeLoadError(f"LiteRT cannot read the inputs of {plan.label}: {runtime_why(exc)}") from exc
    out = {r.name: LayerAgreement(r.name, r.lowered.kernel) for r in plan.lowered if r.lowered is not None}
    for feed in feeds:
        for name, arr in feed.items():
            if name not in details:
                raise InputDataError(f"input {name!r} is not an input of the model ({sorted(details)})")
            arr = np.asarray(arr)
            want = tuple(int(v) for v in details[name]["shape"])
            if arr.size != int(np.prod(want, dtype=np.int64)):
                raise InputDataError(f"input {name!r}: {arr.size} values given, LiteRT takes shape {list(want)}")
            interp.set_tensor(details[name]["index"], arr.astype(details[name]["dtype"]).reshape(want))
        invoke(interp, plan.label)
        for r in plan.lowered:
            assert r.lowered is not None
            try:
                x = interp.get_tensor(r.layer.x.index)
                ref = interp.get_tensor(r.layer.y.index)
            except ValueError as exc:  # a tensor LiteRT left without data
                raise XS3Error(f"layer {r.name}: LiteRT gives no value for its tensors ({runtime_why(exc)})") from exc
            check_litert_shapes(r.name, r.layer.x.shape, r.layer.y.shape, x, ref)
            out[r.name].add(r.lowered.run(x, options), ref)
    return out


def check_litert_shapes(name: str, x_shape: tuple[int, ...], y_shape: tuple[int, ...], x: np.ndarray,
                        ref: np.ndarray) -> None:
    """XS3Error naming layer ``name`` when LiteRT's input or output tensor is not the declared shape."""
    for what, declared, got in (("input", x_shape, x), ("output", y_shape, ref)):
        if tuple(got.shape) != tuple(declared):
            raise XS3Error(f"layer {name}: LiteRT computes its {what} as {list(got.shape)}, the model declares "
                           f"{list(declared)} (the file's shapes are inconsistent)")


def model_agreement(plan: LoweringPlan, model_path: str | Path, feeds: Iterable[Mapping[str, np.ndarray]] | None = None,
                    options: VPUOptions = DEFAULT_OPTIONS) -> dict[str, LayerAgreement]:
    """:func:`layer_agreement` on a model file, with one seeded random feed by default."""
    data = Path(model_path).read_bytes()
    return layer_agreement(plan, data, feeds if feeds is not None else random_inputs(plan), options)
