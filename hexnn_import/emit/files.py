"""Writing emitted files: all of them or none (ARCHITECTURE.md, "Habits").

Every file goes through :func:`hexnn_import.serialize.atomic_write_bytes`
(temporary file + rename), so a reader never sees half a file. An emitter
that writes more than one file (C source and its header) needs more: when
the second write fails, the first is rolled back to what was there before,
so a failure never leaves a header without its source or a new header next
to an old source.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from hexnn_import.errors import HexnnError
from hexnn_import.serialize import atomic_write_bytes


class EmitError(HexnnError):
    """A graph cannot be emitted in the asked format (bad target, missing tool, unrepresentable node)."""


def write_files(files: Sequence[tuple[Path, bytes]]) -> list[str]:
    """Write every ``(path, payload)`` atomically, in order; on failure undo the ones already written.

    Returns the paths written, as strings. Put the largest file last: its
    previous content is the only one never read back for the rollback.
    """
    targets = [Path(p) for p, _ in files]
    if len({t.resolve() for t in targets}) != len(targets):
        raise EmitError(f"two emitted files would share one path: {', '.join(map(str, targets))}")
    for t in targets:
        if t.is_dir():
            raise EmitError(f"cannot write {t}: it is a directory")
    done: list[tuple[Path, bytes | None]] = []
    try:
        for i, (path, payload) in enumerate(files):
            target = Path(path)
            last = i == len(files) - 1
            previous = target.read_bytes() if not last and target.is_file() else None
            atomic_write_bytes(target, payload)
            done.append((target, previous))
    except BaseException:
        _roll_back(done)
        raise
    return [str(t) for t in targets]


def _roll_back(done: list[tuple[Path, bytes | None]]) -> None:
    """Put back what was there before each written file (or remove a new one)."""
    for target, previous in reversed(done):
        with contextlib.suppress(OSError, HexnnError):  # best effort: the original error is what matters
            if previous is None:
                target.unlink()
            else:
                atomic_write_bytes(target, previous)
