"""The command line's plumbing: one-line errors, the default group, where outputs go.

Every error the toolkit raises on purpose, and every click usage error, is one
line on stderr with exit code 2; an internal error is one line with exit code 3
(``HEXNN_DEBUG=1`` shows the traceback). Outputs go to the current directory
unless ``-o`` says otherwise, and never over the model being read.
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from hexnn_import.errors import HexnnError, InputDataError

EXIT_USER_ERROR = 2
EXIT_INTERNAL = 3


def handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn HexnnError into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HexnnError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug: still one line, unless debugging
            if os.environ.get("HEXNN_DEBUG"):
                raise
            click.echo(f"internal error (please report; HEXNN_DEBUG=1 shows the traceback): "
                       f"{type(exc).__name__}: {exc}", err=True)
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
    from hexnn_import.api import GRAPH_SUFFIX

    p = Path(model)
    name = p.name[: -len(GRAPH_SUFFIX)] if p.name.endswith(GRAPH_SUFFIX) else p.stem
    return Path(name + GRAPH_SUFFIX)


def default_output_path(model: str, emit_fmt: str) -> Path:
    """The file ``--emit FMT`` writes without ``-o``: the model's stem with the format's suffix, in the
    current directory."""
    from hexnn_import.emit import default_emit_path

    return default_graph_path(model) if emit_fmt == "json" else Path(default_emit_path(model, emit_fmt).name)


def refuse_overwriting_model(model: str, *outputs: str | os.PathLike | None) -> None:
    """An InputDataError when an output file is the model file itself (``-o model.tflite``, or the default
    ``x.hexnn.json`` when converting ``x.hexnn.json`` in its own folder): the model is never overwritten."""
    src = Path(model)
    if not src.is_file():
        return
    for out in outputs:
        if out is not None and Path(out).exists() and Path(out).resolve() == src.resolve():
            raise InputDataError(f"{out}: is the model being read; it is never overwritten (give -o another file)")
