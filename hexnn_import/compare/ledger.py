"""The list of the shards a results folder's run wrote (``--results DIR``; issue [Robust] finding 6).

``run.json`` says what the run is; beside it, ``run.shards`` lists every shard the run finished, one JSON line
each, appended before the shard's file is written::

    {"run": "<sha256 of run.json's content>", "shard": 3, "samples": 32, "sha256": "<sha256 of the file>"}

``--resume`` takes only the shard files this list names for this run (its digest of ``run.json``), with the
sample count the run's slicing gives that index and the very bytes recorded: a shard file it does not list
(an extra ``shard_000099.npz``), or whose bytes differ (a shard copied over another index), is refused, one
line naming the file. A listed shard whose file is missing (the run was stopped between the two writes) is
run again. Appending one line per shard keeps the bookkeeping linear in the number of shards; a last line
cut by a kill (no newline) is dropped, and cut off before the next line is appended.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from hexnn_import.errors import InputDataError
from hexnn_import.serialize import atomic_write_bytes

LEDGER_FILE = "run.shards"


def run_digest(fingerprint: dict[str, Any]) -> str:
    """The digest that ties a ledger line to one run (its ``run.json`` content)."""
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()


def bytes_digest(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


@dataclass(frozen=True)
class Entry:
    """One finished shard: its index, its number of samples and the digest of its file."""

    index: int
    samples: int
    sha256: str


class Ledger:
    """``run.shards`` of one folder and one run (module doc)."""

    def __init__(self, folder: Path, run: str) -> None:
        self.path = folder / LEDGER_FILE
        self.run = run

    def create(self) -> None:
        """An empty list (a new run)."""
        atomic_write_bytes(self.path, b"")

    def read(self, samples_of: Callable[[int], int | None]) -> dict[int, Entry]:
        """The entries by index (a later line for an index wins); ``samples_of(index)`` is the sample count of
        shard ``index`` in this run (None: no such shard). InputDataError, one line, for a line that is not
        this run's, and when the list is missing."""
        try:
            text = self.path.read_bytes()
        except FileNotFoundError as exc:
            raise InputDataError(f"--results {self.path.parent}: has no {LEDGER_FILE} (the list of its finished "
                                 f"shards); choose another folder") from exc
        except OSError as exc:
            raise InputDataError(f"{self.path}: cannot read it ({exc.strerror or exc})") from exc
        lines = text.split(b"\n")
        entries: dict[int, Entry] = {}
        for n, raw in enumerate(lines[:-1], 1):  # the last piece has no newline: empty, or cut by a kill
            entry = self._parse(raw, n, samples_of)
            entries[entry.index] = entry
        return entries

    def _parse(self, raw: bytes, n: int, samples_of: Callable[[int], int | None]) -> Entry:
        try:
            d = json.loads(raw)
            entry = Entry(int(d["shard"]), int(d["samples"]), str(d["sha256"]))
            run = d["run"]
        except (ValueError, KeyError, TypeError) as exc:
            raise InputDataError(f"{self.path}: line {n} is not a shard entry ({exc}); choose another "
                                 f"folder") from exc
        if run != self.run:
            raise InputDataError(f"{self.path}: line {n} is another run's (not this run.json's); choose another "
                                 f"folder")
        if samples_of(entry.index) != entry.samples:
            raise InputDataError(f"{self.path}: line {n} lists shard {entry.index} with {entry.samples} samples, "
                                 f"which this run does not have; choose another folder")
        return entry

    def repair(self) -> None:
        """Cut a last line left without its newline by a kill, so that the next line starts afresh."""
        try:
            with open(self.path, "r+b") as fh:  # opened for writing: a read-only folder fails here, before any run
                text = fh.read()
                if text and not text.endswith(b"\n"):
                    fh.truncate(text.rfind(b"\n") + 1)
        except OSError as exc:
            raise InputDataError(f"--results {self.path.parent}: cannot write in it ({exc.strerror or exc})") \
                from exc

    def append(self, entry: Entry) -> None:
        """Record a finished shard (before its file is written: module doc)."""
        line = json.dumps({"run": self.run, "shard": entry.index, "samples": entry.samples,
                           "sha256": entry.sha256}) + "\n"
        try:  # one write of one line at the end (O_APPEND): not a whole-file replace, which would be quadratic
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
        except OSError as exc:
            raise InputDataError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
