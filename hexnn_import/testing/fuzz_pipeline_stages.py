"""One pipeline-fuzz case: a mutated artefact through every stage the command line runs on it.

A model file (TFLite, ONNX, graph file) goes through what ``hexnn-import
MODEL -o g.hexnn.json`` does (``import`` with the model's defaults,
``prepare``, the printed ``summary`` and next steps), then ``reload`` (the
graph file written, read back as ``hexnn-import g.hexnn.json`` reads it, the
same document again, prepared again), ``emit-c`` and ``emit-dot``
(``--emit c`` / ``--emit dot`` into a scratch folder) and ``run`` on a valid
input made from the imported graph's inputs (:func:`valid_inputs`), outputs
written and printed as ``run -o`` does. Sampled cases add the slower
commands, in process through the click command itself (:func:`cli_call`):
``xs3-export`` and ``xs3-run`` (``run --xs3``) for int8 TFLite and quantized ONNX seeds and
``compare`` (LiteRT / onnxruntime as reference).

An input file goes through ``run``'s input loading (``load`` =
:func:`hexnn_import.cli.load_feeds`) and ``run`` on the seed model's
prepared graph (a batch taken from the file imports again, as ``run``
does); sampled cases add the whole ``run`` command (``cli-run``),
``xs3-export --input`` and ``compare --data``.

Each stage's outcome is ``ok``, ``error`` (a HexnnError with a one-line
message; exit 2 of a command), ``INTERNAL`` (anything else, MemoryError and
a multi-line or empty message included) or ``skip`` (the harness cannot
make the input: the model declares one above :data:`INPUT_CAP`). They are
written after every stage to a result file, so that the parent knows the
stage of a case that hung or killed its worker.
"""
from __future__ import annotations

import io
import json
import os
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable

import numpy as np

from hexnn_import.errors import HexnnError

#: the memory budget the workers run with (HEXNN_MAX_MEMORY); their address space is capped above it
WORKER_BUDGET = "256M"
#: largest input (bytes) the harness makes for a model: a model declaring more should have been refused
INPUT_CAP = 256 << 20
_ROOT = Path(__file__).resolve().parents[2]
_HARNESS = Path(__file__).resolve().parent


class Skip(Exception):
    """The harness cannot run this stage (see :data:`INPUT_CAP`)."""


class CliUserError(HexnnError):
    """Exit code 2 of a command run in process: its ``error:`` line."""


class Recorder:
    """The stages of one case, rewritten to ``path`` (JSON) as they start and end."""

    def __init__(self, path: Path, work: Path | None = None):
        self.path = path
        self.scratch = f"{work}{os.sep}" if work else None
        self.stages: list[list[str]] = []
        self.current: str | None = None

    def start(self, stage: str) -> None:
        self.current = stage
        self._write()

    def finish(self, stage: str, outcome: str, detail: str = "", where: str = "", trace: str = "") -> None:
        if self.scratch:  # the case's scratch folder differs per worker: keep the file names only
            detail, trace = detail.replace(self.scratch, ""), trace.replace(self.scratch, "")
        self.stages.append([stage, outcome, detail, where, trace])
        self.current = None
        self._write()

    def _write(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"current": self.current, "stages": self.stages}))
        os.replace(tmp, self.path)


