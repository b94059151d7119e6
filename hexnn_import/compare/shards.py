"""A compare run as shards (issue [Scale]): fixed slices of the samples, each compared on its own.

A :class:`Job` is everything a process needs to compare one shard: the command's options, the data
source (:mod:`hexnn_import.datasets`) and the shard size; it is small and picklable, so a local worker
process or a Dask worker runs :func:`run_shard` with it. Each process builds its runners once (the model
imported and prepared, the reference runtimes loaded; :func:`runners_for` keeps them per job) and then
runs shard after shard. Every runner takes one thread (the engine's BLAS and compiled loops by default,
``$HEXNN_BLAS_THREADS``; onnxruntime and LiteRT here): the parallelism is the number of workers, and a
shard's numbers do not depend on how many there are.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from hexnn_import.compare.build import build_runners
from hexnn_import.compare.comparator import run_comparison
from hexnn_import.compare.options import CompareOptions
from hexnn_import.compare.results import CompareResult
from hexnn_import.compare.runners import CompareRunner, HexagonRunner
from hexnn_import.datasets.samples import Dataset
from hexnn_import.datasets.sources import Source

#: samples per shard: the unit of work, of checkpointing and of merging (fixed, so that results do not
#: depend on the number of workers)
SHARD_SIZE = 32


@dataclass
class Job:
    """One run: options, data, how many samples (``--limit``), the shard size; ``keep_outputs`` keeps the
    tested runner's outputs of every sample (for the results folder)."""

    opts: CompareOptions
    source: Source
    total: int
    shard_size: int = SHARD_SIZE
    keep_outputs: bool = False
    #: ``--max-memory`` of the command, for the workers (None: theirs, from the environment or default)
    max_memory: int | None = None

    @property
    def n_shards(self) -> int:
        return -(-self.total // self.shard_size)

    def bounds(self, index: int) -> tuple[int, int]:
        """Samples ``start .. stop - 1`` of shard ``index``."""
        start = index * self.shard_size
        return start, min(start + self.shard_size, self.total)

    @property
    def key(self) -> str:
        """What identifies the runners a process builds for this job."""
        o = self.opts
        text = repr((o.model, o.reference, o.float_model, o.per_layer, o.calibration, o.percentile, o.preprocess,
                     sorted(o.input_shapes.items()), o.targets))
        return hashlib.sha1(text.encode()).hexdigest()


class Pending:
    """The shards of a run still to compare, in order: ``0 .. n_shards - 1`` without the ``finished`` ones, made
    as they are taken (constant memory for any number of shards, one set lookup each: ``generated:N`` of any
    N, and a resumed run, whatever it reused; issue [Robust] finding 9)."""

    def __init__(self, n_shards: int, finished: Iterable[int] = ()) -> None:
        self.n_shards = n_shards
        self.finished = frozenset(finished)

    def __len__(self) -> int:
        return self.n_shards - len(self.finished)

    def __iter__(self) -> Iterator[int]:
        return (i for i in range(self.n_shards) if i not in self.finished)


_RUNNERS: dict[str, tuple[HexagonRunner, list[CompareRunner], list[CompareRunner]]] = {}


def runners_for(job: Job) -> tuple[HexagonRunner, list[CompareRunner], list[CompareRunner]]:
    """The runners of ``job``, built once per process (one thread each, module doc)."""
    built = _RUNNERS.get(job.key)
    if built is None:
        _RUNNERS.clear()  # one job per process at a time: the previous model's runners go
        built = _RUNNERS[job.key] = build_runners(job.opts, threads=1)
    return built


def keep_runners(job: Job, built: tuple[HexagonRunner, list[CompareRunner], list[CompareRunner]]) -> None:
    """Use ``built`` (runners this process made for ``job``) for its shards here."""
    _RUNNERS.clear()
    _RUNNERS[job.key] = built


def run_shard(job: Job, index: int) -> CompareResult:
    """Compare the samples of shard ``index`` (in this process; the runners as :func:`runners_for`)."""
    from hexnn_import.memory import set_budget

    if job.max_memory is not None:
        set_budget(job.max_memory)
    tested, refs, others = runners_for(job)
    start, stop = job.bounds(index)
    items = job.source.items(start, stop, tested.inputs)
    labels = None
    if items and all(label is not None for _, label in items):
        labels = np.asarray([label for _, label in items], dtype=np.int64)
    dataset = Dataset([sample for sample, _ in items], labels, f"{job.source.description} [{start}:{stop}]")
    return run_comparison(tested, refs, dataset, None, job.opts.model, others, job.keep_outputs)
