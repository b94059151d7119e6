"""What a compare run is built from: the runners (the tested ones and the references, :mod:`.options`) and the
samples with their labels checked (:mod:`.label_checks`).

The tested runner is always the prepared graph on the Hexagon engine (``--targets`` adds the XS3 path); the
model is resolved once (:class:`~hexnn_import.model_source.ModelSource`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hexnn_import.compare.label_checks import check_labels, check_labels_dtype, classifier_classes
from hexnn_import.compare.options import REFERENCES, TARGETS, CompareOptions
from hexnn_import.compare.runners import CompareRunner, HexagonRunner, LiteRTRunner, OnnxRuntimeRunner
from hexnn_import.datasets import NpzSource, open_source, parse_preprocess
from hexnn_import.datasets.samples import Dataset
from hexnn_import.datasets.sources import RandomSource, Source
from hexnn_import.errors import InputDataError
from hexnn_import.model_source import ModelSource

if TYPE_CHECKING:
    from hexnn_import.graph import Graph


def reference_runner(source: ModelSource, reference: str, per_layer: bool, name: str, threads: int | None = None
                     ) -> CompareRunner:
    """A LiteRT or onnxruntime runner for the model file ``source`` as ``--reference`` asks (onnxruntime with
    ``threads`` intra-op threads, None: its default; LiteRT runs on one)."""
    backend = source.runtime
    if backend is None:
        raise InputDataError(f"{source}: a {source.format} file cannot be a reference; give the .tflite or .onnx "
                             "model")
    if reference not in ("auto", backend):
        raise InputDataError(f"--reference {reference} cannot run {source} (a {source.format} model runs in "
                             f"{backend})")
    if backend == "litert":
        return LiteRTRunner(str(source), per_layer=per_layer, name=name)
    return OnnxRuntimeRunner(str(source), per_layer=per_layer, name=name, threads=threads)


def xs3_runner(graph: Graph, per_layer: bool, model: str) -> HexagonRunner:
    """The XS3 path as a tested runner: the graph as imported (a prepared graph's ``imported`` form), its
    lowerable layers as XS3 nodes (:func:`hexnn_import.xs3.run.lowered_graph`), on the engine."""
    from hexnn_import.xs3.run import lowered_graph

    lowered, _, placements = lowered_graph(graph)
    runner = HexagonRunner(lowered, per_layer=per_layer, name="xs3", model=model)
    runner.backend = f"xs3 ({sum(p.target == 'xs3' for p in placements)} of {len(placements)} layers on lib_nn)"
    return runner


def build_runners(opts: CompareOptions, threads: int | None = None
                  ) -> tuple[HexagonRunner, list[CompareRunner], list[CompareRunner]]:
    """The first tested runner, the references in the order they are judged, and the other tested runners
    (``--targets``: the Hexagon engine first, then the XS3 path); ``threads``: the references' threads.

    MODEL is resolved once (:class:`~hexnn_import.model_source.ModelSource`); a saved graph file compares with
    its source model while that file is at hand and unchanged (:meth:`ModelSource.of_graph`)."""
    from hexnn_import.api import import_model, prepare

    if opts.reference not in REFERENCES:
        raise InputDataError(f"--reference {opts.reference}: expected one of {', '.join(REFERENCES)}")
    if not opts.targets or any(t not in TARGETS for t in opts.targets):
        raise InputDataError(f"--targets: expected some of {', '.join(TARGETS)}")
    model = ModelSource.open(opts.model, opts.input_shapes)
    graph = prepare(import_model(model, calibration=opts.calibration, percentile=opts.percentile,
                                 preprocess=opts.preprocess))
    hexagon = HexagonRunner(graph, per_layer=opts.per_layer, model=opts.model)
    source_model = ModelSource.of_graph(graph) if model.is_graph else model
    source = None
    if source_model is not None:
        source = reference_runner(source_model, opts.reference, opts.per_layer, "source", threads)
    float_ref = None
    if opts.float_model:
        float_ref = reference_runner(ModelSource.open(opts.float_model), opts.reference, opts.per_layer, "float",
                                     threads)
        if float_ref.quantized:
            raise InputDataError(f"--float-model {opts.float_model}: holds quantized tensors, not a float model")
    elif source is not None and not source.quantized:
        source.name, float_ref, source = "float", source, None
    refs = [r for r in (float_ref, source) if r is not None]
    if not refs:
        raise InputDataError(f"{opts.model}: no reference to compare with; give --float-model (a graph file "
                             "compares against its source model only while that file is at its recorded path, "
                             "unchanged)")
    tested: list[HexagonRunner] = []
    for t in opts.targets:
        tested.append(hexagon if t == "hexagon" else xs3_runner(graph, opts.per_layer, opts.model))
    return tested[0], refs, list(tested[1:])


def source_for(opts: CompareOptions, hexagon: HexagonRunner) -> Source:
    """The samples: ``--data`` (an .npz, an image folder, a glob of .npy files, ``generated:N``;
    :func:`hexnn_import.datasets.open_source`) or ``--random N`` (10 random samples when neither is
    given); labels checked against the model's classes (:func:`check_labels`)."""
    if opts.data and opts.random:
        raise InputDataError("give --data or --random, not both")
    if not opts.data:
        if opts.preprocess or opts.labels:
            raise InputDataError("--preprocess and --labels apply to --data")
        return RandomSource(opts.random or 10, opts.seed)
    pre = parse_preprocess(opts.preprocess) if opts.preprocess else None
    source = open_source(opts.data, pre, opts.labels)
    classes = classifier_classes(hexagon.graph)
    if isinstance(source, NpzSource):
        check_labels_dtype(opts.data, classes)
        check_labels(source.dataset(hexagon.inputs), classes)
    elif getattr(source, "labels", None) is not None and classes is not None:
        y = np.asarray(source.labels)  # type: ignore[attr-defined]
        check_labels(Dataset([], y, source.description), classes)
    return source
