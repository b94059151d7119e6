"""The command line's plumbing: one-line errors, the default group, where outputs go.

Every error the toolkit raises on purpose, and every click usage error, is one
line on stderr with exit code 2; an internal error is one line with exit code 3
(``HEXNN_DEBUG=1`` shows the traceback). Outputs go to the current directory
unless ``-o`` says otherwise, and never over a file the same command reads
(:func:`refuse_overwriting_inputs`, issue 20 finding 1). ``--max-memory``
sets the memory budget of :mod:`hexnn_import.memory` before anything is read.
"""
from __future__ import annotations

import functools
import io
import os
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Union

import click
import numpy as np

from hexnn_import.errors import HexnnError, InputDataError
from hexnn_import.optional import as_missing_dependency
from hexnn_import.model_source import GRAPH_SUFFIX
from hexnn_import.printable import one_line_warnings, printable

EXIT_USER_ERROR = 2
EXIT_INTERNAL = 3


def handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn HexnnError into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with one_line_warnings():  # numpy's float warnings off, others one line (issue 38, finding 8)
                return fn(*args, **kwargs)
        except HexnnError as exc:
            click.echo(f"error: {printable(str(exc))}", err=True)  # a name's newline forges no second line
            sys.exit(EXIT_USER_ERROR)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug: still one line, unless debugging
            missing = as_missing_dependency(exc)
            if missing is not None:  # an optional package (hexnn_import.optional.EXTRAS): the user's to install
                click.echo(f"error: {printable(str(missing))}", err=True)
                sys.exit(EXIT_USER_ERROR)
            if os.environ.get("HEXNN_DEBUG"):
                raise
            click.echo(f"internal error (please report; HEXNN_DEBUG=1 shows the traceback): "
                       f"{type(exc).__name__}: {printable(str(exc))}", err=True)
            sys.exit(EXIT_INTERNAL)

    return wrapper


