"""The Python API: import a model, prepare it, run it.

>>> import hexnn_import as hx
>>> g = hx.import_model("models/small_int8.tflite")
>>> g = hx.prepare(g)
>>> out = hx.Runner(g).run({"input": x_int8})     # {output name: int8 array}

A quantized source model takes and returns the source model's dtypes: int8
in, int8 out for an int8 TFLite model (int8 <-> quint8 by XOR 0x80,
SEMANTICS §1).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from hexnn_import.errors import HexnnError, InputDataError, ModelFormatError
from hexnn_import.graph import Graph
from hexnn_import.model_source import GRAPH_SUFFIX, ModelSource, detect_format  # noqa: F401 - the API
from hexnn_import.runner import Runner, from_quantized_output, to_graph_input  # noqa: F401 - the API


def import_model(path: "str | os.PathLike | ModelSource",
                 calibration: "str | os.PathLike | Mapping[str, np.ndarray] | None" = None,
                 percentile: float | None = None, input_shapes: Mapping[str, tuple[int, ...]] | None = None,
                 preprocess: str | None = None) -> Graph:
    """Import a model (or load a saved graph file) into a Graph.

    ``calibration`` (an ``.npz`` path, a folder of images, a glob of ``.npy`` files, ``generated:N``, or
    ``{input name: [N, ...] array}``) fixes the activation ranges of a float model from observed data
    (:mod:`hexnn_import.calibrate`); without it a float model runs with
    run-time ranges. The chosen ranges are kept in ``graph.meta``. Images take ``preprocess``
    (:func:`hexnn_import.datasets.parse_preprocess`).
    ``input_shapes`` fixes dynamic (symbolic) input dimensions by input name (default: the source's,
    :class:`~hexnn_import.model_source.ModelSource`). The graph records its source file
    (``meta["source_file"]``: absolute path and SHA-256) for the commands that run that file in its own runtime.
    """
    source = ModelSource.open(path, input_shapes)
    path = str(source)
    if source.is_graph:
        from hexnn_import.serialize import load_graph

        return load_graph(source.path)
    load = _importer(source.format, path)
    shapes = dict(source.input_shapes)
    record = source.record()

    def importer(p: str | os.PathLike, ranges: Mapping[str, tuple[float, float]] | None,
                 in_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Graph:
        try:
            return load(p, ranges, shapes if in_shapes is None else in_shapes)
        except (HexnnError, MemoryError, RecursionError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - an op handler met a model its checks let through
            raise unguarded_import_error(p, exc) from exc

    graph = importer(path, None)
    graph.meta["source_file"] = record
    if calibration is None:
        return graph
    if not any(io.dtype == "float32" for io in graph.inputs) and not graph.meta.get("has_float"):
        graph.meta.setdefault("notes", []).append("calibration data ignored: the model is already quantized")  # type: ignore[union-attr]
        return graph
    from hexnn_import.calibrate import load_samples, observe_ranges

    if isinstance(calibration, (str, os.PathLike)):
        data = _calibration_arrays(str(calibration), graph, preprocess)
    else:
        data = calibration
    _check_sample_dtypes(data, graph)
    samples = load_samples(data, graph)
    batched = _batched_observation(importer, path, graph, samples) if percentile is None else None
    ranges = observe_ranges(*batched) if batched else observe_ranges(graph, samples, percentile)
    calibrated = importer(path, ranges)
    calibrated.meta["source_file"] = record
    calibrated.meta["calibration"] = {"method": "minmax" if percentile is None else f"percentile {percentile}",
                                      "ranges": {k: [float(a), float(b)] for k, (a, b) in sorted(ranges.items())}}
    return calibrated


#: calibration samples observed per run (min / max over a batch equal those over its samples)
CALIBRATION_BATCH = 16


def _batched_observation(importer, path, graph: Graph, samples: list[dict[str, np.ndarray]]
                         ) -> tuple[Graph, list[dict[str, np.ndarray]]] | None:  # type: ignore[no-untyped-def]
    """The run-time-range graph at a batch of up to :data:`CALIBRATION_BATCH` and the samples stacked into
    such batches (the last one filled up with its own first sample, which leaves min and max as they are),
    or None when the model takes no other batch (its ops fix the batch; several inputs; a batch > 1).

    Calibration then runs a few batched passes instead of one per sample: the same observed min / max
    up to the run-time ranges' rounding, several times faster on big models.
    """
    if len(samples) < 2 or len(graph.inputs) != 1 or not graph.inputs[0].shape or graph.inputs[0].shape[0] != 1:
        return None
    io = graph.inputs[0]
    b = min(len(samples), CALIBRATION_BATCH)
    try:
        big = importer(path, None, {io.name: (b,) + tuple(io.shape[1:])})
    except HexnnError:
        return None
    rows = [np.asarray(s[io.name]).reshape(io.shape) for s in samples]
    feeds = []
    for k in range(0, len(rows), b):
        chunk = rows[k:k + b]
        chunk += [chunk[0]] * (b - len(chunk))
        feeds.append({io.name: np.concatenate(chunk)})
    return big, feeds


def unguarded_import_error(path: str | os.PathLike, exc: Exception) -> ModelFormatError:
    """A one-line ModelFormatError for an exception an importer raised without meaning to.

    Inconsistent files (a tensor index pointing at a tensor of the wrong
    type, say) can pass the readers' and checkers' tests and trip an op
    handler. The user gets one line naming the file and where it failed;
    ``unguarded_at`` keeps the place for the fuzz tests, which count these
    apart from the errors raised on purpose.
    """
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    own = [fr for fr in frames if "importers" in Path(fr.filename).parts] or frames
    f = own[-1] if own else None
    where = f"{Path(f.filename).name}:{f.lineno} ({f.name})" if f else "?"
    detail = (str(exc).splitlines() or [""])[0][:160]
    err = ModelFormatError(f"{path}: the model is inconsistent and cannot be imported ({type(exc).__name__}"
                           f"{': ' + detail if detail else ''} in {where}); if the file is valid, please report it")
    err.unguarded_at = f"{type(exc).__name__} at {where}"  # type: ignore[attr-defined]
    return err


def _importer(fmt: str, path: str | os.PathLike):  # type: ignore[no-untyped-def]
    if fmt == "tflite":
        from hexnn_import.importers.tflite.importer import import_tflite

        return import_tflite
    try:
        from hexnn_import.importers.onnx.importer import import_onnx
    except ImportError as exc:
        raise ModelFormatError(f"{path}: ONNX import is not available in this version") from exc
    return import_onnx


def _check_sample_dtypes(data: Mapping[str, object], graph: Graph) -> None:
    """Calibration samples are arrays of real numbers: floating point for a float input (as run-time feeds
    are), integers or floats for another; InputDataError naming the array otherwise."""
    takes = {io.name: io.dtype for io in graph.inputs}
    for name, value in data.items():
        if name == "labels":
            continue
        try:
            dt = np.asarray(value).dtype
        except (ValueError, TypeError) as exc:
            raise InputDataError(f"calibration array '{name}' is not an array of numbers ({exc})") from exc
        want = takes.get(name, "float32")
        if dt.kind not in ("f" if want == "float32" else "iuf"):
            raise InputDataError(f"calibration array '{name}' has dtype {dt}; the model's input takes {want} "
                                 f"samples")


def _calibration_arrays(spec: str, graph: Graph, preprocess: str | None) -> dict[str, np.ndarray]:
    """Calibration samples from ``spec``: an .npz / .npy (:func:`_load_npz`), or a data source of
    :mod:`hexnn_import.datasets` (images, a glob of .npy files, ``generated:N``) read whole as float32,
    within the memory budget."""
    from hexnn_import.datasets import NpzSource, open_source, parse_preprocess
    from hexnn_import.memory import check_bytes

    source = open_source(spec, parse_preprocess(preprocess) if preprocess else None)
    if isinstance(source, NpzSource):
        return _load_npz(spec, graph)
    inputs = graph.inputs
    check_bytes(len(source) * sum(int(np.prod(s.shape)) for s in inputs) * 4,
                f"{source.description}: {len(source)} calibration samples as float32")
    arrays: dict[str, np.ndarray] = {s.name: np.empty((len(source), *s.shape), np.float32) for s in inputs}
    for start in range(0, len(source), 64):
        for k, (sample, _) in enumerate(source.items(start, min(start + 64, len(source)), inputs)):
            for name, x in sample.items():
                arrays[name][start + k] = x
    return arrays


def _load_npz(path: str | os.PathLike, graph: Graph | None = None) -> dict[str, np.ndarray]:
    """Calibration samples from DATA.npz (or a .npy: one unnamed array), checked from the file's headers
    against the budget and ``graph``'s input shapes before any array is read (:mod:`hexnn_import.memory`)."""
    from hexnn_import.memory import NPZ_READ_ERRORS, check_array_file

    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"{p}: no such file")
    check_array_file(p, None if graph is None else {io.name: tuple(io.shape) for io in graph.inputs},
                     role="calibration samples")
    try:
        loaded = np.load(p, allow_pickle=False)
        if isinstance(loaded, np.ndarray):
            return {"arr_0": loaded}
        with loaded as z:
            return {k: z[k] for k in z.files}
    except FileNotFoundError as exc:
        raise InputDataError(f"{p}: no such file") from exc
    except NPZ_READ_ERRORS as exc:  # a bad CRC shows on reading
        raise InputDataError(f"{p}: not a readable .npz file ({exc})") from exc


