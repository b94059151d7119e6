"""A seeded fuzzer for the model readers (issue [Robust]): a fixed number of cases, each bounded in work.

It mutates real model files (:mod:`fuzz_mutations` on bytes, :mod:`fuzz_edits`
on the parsed document, guided by the structure :mod:`fuzz_structure` finds
in each seed), feeds each mutated file to what a user would run on it
(:func:`hexnn_import.api.import_model`), and sorts the outcome:

- ``ok``: the file still imports; ``error``: a :class:`HexnnError` with a
  one-line message - both fine; ``netted``: a HexnnError that
  :func:`hexnn_import.api.unguarded_import_error` made of an exception an op
  handler raised by accident (fine for the user, listed for the importer's
  authors: a check is missing there);
- ``escape``: any other exception; ``bad-message``: a HexnnError whose
  message is empty or spans lines; ``memory``: MemoryError under the
  worker's address-space limit (an absurd allocation that the reader should
  have refused from the file size); ``hang``: past the per-case time limit;
  ``crash``: the worker died - all failures.

Cases run in forked worker processes (:mod:`fuzz_workers`, one per core)
so that a hang can be killed and a memory limit (``RLIMIT_AS``) applied
without touching the test process. Case ``i`` is a pure function of (format, seeds, seed, ``i``), so
every failure names the case that reproduces it (:func:`case_bytes`).

Adding a format is one entry in :data:`FORMATS`.
"""
from __future__ import annotations

import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from hexnn_import.testing.fuzz_edits import GRAPH_MUTATIONS, ONNX_MUTATIONS
from hexnn_import.testing.fuzz_mutations import BYTE_MUTATIONS, Mutation, truncate_at
from hexnn_import.testing.fuzz_structure import Structure, flatbuffer_structure, json_structure, protobuf_structure
from hexnn_import.testing.fuzz_workers import Timing, classify, run_jobs

FAILURES = ("escape", "bad-message", "memory", "hang", "crash")


def import_file(path: str) -> Any:
    """What ``hexnn-import MODEL`` does first: detect the format and import (or load) the file."""
    from hexnn_import.api import import_model

    return import_model(path)


@dataclass(frozen=True)
class FuzzFormat:
    """How to fuzz one file format: its file suffix, its structure walker, its own mutations, its loader."""

    name: str
    suffix: str
    structure: Callable[[bytes], Structure]
    mutations: tuple[tuple[str, Mutation], ...] = ()
    load: Callable[[str], Any] = import_file


FORMATS: dict[str, FuzzFormat] = {
    "tflite": FuzzFormat("tflite", ".tflite", flatbuffer_structure),
    "onnx": FuzzFormat("onnx", ".onnx", protobuf_structure, ONNX_MUTATIONS),
    "graph": FuzzFormat("graph", ".hexnn.json", json_structure, GRAPH_MUTATIONS),
}


@dataclass
class Case:
    """One mutated file: its index (the reproduction key), seed, mutation names and bytes."""

    index: int
    seed_label: str
    mutation: str
    data: bytes


@dataclass
class Failure:
    """A case whose outcome is in :data:`FAILURES`."""

    index: int
    seed_label: str
    mutation: str
    outcome: str
    detail: str


@dataclass
class FuzzReport:
    """Counts of a fuzz run, and every failure with its reproduction key."""

    fmt: str
    seed: int
    ran: int = 0
    seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)
    by_mutation: Counter = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    netted: dict[str, int] = field(default_factory=dict)  # place -> first case
    boundaries: int = 0  # structural boundaries in the seeds (truncation points)
    timing: Timing = field(default_factory=Timing)
    limits: tuple[float, float] = (0.0, 0.0)  # the hang limits: CPU seconds, wall-clock seconds

    @property
    def clean(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        """One line of counts, e.g. for the test's output."""
        outs = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        muts = Counter()
        for (m, _), v in self.by_mutation.items():
            muts[m] += v
        per = ", ".join(f"{k} {v}" for k, v in sorted(muts.items()))
        return (f"fuzz {self.fmt}: {self.ran} mutated files in {self.seconds:.1f} s (seed {self.seed}): {outs}; "
                f"mutations: {per} (of {self.boundaries} boundaries); {self.timing.describe(*self.limits)}")

    def describe_failures(self, limit: int = 15) -> str:
        """Failures grouped by their detail (first case index to reproduce each)."""
        groups: dict[str, list[Failure]] = {}
        for f in self.failures:
            groups.setdefault(f"{f.outcome}: {f.detail}", []).append(f)
        lines = [f"{len(v)} x {k} (first: case {v[0].index}, {v[0].mutation} of {v[0].seed_label})"
                 for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))]
        return "\n".join(lines[:limit] + ([f"... {len(lines) - limit} more kinds"] if len(lines) > limit else []))

    def describe_netted(self) -> str:
        """Places where an importer raised by accident and api.import_model turned it into a ModelFormatError."""
        return "\n".join(f"netted: {k} (first: case {v})" for k, v in sorted(self.netted.items()))


