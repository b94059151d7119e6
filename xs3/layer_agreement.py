"""Per-layer agreement of the simulated XS3 kernels with LiteRT, on each layer's LiteRT input.

LiteRT runs the whole model with every tensor preserved; each lowered layer
then runs on the simulated VPU from exactly the input tensor LiteRT gave
that layer, and its output is compared with LiteRT's output tensor
(SEMANTICS §8: >= 99% of outputs exact, none off by more than 1). Metrics
are separate functions (Polygraphy habit).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping

import numpy as np

from hexnn_import.errors import InputDataError
from hexnn_import.model_source import ModelSource
from hexnn_import.source_layers import TensorQ
from hexnn_import.xs3.agreement_notes import BAR_DIFF, BAR_EXACT, DEFAULT_KERNEL_OPS, shortfall_note
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
    reference: str = ""  # the runtime kernels compared against (:data:`REFERENCE_NAMES`)
    note: str | None = None  # why the layer misses the bar (:func:`shortfall_note`), None when it meets it

    @property
    def exact_fraction(self) -> float:
        return self.exact / self.total if self.total else 1.0

    def add(self, got: np.ndarray, ref: np.ndarray) -> None:
        got, ref = np.asarray(got).reshape(-1), np.asarray(ref).reshape(-1)
        if got.size != ref.size:
            raise XS3Error(f"layer {self.name}: {got.size} outputs against {ref.size} of the reference")
        d = np.subtract(got, ref, dtype=np.int64)
        np.abs(d, out=d)
        self.total += int(d.size)
        self.exact += int(d.size - np.count_nonzero(d))
        self.max_abs_diff = max(self.max_abs_diff, int(d.max()) if d.size else 0)

    @property
    def meets_bar(self) -> bool:
        """SEMANTICS §8's bar: >= 99% of the outputs exact, none more than 1 code off."""
        return self.exact_fraction >= BAR_EXACT and self.max_abs_diff <= BAR_DIFF

    def as_dict(self) -> dict[str, float | int | str | None]:
        d: dict[str, float | int | str | None] = {"exact_fraction": self.exact_fraction,
                                                  "max_abs_diff": self.max_abs_diff, "compared": self.total}
        if self.reference:
            d["reference_kernels"] = self.reference
        if not self.meets_bar:
            d["agreement_note"] = self.note
        return d