def prepare(graph: Graph, passes: "str | Sequence[str] | None" = None, optimize: bool = True,
            timing: bool = False, verify: bool | None = None) -> Graph:
    """Run the prepare passes (:mod:`hexnn_import.optimizer`) on ``graph`` in place and return it.

    A graph with source layers first keeps a copy of itself as imported (``graph.imported``: the XS3 lowering
    works on it), and graph files save it, so a prepared graph file runs on XS3 as its model file does.

    ``passes``: pass names (a list, or one comma-separated string) to run
    instead of the whole pipeline; ``optimize=False`` only verifies the
    graph. ``verify`` checks the graph after every pass (GraphError names the
    pass that broke it); None: on in tests, else as HEXNN_VERIFY says
    (``optimizer.pipeline.verify_default``). With ``timing`` the per-pass
    table is kept in ``graph.meta["prepare_timing"]``.
    """
    if not optimize:
        graph.verify()
        return graph
    from hexnn_import.optimizer import passes_by_name, run_pipeline

    chosen = None if passes is None else passes_by_name(passes.split(",") if isinstance(passes, str) else passes)
    if graph.source_layers and not graph.prepared and graph.imported is None:
        graph.imported = graph.clone()  # what the XS3 lowering works on (Graph.imported)
    report = run_pipeline(graph, chosen, verify=verify)
    graph.prepared = True
    if timing:
        graph.meta["prepare_timing"] = report.as_dicts()
    return graph
