"""xs3/c_network._c_str writes every name as hexnn_import.emit.c_text.c_string does (its fast path for plain
ASCII names must not change a header's bytes): every single code point below 0x180, a few wider ones, and
names mixing them."""
from __future__ import annotations

from hexnn_import.emit.c_text import c_string
from hexnn_import.xs3.c_network import _c_str


def test_every_char_and_mixed_names_as_c_string() -> None:
    chars = [chr(c) for c in range(0x180)] + ["\u20ac", "\U0001f600", "\ud800"]
    names = chars + [f"layer/{c}x" for c in chars] + ["", "??=", "a\\b", 'q"q', "conv2d/BiasAdd;1", "x" * 300]
    for name in names:
        assert _c_str(name) == c_string(name), repr(name)
