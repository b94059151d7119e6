"""``hexnn-import compare``: choose the runners, run them over the samples, report.

The tested runner is always the prepared graph on the Hexagon engine. The
references (issue [Compare]):

* ``float``: the float model in its own runtime - ``--float-model`` when
  given, else the source model itself when it is a float model;
* ``source``: a quantized source model in its own runtime (LiteRT /
  onnxruntime), the check of bit-faithfulness.

The first reference is the one ``--min-sqnr`` and the per-layer flags judge.
``--reference auto`` picks LiteRT for .tflite files and onnxruntime for
.onnx files; naming one insists on it.
"""
from __future__ import annotations

import os
import sys
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np
from numpy.lib import format as npformat

from rich.console import Console

from hexnn_import.compare.comparator import CompareResult
from hexnn_import.compare.data import Dataset
from hexnn_import.compare.degenerate import looks_like_class_scores
from hexnn_import.compare.runners import CompareRunner, HexagonRunner, LiteRTRunner, OnnxRuntimeRunner
from hexnn_import.errors import InputDataError
from hexnn_import.model_source import ModelSource

if TYPE_CHECKING:
    from hexnn_import.datasets.sources import Source
    from hexnn_import.graph import Graph

REFERENCES = ("auto", "onnxruntime", "litert")
#: what ``--targets`` may name: the Hexagon engine (the prepared graph) and the XS3 path (lib_nn kernels)
TARGETS = ("hexagon", "xs3")


@dataclass
class CompareOptions:
    """The command's options, as the CLI passes them."""

    model: str
    data: str | None = None
    random: int | None = None
    reference: str = "auto"
    float_model: str | None = None
    per_layer: bool = False
    report: str | None = None
    json_out: str | None = None
    min_sqnr: float | None = None
    calibration: str | None = None
    percentile: float | None = None
    input_shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    seed: int = 0
    targets: tuple[str, ...] = ("hexagon",)
    #: issue [Scale]: ``--preprocess`` (images), ``--labels`` (a file of labels), ``--limit`` (the first N
    #: samples), ``--jobs`` (local worker processes), ``--scheduler`` (a Dask scheduler's address),
    #: ``--results`` (the checkpoint folder) and ``--resume``
    preprocess: str | None = None
    labels: str | None = None
    limit: int | None = None
    jobs: int = 1
    scheduler: str | None = None
    results: str | None = None
    resume: bool = False


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


def parse_targets(text: str) -> tuple[str, ...]:
    """``--targets hexagon,xs3`` as a tuple; InputDataError naming the valid targets otherwise."""
    targets = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in targets if t not in TARGETS]
    if bad or not targets or len(set(targets)) != len(targets):
        raise InputDataError(f"--targets {text}: expected a comma-separated list of {', '.join(TARGETS)}")
    return targets


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
    from hexnn_import.datasets import NpzSource, open_source, parse_preprocess
    from hexnn_import.datasets.sources import RandomSource

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


def classifier_classes(graph: Graph) -> tuple[str, int] | None:
    """``(output name, number of classes)`` of the output accuracy is measured on - the first that looks like
    class scores (:func:`looks_like_class_scores`), as the comparator picks it - or None when there is none."""
    for gio in graph.outputs:
        if looks_like_class_scores(gio.name, gio.shape):
            return gio.name, int(gio.shape[-1])
    return None


def _class_range(classes: tuple[str, int] | None) -> str:
    if classes is None:
        return "integer class indices"
    return f"integer class indices in [0, {classes[1] - 1}] (output '{classes[0]}' has {classes[1]} classes)"


def check_labels_dtype(path: "str | os.PathLike", classes: tuple[str, int] | None) -> None:
    """InputDataError when DATA.npz's ``labels`` are not numbers (strings, objects, dates), read from the
    array's header alone (numpy ``lib/format.py``) before any sample is loaded."""
    try:
        with zipfile.ZipFile(path) as zf, zf.open("labels.npy") as member:
            version = npformat.read_magic(member)
            read = npformat.read_array_header_1_0 if version == (1, 0) else npformat.read_array_header_2_0
            dtype = np.dtype(read(member)[2])
    except (KeyError, OSError, ValueError, EOFError, TypeError, zipfile.BadZipFile, zlib.error):
        return  # no labels, or not an npz: load_dataset says what is wrong in its own words
    if dtype.kind not in "biuf":
        raise InputDataError(f"{path}: 'labels' has dtype {dtype}; expected {_class_range(classes)}")


def check_labels(dataset: Dataset, classes: tuple[str, int] | None) -> None:
    """InputDataError naming the valid range when a label is not a class of the model's classifier output
    (accuracy against such labels would be a meaningless 0%)."""
    if dataset.labels is None or classes is None:
        return
    y = np.asarray(dataset.labels)
    bad = np.flatnonzero((y < 0) | (y >= classes[1]))
    if bad.size:
        i = int(bad[0])
        raise InputDataError(f"{dataset.source}: label {int(y[i])} of sample {i} ({bad.size} of {y.size} labels "
                             f"outside); 'labels' must hold {_class_range(classes)}")


