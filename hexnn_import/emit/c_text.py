"""Small pieces of C text: identifiers, comments, string literals, byte arrays, float literals.

Names in a graph come from the source model (``conv1/relu``, ``input:0``)
and may hold anything; these helpers make them safe in the places the C
emitter puts them, so the generated file always compiles.
"""
from __future__ import annotations

import math
import re

import numpy as np

from hexnn_import.emit.files import EmitError

_BYTE_TEXT = [f"0x{b:02x}" for b in range(256)]
BYTES_PER_LINE = 16


def c_identifier(text: str, fallback: str = "hexnn_graph") -> str:
    """A C identifier made from ``text`` (a file stem): other characters become ``_``."""
    ident = re.sub(r"\W", "_", text, flags=re.ASCII).strip("_") or fallback
    if ident[0].isdigit():
        ident = "g_" + ident
    return ident


def c_comment(text: str) -> str:
    """``text`` made safe inside ``/* ... */`` on one line (no ``*/``, no newlines, no trigraphs); any value
    is written as its ``str`` (a name read from a damaged file may be a number)."""
    clean = "".join(ch if ch.isprintable() else "?" for ch in str(text))
    clean = clean.replace("*/", "* /").replace("/*", "/ *")
    return re.sub(r"\?(?=\?)", "? ", clean)  # "??x" would be a trigraph


def c_string(text: str) -> str:
    """A C string literal holding ``text`` as UTF-8 bytes; anything unusual as an octal escape."""
    out = []
    for b in str(text).encode("utf-8", "surrogatepass"):
        ch = chr(b)
        if ch in '"\\?':  # '?' too: "??x" would be a trigraph
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def c_float(value: float) -> str:
    """A C float literal that reads back as the same float32 (``%.9g`` round-trips float32)."""
    v = float(np.float32(value))
    if not math.isfinite(v):
        raise EmitError(f"cannot write the non-finite value {v} as a C float literal")
    text = f"{v:.9g}"
    if not any(c in text for c in ".e"):
        text += ".0"
    return text + "f"


def c_int(value: int) -> str:
    """A C int literal; negative values in parentheses so macros expand safely."""
    return f"({value})" if value < 0 else str(value)


def byte_lines(payload: bytes, indent: str = "    ") -> str:
    """The bytes as ``0x..`` items, :data:`BYTES_PER_LINE` per line, comma separated."""
    table = _BYTE_TEXT
    lines = []
    for start in range(0, len(payload), BYTES_PER_LINE):
        chunk = payload[start:start + BYTES_PER_LINE]
        lines.append(indent + ",".join(table[b] for b in chunk))
    return ",\n".join(lines)


def shape_text(shape: tuple[int, ...]) -> str:
    """``[1,24,24,3]`` for comments."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"
