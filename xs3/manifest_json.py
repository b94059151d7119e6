"""``json.dumps(obj, indent=N)``, byte for byte, without the pure-Python encoder's per-token generators.

The standard library encodes an indented document in Python (``json.encoder._make_iterencode``: only the
compact form has a C encoder), one generator frame per value; a 10,000-layer export's manifest took 0.6 s of
CPU there (issue 38). :func:`dumps_indented` writes the same text with the same rules (``json.encoder``,
CPython 3.11): ``ensure_ascii`` strings (``encode_basestring_ascii``), ``float.__repr__`` with ``NaN`` /
``Infinity``, separators ``","`` and ``": "`` once an indent is given, ``[]`` / ``{}`` for empty containers,
tuples as lists; a list of plain ints (the shapes) or plain strings (tensor names) is joined in one call, and
each key's text is remembered. Any other type (a subclass, a numpy scalar, a non-string key) hands the whole
document back to :func:`json.dumps`, so the answer is always ``json.dumps``'s.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

_INF = float("inf")


class _Other(Exception):
    """A value this encoder leaves to :func:`json.dumps`."""


def _float(v: float) -> str:
    """``json.encoder``'s ``floatstr`` with ``allow_nan=True``."""
    if v != v:
        return "NaN"
    if v == _INF:
        return "Infinity"
    if v == -_INF:
        return "-Infinity"
    return float.__repr__(v)


def dumps_indented(obj: Any, indent: int = 1) -> str:
    """``json.dumps(obj, indent=indent)`` (see the module doc)."""
    out: list[str] = []
    try:
        _encode(obj, "\n", " " * indent, out)
    except (_Other, RecursionError):
        return json.dumps(obj, indent=indent)
    return "".join(out)


_TEXT = {str: encode_basestring_ascii, int: int.__repr__, float: _float, bool: lambda v: "true" if v else "false",
         type(None): lambda v: "null"}
_CONTAINERS = (list, tuple, dict)
#: a key -> its text and ``": "`` (a 10,000-layer manifest repeats some 30 keys 10,000 times)
_KEYS: dict[str, str] = {}
_MAX_KEYS = 4096


def _encode(v: Any, nl: str, step: str, out: list[str]) -> None:
    """Append the text of ``v``, a value whose line break plus indent is ``nl``."""
    text = _TEXT.get(type(v))
    if text is not None:
        out.append(text(v))
        return
    if type(v) not in _CONTAINERS:
        raise _Other
    if not v:
        out.append("{}" if type(v) is dict else "[]")
        return
    inner = nl + step
    sep = "," + inner
    texts = _TEXT
    if type(v) is dict:
        out.append("{")
        head = inner
        keys = _KEYS
        for key, value in v.items():
            key_text = keys.get(key) if type(key) is str else None
            if key_text is None:
                if type(key) is not str:
                    raise _Other
                if len(keys) >= _MAX_KEYS:
                    keys.clear()
                key_text = keys[key] = encode_basestring_ascii(key) + ": "
            text = texts.get(type(value))
            if text is not None:
                out.append(head + key_text + text(value))
            else:
                out.append(head + key_text)
                _encode(value, inner, step, out)
            head = sep
        out.append(nl + "}")
        return
    if all(type(x) is int for x in v):  # a shape: one join
        out.append("[" + inner + sep.join(map(int.__repr__, v)) + nl + "]")
        return
    if all(type(x) is str for x in v):  # tensor names: one join
        out.append("[" + inner + sep.join(map(encode_basestring_ascii, v)) + nl + "]")
        return
    out.append("[")
    first = True
    for item in v:
        out.append(inner if first else sep)
        first = False
        _encode(item, inner, step, out)
    out.append(nl + "]")