def compare(opts: CompareOptions, err: Console | None = None) -> CompareResult:
    """Build the runners, run the samples in shards (here, on ``--jobs`` worker processes or a Dask cluster,
    :mod:`.parallel`) with their progress on ``err`` (a bar on a terminal, a line every 10 s when piped:
    :mod:`.progress`), checkpoint them in ``--results`` (``--resume`` says how many it reused), and merge them
    (:mod:`.merge`)."""
    from hexnn_import.cli_support import refuse_overwriting_inputs
    from hexnn_import.compare import shards
    from hexnn_import.compare.checkpoint import ResultsFolder
    from hexnn_import.compare.merge import Merger
    from hexnn_import.compare.parallel import run_dask, run_local
    from hexnn_import.compare.progress import progress_for, resumed_line
    from hexnn_import.memory import explicit_budget

    if opts.limit is not None and opts.limit < 1:
        raise InputDataError(f"--limit {opts.limit}: expected a positive number of samples")
    if opts.jobs < 1:
        raise InputDataError(f"--jobs {opts.jobs}: expected a positive number of worker processes")
    if opts.resume and not opts.results:
        raise InputDataError("--resume continues the run in a --results folder: give --results DIR")
    built = build_runners(opts, threads=1)
    hexagon, refs = built[0], built[1]
    # a graph file's source model is read too, though the command line does not name it
    refuse_overwriting_inputs({f"{r.name} model": r.model for r in refs},
                              {"--report": opts.report, "--json": None if opts.json_out == "-" else opts.json_out})
    source = source_for(opts, hexagon)
    total = min(len(source), opts.limit or len(source))
    if total < 1:
        raise InputDataError(f"{source.description}: no samples")
    job = shards.Job(opts, source, total, keep_outputs=bool(opts.results), max_memory=explicit_budget())
    here = not opts.scheduler and (opts.jobs == 1 or job.n_shards == 1)
    if here:
        shards.keep_runners(job, built)  # this process's shards reuse them
    del built, hexagon, refs  # workers build their own: this process keeps only the merge's numbers
    folder = ResultsFolder(opts.results, job, opts.resume) if opts.results else None
    merger = Merger()
    finished = folder.done() if folder else []
    for i in finished:  # a resumed run: the checkpointed shards, one at a time
        merger.add(i, folder.load(i))  # type: ignore[union-attr]
    todo = [i for i in range(job.n_shards) if i not in set(finished)]
    err = err or Console(stderr=True)
    if opts.resume:
        err.print(resumed_line(str(opts.results), len(finished), job.n_shards, merger.samples, total),
                  markup=False, highlight=False, soft_wrap=True)
    with progress_for(err, total, job.n_shards, merger.samples, len(finished)) as progress:

        def on_done(index: int, result: CompareResult) -> None:
            if folder is not None:
                folder.save(index, result)
            result.outputs = {}
            merger.add(index, result)
            progress.advance(result.samples)

        if opts.scheduler:
            run_dask(job, todo, opts.scheduler, on_done)
        else:
            run_local(job, todo, opts.jobs, on_done)
    return merger.result(source.description, source.classes)


def write_outputs(result: CompareResult, opts: CompareOptions) -> list[str]:
    """Write ``--json`` and ``--report``: both rendered first, then written whole or not at all
    (:func:`hexnn_import.emit.files.write_files`); the paths written."""
    import json

    from hexnn_import.compare.report import to_json
    from hexnn_import.compare.report_html import html_report
    from hexnn_import.emit.files import write_files

    files: list[tuple[Path, bytes]] = []
    if opts.json_out and opts.json_out != "-":
        files.append((Path(opts.json_out), (json.dumps(to_json(result, opts.min_sqnr), indent=1) + "\n").encode()))
    if opts.report:
        files.append((Path(opts.report), html_report(result, opts.min_sqnr).encode("utf-8")))
    write_files(files)
    return [str(p) for p, _ in files]


def default_paths_ok(opts: CompareOptions) -> None:
    """Fail early (before the runs) when an output folder does not exist."""
    for p in (opts.json_out, opts.report):
        if p and p != "-":
            folder = Path(p).parent if str(Path(p).parent) else Path(".")
            if not folder.is_dir():
                raise InputDataError(f"cannot write {p}: folder {folder} does not exist")
            if Path(p).is_dir():
                raise InputDataError(f"cannot write {p}: is a directory")


def run_cli(opts: CompareOptions) -> int:
    """The command: report on stdout (tables, or JSON with ``--json -``), files, then the exit code.

    0 when every output reaches ``--min-sqnr`` (or none was given), 1 with
    one line on stderr when one does not.
    """
    import json

    from hexnn_import.compare.report import passed, print_report, to_json

    default_paths_ok(opts)
    out, err = Console(), Console(stderr=True)
    if not out.is_terminal and "COLUMNS" not in os.environ:  # piped: wide enough for the tables
        out = Console(width=150)
    result = compare(opts, err)
    if opts.json_out == "-":
        print(json.dumps(to_json(result, opts.min_sqnr), indent=1))
    else:
        print_report(result, out, opts.min_sqnr)
    for path in write_outputs(result, opts):
        (err if opts.json_out == "-" else out).print(f"wrote {path}", highlight=False, markup=False)
    ok, why = passed(result, opts.min_sqnr)
    if not ok:
        print(f"compare failed: {why}", file=sys.stderr)  # one line, never wrapped
        return 1
    return 0
