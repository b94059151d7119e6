"""Whole-pipeline fuzzing (issue [Robust] "The whole pipeline under bad input").

:mod:`hexnn_import.testing.fuzz` mutates model files and checks that they
*import* or fail with a project error. This fuzzer takes each mutated
artefact - a TFLite file, an ONNX file, a graph file or a ``run --input``
``.npz`` (:data:`FORMATS`; seeds: :func:`fuzz_seeds.pipeline_seeds`) -
through every stage the command line runs on it
(:mod:`fuzz_pipeline_stages`): import, prepare, summary, graph file written
and read back, ``--emit c`` / ``dot``, run on a valid input; and on every
``sample_every``-th case (and every unmutated seed) also ``xs3-export``,
``run --xs3`` (int8 TFLite seeds; quantized ONNX seeds unmutated) and ``compare``.

Per stage the outcome is ok / error (HexnnError, one line) / INTERNAL
(anything else, MemoryError included) / skip; per case, the worst of them:

- ``rejected``: the artefact failed to import / prepare / load with a
  project error - fine;
- ``ok``: every stage passed; for an input file, also a project error when
  running it (a bad input);
- ``converted-then-failed``: a model that imported and prepared, then
  failed a later stage with a project error (or declared an input too big to
  make) - a finding, listed apart;
- ``INTERNAL``, ``hang`` (past ``case_limit_s`` seconds of CPU, or 10 x as many
  of wall clock: :mod:`fuzz_workers`), ``crash`` (the worker died) -
  failures; each keeps the mutated bytes to reproduce it
  (:func:`write_reproducers`).

The cases are those of :func:`fuzz.plan_cases` (truncations at structural
boundaries, byte mutations, each format's document edits) run in the
forked, memory-capped workers of :mod:`fuzz_workers`; case ``i`` is a pure
function of (format, seeds, seed, ``i``).
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from hexnn_import.testing.fuzz import FuzzFormat, plan_cases
from hexnn_import.testing.fuzz_edits import GRAPH_MUTATIONS, ONNX_MUTATIONS
from hexnn_import.testing.fuzz_pipeline_npz import NPZ_MUTATIONS, npz_structure
from hexnn_import.testing.fuzz_pipeline_stages import run_case
from hexnn_import.testing.fuzz_compare_cases import row_of
from hexnn_import.testing.fuzz_seeds import MALFORMED_PREFIX, PipelineSeed, int8_weights
from hexnn_import.testing.fuzz_structure import flatbuffer_structure, json_structure, protobuf_structure
from hexnn_import.testing.fuzz_workers import Timing, run_jobs

FORMATS: dict[str, FuzzFormat] = {
    "tflite": FuzzFormat("tflite", ".tflite", flatbuffer_structure),
    "onnx": FuzzFormat("onnx", ".onnx", protobuf_structure, ONNX_MUTATIONS),
    "graph": FuzzFormat("graph", ".hexnn.json", json_structure, GRAPH_MUTATIONS),
    "npz": FuzzFormat("npz", ".npz", npz_structure, NPZ_MUTATIONS),
}
FAILURES = ("INTERNAL", "hang", "crash")
#: address space each worker may add to what it held when forked (MB); the budget it runs with is lower
WORKER_MEMORY_MB = 3072
#: CPU seconds past which a case of the tests is a hang: over 10 x their slowest case (1.8 s: the first case
#: of a worker, which imports the command line, LiteRT and onnxruntime; docs/robustness.md)
CASE_LIMIT_S = 20.0
#: the same for the campaigns (``bench/fuzz_campaign.py``): 10 x their slowest legitimate case, ONNX case
#: 1900 of seed 0 (``compare --random 2`` of qdq_cnn.onnx mutated to batch 65,536: 8.6 s of CPU alone, 12.1 s
#: on a loaded machine - and 49 s of wall clock)
CAMPAIGN_CASE_LIMIT_S = 120.0


@dataclass
class PipelineJob:
    """One case as the workers take it: a JSON line (what to run) then the artefact."""

    index: int
    label: str
    mutation: str
    data: bytes
    model: str = ""

    @property
    def payload(self) -> bytes:
        return self.data.partition(b"\n")[2]


@dataclass
class PipelineFailure:
    """A case with an INTERNAL / hang / crash stage, or a converted model that failed later."""

    index: int
    label: str
    mutation: str
    stage: str
    outcome: str
    detail: str
    where: str
    trace: str
    payload: bytes
    model: str = ""
    input_npz: bytes = b""

    @property
    def key(self) -> str:
        """What groups failures: stage, outcome and the place (INTERNAL) or the message's start (else)."""
        return f"{self.stage}: {self.outcome}: " + (self.where or self.detail[:90])