class DefaultGroup(click.Group):
    """A group whose first argument, if not a subcommand, is a MODEL for ``convert``; its usage errors
    print one line (``error: ...``, exit 2) like every other error, instead of click's Usage / Try / Error."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["convert", *args]
        return super().parse_args(ctx, args)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        """click's standalone main, but a ClickException (usage errors included) is one line on stderr."""
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as exc:
            click.echo(f"error: {usage_error_line(exc)}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)  # --help / --version return their exit code


def usage_error_line(exc: click.ClickException) -> str:
    """``No such option: --inptu (see 'hexnn-import run --help')``: click's message on one line, with the
    help command of the (sub)command it concerns."""
    msg = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        msg += f" (see '{ctx.command_path} --help')"
    return msg


def default_graph_path(model: str) -> Path:
    """``models/x.tflite`` -> ``x.hexnn.json`` in the current directory: outputs never land in the model's
    folder unless asked (``-o``), so following the README writes nothing into ``models/``."""
    p = Path(model)
    name = p.name[: -len(GRAPH_SUFFIX)] if p.name.endswith(GRAPH_SUFFIX) else p.stem
    return Path(name + GRAPH_SUFFIX)


def default_output_path(model: str, emit_fmt: str) -> Path:
    """The file ``--emit FMT`` writes without ``-o``: the model's stem with the format's suffix, in the
    current directory."""
    from hexnn_import.emit import default_emit_path

    return default_graph_path(model) if emit_fmt == "json" else Path(default_emit_path(model, emit_fmt).name)


#: a path as the command line gives it, None when the option is absent
PathArg = Union[str, "os.PathLike[str]", None]


def _same_file(a: Path, b: Path) -> bool:
    """The same file: one inode (hard links, symbolic links) when both exist, else the same resolved path
    (``./x`` and ``x``, ``d/../x``)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic-link loop
        return False


def _inside(path: Path, folder: Path) -> bool:
    """``path`` is ``folder`` or lies somewhere below it (both resolved)."""
    try:
        p, f = path.resolve(), folder.resolve()
    except (OSError, RuntimeError):
        return False
    return p == f or f in p.parents


def refuse_overwriting_inputs(inputs: Mapping[str, PathArg], outputs: Mapping[str, PathArg],
                              out_folder: tuple[str, PathArg] | None = None) -> None:
    """An InputDataError (one line, before anything is written) when an output would replace an input of
    the same command: an output file that is an input file (symbolic and hard links, ``./x`` and ``x``
    included), two outputs that are one file, or an output folder that holds an input (``xs3-export``
    replaces the folder whole).

    ``inputs`` and ``outputs`` map how the command line names each file (``MODEL``, ``--input``, ``-o``,
    ``--report``) to its path, None when not given; ``out_folder`` is ``(option, folder)``.
    """
    ins = {label: Path(p) for label, p in inputs.items() if p is not None and str(p) not in ("", "-")}
    outs = {label: Path(p) for label, p in outputs.items() if p is not None and str(p) not in ("", "-")}
    for out_label, out in outs.items():
        for in_label, src in ins.items():
            if _same_file(out, src):
                what = "MODEL" if in_label == "MODEL" else f"the {in_label} file"
                raise InputDataError(f"{out_label} {out}: is {what}, which this command reads; an input is "
                                     f"never overwritten (write the output to another file)")
    seen: dict[str, Path] = {}
    for out_label, out in outs.items():
        for other_label, other in seen.items():
            if _same_file(out, other):
                raise InputDataError(f"{other_label} {other} and {out_label} {out}: are one file; give two "
                                     f"different files")
        seen[out_label] = out
    if out_folder is not None and out_folder[1] is not None:
        label, folder = out_folder[0], Path(out_folder[1])
        for in_label, src in ins.items():
            if _inside(src, folder):
                what = "MODEL" if in_label == "MODEL" else f"the {in_label} file"
                raise InputDataError(f"{label} {folder}: holds {what} {src}, which this command reads; the "
                                     f"output folder is replaced whole and an input is never overwritten "
                                     f"(give {label} another folder)")


def _set_memory_budget(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``--max-memory``: fix this invocation's budget (none given: back to the environment / default)."""
    from hexnn_import.memory import parse_size, set_budget

    try:
        set_budget(None if value is None else parse_size(value))
    except HexnnError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


def max_memory_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--max-memory SIZE`` option, processed before the command's other options and body."""
    return click.option(
        "--max-memory", "max_memory", metavar="SIZE", default=None, expose_value=False, is_eager=True,
        callback=_set_memory_budget,
        help="memory budget: refuse any input array, tensor or activation plan above SIZE (2G, 512M, or "
             "bytes; default: $HEXNN_MAX_MEMORY, else half the physical memory)")(fn)


def graph_input_shapes(graph: Any) -> dict[str, tuple[int, ...] | None]:
    """``{input name: shape}`` of a graph, for checking an input file's headers before reading it."""
    return {gio.name: tuple(int(d) for d in gio.shape) if gio.shape else None for gio in graph.inputs}


def outputs_npz(results: Mapping[str, np.ndarray]) -> bytes:
    """The ``run -o`` file's bytes: every output by name (zero-size outputs included, with their shape)."""
    buf = io.BytesIO()
    try:
        np.savez(buf, **{str(k): np.asarray(v) for k, v in results.items()})
    except (ValueError, TypeError) as exc:  # e.g. an output name numpy's zip writer cannot hold
        raise InputDataError(f"cannot write the outputs as .npz: {exc}") from exc
    return buf.getvalue()


def parse_input_shapes(specs: "list[str] | tuple[str, ...]") -> dict[str, tuple[int, ...]]:
    """The CLI's ``["name=1,3,224,224", ...]`` -> ``{name: (1, 3, 224, 224)}`` (InputDataError when malformed)."""
    out: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, sep, dims = spec.rpartition("=")
        try:
            shape = tuple(int(v) for v in dims.split(","))
        except ValueError:
            shape = ()
        if not sep or not name or not shape or any(v <= 0 for v in shape):
            raise InputDataError(f"--input-shape '{spec}': expected NAME=D1,D2,... with positive integers")
        out[name] = shape
    return out