# ---- the plan -----------------------------------------------------------------------------------
def plan_cases(fmt: FuzzFormat, seeds: Sequence[tuple[str, bytes]], count: int, seed: int) -> Iterator[Case]:
    """The deterministic sequence of cases: truncations at every boundary first, then random mutations.

    Truncations at every structural boundary of every seed come first when
    they fill at most 60 % of ``count``, else an even sample of a third of
    it; the rest draw a mutation in turn from the byte-level set and the
    format's own, stacking two or three now and then.
    """
    structures = [fmt.structure(data) for _, data in seeds]
    cuts = boundary_cuts(structures, seeds)
    share = len(cuts) if len(cuts) <= 0.6 * count else count // 3
    step = len(cuts) / share if share else 1.0
    index = 0
    for j in range(share):
        k, b = cuts[int(j * step)]
        yield Case(index, seeds[k][0], "truncate@boundary", truncate_at(seeds[k][1], b))
        index += 1
    mutations = BYTE_MUTATIONS + fmt.mutations
    while index < count:
        rng = random.Random(f"{fmt.name}:{seed}:{index}")
        k = rng.randrange(len(seeds))
        label, data = seeds[k]
        names = []
        first = mutations[index % len(mutations)]
        stack = [first] + [rng.choice(BYTE_MUTATIONS) for _ in range(rng.choice((0, 0, 0, 0, 1, 2)))]
        for name, mutate in stack:
            data = mutate(data, structures[k] if not names else _within(structures[k], len(data)), rng)
            names.append(name)
        yield Case(index, label, "+".join(names), data)
        index += 1


def boundary_cuts(structures: Sequence[Structure], seeds: Sequence[tuple[str, bytes]]) -> list[tuple[int, int]]:
    """(seed index, position) of every truncation point inside a seed (cutting trailing zero padding is no damage)."""
    return [(k, b) for k, st in enumerate(structures) for b in sorted(st.boundaries)
            if b < len(seeds[k][1]) and seeds[k][1][b:].strip(b"\0")]


def _within(st: Structure, size: int) -> Structure:
    """The part of a seed's structure that still lies inside a mutated file of ``size`` bytes."""
    def keep(items: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
        return [t for t in items if t[0] + t[1] <= size]

    return Structure({b for b in st.boundaries if b <= size}, keep(st.lengths), keep(st.indices), keep(st.values))


def case_bytes(fmt_name: str, seeds: Sequence[tuple[str, bytes]], count: int, seed: int, index: int) -> bytes:
    """The bytes of case ``index`` of a run (to reproduce a failure outside the fuzzer)."""
    for case in plan_cases(FORMATS[fmt_name], seeds, count, seed):
        if case.index == index:
            return case.data
    raise IndexError(index)


def fuzz_settings(count: int) -> tuple[int, int]:
    """(cases, seed) for a campaign (``bench/fuzz_campaign.py``): ``count`` and seed 0, unless
    ``HEXNN_FUZZ_CASES`` / ``HEXNN_FUZZ_SEED`` are set. The tests run fixed counts and seeds."""
    return int(os.environ.get("HEXNN_FUZZ_CASES", str(count))), int(os.environ.get("HEXNN_FUZZ_SEED", "0"))


#: CPU seconds past which a reader case is a hang: over 10 x the slowest case measured (0.21 s, an ONNX file;
#: docs/robustness.md)
CASE_LIMIT_S = 2.5


def run_fuzz(fmt_name: str, seeds: Sequence[tuple[str, bytes]], count: int = 2000, seed: int = 0,
             budget_s: float | None = None, case_limit_s: float = CASE_LIMIT_S, workers: int | None = None,
             memory_mb: int = 1024, wall_limit_s: float | None = None) -> FuzzReport:
    """Run all ``count`` cases (or those started within ``budget_s`` seconds, when given) in forked workers
    (:mod:`fuzz_workers`: a hang is ``case_limit_s`` of CPU, or ``wall_limit_s`` - default 10 x that - of wall
    clock)."""
    fmt = FORMATS[fmt_name]
    report = FuzzReport(fmt_name, seed)
    report.boundaries = len(boundary_cuts([fmt.structure(d) for _, d in seeds], seeds))
    report.limits = (case_limit_s, 10 * case_limit_s if wall_limit_s is None else wall_limit_s)

    def record(case: Case, outcome: str, detail: str) -> None:
        report.ran += 1
        report.outcomes[outcome] += 1
        report.by_mutation[(case.mutation.split("+")[0], outcome)] += 1
        if outcome in FAILURES:
            report.failures.append(Failure(case.index, case.seed_label, case.mutation, outcome, detail))
        elif outcome == "netted":
            report.netted.setdefault(detail, case.index)

    start = time.monotonic()
    report.timing = run_jobs(plan_cases(fmt, seeds, count, seed), fmt.load, fmt.suffix, record,  # type: ignore[arg-type]
                             workers or max(2, min(4, os.cpu_count() or 2)), budget_s, case_limit_s, memory_mb,
                             report.limits[1])
    report.seconds = time.monotonic() - start
    return report


def write_case(fmt_name: str, seeds: Sequence[tuple[str, bytes]], count: int, seed: int, index: int,
               folder: str | os.PathLike) -> Path:
    """Write case ``index`` to ``folder`` with the format's suffix; returns its path (reproduction)."""
    fmt = FORMATS[fmt_name]
    path = Path(folder) / f"fuzz_{fmt_name}_{seed}_{index}{fmt.suffix}"
    path.write_bytes(case_bytes(fmt_name, seeds, count, seed, index))
    return path


__all__ = ["FuzzFormat", "FORMATS", "FuzzReport", "Failure", "Case", "plan_cases", "case_bytes", "run_fuzz",
           "write_case", "classify", "import_file", "fuzz_settings", "boundary_cuts", "FAILURES", "CASE_LIMIT_S"]