@dataclass
class PipelineReport:
    """Counts of a pipeline fuzz run: per case, per (stage, outcome); the failures and findings."""

    fmt: str
    seed: int
    sample_every: int
    ran: int = 0
    seconds: float = 0.0
    cases: Counter = field(default_factory=Counter)
    stages: Counter = field(default_factory=Counter)
    failures: list[PipelineFailure] = field(default_factory=list)
    converted_failed: list[PipelineFailure] = field(default_factory=list)
    seed_problems: list[str] = field(default_factory=list)
    timing: Timing = field(default_factory=Timing)
    limits: tuple[float, float] = (0.0, 0.0)  # the hang limits: CPU seconds, wall-clock seconds

    @property
    def clean(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        """The counts: one line per run, then one per stage."""
        cases = ", ".join(f"{k} {v}" for k, v in sorted(self.cases.items()))
        lines = [f"fuzz pipeline {self.fmt}: {self.ran} cases in {self.seconds:.1f} s (seed {self.seed}; "
                 f"every {self.sample_every}th case and every seed also through the slow commands): {cases}",
                 f"  {self.timing.describe(*self.limits)}"]
        order: list[str] = []
        for st, _ in self.stages:
            if st not in order:
                order.append(st)
        for st in order:
            outs = ", ".join(f"{o} {v}" for (s, o), v in sorted(self.stages.items()) if s == st)
            lines.append(f"  {st:<11} {outs}")
        return "\n".join(lines)

    def describe(self, which: str = "failures", limit: int = 20) -> str:
        """The failures (or ``converted_failed``) grouped by :attr:`PipelineFailure.key`, first case of each."""
        groups = group(getattr(self, which))
        lines = [f"{len(v)} x {k} (first: case {v[0].index}, {v[0].mutation} of {v[0].label}; {v[0].detail[:160]})"
                 for k, v in groups]
        return "\n".join(lines[:limit] + ([f"... {len(lines) - limit} more kinds"] if len(lines) > limit else []))


def group(failures: Sequence[PipelineFailure]) -> list[tuple[str, list[PipelineFailure]]]:
    """Failures by key, the most frequent first."""
    groups: dict[str, list[PipelineFailure]] = {}
    for f in failures:
        groups.setdefault(f.key, []).append(f)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


# ---- the plan ---------------------------------------------------------------------------------
def plan_jobs(fmt: str, seeds: Sequence[PipelineSeed], count: int, seed: int, sample_every: int
              ) -> Iterator[PipelineJob]:
    """Every seed unmutated (index -1, -2, ...; all stages), then the cases of :func:`fuzz.plan_cases`."""
    by_label = {s.label: s for s in seeds}
    if len(by_label) != len(seeds):
        raise ValueError("seed labels must be unique")
    suffix = FORMATS[fmt].suffix
    int8_onnx = {s.label: int8_weights(s.data if fmt == "onnx" else Path(s.model)) for s in seeds
                 if fmt == "onnx" or s.model.endswith(".onnx")}

    def job(index: int, label: str, mutation: str, payload: bytes, slow: bool) -> PipelineJob:
        s = by_label[label]
        # the seeds that lower to XS3: int8 TFLite models, and quantized (QDQ / QOperator) ONNX models - those
        # unmutated only (a mutated ONNX file's slow case can take 12 s in compare alone: the XS3 stages on top
        # took cases past the per-case limit; tests/robust/test_pipeline_errors.py holds the damaged ONNX
        # files xs3-export must refuse in one line)
        # (an ONNX model with uint8 weights, like the qop_cnn seed, has no layer XS3 lowers: xs3-export refuses it)
        onnx_quant = int8_onnx.get(label, False) and any(k in label for k in ("qdq", "qop"))
        int8 = ("int8" in label.replace("uint8", "") and (fmt == "tflite" or s.model.endswith(".tflite"))) or (
            onnx_quant and index < 0)
        name = label if fmt != "npz" else f"input{suffix}"
        head = json.dumps({"index": index, "fmt": fmt, "name": name if name.endswith(suffix) else name + suffix,
                           "model": s.model, "slow": slow, "int8": int8, "row": row_of(label) if fmt == "npz" else None})
        return PipelineJob(index, label, mutation, head.encode() + b"\n" + payload, s.model)

    for k, s in enumerate(seeds):
        yield job(-1 - k, s.label, "seed", s.data, True)
    mutated = [(s.label, s.data) for s in seeds if fmt != "npz" or row_of(s.label) is None]  # compare rows: as they are
    for case in plan_cases(FORMATS[fmt], mutated, count, seed):
        yield job(case.index, case.seed_label, case.mutation, case.data, case.index % sample_every == 0)


def case_payload(fmt: str, seeds: Sequence[PipelineSeed], count: int, seed: int, index: int) -> bytes:
    """The mutated bytes of case ``index`` (to reproduce a failure outside the fuzzer)."""
    for job in plan_jobs(fmt, seeds, count, seed, 1):
        if job.index == index:
            return job.payload
    raise IndexError(index)


# ---- the run ----------------------------------------------------------------------------------
def run_pipeline_fuzz(fmt: str, seeds: Sequence[PipelineSeed], count: int = 2000, seed: int = 0,
                      budget_s: float | None = None, case_limit_s: float = CASE_LIMIT_S, workers: int | None = None,
                      sample_every: int = 10, memory_mb: int = WORKER_MEMORY_MB,
                      wall_limit_s: float | None = None) -> PipelineReport:
    """Run the unmutated seeds and all ``count`` cases (or those started within ``budget_s`` seconds, when
    given; module doc).

    A hang is ``case_limit_s`` seconds of CPU on one case (or ``wall_limit_s``, default 10 x that, of wall
    clock): counted in work, because a wall-clock limit of 20 s failed a legitimate case (``compare --random
    2`` of a QDQ net mutated to batch 65,536: 9 s alone) on a busy 2-core machine (issue [First hour])."""
    report = PipelineReport(fmt, seed, sample_every)
    report.limits = (case_limit_s, 10 * case_limit_s if wall_limit_s is None else wall_limit_s)
    with tempfile.TemporaryDirectory(prefix="hexnn-pipeline-") as results:

        def load(path: str) -> None:
            run_case(path, results)

        def record(job: PipelineJob, outcome: str, detail: str) -> None:
            _record(report, job, outcome, detail, Path(results))

        start = time.monotonic()
        cwd = os.getcwd()
        try:
            report.timing = run_jobs(plan_jobs(fmt, seeds, count, seed, sample_every), load, ".case",
                                     record, workers or max(2, min(4, os.cpu_count() or 2)),  # type: ignore[arg-type]
                                     budget_s, case_limit_s, memory_mb, report.limits[1])
        finally:
            os.chdir(cwd)
        report.seconds = time.monotonic() - start
    return report


def _record(report: PipelineReport, job: PipelineJob, outcome: str, detail: str, results: Path) -> None:
    """Sort one finished case (``outcome``: the worker's - ok, or hang / crash / escape of the harness)."""
    result_file = results / f"{job.index}.json"
    try:
        state = json.loads(result_file.read_text())
        result_file.unlink()
    except (OSError, ValueError):
        state = {"current": None, "stages": []}
    stages = [tuple(s) for s in state["stages"]]
    if outcome != "ok":  # the case never finished: the stage it was in hung / crashed / escaped the harness
        kind = outcome if outcome in ("hang", "crash") else "INTERNAL"
        stages.append((state["current"] or "harness", kind, detail, detail.rpartition(" at ")[2], ""))
    input_file = results / f"{job.index}.in.npz"
    extra = input_file.read_bytes() if input_file.is_file() else b""
    input_file.unlink(missing_ok=True)
    for st, out, *_ in stages:
        report.stages[(st, out)] += 1
    category = _category(report.fmt, stages)
    if job.index >= 0:
        report.ran += 1
        report.cases[category] += 1
    elif job.label.startswith(MALFORMED_PREFIX):  # a malformed seed must be refused at convert
        if category != "rejected":
            report.seed_problems.append(f"{job.label}: a malformed model was not refused at convert ({category})")
    elif category != "ok" or any(out != "ok" for _, out, *_ in stages):
        report.seed_problems.append(f"{job.label}: " + "; ".join(f"{s} {o} {d[:160]}" for s, o, d, *_ in stages
                                                                  if o != "ok"))
    for st, out, det, wh, trace in stages:
        bad = out in FAILURES or (category == "converted-then-failed" and out in ("error", "skip"))
        if bad:
            failure = PipelineFailure(job.index, job.label, job.mutation, st, out, det, wh, trace, job.payload,
                                      job.model, extra)
            (report.failures if out in FAILURES else report.converted_failed).append(failure)


def _category(fmt: str, stages: Sequence[tuple]) -> str:
    outs = {s: o for s, o, *_ in stages}
    for worst in FAILURES:
        if worst in outs.values():
            return worst
    first = "load" if fmt == "npz" else "import"
    if outs.get(first) != "ok" or outs.get("prepare", "ok") != "ok":
        return "rejected"
    if fmt != "npz" and any(o != "ok" for o in outs.values()):
        return "converted-then-failed"
    return "ok"


# ---- reproducers ------------------------------------------------------------------------------
_COMMANDS = {
    "run": "hexnn-import run {f} --input {i}", "xs3-run": "hexnn-import run {f} --xs3 --input {i}",
    "xs3-export": "hexnn-import xs3-export {f} -o /tmp/xs3_out", "compare": "hexnn-import compare {f} --random 2",
    "emit-c": "hexnn-import {f} --emit c -o /tmp/out.c", "emit-dot": "hexnn-import {f} --emit dot -o /tmp/out.dot",
    "reload": "hexnn-import {f} -o /tmp/out.hexnn.json && hexnn-import /tmp/out.hexnn.json -o /tmp/again.hexnn.json",
}
_INPUT_COMMANDS = {
    "xs3-export": "hexnn-import xs3-export {m} -o /tmp/xs3_out --input {f}",
    "compare": "hexnn-import compare {m} --data {f}",
}


def repro_command(fmt: str, stage: str, file: str, model: str = "", input_file: str = "X.npz") -> str:
    """The command that reproduces a failure of ``stage`` on ``file`` (and, for an input, ``model``)."""
    if fmt == "npz":
        return _INPUT_COMMANDS.get(stage, "hexnn-import run {m} --input {f} -o /tmp/out.npz").format(m=model, f=file)
    return _COMMANDS.get(stage, "hexnn-import {f} -o /tmp/out.hexnn.json").format(f=file, i=input_file)


def write_reproducers(report: PipelineReport, folder: str | os.PathLike, which: str = "failures") -> list[Path]:
    """The first case of every group of ``which`` written to ``folder``, with a README of commands and
    tracebacks; returns the files written."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written, notes = [], []
    suffix = FORMATS[report.fmt].suffix
    for key, items in group(getattr(report, which)):
        f = items[0]
        stem = f"{report.fmt}_{report.seed}_{f.index}_{f.stage}"
        path = out / (stem + suffix)
        path.write_bytes(f.payload)
        written.append(path)
        inp = "X.npz (valid_inputs(import_model(FILE), INDEX))"
        if f.input_npz:
            (out / (stem + ".input.npz")).write_bytes(f.input_npz)
            inp = str(out / (stem + ".input.npz"))
        notes.append(f"## {len(items)} x {key}\ncase {f.index} ({f.mutation} of {f.label}); {f.detail}\n"
                     f"  {repro_command(report.fmt, f.stage, str(path), f.model, inp)}\n{f.trace}")
    (out / f"README_{report.fmt}_{which}.txt").write_text("\n".join(notes) + "\n")
    return written


__all__ = ["CAMPAIGN_CASE_LIMIT_S", "CASE_LIMIT_S", "FAILURES", "FORMATS", "PipelineFailure", "PipelineJob",
           "PipelineReport", "case_payload", "group", "plan_jobs", "repro_command", "run_pipeline_fuzz",
           "write_reproducers"]