def random_inputs(plan: LoweringPlan, n: int = 1, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``n`` seeded feeds for the model's inputs: integer codes over the whole range, floats in [-1, 1)."""
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(n):
        feed = {}
        for t in plan.graph.inputs:
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
        for t in plan.graph.inputs:
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


def _int8_codes(arr: np.ndarray) -> np.ndarray:
    """A tensor's codes as int8 (uint8 codes XOR 0x80: the same values on the int8 view)."""
    arr = np.asarray(arr)
    return (arr ^ np.uint8(0x80)).view(np.int8) if arr.dtype == np.uint8 else arr.astype(np.int8, copy=False)


#: ``codes(tensor, layer name, runtime tensor name)``: a tensor's int8 codes in one run of the source runtime
Codes = Callable[[TensorQ, str, str], np.ndarray]


def litert_codes(plan: LoweringPlan, model_bytes: bytes, feeds: Iterable[Mapping[str, np.ndarray]],
                  kernels: str) -> Iterator[Codes]:
    """Per feed: a tensor's codes in LiteRT's run of the model (every tensor preserved), by its index."""
    from hexnn_import.litert_runtime import RuntimeLoadError, invoke, make_interpreter, runtime_why

    interp = make_interpreter(model_bytes, kernels=kernels, preserve_all_tensors=True, model=plan.label,
                              probe=True)
    try:  # LiteRT decodes names strictly as UTF-8 (the importer replaces what it cannot decode)
        details = {d["name"]: d for d in interp.get_input_details()}
    except ValueError as exc:
        raise RuntimeLoadError(f"LiteRT cannot read the inputs of {plan.label}: {runtime_why(exc)}") from exc
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

        def codes(t: TensorQ, layer: str, ref: str = "") -> np.ndarray:
            try:
                got = np.asarray(interp.get_tensor(t.index))
            except ValueError as exc:  # a tensor LiteRT left without data
                raise XS3Error(f"layer {layer}: LiteRT gives no value for its tensors ({runtime_why(exc)})") from exc
            if tuple(got.shape) != tuple(t.shape):
                raise XS3Error(f"layer {layer}: LiteRT computes {t.name} as {list(got.shape)}, the model declares "
                               f"{list(t.shape)} (the file's shapes are inconsistent)")
            return _int8_codes(got)
        yield codes


def onnxruntime_codes(plan: LoweringPlan, model_bytes: bytes, feeds: Iterable[Mapping[str, np.ndarray]]
                       ) -> Iterator[Codes]:
    """Per feed: a tensor's codes in onnxruntime's run of the model (every node output marked), by the names
    the importer recorded (``attrs["ref"]``); 4-D tensors moved from NCHW to the graph's NHWC."""
    import onnx
    import onnxruntime as ort

    from hexnn_import.compare.onnx_reference import mark_all_outputs, ort_reference_session
    from hexnn_import.importers.onnx.lift1d import SUFFIX as LIFT_SUFFIX  # here: it imports onnx (0.3-0.9 s)

    from hexnn_import.errors import ModelFormatError
    from hexnn_import.litert_runtime import RuntimeLoadError, ort_quiet_run_options, runtime_why

    try:
        proto = mark_all_outputs(onnx.load_from_string(model_bytes))
    except Exception as exc:  # onnx raises DecodeError and others, with no common base
        raise ModelFormatError(f"{plan.label}: not an ONNX model onnx can read ({runtime_why(exc)})") from exc
    try:
        session = ort_reference_session(ort, proto.SerializeToString(), optimize=False)
    except Exception as exc:  # onnxruntime's own exception types are not importable by a stable path
        raise RuntimeLoadError(f"onnxruntime cannot load {plan.label}: {runtime_why(exc)}") from exc
    fetch = [o.name for o in session.get_outputs()]
    quiet = ort_quiet_run_options(ort)
    for feed in feeds:
        try:
            arrays = session.run(fetch, {k: np.asarray(v) for k, v in feed.items()}, quiet)
        except Exception as exc:  # as above
            raise RuntimeLoadError(f"onnxruntime failed running {plan.label}: {runtime_why(exc)}") from exc
        got = dict(zip(fetch, arrays))
        got.update({k: np.asarray(v) for k, v in feed.items()})

        def codes(t: TensorQ, layer: str, ref: str) -> np.ndarray:
            base = ref[:-len(LIFT_SUFFIX)] if ref.endswith(LIFT_SUFFIX) else None
            if ref not in got and base not in got:
                raise XS3Error(f"layer {layer}: onnxruntime gives no value for {ref}")
            # a 1-D layer's [N, C, L] tensor, imported as [N, C, 1, L] (importers/onnx/lift1d.py)
            arr = np.asarray(got[ref]) if ref in got else np.expand_dims(np.asarray(got[base]), 2)
            if arr.ndim == 4 and len(t.shape) == 4:
                arr = arr.transpose(0, 2, 3, 1)
            if arr.size != int(np.prod(t.shape)):
                raise XS3Error(f"layer {layer}: onnxruntime's {ref} has {arr.size} values, the layer reads "
                               f"{list(t.shape)}")
            return _int8_codes(arr).reshape(t.shape)
        yield codes


def layer_agreement(plan: LoweringPlan, source: ModelSource, feeds: Iterable[Mapping[str, np.ndarray]],
                    options: VPUOptions = DEFAULT_OPTIONS, kernels: str = "builtin",
                    by_layer: bool = True) -> dict[str, LayerAgreement]:
    """Agreement of every lowered layer with the source model's own runtime, by layer name, over all ``feeds``.

    The model file ``source`` runs in its runtime: TFLite in LiteRT (``kernels``: its builtin or reference
    kernels), ONNX in onnxruntime; each lowered layer runs on the
    simulated VPU (its kernel, then a clamp's lookup8) from exactly the input
    codes the runtime gave that layer, and its output is compared with the
    runtime's output codes. With ``by_layer`` (TFLite, builtin kernels) a layer whose op LiteRT runs by default
    on another kernel than its builtin one (:data:`DEFAULT_KERNEL_OPS`: MEAN on XNNPACK) is compared with that kernel,
    in a second LiteRT run; each result names its reference and, below the bar, why
    (:func:`shortfall_note`). A tensor the runtime computes in another shape
    than the one the layer was lowered for is an :class:`XS3Error` naming the
    layer, as is a model the runtime refuses.
    """
    feeds = list(feeds)
    onnx = source.format == "onnx"
    want = {r.name: "onnxruntime" if onnx else
            (DEFAULT_KERNEL_OPS.get(r.layer.opname, kernels) if by_layer and kernels == "builtin" else kernels)
            for r in plan.lowered}
    out = {r.name: LayerAgreement(r.name, r.lowered.kernel, reference=want[r.name])
           for r in plan.lowered if r.lowered is not None}
    model_bytes = source.read_bytes()
    # the runtime loads the model even when no layer lowers: a file it refuses says so first
    for which in dict.fromkeys(want.values()) or ["onnxruntime" if onnx else kernels]:
        _compare([r for r in plan.lowered if want[r.name] == which], out, options,
                 onnxruntime_codes(plan, model_bytes, feeds) if onnx else
                 litert_codes(plan, model_bytes, feeds, which))
    layers = {r.name: r.layer for r in plan.lowered}
    for a in out.values():
        a.note = None if a.meets_bar else shortfall_note(a.kernel, a.reference, layers[a.name].opname,
                                                         layers[a.name].source_op)
    return out


def _compare(results: list, out: dict[str, LayerAgreement], options: VPUOptions,
             runs: Iterator[Codes]) -> None:
    """Each of ``results``' layers on the runtime's input codes of each run, against its output codes."""
    for codes in runs:
        for r in results:
            assert r.lowered is not None
            layer = r.layer
            n = r.lowered.n_inputs
            ref = layer.attrs.get("ref", {})  # ONNX: the tensors that hold the layer's codes
            names = ref.get("inputs", [""] * n)
            xs = [codes(t, r.name, name) for t, name in zip(layer.inputs[:n], names)]
            y = codes(layer.y, r.name, ref.get("output", ""))
            out[r.name].add(r.lowered.run(xs, options), y.reshape(layer.y.shape))