def where(exc: BaseException) -> str:
    """``file:line (function)`` of the innermost frame in the project's code (the harness excluded)."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename.startswith(str(_ROOT)) and not f.filename.startswith(str(_HARNESS))]
    f = (own or frames or [None])[-1]
    return f"{Path(f.filename).name}:{f.lineno} ({f.name})" if f else "?"


def classify_exception(exc: BaseException) -> tuple[str, str, str, str]:
    """(outcome, detail, where, traceback) of a stage that raised."""
    msg = str(exc)
    if isinstance(exc, HexnnError) and msg.strip() and "\n" not in msg.strip():
        return "error", f"{type(exc).__name__}: {msg[:300]}", "", ""
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-12:])
    kind = type(exc).__name__ + (" (message empty or on several lines)" if isinstance(exc, HexnnError) else "")
    return "INTERNAL", f"{kind}: {msg[:200]!r}", where(exc), trace


def stage(rec: Recorder, name: str, fn: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
    """Run one stage; (True, its value) when it passed."""
    rec.start(name)
    try:
        value = fn(*args)
    except Skip as exc:
        rec.finish(name, "skip", str(exc))
        return False, None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - sorting every outcome is the point
        rec.finish(name, *classify_exception(exc))
        return False, None
    rec.finish(name, "ok")
    return True, value


def cli_call(args: list[Any]) -> str:
    """``hexnn-import ARGS`` in this process (HEXNN_DEBUG=1: an internal error propagates as itself);
    exit 2 raises :class:`CliUserError` with the command's error line; returns what it printed."""
    from hexnn_import.cli import cli

    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            cli.main([str(a) for a in args], prog_name="hexnn-import", standalone_mode=False)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) or exc.code is None else 1
        text = err.getvalue()
        if code == 2 and "error: " in text:
            raise CliUserError(text[text.rfind("error: ") + 7:].rstrip("\n")) from None
        if code not in (0, 1, None):  # compare exits 1 only below --min-sqnr, which is not given
            raise RuntimeError(f"exit code {code}: {text.strip()[-300:]}") from None
    return out.getvalue()


def valid_feeds(graph: Any, index: int) -> dict[str, np.ndarray]:
    """:func:`valid_inputs` for ``graph``, unless they would pass :data:`INPUT_CAP` (then :class:`Skip`)."""
    from hexnn_import.testing.fuzz_seeds import valid_inputs

    try:
        sizes = [np.dtype(io.dtype).itemsize for io in graph.inputs]
    except TypeError as exc:
        raise Skip(f"the model imported with an input dtype numpy does not know ({exc})") from exc
    total = sum(float(np.prod(io.shape, dtype=np.float64)) * k for io, k in zip(graph.inputs, sizes))
    if total > INPUT_CAP:
        raise Skip(f"the model imported with inputs of {total:.3g} bytes")
    return valid_inputs(graph, index % (1 << 32))


# ---- model files ------------------------------------------------------------------------------
def summary(graph: Any, model: str, imported_ops: dict[str, int], out: Path) -> None:
    """What ``hexnn-import MODEL`` prints after preparing: the summary and the next commands."""
    from hexnn_import.model_source import ModelSource
    from hexnn_import.next_steps import next_steps, print_next_steps
    from hexnn_import.summary import graph_summary, print_summary

    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        s = graph_summary(graph, model, str(out), imported_ops)
        s["emitted"] = {"format": "json", "files": [str(out)]}
        s["next"] = next_steps(graph, ModelSource.open(model), (), None, s["ranges"]["mode"] == "run-time", {})
        print_summary(s)
        print_next_steps(s["next"])


def reload(graph: Any, model: str, work: Path) -> None:
    """Write the graph file, read it back (the same document), prepare it again."""
    from hexnn_import.api import import_model, prepare
    from hexnn_import.emit import emit_graph
    from hexnn_import.serialize import graph_to_dict

    path = work / "out.hexnn.json"
    emit_graph(graph, "json", path, source=model)
    again = import_model(path)
    before, after = (json.dumps(graph_to_dict(g), sort_keys=True) for g in (graph, again))
    if before != after:
        raise AssertionError("the graph file read back differs from the graph written")
    prepare(again)


def run_graph(graph: Any, feeds: dict[str, np.ndarray], work: Path) -> None:
    """Run, write the outputs as ``run -o out.npz`` does, print them as ``run`` does."""
    from hexnn_import.api import Runner
    from hexnn_import.cli import output_line
    from hexnn_import.serialize import atomic_write_bytes

    results = Runner(graph).run(feeds)
    buf = io.BytesIO()
    np.savez(buf, **results)
    atomic_write_bytes(work / "out.npz", buf.getvalue())
    for k, v in results.items():
        output_line(k, v)


