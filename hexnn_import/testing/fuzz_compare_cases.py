"""The compare-side findings of issue 38 ([Robust]) as rows of the pipeline fuzz's seed set (``npz`` format).

Each row is a ``compare`` command on a small int8 model in a setting the issue found broken; its seed's bytes
are the row's artefact (the stray shard, the image, the ``--data`` text), written as the case's input file.
A row whose label starts ``malformed_`` must be refused in one line (exit 2) at its ``load`` stage, as a
malformed model must be at convert; the others must run. They run unmutated (their settings, not their bytes,
are the point; the byte-level cases of the same commands are in tests/robust):

- ``resume_stray_shard`` (finding 6): an extra ``shard_000099.npz`` in a finished run's ``--results`` folder,
  then ``--resume``: refused, naming the file;
- ``readonly_results`` (finding 4): ``--results`` in a folder that refuses writes: refused before any run;
- ``image_bomb`` (finding 4): a 13,500 x 13,500 PNG (182 M pixels, under 1 MB) among the ``--data`` images:
  refused, naming the file;
- ``generated_huge`` (finding 9): ``--data generated:1000000000000 --limit 2``: streams, runs two samples.

A Dask cluster that loses every worker (finding 4) needs a real scheduler and workers (seconds to start, tens
of MiB each): it stays in tests/robust/test_cluster_faults.py.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import struct
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hexnn_import.testing.fuzz_labels import MALFORMED_PREFIX

#: label prefix of these rows (after ``malformed_`` for the refused ones)
PREFIX = "compare_"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bomb(side: int = 13500) -> bytes:
    """A grey PNG of ``side`` x ``side`` zeros (above Pillow's 179 M-pixel limit) in under 1 MB (PNG spec:
    IHDR, one deflated IDAT, IEND)."""
    pack = zlib.compressobj(1)
    rows = b"\0" * (side + 1) * 100
    data = b"".join(pack.compress(rows) for _ in range(side // 100)) + pack.flush()
    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


@contextlib.contextmanager
def refusing_writes(folder: Path) -> Iterator[None]:
    """Writes under ``folder`` fail as on a read-only file system (EROFS): its mode for a user, ``os.open`` /
    ``os.mkdir`` refusing for root (whom a mode does not stop); restored on exit."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    real_open, real_mkdir = os.open, os.mkdir

    def ro_open(path: Any, flags: int, *a: Any, **k: Any) -> int:
        if str(path).startswith(str(folder)) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *a, **k)

    def ro_mkdir(path: Any, *a: Any, **k: Any) -> None:
        if str(path).startswith(str(folder)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        real_mkdir(path, *a, **k)

    os.open, os.mkdir = ro_open, ro_mkdir  # type: ignore[assignment]
    try:
        yield
    finally:
        os.open, os.mkdir = real_open, real_mkdir  # type: ignore[assignment]


# each row: (artefact bytes, refused?, the stages: fn(stage, cli_call, model, artefact, work))
Stages = Callable[[Callable[..., Any], Callable[..., Any], str, Path, Path], None]


def _resume_stray_shard(stage: Callable[..., Any], cli: Callable[..., Any], model: str, artefact: Path,
                        work: Path) -> None:
    res = work / "results"
    shutil.rmtree(res, ignore_errors=True)
    base = ["compare", model, "--random", "40", "--jobs", "1", "--results", res]  # two shards: 32 and 8
    if stage("setup", cli, base)[0]:
        stray = artefact if artefact.stat().st_size else res / "shard_000001.npz"  # the copy of a shard
        shutil.copy(stray, res / "shard_000099.npz")
        stage("load", cli, [*base, "--resume"])


def _readonly_results(stage: Callable[..., Any], cli: Callable[..., Any], model: str, artefact: Path,
                      work: Path) -> None:
    ro = work / "ro"
    shutil.rmtree(ro, ignore_errors=True)
    ro.mkdir()
    with refusing_writes(ro):
        stage("load", cli, ["compare", model, "--random", "2", "--jobs", "1", "--results", ro / "res"])


def _image_bomb(stage: Callable[..., Any], cli: Callable[..., Any], model: str, artefact: Path, work: Path) -> None:
    images = work / "images"
    shutil.rmtree(images, ignore_errors=True)
    images.mkdir()
    shutil.copy(artefact, images / "b.png")
    stage("load", cli, ["compare", model, "--data", images, "--preprocess", "mobilenet", "--jobs", "1"])


def _generated_huge(stage: Callable[..., Any], cli: Callable[..., Any], model: str, artefact: Path,
                    work: Path) -> None:
    stage("load", cli, ["compare", model, "--data", artefact.read_text(encoding="ascii").strip(), "--limit", "2",
                        "--preprocess", "mobilenet", "--jobs", "1", "--json", work / "compare.json"])


#: name -> (artefact, refused at load, stages)
ROWS: dict[str, tuple[Callable[[], bytes], bool, Stages]] = {
    "resume_stray_shard": (lambda: b"", True, _resume_stray_shard),  # empty: a copy of the run's own shard 1
    "readonly_results": (lambda: b"", True, _readonly_results),
    "image_bomb": (png_bomb, True, _image_bomb),
    "generated_huge": (lambda: b"generated:1000000000000", False, _generated_huge),
}


def row_label(name: str) -> str:
    """The seed label of row ``name`` (``malformed_compare_...`` for the refused ones)."""
    return (MALFORMED_PREFIX if ROWS[name][1] else "") + PREFIX + name + ".npz"


def row_of(label: str) -> str | None:
    """The row name of a seed label, or None for an input-file seed."""
    stem = label.removesuffix(".npz")
    for name in ROWS:
        if stem.endswith(PREFIX + name):
            return name
    return None


def run_row(name: str, model: str, artefact: Path, work: Path, record: Callable[[str, Callable, Any], Any],
            cli_call: Callable[..., Any]) -> None:
    """The stages of row ``name`` (module doc): ``record(stage, fn, args)`` runs and records one stage,
    ``cli_call`` runs the command line (both :mod:`hexnn_import.testing.fuzz_pipeline_stages`')."""
    ROWS[name][2](record, cli_call, model, artefact, work)
