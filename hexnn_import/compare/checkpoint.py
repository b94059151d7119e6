"""The results folder of a compare run (``--results DIR``, ``--resume``; issue [Scale]).

``run.json`` says what the run is (model files with their size and modification time, data, options,
shard size); ``run.shards`` lists the shards it finished, each with its sample count and digest
(:mod:`.ledger`); each finished shard is one ``shard_NNNNNN.npz``, written to a temporary name and renamed,
so a file is whole or absent whatever stops the run. It holds the shard's statistics (``stats``, JSON),
each sample's top-k classes per runner (``pred_<runner>``), the labels and the tested runner's outputs of
every sample (``out_<i>``; their names in ``stats``). ``--resume`` reads the finished shards and runs the
rest; the merged report is then the one an uninterrupted run gives (``merge.py``). It reads only the shards
``run.shards`` lists for this run, with the bytes recorded there: another shard file is refused, naming it.

A folder that holds another run, or files that are not a run's, is refused: nothing in it is lost; so is a
folder this command cannot write in (read-only), before any shard runs.
"""
from __future__ import annotations

import io
import json
import os
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from hexnn_import.compare.ledger import Entry, Ledger, bytes_digest, run_digest
from hexnn_import.compare.results import Comparison, CompareResult, RunnerResult
from hexnn_import.compare.tensor_stats import TensorStats
from hexnn_import.errors import InputDataError
from hexnn_import.memory import NPZ_READ_ERRORS
from hexnn_import.serialize import atomic_write_bytes

RUN_FILE = "run.json"
_SHARD = re.compile(r"shard_(\d{6})\.npz$")


