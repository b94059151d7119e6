"""Writing emitted files: all of them or none (docs/architecture.md, "Habits"; issue 20, finding 2).

Every payload goes through :func:`hexnn_import.serialize.atomic_write_bytes`
(temporary file + rename), or is written inside a hidden folder renamed into place whole, so a reader never
sees half a file. Outputs of
more than one file need more, and get it from renames alone:

- :func:`write_files` (C source and its header; compare's ``--json`` and
  ``--report``): every payload is first written whole to a hidden staging
  file beside its target - where a full disk or Ctrl-C strikes, and then
  nothing has changed - and only then is each staging file renamed over its
  target, the previous file kept aside until all are in place. A rename that
  fails puts every previous file back.
- :func:`write_folder` (``xs3-export``): the whole folder is built under a
  hidden name beside the target and renamed into place; a folder that is
  replaced (``--force``) is renamed away first and deleted only once the new
  one is in. On any failure the target is as it was and no temporary is left.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from hexnn_import.errors import HexnnError
from hexnn_import.serialize import atomic_write_bytes


class EmitError(HexnnError):
    """A graph cannot be emitted in the asked format (bad target, missing tool, unrepresentable node)."""


def _hidden_sibling(target: Path, tag: str) -> Path:
    """``dir/.name.<tag>-<random>``: a hidden, unused name in the target's own folder (renames stay on one
    file system)."""
    return target.with_name(f".{target.name}.{tag}-{secrets.token_hex(4)}")


def write_files(files: Sequence[tuple[Path, bytes]]) -> list[str]:
    """Write every ``(path, payload)``: all of them, or none (each target keeps what it held).

    Returns the paths written, as strings.
    """
    targets = [Path(p) for p, _ in files]
    if len({t.resolve() for t in targets}) != len(targets):
        raise EmitError(f"two emitted files would share one path: {', '.join(map(str, targets))}")
    for t in targets:
        if t.is_dir():
            raise EmitError(f"cannot write {t}: it is a directory")
    staged: list[tuple[Path, Path]] = []
    try:
        for target, (_, payload) in zip(targets, files):
            stage = _hidden_sibling(target, "stage")
            staged.append((stage, target))
            try:
                atomic_write_bytes(stage, payload)  # the slow, failure-prone part: nothing is replaced yet
            except HexnnError as exc:  # name the file asked for, not the hidden staging file
                raise EmitError(str(exc).replace(str(stage), str(target))) from exc
        _swap_in(staged)
    finally:
        for stage, _ in staged:  # left only when something failed
            with contextlib.suppress(OSError):
                stage.unlink()
    return [str(t) for t in targets]


def _swap_in(staged: list[tuple[Path, Path]]) -> None:
    """Rename every staging file over its target; on a failure put every previous file back."""
    done: list[tuple[Path, Path | None]] = []  # (target, where its previous content waits, or None)
    try:
        for stage, target in staged:
            backup = None
            if target.exists() or target.is_symlink():
                backup = _hidden_sibling(target, "old")
                os.replace(target, backup)
            done.append((target, backup))
            os.replace(stage, target)
    except BaseException as exc:
        for target, backup in reversed(done):
            with contextlib.suppress(OSError):  # best effort: the original error is what matters
                if backup is None:
                    target.unlink()
                elif backup.exists() or backup.is_symlink():
                    os.replace(backup, target)
        if isinstance(exc, OSError):
            raise EmitError(f"cannot write {exc.filename or staged[-1][1]}: {exc.strerror or exc}") from exc
        raise
    for _, backup in done:
        if backup is not None:
            with contextlib.suppress(OSError):
                backup.unlink()


def check_folder_target(target: Path, force: bool, option: str = "-o") -> None:
    """An EmitError unless ``target`` may become the output folder: it does not exist, is an empty
    folder, or - with ``force`` - a folder to replace whole. Never the current directory or one above it."""
    if target.exists() and not target.is_dir():
        raise EmitError(f"{option} {target}: is a file, not a folder")
    if not target.is_dir() or not any(target.iterdir()):
        return
    if not force:
        raise EmitError(f"{option} {target}: the folder is not empty; give --force to replace it whole, "
                        f"or another folder")
    real, cwd = target.resolve(), Path.cwd().resolve()
    if cwd == real or real in cwd.parents:
        raise EmitError(f"{option} {target}: holds the current directory; it is never replaced "
                        f"(give another folder)")


def write_folder(target: Path, files: Mapping[str, bytes], force: bool = False, option: str = "-o") -> None:
    """Make ``target`` a folder holding exactly ``files`` (name -> bytes, written in order), or leave it
    as it was: built under a hidden name beside it, then renamed into place.

    An existing non-empty folder is replaced only with ``force`` (:func:`check_folder_target`). A
    symbolic link to a folder keeps pointing where it did: the folder it names is the one replaced.
    """
    target = Path(target)
    if target.is_symlink():
        target = target.resolve()
    check_folder_target(target, force, option)
    parent = target.parent
    made = _make_parents(parent)
    tmp: Path | None = None
    try:
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
            os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; give the usual mode of a new folder
        except OSError as exc:
            raise EmitError(f"cannot write {target}: {exc.strerror or exc}") from exc
        for name, payload in files.items():  # straight in: the hidden folder is new, and renamed in whole
            try:
                _write_new(tmp / name, payload)
            except OSError as exc:  # name the file asked for, not the hidden folder
                raise EmitError(f"cannot write {target / name}: {exc.strerror or exc}") from exc
        _move_into_place(tmp, target, force, option)
        tmp = None
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        for folder in reversed(made):  # only the folders this call created, and only if still empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _write_new(path: Path, payload: bytes) -> None:
    """A new file holding ``payload`` (the usual mode of a new file: 0o666 less the umask). No temporary and
    rename per file as :func:`atomic_write_bytes` does: inside :func:`write_folder`'s hidden folder no
    reader sees the file until the folder is whole (issue 38: 10,000 layer files took 4 s that way)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    with os.fdopen(fd, "wb") as fh:
        fh.write(payload)


def _move_into_place(tmp: Path, target: Path, force: bool, option: str) -> None:
    """Rename ``tmp`` to ``target``; a folder there is renamed away first and deleted last."""
    check_folder_target(target, force, option)  # again: the folder may have changed while building
    old = None
    try:
        if target.is_dir() and any(target.iterdir()):
            old = _hidden_sibling(target, "old")
            os.rename(target, old)
        os.rename(tmp, target)  # over an empty folder too (rename(2) replaces an empty directory)
    except OSError as exc:
        if old is not None and not target.exists():
            with contextlib.suppress(OSError):
                os.rename(old, target)
        raise EmitError(f"cannot write {target}: {exc.strerror or exc}") from exc
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; the ones created, outermost first."""
    missing = []
    p = folder if str(folder) else Path(".")
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    missing.reverse()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        for m in reversed(missing):
            with contextlib.suppress(OSError):
                m.rmdir()
        raise EmitError(f"cannot create {folder}: {exc.strerror or exc}") from exc
    return missing


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
