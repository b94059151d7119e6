"""The ``hexnn-import`` command line (click).

``hexnn-import MODEL [-o OUT]`` imports, prepares and writes the graph file
with a summary; ``hexnn-import run MODEL --input X -o OUT.npz`` runs it;
``hexnn-import ops`` lists the documented op set. Every error the toolkit
raises on purpose is printed as one line and exits with code 2; an internal
error prints one line and exits with code 3 (``HEXNN_DEBUG=1`` shows the
traceback); so does a usage error (:mod:`hexnn_import.cli_support`). After its
summary, ``hexnn-import MODEL`` prints the next commands for the model
(:mod:`hexnn_import.next_steps`).

Outputs (issue 20, findings 1, 2 and 6): no output replaces a file the same
command reads; every output is written only once everything it depends on
succeeded, and an output of several files is written whole or not at all.
``--max-memory`` bounds what any input, tensor or plan may need
(:mod:`hexnn_import.memory`).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Mapping

import click
import numpy as np

from hexnn_import.cli_support import (DefaultGroup, default_output_path, graph_input_shapes, handle_errors,
                                      max_memory_option, outputs_npz, parse_input_shapes, refuse_overwriting_inputs)
from hexnn_import.errors import InputDataError, UnsupportedOpsError
from hexnn_import.model_source import ModelSource


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hexnn-import")
def cli() -> None:
    """Import ONNX / TFLite models into hexagon_nn's quantized op set, prepare and run them.

    \b
    hexnn-import MODEL [-o OUT]            import + prepare, print a summary, write the graph
    hexnn-import run MODEL --input X.npz   run on the Hexagon-semantics engine
    hexnn-import compare MODEL --data D    accuracy against the float reference, per output and layer
    hexnn-import xs3-export MODEL -o DIR   lower layers to XS3 (lib_nn) kernels: BSO, weights, C headers, arena
    hexnn-import ops [--json]              the documented op set, its coverage and verification
    """


@cli.command("convert")
@click.argument("model", type=str)
@click.option("-o", "--output", "output", type=str, default=None,
              help="graph file to write (default: MODEL's name with the suffix .hexnn.json, in the current "
                   "directory)")
@click.option("--json", "as_json", is_flag=True, help="print the summary as JSON")
@click.option("--calibration", type=str, default=None,
              help="DATA.npz of float samples (axis 0) by input name, a folder of images, a quoted glob of .npy "
                   "files or generated:N: fix a float model's ranges from observed min/max")
@click.option("--percentile", type=float, default=None,
              help="with --calibration: keep this percentile (e.g. 99.99) instead of the extreme values")
@click.option("--preprocess", type=str, default=None, metavar="PRESET[,KEY=VALUE...]",
              help="with --calibration images: mobilenet, inception, torchvision, imagenet-caffe, raw, or settings")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME=D1,D2,...",
              help="fix the dynamic dimensions of an input (repeatable)")
@click.option("--no-optimize", "no_optimize", is_flag=True, help="skip the prepare passes (only verify the graph)")
@click.option("--passes", type=str, default=None, metavar="A,B,C",
              help="run only these prepare passes, in this order (default: the whole pipeline)")
@click.option("--timing", is_flag=True, help="print the time of each prepare pass")
@click.option("--emit", "emit_fmt", type=click.Choice(["json", "c", "dot", "svg", "png"]), default="json",
              show_default=True, help="what -o holds: the graph file (json); C source calling the hexagon_nn "
              "API plus a .h beside it (c); the graph drawn by Graphviz (dot; svg/png need Graphviz's dot)")
@max_memory_option
@handle_errors
def convert(model: str, output: str | None, as_json: bool, calibration: str | None, percentile: float | None,
            input_shape: tuple[str, ...], no_optimize: bool = False, passes: str | None = None,
            timing: bool = False, emit_fmt: str = "json", preprocess: str | None = None) -> None:
    """Import and prepare MODEL (.tflite, .onnx), print a summary and write the graph file (or --emit)."""
    from hexnn_import.api import import_model, prepare
    from hexnn_import.emit import check_emit_format, emit_graph, header_path
    from hexnn_import.next_steps import next_steps, print_next_steps
    from hexnn_import.probe_outputs import add_probe_notes
    from hexnn_import.summary import graph_summary, print_summary

    check_emit_format(emit_fmt)  # before the import: svg/png without Graphviz fail at once
    if percentile is not None and not 50.0 < percentile <= 100.0:
        raise InputDataError(f"--percentile {percentile}: expected a value in (50, 100]")
    out = Path(output) if output else default_output_path(model, emit_fmt)
    refuse_overwriting_inputs({"MODEL": model, "--calibration": calibration},
                              {"-o": out, "-o's header": header_path(out) if emit_fmt == "c" else None})
    shapes = parse_input_shapes(input_shape)
    source = ModelSource.open(model, shapes)
    try:
        graph = import_model(source, calibration=calibration, percentile=percentile, preprocess=preprocess)
    except UnsupportedOpsError as exc:
        if as_json:  # every unsupported node, grouped, on stdout; the one-line error still goes to stderr
            click.echo(json.dumps(exc.as_dict(), indent=1))
        raise
    imported_ops = graph.op_counts()
    graph = prepare(graph, passes=passes, optimize=not no_optimize, timing=timing)
    add_probe_notes(graph)  # an output that cannot vary is a note in the summary (hexnn_import.probe_outputs)
    summary = graph_summary(graph, model, str(out), imported_ops)  # all that can fail before the file is written
    nexts = next_steps(graph, source, input_shape, calibration, summary["ranges"]["mode"] == "run-time", shapes,
                       preprocess)
    written = emit_graph(graph, emit_fmt, out, source=model)
    summary["emitted"] = {"format": emit_fmt, "files": written}
    summary["next"] = nexts
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        print_summary(summary)
        for extra in written[1:]:  # the C header beside the source
            click.echo(f"wrote {extra}")
        print_next_steps(summary["next"])


def load_feeds(path: str, input_names: list[str],
               shapes: Mapping[str, tuple[int, ...] | None] | None = None) -> dict[str, np.ndarray]:
    """Read ``x.npy`` (single-input models) or ``x.npz`` (keyed by input name).

    The file's array headers are checked first against the memory budget and
    ``shapes`` (input name -> the graph's shape; default: names only), so an
    oversize or mis-shaped array is refused before it is read
    (:func:`hexnn_import.memory.check_array_file`).
    """
    from hexnn_import.memory import NPZ_READ_ERRORS, check_array_file

    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"{p}: no such input file")
    check_array_file(p, dict(shapes) if shapes is not None else {n: None for n in input_names})
    try:
        loaded = np.load(p, allow_pickle=False)
    except NPZ_READ_ERRORS as exc:
        raise InputDataError(f"{p}: not a .npy/.npz file numpy can read ({exc})") from exc
    if isinstance(loaded, np.ndarray):
        if len(input_names) != 1:
            raise InputDataError(f"{p}: one array given, the model takes {len(input_names)} inputs {input_names}; use .npz")
        return {input_names[0]: loaded}
    try:
        with loaded:
            arrays = {k: loaded[k] for k in loaded.files}
    except (ValueError, OSError, EOFError) as exc:  # e.g. object arrays, which need pickle
        raise InputDataError(f"{p}: an array in it cannot be read without pickle ({exc})") from exc
    except NPZ_READ_ERRORS as exc:  # a damaged member shows only when its data is read (CRC)
        raise InputDataError(f"{p}: a damaged .npz ({exc})") from exc
    if len(input_names) == 1 and len(arrays) == 1 and input_names[0] not in arrays:
        return {input_names[0]: next(iter(arrays.values()))}
    return arrays


def batch_of_feeds(graph: Any, feeds: dict[str, np.ndarray]) -> dict[str, tuple[int, ...]] | None:
    """``{input: shape}`` when every feed differs from its input only in the batch (dim 0), else None."""
    out: dict[str, tuple[int, ...]] = {}
    for gio in graph.inputs:
        arr = feeds.get(gio.name)
        if arr is None or arr.ndim != len(gio.shape) or tuple(arr.shape[1:]) != tuple(gio.shape[1:]):
            return None
        if arr.shape[0] != gio.shape[0]:
            out[gio.name] = tuple(int(v) for v in arr.shape)
    return out or None


@cli.command("run")
@click.argument("model", type=str)
@click.option("--input", "input_path", required=True, help="x.npy (single input) or x.npz keyed by input name")
@click.option("-o", "--output", "output", type=str, default=None, help="write outputs to this .npz")
@click.option("--json", "as_json", is_flag=True, help="print outputs (shape, dtype, values) as JSON")
@click.option("--repeat", type=click.IntRange(min=1), default=None, metavar="N",
              help="run N times and report the median time of the engine run alone (median_ms)")
@click.option("--xs3", is_flag=True,
              help="run the layers that lower to XS3 (lib_nn) kernels on the simulated kernels "
                   "(quantized .tflite / .onnx)")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME=D1,D2,...",
              help="set an input's shape, e.g. its batch (repeatable; default: a dynamic batch is 1)")
@max_memory_option
@handle_errors
def run_cmd(model: str, input_path: str, output: str | None, as_json: bool, repeat: int | None,
            xs3: bool, input_shape: tuple[str, ...] = ()) -> None:
    """Run MODEL (.tflite, .onnx or graph file) on the Hexagon-semantics engine, or on the XS3 path (--xs3)."""
    import statistics
    import time

    from hexnn_import.api import Runner, import_model, prepare
    from hexnn_import.compare.degenerate import looks_like_class_scores
    from hexnn_import.serialize import atomic_write_bytes

    from hexnn_import.xs3.run import XS3Runner

    refuse_overwriting_inputs({"MODEL": model, "--input": input_path}, {"-o": output})
    shapes = parse_input_shapes(input_shape)
    source = ModelSource.open(model, shapes)
    graph = import_model(source)
    feeds = load_feeds(input_path, [io.name for io in graph.inputs], graph_input_shapes(graph))
    batch = batch_of_feeds(graph, feeds) if not shapes and not source.is_graph else None
    if batch:  # the input file holds another batch: import again with it (what a data-set run needs)
        graph = import_model(source.with_shapes(batch))
        click.echo(f"note: batch {next(iter(batch.values()))[0]} taken from {input_path}", err=True)
    runner: Runner = XS3Runner(graph) if xs3 else Runner(prepare(graph))
    times_ms: list[float] = []
    for _ in range(repeat or 1):  # load and prepare are outside the timed runs
        t0 = time.perf_counter()
        results = runner.run(feeds)
        times_ms.append((time.perf_counter() - t0) * 1e3)
    timing = {"median_ms": statistics.median(times_ms), "min_ms": min(times_ms), "first_ms": times_ms[0],
              "runs": len(times_ms)} if repeat else None
    # everything printed and the file's bytes are made first: a failure there leaves no output file (finding 6)
    if as_json:
        lines = [json.dumps({"outputs": {k: {"shape": list(v.shape), "dtype": str(v.dtype),
                                              "values": v.reshape(-1).tolist()} for k, v in results.items()},
                             "output_file": output, **(timing or {}),
                             **({"xs3_layers": runner.xs3_layers} if isinstance(runner, XS3Runner) else {})})]
    else:
        lines = []
        if isinstance(runner, XS3Runner):
            lines.append(f"{len(runner.xs3_layers)} of {len(runner.placements)} layers on XS3 kernels")
        scores = {io.name for io in graph.outputs if looks_like_class_scores(io.name, io.shape, rows=True)}
        lines += [output_line(k, v, 5 if k in scores else 0) for k, v in results.items()]
        if timing:
            lines.append(f"{'XS3 simulation' if xs3 else 'engine'} run: median {timing['median_ms']:.2f} ms over "
                         f"{timing['runs']} runs "
                         f"(min {timing['min_ms']:.2f} ms, first {timing['first_ms']:.2f} ms)")
        if output:
            lines.append(f"wrote {output}")
    if output:
        atomic_write_bytes(output, outputs_npz(results))
    for line in lines:
        click.echo(line)


def output_line(name: str, v: np.ndarray, k: int = 5) -> str:
    """One output in a line: shape, dtype, range, then the first values, or for a vector of scores per sample
    (``[N, C]``, C > 1) each sample's top-k classes with their scores; ``k = 0`` for an output that does not
    look like class scores (:func:`hexnn_import.compare.degenerate.looks_like_class_scores`)."""
    head = f"{name}: shape {list(v.shape)} {v.dtype}"
    if v.size == 0:
        return head + " (empty)"
    head += f" min {v.min()} max {v.max()}"
    if k > 0 and v.ndim == 2 and v.shape[1] > 1 and v.shape[0] <= 4:
        tops = []
        for i, row in enumerate(v):
            idx = np.argsort(-row.astype(np.float64), kind="stable")[:k]
            tops.append(("" if v.shape[0] == 1 else f"[{i}] ") + ", ".join(f"{j} ({row[j]})" for j in idx))
        return head + f"; top-{min(k, v.shape[1])}: " + "; ".join(tops)
    flat = v.reshape(-1)
    return head + "; values " + " ".join(str(x) for x in flat[:8]) + (" ..." if flat.size > 8 else "")


@cli.command("compare")
@click.argument("model", type=str)
@click.option("--data", type=str, default=None,
              help="DATA.npz (N samples along axis 0 by input name, optional 'labels'), a folder of images "
                   "(class sub-folders give labels), a quoted glob of .npy files, or generated:N")
@click.option("--random", "random_n", type=click.IntRange(min=1), default=None,
              help="N seeded random samples (default 10)")
@click.option("--reference", type=click.Choice(["auto", "onnxruntime", "litert"]), default="auto",
              show_default=True, help="runtime of the reference models")
@click.option("--float-model", type=str, default=None, help="the float twin of a quantized MODEL")
@click.option("--per-layer", is_flag=True, help="compare every intermediate tensor the import mapping names")
@click.option("--report", type=str, default=None, help="write an HTML report with a per-layer SQNR chart")
@click.option("--json", "json_out", type=str, default=None, help="write the results as JSON ('-': stdout)")
@click.option("--min-sqnr", type=float, default=None, help="exit 1 when an output's SQNR (dB) is below this")
@click.option("--calibration", type=str, default=None,
              help="DATA.npz, a folder of images, a glob of .npy files or generated:N fixing a float MODEL's ranges")
@click.option("--percentile", type=float, default=None, help="with --calibration: keep this percentile")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME=D1,D2,...",
              help="fix the dynamic dimensions of an input (repeatable)")
@click.option("--targets", default="hexagon", show_default=True, metavar="hexagon,xs3",
              help="the tested targets: the Hexagon engine, the XS3 (lib_nn) path, or both in one table")
@click.option("--preprocess", type=str, default=None, metavar="PRESET[,KEY=VALUE...]",
              help="how images become inputs: mobilenet, inception, torchvision, imagenet-caffe, raw; or crop=, "
                   "resize=, scale=0,1|-1,1|0,255, mean=a/b/c, std=a/b/c, order=rgb|bgr, layout=nhwc|nchw")
@click.option("--labels", "labels_file", type=str, default=None, help="a file of 'name label' lines for --data")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="compare only the first N samples")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="local worker processes (default: the machine's cores)")
@click.option("--scheduler", type=str, default=None, metavar="ADDRESS",
              help="run on a Dask distributed scheduler (tcp://host:8786) instead of local workers")
@click.option("--results", type=str, default=None, metavar="DIR",
              help="checkpoint each finished shard in this folder")
@click.option("--resume", is_flag=True, help="continue the run checkpointed in --results")
@max_memory_option
@handle_errors
def compare_cmd(model: str, data: str | None, random_n: int | None, reference: str, float_model: str | None,
                per_layer: bool, report: str | None, json_out: str | None, min_sqnr: float | None,
                calibration: str | None, percentile: float | None, input_shape: tuple[str, ...],
                targets: str = "hexagon", preprocess: str | None = None, labels_file: str | None = None,
                limit: int | None = None, jobs: int | None = None, scheduler: str | None = None,
                results: str | None = None, resume: bool = False) -> None:
    """Compare MODEL on the Hexagon engine (and the XS3 path: --targets) with its float reference and its own
    quantized run, per output and per layer."""
    from hexnn_import.compare.command import run_cli
    from hexnn_import.compare.options import CompareOptions, parse_targets

    if percentile is not None and not 50.0 < percentile <= 100.0:
        raise InputDataError(f"--percentile {percentile}: expected a value in (50, 100]")
    refuse_overwriting_inputs({"MODEL": model, "--data": data, "--calibration": calibration,
                               "--float-model": float_model},
                              {"--report": report, "--json": None if json_out == "-" else json_out})
    from hexnn_import.compare.parallel import default_jobs

    sys.exit(run_cli(CompareOptions(model, data, random_n, reference, float_model, per_layer, report, json_out,
                                    min_sqnr, calibration, percentile, parse_input_shapes(input_shape),
                                    targets=parse_targets(targets), preprocess=preprocess, labels=labels_file,
                                    limit=limit, jobs=jobs or default_jobs(), scheduler=scheduler,
                                    results=results, resume=resume)))


@cli.command("ops")
@click.option("--json", "as_json", is_flag=True, help="print a JSON list")
@click.option("--markdown", is_flag=True, help="print a Markdown table (the README's)")
@click.option("--source", is_flag=True,
              help="list the TFLite / ONNX ops the importers accept instead (docs/source_ops.md; Markdown or --json)")
@handle_errors
def ops_cmd(as_json: bool, markdown: bool, source: bool = False) -> None:
    """List every documented op: kernel present, which importers emit it (--source: the supported source ops)."""
    from hexnn_import.summary import markdown_op_table, op_coverage, print_op_table

    if as_json and markdown:
        raise click.UsageError("--json and --markdown: choose one")
    if source:
        from hexnn_import.source_ops import source_op_data, source_op_table

        data = source_op_data()
        click.echo(json.dumps(data, indent=1) if as_json else source_op_table(data), nl=as_json)
        return
    rows = op_coverage()
    if markdown:
        click.echo(markdown_op_table(rows))
    elif as_json:
        click.echo(json.dumps(rows, indent=1))
    else:
        print_op_table(rows)


@cli.command("xs3-export")
@click.argument("model", type=str)
@click.option("-o", "--output", "out_dir", required=True, help="folder to write layers.npz (every layer's arrays), the C headers, manifest")
@click.option("--json", "as_json", is_flag=True, help="print the manifest as JSON")
@click.option("--input", "input_path", default=None, help="x.npy / x.npz to measure agreement on (default: seeded random)")
@click.option("--symmetric", is_flag=True, help="saturate 8-bit outputs to [-127, 127] instead of [-128, 127]")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME=D1,D2,...",
              help="set an input's shape (repeatable; default: a dynamic batch is 1)")
@click.option("--force", is_flag=True,
              help="replace DIR whole when it already holds an export (default: refuse a non-empty DIR)")
@max_memory_option
@handle_errors
def xs3_export_cmd(model: str, out_dir: str, as_json: bool, input_path: str | None, symmetric: bool,
                   input_shape: tuple[str, ...] = (), force: bool = False) -> None:
    """Lower a quantized model's layers to XS3 (lib_nn) kernels; write BSO, weights, C headers, arena plan, manifest."""
    from hexnn_import.api import import_model
    from hexnn_import.xs3.export import check_export_target, export_model, manifest_lines
    from hexnn_import.xs3.gc_pause import fewer_collections
    from hexnn_import.xs3.vpu import VPUOptions

    refuse_overwriting_inputs({"MODEL": model, "--input": input_path}, {}, ("-o", out_dir))
    check_export_target(out_dir, force)  # before the (long) lowering
    shapes = parse_input_shapes(input_shape)
    source = ModelSource.open(model, shapes)
    with fewer_collections():  # import, lowering and files build long-lived objects only (xs3/gc_pause.py)
        graph = import_model(source)
        if input_path:
            declared: dict[str, tuple[int, ...] | None] = {io.name: tuple(int(d) for d in io.shape)
                                                           for io in graph.inputs}
            declared.update({k: tuple(v) for k, v in shapes.items() if k in declared})
            feeds = [load_feeds(input_path, list(declared), declared)]
        else:
            feeds = None
        manifest = export_model(source, graph, out_dir, feeds, VPUOptions(symmetric_output=symmetric), force=force)
    click.echo(json.dumps(manifest, indent=1) if as_json else "\n".join(manifest_lines(manifest) + [f"wrote {out_dir}"]))


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="hexnn-import")


if __name__ == "__main__":
    main()