def _file_id(path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    p = Path(path)
    st = p.stat() if p.is_file() else None
    return {"path": str(p.resolve()), "bytes": st.st_size if st else None, "mtime_ns": st.st_mtime_ns if st else None}


def fingerprint(job: Any) -> dict[str, Any]:
    """What a run is (module doc): two runs with equal fingerprints give equal shards."""
    o = job.opts
    return {"model": _file_id(o.model), "float_model": _file_id(o.float_model), "calibration": _file_id(o.calibration),
            "percentile": o.percentile, "preprocess": o.preprocess, "reference": o.reference, "per_layer": o.per_layer,
            "input_shapes": {k: list(v) for k, v in sorted(o.input_shapes.items())}, "targets": list(o.targets),
            "data": job.source.description, "samples": job.total, "shard_size": job.shard_size,
            "seed": o.seed}


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


class ResultsFolder:
    """A run's folder: created for a new run, checked against the run when resumed (module doc)."""

    def __init__(self, path: str | os.PathLike, job: Any, resume: bool) -> None:
        self.path = Path(path)
        want = fingerprint(job)
        run = self.path / RUN_FILE
        if self.path.exists() and not self.path.is_dir():
            raise InputDataError(f"--results {self.path}: is a file, not a folder")
        if run.is_file():
            try:
                have = json.loads(run.read_text())
            except (OSError, ValueError) as exc:
                raise InputDataError(f"--results {self.path}: {RUN_FILE} is unreadable ({exc}); choose another "
                                     f"folder") from exc
            if not resume:
                raise InputDataError(f"--results {self.path}: holds a run already; --resume continues it, or "
                                     f"choose another folder")
            if have != want:
                diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
                raise InputDataError(f"--results {self.path}: holds another run (it differs in {', '.join(diff)}); "
                                     f"choose another folder")
            self.ledger = Ledger(self.path, run_digest(want))
            self.entries = self.ledger.read(lambda i: self._samples_of(job, i))
            self.ledger.repair()
        else:
            if self.path.is_dir() and any(self.path.iterdir()):
                raise InputDataError(f"--results {self.path}: the folder holds other files; choose an empty or "
                                     f"new folder")
            if resume:
                raise InputDataError(f"--resume: {self.path} holds no run to resume")
            parent = self.path.parent if str(self.path.parent) else Path(".")
            if not parent.is_dir():
                raise InputDataError(f"--results {self.path}: folder {parent} does not exist")
            try:
                self.path.mkdir(exist_ok=True)
                self.ledger = Ledger(self.path, run_digest(want))
                self.ledger.create()
            except OSError as exc:  # a read-only or full file system: before any shard runs
                raise InputDataError(f"--results {self.path}: cannot write there ({exc.strerror or exc})") from exc
            self.entries = {}
            atomic_write_bytes(run, (json.dumps(want, indent=1) + "\n").encode())

    @staticmethod
    def _samples_of(job: Any, index: int) -> int | None:
        if not 0 <= index < job.n_shards:
            return None
        start, stop = job.bounds(index)
        return stop - start

    def done(self) -> list[int]:
        """The indices of the finished shards: the shard files ``run.shards`` lists (module doc); InputDataError
        naming a shard file it does not list."""
        found = []
        for p in self.path.iterdir():
            m = _SHARD.match(p.name)
            if not m:
                continue
            if int(m.group(1)) not in self.entries:
                raise InputDataError(f"{p}: not a shard of this run ({self.ledger.path.name} does not list it); "
                                     f"remove it")
            found.append(int(m.group(1)))
        return sorted(found)

    def shard_path(self, index: int) -> Path:
        return self.path / f"shard_{index:06d}.npz"

    def save(self, index: int, result: CompareResult) -> None:
        """Write shard ``index`` whole (module doc)."""
        arrays = {f"pred_{i}": v for i, v in enumerate(result.predictions.values())}
        outs = list(result.outputs)
        arrays.update({f"out_{i}": result.outputs[n] for i, n in enumerate(outs)})
        if result.labels is not None:
            arrays["labels"] = np.asarray(result.labels, dtype=np.int64)
        meta = {"model": result.model, "data": result.data, "samples": result.samples,
                "classifier": result.classifier, "per_layer": result.per_layer, "n_classes": result.n_classes,
                "runners": [asdict(r) for r in result.runners], "predictions": list(result.predictions),
                "outputs": outs, "comparisons": [_comparison_json(c) for c in result.comparisons]}
        arrays["stats"] = np.array(json.dumps(meta))
        payload = _npz_bytes(arrays)
        entry = Entry(index, result.samples, bytes_digest(payload))
        self.ledger.append(entry)  # listed first: a file is only ever taken with its line (module doc)
        atomic_write_bytes(self.shard_path(index), payload)
        self.entries[index] = entry

    def load(self, index: int) -> CompareResult:
        """Shard ``index`` as written (without the outputs, which the report does not read)."""
        path = self.shard_path(index)
        try:
            payload = path.read_bytes()
        except OSError as exc:
            raise InputDataError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
        if bytes_digest(payload) != self.entries[index].sha256:
            raise InputDataError(f"{path}: not the shard {index} this run wrote (its bytes differ from those "
                                 f"{self.ledger.path.name} recorded); remove it to run it again")
        try:
            with np.load(io.BytesIO(payload), allow_pickle=False) as z:
                meta = json.loads(str(z["stats"]))
                preds = {name: z[f"pred_{i}"] for i, name in enumerate(meta["predictions"])}
                labels = z["labels"] if "labels" in z.files else None
        except (*NPZ_READ_ERRORS, KeyError, TypeError) as exc:
            raise InputDataError(f"{path}: not a readable shard of this run ({exc}); remove it to run it again") \
                from exc
        return CompareResult(meta["model"], meta["data"], meta["samples"],
                             [RunnerResult(**r) for r in meta["runners"]],
                             [_comparison_from_json(c) for c in meta["comparisons"]], meta["classifier"],
                             meta["per_layer"], preds, labels, n_classes=meta["n_classes"])


def _comparison_json(c: Comparison) -> dict[str, Any]:
    return {"candidate": c.candidate, "reference": c.reference, "unmatched": c.unmatched,
            "outputs": [asdict(s) for s in c.outputs.values()],
            "layers": [asdict(s) for s in c.layers.values()]}


def _comparison_from_json(d: dict[str, Any]) -> Comparison:
    return Comparison(d["candidate"], d["reference"], {s["name"]: TensorStats(**s) for s in d["outputs"]},
                      {s["name"]: TensorStats(**s) for s in d["layers"]}, unmatched=dict(d["unmatched"]))
