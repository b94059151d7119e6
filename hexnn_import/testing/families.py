"""The model families of ``models/real/families/`` on their own labelled data (issue [Model families]).

Each maker script (``models/real/make_families_keras.py`` with tensorflow, ``make_families_torch.py`` with
torch, both in a development venv) writes a ``manifest_*.json`` there: one entry per converter-made file with
its family (sequence, transformer, conv1d, int16x8, squeeze_excite, detector, cnn), its inputs, the npz of
its held-out samples (real values, batch axis first, and ``labels``) and its own runtime's accuracy on them.
:func:`evaluate_family` converts a file as a user would (no flags: a float model runs with run-time ranges),
runs the engine and the file's own runtime (LiteRT / onnxruntime, its variable tensors reset before each
sample) on the same samples one at a time, and
returns both accuracies, their top-1 agreement and the output agreement.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from hexnn_import.testing.real_models import REAL, Reference, load_manifest, output_steps, to_model_dtype

FAMILIES = REAL / "families"


def load_families(folder: Path = FAMILIES) -> list[dict[str, Any]]:
    """Every entry of ``manifest_*.json`` in ``folder`` whose file exists, sorted by file name."""
    return load_manifest(folder)


@dataclass
class FamilyFigures:
    """One model on ``n`` labelled samples: accuracies, top-1 agreement, output agreement."""

    file: str
    n: int
    engine_accuracy: float = 0.0
    runtime_accuracy: float = 0.0
    top1_agreement: float = 0.0
    engine_distinct_top1: int = 0
    runtime_distinct_top1: int = 0
    sqnr_db: float = 0.0
    within1: float | None = None  # share of output elements within 1 LSB (quantized outputs)
    worst_lsb: float | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _samples(entry: Mapping[str, Any], folder: Path, n: int | None) -> tuple[dict[str, np.ndarray], np.ndarray]:
    data = np.load(folder / entry["data"])
    labels = np.asarray(data["labels"], dtype=np.int64)
    count = len(labels) if n is None else min(n, len(labels))
    return {i["name"]: np.asarray(data[i["name"]], np.float32)[:count] for i in entry["inputs"]}, labels[:count]


def _sqnr(ref: np.ndarray, got: np.ndarray) -> float:
    noise = float(np.sum((ref - got) ** 2))
    sig = float(np.sum(ref ** 2))
    return float("inf") if noise == 0 else 10.0 * np.log10(max(sig, 1e-30) / noise)


def _code(x: np.ndarray, io: Any) -> np.ndarray:
    xi = to_model_dtype(x, io.dtype, io.scale, io.zero_point)
    return xi.reshape(io.shape) if tuple(xi.shape) != tuple(io.shape) else xi


def _batched(path: Path, feeds: list[dict[str, np.ndarray]], out_name: str) -> np.ndarray | None:
    """The engine on every sample in one batched run, or None where the file fixes its batch. Only for files
    whose ranges are all fixed (quantized), where each sample's result is what a run of that sample alone
    gives unless an op reduces over the batch (the caller checks); much faster than one run a sample."""
    import hexnn_import as hx
    from hexnn_import.errors import HexnnError

    stacked = {k: np.concatenate([f[k] for f in feeds]) for k in feeds[0]}
    try:
        g = hx.prepare(hx.import_model(path, input_shapes={k: v.shape for k, v in stacked.items()}))
        out = hx.Runner(g).run(stacked)[out_name]
    except HexnnError:
        return None
    return np.asarray(out, np.float64).reshape(len(feeds), -1)


def evaluate_family(entry: Mapping[str, Any], n: int | None = None, folder: Path = FAMILIES) -> FamilyFigures:
    """Convert ``entry``'s file with no flags, run the engine and the file's runtime on its first ``n`` samples
    (all when None), and measure (module doc). The first output is the classifier's logits."""
    import hexnn_import as hx

    path = folder / entry["file"]
    graph = hx.prepare(hx.import_model(path))
    x, labels = _samples(entry, folder, n)
    ref = Reference(path)
    ios = {io.name: io for io in graph.inputs}
    out_name = graph.outputs[0].name
    feeds = [{name: _code(x[name][k:k + 1], io) for name, io in ios.items()} for k in range(len(labels))]
    refs = []
    for feed in feeds:
        if not ref.onnx:
            # a keras LSTM converted to UNIDIRECTIONAL_SEQUENCE_LSTM keeps its state in variable tensors
            # between invokes; every model here classifies one sample from a zero state
            ref.interp.reset_all_variables()
        refs.append(np.asarray(ref.run(feed)[out_name], np.float64).reshape(-1))
    runner = hx.Runner(graph)
    one = lambda feed: np.asarray(runner.run(feed)[out_name], np.float64).reshape(-1)  # noqa: E731
    batched = None if entry.get("quant") == "float" else _batched(path, feeds, out_name)
    # a batch gives each sample's own result only where no op mixes the batch (a ReduceMax over every axis,
    # as torch's x.amax() exports, does): the first two samples run alone must agree, else one run a sample
    if batched is not None and all(np.array_equal(batched[k], one(feeds[k])) for k in range(min(2, len(feeds)))):
        ours = list(batched)
    else:
        ours = [one(feed) for feed in feeds]
    o, r = np.stack(ours), np.stack(refs)
    fig = FamilyFigures(entry["file"], len(labels), notes=list(graph.meta.get("notes", [])))
    fig.engine_accuracy = float(np.mean(o.argmax(1) == labels))
    fig.runtime_accuracy = float(np.mean(r.argmax(1) == labels))
    fig.top1_agreement = float(np.mean(o.argmax(1) == r.argmax(1)))
    fig.engine_distinct_top1 = len(set(o.argmax(1).tolist()))
    fig.runtime_distinct_top1 = len(set(r.argmax(1).tolist()))
    fig.sqnr_db = _sqnr(r, o)
    step = 1.0 if str(graph.outputs[0].dtype) in ("int8", "uint8", "int16") else output_steps(path).get(out_name)
    if step:
        d = np.abs(r - o) / step
        fig.within1, fig.worst_lsb = float(np.mean(d <= 1.0 + 1e-3)), float(np.round(d.max(), 2))
    return fig


__all__ = ["FAMILIES", "FamilyFigures", "load_families", "evaluate_family"]
