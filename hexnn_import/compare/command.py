"""``hexnn-import compare``: build the runners and the samples (:mod:`.build`), run the samples in shards
(:mod:`.shards`, here or on workers: :mod:`.parallel`), merge them (:mod:`.merge`), report and write the
outputs (:mod:`.report`, :mod:`.report_html`). The options are :mod:`.options`.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from hexnn_import.cli_support import refuse_overwriting_inputs
from hexnn_import.compare import shards
from hexnn_import.compare.build import build_runners, source_for
from hexnn_import.compare.checkpoint import ResultsFolder
from hexnn_import.compare.merge import Merger
from hexnn_import.compare.options import CompareOptions
from hexnn_import.compare.cluster import check_scheduler, run_dask
from hexnn_import.compare.parallel import WorkersLost, run_local
from hexnn_import.compare.progress import progress_for, resumed_line
from hexnn_import.compare.report import passed, print_report, to_json
from hexnn_import.compare.report_html import html_report
from hexnn_import.compare.results import CompareResult
from hexnn_import.datasets.sources import GeneratedImages
from hexnn_import.emit.files import write_files
from hexnn_import.errors import InputDataError
from hexnn_import.memory import explicit_budget


def compare(opts: CompareOptions, err: Console | None = None) -> CompareResult:
    """Build the runners, run the samples in shards (here, on ``--jobs`` worker processes or a Dask cluster,
    :mod:`.parallel`) with their progress on ``err`` (a bar on a terminal, a line every 10 s when piped:
    :mod:`.progress`), checkpoint them in ``--results`` (``--resume`` says how many it reused), and merge them
    (:mod:`.merge`)."""
    if opts.limit is not None and opts.limit < 1:
        raise InputDataError(f"--limit {opts.limit}: expected a positive number of samples")
    if opts.jobs < 1:
        raise InputDataError(f"--jobs {opts.jobs}: expected a positive number of worker processes")
    if opts.resume and not opts.results:
        raise InputDataError("--resume continues the run in a --results folder: give --results DIR")
    if opts.scheduler:
        check_scheduler(opts.scheduler)  # before the model is read: an address that does not answer fails at once
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
    todo = shards.Pending(job.n_shards, finished)  # made as taken: constant memory for any number of shards
    err = err or Console(stderr=True)
    if opts.resume:
        err.print(resumed_line(str(opts.results), len(finished), job.n_shards, merger.samples, total),
                  markup=False, highlight=False, soft_wrap=True)
    if isinstance(source, GeneratedImages):  # a number typed on the command line: say what it means
        err.print(f"compare: {source.description}: {total} samples in {job.n_shards} shards of "
                  f"{job.shard_size}, made as they run", markup=False, highlight=False, soft_wrap=True)
    with progress_for(err, total, job.n_shards, merger.samples, len(finished)) as progress:

        def on_done(index: int, result: CompareResult) -> None:
            if folder is not None:
                folder.save(index, result)
            result.outputs = {}
            merger.add(index, result)
            progress.advance(result.samples)

        try:
            if opts.scheduler:
                run_dask(job, todo, opts.scheduler, on_done)
            else:
                run_local(job, todo, opts.jobs, on_done)
        except WorkersLost as exc:  # say what is kept for --resume
            if folder is None:
                raise
            raise WorkersLost(f"{exc}; {len(merger.predictions)} of {job.n_shards} shards are finished in "
                                f"--results {opts.results}: the same command with --resume runs the rest") from exc
    return merger.result(source.description, source.classes)


def write_outputs(result: CompareResult, opts: CompareOptions) -> list[str]:
    """Write ``--json`` and ``--report``: both rendered first, then written whole or not at all
    (:func:`hexnn_import.emit.files.write_files`); the paths written."""
    files: list[tuple[Path, bytes]] = []
    if opts.json_out and opts.json_out != "-":
        files.append((Path(opts.json_out), (json.dumps(to_json(result, opts.min_sqnr), indent=1) + "\n").encode()))
    if opts.report:
        files.append((Path(opts.report), html_report(result, opts.min_sqnr).encode("utf-8")))
    write_files(files)
    return [str(p) for p, _ in files]


def default_paths_ok(opts: CompareOptions) -> None:
    """Fail early (before the runs) when an output folder does not exist or cannot be written in (read-only:
    issue [Robust] finding 4c)."""
    for p in (opts.json_out, opts.report):
        if p and p != "-":
            folder = Path(p).parent if str(Path(p).parent) else Path(".")
            if not folder.is_dir():
                raise InputDataError(f"cannot write {p}: folder {folder} does not exist")
            if Path(p).is_dir():
                raise InputDataError(f"cannot write {p}: is a directory")
            _writable(folder, p)
    if opts.results:
        results = Path(opts.results)
        parent = results.parent if str(results.parent) else Path(".")
        if results.is_dir() or parent.is_dir():
            _writable(results if results.is_dir() else parent, f"--results {results}")


def _writable(folder: Path, what: str) -> None:
    """InputDataError (one line) unless a file can be made in ``folder``: a temporary file, removed at once."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".hexnn-probe.", dir=folder)
    except OSError as exc:
        raise InputDataError(f"cannot write {what}: {folder} is not writable ({exc.strerror or exc})") from exc
    os.close(fd)
    os.unlink(probe)


def run_cli(opts: CompareOptions) -> int:
    """The command: report on stdout (tables, or JSON with ``--json -``), files, then the exit code.

    0 when every output reaches ``--min-sqnr`` (or none was given), 1 with
    one line on stderr when one does not.
    """
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
