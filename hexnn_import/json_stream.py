"""``json.dumps(doc, indent=1)``, written piece by piece: a large document never held whole (issue 38 [Robust]).

A graph file of 100,000 nodes was built as one dict, then as the list of the ~80 million small strings
Python's json encoder yields for an indented document, then as one string and its bytes: 6.3 GB to write a
file of a few hundred MB. Here the document's big parts are :class:`LazyList` / :class:`LazyDict` values, whose
items are produced (and encoded, and dropped) one at a time.

The text is json's own: every item is encoded by :class:`json.JSONEncoder` with the same settings
(``indent=1``, ``ensure_ascii``, ``allow_nan``; the standard library's ``json/encoder.py``) and placed at its
depth by indenting its continuation lines, which is exact because an encoded JSON value holds no raw line
break (json escapes them inside strings). Containers follow json's layout: ``[]`` / ``{}`` when empty, else
one item per line, ``,`` at line ends, the closing bracket on its own line at the container's depth.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from json.encoder import encode_basestring_ascii
from typing import Any

INDENT = 1
_ENCODER = json.JSONEncoder(indent=INDENT)


class LazyList:
    """A JSON array whose items ``make()`` yields when it is written (once)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Iterable[Any]]):
        self.make = make


class LazyDict:
    """A JSON object whose ``(key, value)`` pairs ``make()`` yields when it is written (once); values may be lazy."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Iterable[tuple[str, Any]]]):
        self.make = make


def iter_json(value: Any, level: int = 0) -> Iterator[str]:
    """The pieces of ``json.dumps(value, indent=1)`` (``value`` at nesting ``level``), lazy parts produced as
    they are reached."""
    if isinstance(value, LazyList):
        yield from _container(((None, v) for v in value.make()), "[", "]", level)
    elif isinstance(value, LazyDict):
        yield from _container(value.make(), "{", "}", level)
    else:
        text = _plain(value, "\n" + " " * (INDENT * level))
        if text is None:  # a type _plain leaves to json (it raises on what it cannot encode)
            text = _ENCODER.encode(value)
            text = text.replace("\n", "\n" + " " * (INDENT * level)) if level and "\n" in text else text
        yield text


_FLOAT_REPR = float.__repr__
_INT_REPR = int.__repr__
_INF = float("inf")


def _plain(value: Any, nl: str) -> str | None:
    """json's indented text of ``value`` (its lines after the first starting with ``nl``) for the types graph
    files hold - dicts with str keys, lists, tuples, str, int, float, bool, None - as ``json/encoder.py``
    writes them (``float.__repr__``, ``NaN`` / ``Infinity``, ASCII escapes, ``int.__repr__`` for int
    subclasses), without its generator per container (speed); None for anything else."""
    t = type(value)
    if t is str:
        return encode_basestring_ascii(value)
    if t is int:
        return _INT_REPR(value)
    if t is list or t is tuple:
        if not value:
            return "[]"
        inner = nl + " " * INDENT
        if all(type(v) is int for v in value):  # shapes, refs
            return "[" + inner + ("," + inner).join(map(_INT_REPR, value)) + nl + "]"
        parts = [_plain(v, inner) for v in value]
        return None if None in parts else "[" + inner + ("," + inner).join(parts) + nl + "]"  # type: ignore[arg-type]
    if t is dict:
        if not value:
            return "{}"
        inner = nl + " " * INDENT
        out = []
        for k, v in value.items():
            text = _plain(v, inner) if type(k) is str else None
            if text is None:
                return None
            out.append(encode_basestring_ascii(k) + ": " + text)
        return "{" + inner + ("," + inner).join(out) + nl + "}"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        if value != value:
            return "NaN"
        return "Infinity" if value == _INF else "-Infinity" if value == -_INF else _FLOAT_REPR(value)
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, int):
        return _INT_REPR(value)
    return None


def _container(items: Iterable[tuple[str | None, Any]], open_: str, close: str, level: int) -> Iterator[str]:
    inner = "\n" + " " * (INDENT * (level + 1))
    first = True
    for key, v in items:
        yield (open_ if first else ",") + inner
        first = False
        if key is not None:
            yield encode_basestring_ascii(key) + ": "
        yield from iter_json(v, level + 1)
    yield open_ + close if first else "\n" + " " * (INDENT * level) + close


def iter_bytes(value: Any, chunk: int = 1 << 16) -> Iterator[bytes]:
    """:func:`iter_json` as UTF-8 bytes, in pieces of about ``chunk`` characters (few writes, little held)."""
    parts: list[str] = []
    size = 0
    for piece in iter_json(value):
        parts.append(piece)
        size += len(piece)
        if size >= chunk:
            yield "".join(parts).encode("utf-8")
            parts, size = [], 0
    if parts:
        yield "".join(parts).encode("utf-8")