def model_case(path: Path, info: dict[str, Any], work: Path, rec: Recorder) -> None:
    """The stages of a mutated model file (module doc)."""
    from hexnn_import.api import import_model, prepare
    from hexnn_import.emit import emit_graph

    model = str(path)
    ok, graph = stage(rec, "import", import_model, model)
    if not ok:
        return
    imported = graph.op_counts()
    if not stage(rec, "prepare", prepare, graph)[0]:
        return
    stage(rec, "summary", summary, graph, model, imported, work / "out.hexnn.json")
    stage(rec, "reload", reload, graph, model, work)
    stage(rec, "emit-c", emit_graph, graph, "c", work / "out.c", model)
    stage(rec, "emit-dot", emit_graph, graph, "dot", work / "out.dot", model)
    made, feeds = stage(rec, "inputs", valid_feeds, graph, info["index"])
    if made:
        np.savez(work / "in.npz", **feeds)
        if not stage(rec, "run", run_graph, graph, feeds, work)[0]:
            _keep_input(work, info)
    if not info["slow"]:
        return
    if info["int8"] and made:
        stage(rec, "xs3-export", cli_call, ["xs3-export", model, "-o", work / "xs3"])
        if not stage(rec, "xs3-run", cli_call, ["run", model, "--xs3", "--input", work / "in.npz"])[0]:
            _keep_input(work, info)
    stage(rec, "compare", cli_call, ["compare", model, "--random", "2", "--json", work / "compare.json"])


def _keep_input(work: Path, info: dict[str, Any]) -> None:
    """The input a failed run used, beside the case's result file (for the reproducer)."""
    src = work / "in.npz"
    if src.is_file():
        Path(info["results"], f"{info['index']}.in.npz").write_bytes(src.read_bytes())


# ---- input files ------------------------------------------------------------------------------
def run_feeds(model: str, graph: Any, feeds: dict[str, np.ndarray], work: Path) -> None:
    """``run MODEL --input X``: a batch the file holds imports the model again with it; then run."""
    from hexnn_import.api import import_model, prepare
    from hexnn_import.cli import batch_of_feeds

    batch = batch_of_feeds(graph, feeds)
    if batch:
        graph = prepare(import_model(model, input_shapes=batch))
    run_graph(graph, feeds, work)


def input_case(path: Path, info: dict[str, Any], work: Path, rec: Recorder) -> None:
    """The stages of a mutated input file (module doc)."""
    from hexnn_import.cli import load_feeds
    from hexnn_import.testing.fuzz_seeds import PREPARED

    model = info["model"]
    if info.get("row"):  # one of compare's findings (fuzz_compare_cases): its own stages
        from hexnn_import.testing.fuzz_compare_cases import run_row

        run_row(info["row"], model, path, work, lambda st, fn, args: stage(rec, st, fn, args), cli_call)
        return
    graph = PREPARED[model]
    ok, feeds = stage(rec, "load", load_feeds, str(path), [io.name for io in graph.inputs])
    if ok:
        stage(rec, "run", run_feeds, model, graph, feeds, work)
    if not info["slow"]:
        return
    stage(rec, "cli-run", cli_call, ["run", model, "--input", path, "-o", work / "out.npz"])
    if info["int8"]:
        stage(rec, "xs3-export", cli_call, ["xs3-export", model, "-o", work / "xs3", "--input", path])
    stage(rec, "compare", cli_call, ["compare", model, "--data", path, "--json", work / "compare.json"])


def run_case(case_file: str, results: str) -> None:
    """The worker's loader: split the case file (a JSON line, then the artefact), run its stages."""
    import shutil

    os.environ["HEXNN_DEBUG"] = "1"
    os.environ["HEXNN_MAX_MEMORY"] = WORKER_BUDGET
    head, _, payload = Path(case_file).read_bytes().partition(b"\n")
    info = json.loads(head)
    info["results"] = results
    work = Path(results) / f"work{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    os.chdir(work)  # a default output path of any command lands here
    artefact = work / info["name"]
    artefact.write_bytes(payload)
    rec = Recorder(Path(results) / f"{info['index']}.json", work)
    (input_case if info["fmt"] == "npz" else model_case)(artefact, info, work, rec)


__all__ = ["CliUserError", "INPUT_CAP", "Recorder", "Skip", "WORKER_BUDGET", "classify_exception", "cli_call",
           "input_case", "model_case", "run_case", "stage", "valid_feeds", "where"]
