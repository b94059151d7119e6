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

import math
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
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from hexnn_import.compare.comparator import CompareResult, run_comparison
from hexnn_import.compare.data import Dataset, load_dataset, random_dataset
from hexnn_import.compare.runners import CompareRunner, HexagonRunner, LiteRTRunner, OnnxRuntimeRunner
from hexnn_import.errors import InputDataError

if TYPE_CHECKING:
    from hexnn_import.graph import Graph

REFERENCES = ("auto", "onnxruntime", "litert")
#: what ``--targets`` may name: the Hexagon engine (the prepared graph) and the XS3 path (lib_nn kernels)
TARGETS = ("hexagon", "xs3")
_BACKEND_OF = {"tflite": "litert", "onnx": "onnxruntime"}


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


def reference_runner(path: str, reference: str, per_layer: bool, name: str) -> CompareRunner:
    """A LiteRT or onnxruntime runner for ``path`` as ``--reference`` asks."""
    from hexnn_import.api import detect_format

    fmt = detect_format(path)
    backend = _BACKEND_OF.get(fmt)
    if backend is None:
        raise InputDataError(f"{path}: a {fmt} file cannot be a reference; give the .tflite or .onnx model")
    if reference not in ("auto", backend):
        raise InputDataError(f"--reference {reference} cannot run {path} (a {fmt} model runs in {backend})")
    cls = LiteRTRunner if backend == "litert" else OnnxRuntimeRunner
    return cls(path, per_layer=per_layer, name=name)


def parse_targets(text: str) -> tuple[str, ...]:
    """``--targets hexagon,xs3`` as a tuple; InputDataError naming the valid targets otherwise."""
    targets = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in targets if t not in TARGETS]
    if bad or not targets or len(set(targets)) != len(targets):
        raise InputDataError(f"--targets {text}: expected a comma-separated list of {', '.join(TARGETS)}")
    return targets


def xs3_runner(opts: CompareOptions, per_layer: bool) -> HexagonRunner:
    """The XS3 path as a tested runner: the model imported (not prepared), its lowerable layers as XS3
    nodes (:func:`hexnn_import.xs3.run.lowered_graph`), on the engine."""
    from hexnn_import.api import detect_format
    from hexnn_import.xs3.run import lowered_graph

    if detect_format(opts.model) == "graph":
        raise InputDataError(f"{opts.model}: --targets xs3 lowers a model file (.tflite or .onnx), not a saved graph")
    graph, _, placements = lowered_graph(opts.model, input_shapes=opts.input_shapes)
    runner = HexagonRunner(graph, per_layer=per_layer, name="xs3", model=opts.model)
    runner.backend = f"xs3 ({sum(p.target == 'xs3' for p in placements)} of {len(placements)} layers on lib_nn)"
    return runner


def build_runners(opts: CompareOptions) -> tuple[HexagonRunner, list[CompareRunner], list[CompareRunner]]:
    """The first tested runner, the references in the order they are judged, and the other tested runners
    (``--targets``: the Hexagon engine first, then the XS3 path)."""
    from hexnn_import.api import detect_format, import_model, prepare

    if opts.reference not in REFERENCES:
        raise InputDataError(f"--reference {opts.reference}: expected one of {', '.join(REFERENCES)}")
    if not opts.targets or any(t not in TARGETS for t in opts.targets):
        raise InputDataError(f"--targets: expected some of {', '.join(TARGETS)}")
    fmt = detect_format(opts.model)
    graph = prepare(import_model(opts.model, calibration=opts.calibration, percentile=opts.percentile,
                                 input_shapes=opts.input_shapes))
    hexagon = HexagonRunner(graph, per_layer=opts.per_layer, model=opts.model)
    source_path = opts.model if fmt != "graph" else str(graph.meta.get("source") or "")
    source = None
    if source_path and Path(source_path).is_file():
        source = reference_runner(source_path, opts.reference, opts.per_layer, "source")
    float_ref = None
    if opts.float_model:
        float_ref = reference_runner(opts.float_model, opts.reference, opts.per_layer, "float")
        if float_ref.quantized:
            raise InputDataError(f"--float-model {opts.float_model}: holds quantized tensors, not a float model")
    elif source is not None and not source.quantized:
        source.name, float_ref, source = "float", source, None
    refs = [r for r in (float_ref, source) if r is not None]
    if not refs:
        raise InputDataError(f"{opts.model}: no reference to compare with; give --float-model (a graph file "
                             "compares against its source model only while that file exists)")
    tested: list[HexagonRunner] = []
    for t in opts.targets:
        tested.append(hexagon if t == "hexagon" else xs3_runner(opts, opts.per_layer))
    return tested[0], refs, list(tested[1:])


def dataset_for(opts: CompareOptions, hexagon: HexagonRunner) -> Dataset:
    """The samples: ``--data`` or ``--random N`` (10 random samples when neither is given); labels, when
    given, checked against the model's classes (:func:`check_labels`)."""
    if opts.data and opts.random:
        raise InputDataError("give --data or --random, not both")
    if opts.data:
        classes = classifier_classes(hexagon.graph)
        check_labels_dtype(opts.data, classes)
        dataset = load_dataset(opts.data, hexagon.inputs)
        check_labels(dataset, classes)
        return dataset
    return random_dataset(opts.random or 10, hexagon.inputs, opts.seed)


def classifier_classes(graph: Graph) -> tuple[str, int] | None:
    """``(output name, number of classes)`` of the output accuracy is measured on - the first whose shape
    is one row of at least two scores, as the comparator picks it - or None when there is none."""
    for gio in graph.outputs:
        shape = [int(d) for d in gio.shape]
        if shape and shape[-1] >= 2 and math.prod(shape[:-1]) == 1:
            return gio.name, shape[-1]
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
    """Build the runners, run every sample with a progress bar on ``err`` (when it is a terminal)."""
    from hexnn_import.cli_support import refuse_overwriting_inputs

    hexagon, refs, others = build_runners(opts)
    # a graph file's source model is read too, though the command line does not name it
    refuse_overwriting_inputs({f"{r.name} model": r.model for r in refs},
                              {"--report": opts.report, "--json": None if opts.json_out == "-" else opts.json_out})
    dataset = dataset_for(opts, hexagon)
    err = err or Console(stderr=True)
    columns = (TextColumn("comparing"), BarColumn(), MofNCompleteColumn(), TextColumn("samples"),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("compare", total=len(dataset.samples))
        return run_comparison(hexagon, refs, dataset, lambda k: progress.update(task, completed=k), opts.model,
                              others)


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
