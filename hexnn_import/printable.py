"""File names and other outside text made safe to print on one line or inside a C comment (issue 38,
findings 4b and 8).

A POSIX file name is any bytes but ``/`` and NUL: Python decodes the undecodable bytes to lone surrogates
(PEP 383, ``surrogateescape``), which ``str.encode("utf-8")`` refuses (an xs3-export of such a file failed
with UnicodeEncodeError), and a newline in a name could forge a second ``error:`` line. :func:`printable`
writes undecodable bytes as ``\\xNN`` and control characters as Python escapes (``\\n``, ``\\x1b``).
:func:`one_line_warnings` keeps a command's stderr to one line per message: numpy's floating-point warnings
(the engine follows C's float arithmetic, where an overflow to inf is no signal) are not raised, and any other
Python warning is one ``warning:`` line.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator
from typing import TextIO

import numpy as np

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: "str | os.PathLike[str]") -> str:
    """``text`` with undecodable bytes as ``\\xNN`` and control characters escaped (one line, valid UTF-8)."""
    s = os.fspath(text)
    if any("\udc80" <= ch <= "\udcff" for ch in s):
        s = s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    s = s.encode("utf-8", "backslashreplace").decode("utf-8")  # any other lone surrogate
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)


def c_comment_text(text: "str | os.PathLike[str]") -> str:
    """:func:`printable`, and never a comment's end (``*/`` becomes ``* /``)."""
    return printable(text).replace("*/", "* /")


def _one_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
              file: TextIO | None = None, line: str | None = None) -> None:
    """``warnings.showwarning`` as one ``warning: <category>: <message>`` line on stderr."""
    print(f"warning: {category.__name__}: {printable(str(message))}", file=file or sys.stderr)


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """The block with numpy's floating-point warnings off and other warnings as one line each (module doc);
    an ``np.errstate`` inside the block still decides for its own code."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.showwarning = _one_line
        yield



