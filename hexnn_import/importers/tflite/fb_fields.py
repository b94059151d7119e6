"""Fields of a flatbuffer table read straight from the file's bytes, as the generated ``tflite`` accessors read them.

Each generated accessor (``Tensor.Type()``, ``Tensor.Name()``, ``Tensor.Quantization()`` ...) looks its
table's vtable up again through several layers of the ``flatbuffers`` package (``Table.Offset``, ``Get``,
``enforce_number``): about 5 us a field, a third of reading a 10,000-tensor model (issue 38). :class:`Fields`
reads the vtable once and each field with one ``struct`` call at the same offsets (flatbuffers ``table.py``:
``Offset``, ``Indirect``, ``String``, ``Vector``, ``VectorLen``; the FlatBuffers binary format: a table
starts with the signed offset back to its vtable, whose first two uint16 are its own size and the table's,
then one uint16 offset per field, 0 or past the vtable for an absent field).
"""
from __future__ import annotations

import struct
from typing import Any, Iterator

import numpy as np

_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from
_U16 = struct.Struct("<H").unpack_from
_SCALARS = {"i8": struct.Struct("<b").unpack_from, "u8": struct.Struct("<B").unpack_from,
            "i32": _I32, "u32": _U32}


def _uint32(pos: int) -> None:
    """flatbuffers ``enforce_number(pos, UOffsetTFlags)``: a position outside uint32 is its TypeError."""
    if not 0 <= pos <= 0xFFFFFFFF:
        raise TypeError(f"bad number {pos} for type uint32")


class Fields:
    """The fields of the table at ``pos`` in ``buf``; a field's absolute position is 0 when it is absent."""

    __slots__ = ("buf", "pos", "vtable", "vsize")

    def __init__(self, buf: bytes, pos: int, checked: bool = True):
        self.buf, self.pos = buf, pos
        if checked:  # flatbuffers' enforce_number on each position it reads: its error
            _uint32(pos)
        self.vtable = pos - _I32(buf, pos)[0]
        if checked:
            _uint32(self.vtable)
        self.vsize = _U16(buf, self.vtable)[0]

    def at(self, slot: int) -> int:
        """The absolute position of field ``slot`` (its vtable offset, 4, 6, ...), 0 when absent
        (``Table.Offset``)."""
        if slot >= self.vsize:
            return 0
        off = _U16(self.buf, self.vtable + slot)[0]
        return self.pos + off if off else 0

    def scalar(self, slot: int, kind: str, default: int = 0) -> int:
        """An integer field (``kind``: i8, u8, i32, u32), ``default`` when absent."""
        at = self.at(slot)
        return _SCALARS[kind](self.buf, at)[0] if at else default

    def table(self, slot: int) -> int:
        """The position of the sub-table field ``slot`` points to, 0 when absent (``Table.Indirect``)."""
        at = self.at(slot)
        return at + _U32(self.buf, at)[0] if at else 0

    def string(self, slot: int) -> bytes | None:
        """A string field, None when absent; ValueError when it runs past the end of the file (the generated
        accessor would return it cut short)."""
        at = self.at(slot)
        if not at:
            return None
        at += _U32(self.buf, at)[0]
        n = _U32(self.buf, at)[0]
        text = bytes(self.buf[at + 4:at + 4 + n])
        if len(text) != n:
            raise ValueError(f"a string of {n} bytes runs past the end of the file")
        return text

    def vector(self, slot: int, stored: Any) -> np.ndarray | None:
        """A vector field of scalars of numpy type ``stored`` (``GetVectorAsNumpy``), None when absent."""
        at = self.at(slot)
        if not at:
            return None
        at += _U32(self.buf, at)[0]
        return np.frombuffer(self.buf, stored, _U32(self.buf, at)[0], at + 4)

    def offsets(self, slot: int) -> Iterator[int]:
        """The positions of the tables a vector-of-tables field points to, one at a time as the generated
        ``Tensors(i)`` reads them (``Vector`` then ``Indirect``); none when absent."""
        at = self.at(slot)
        if not at:
            return
        buf = self.buf
        _uint32(at)
        at += _U32(buf, at)[0]
        for k in range(_U32(buf, at)[0]):
            elem = at + 4 + 4 * k
            _uint32(elem)
            pos = elem + _U32(buf, elem)[0]
            _uint32(pos)  # flatbuffers' Table(buf, pos)
            yield pos
