"""Where the structure of a model file lies, for the fuzzer's targeted mutations.

Random byte flips rarely reach the interesting failures of a reader: a
length that points past the end, a truncation exactly between two tables, a
tensor index that names another tensor. The walkers here read a *valid* seed
file and list, by byte position,

- ``boundaries``: where one structural element ends and the next begins
  (flatbuffer tables, vtables, vectors and strings; protobuf fields and
  sub-messages; JSON tokens) - the truncation points;
- ``lengths``: fields holding a size, an offset or a count (flatbuffer
  uoffsets, soffsets, vtable entries and vector lengths; protobuf length
  varints and dimension values) - where oversized values go;
- ``indices``: fixed-width fields holding an index into another table
  (TFLite tensor indices of operators and subgraphs, buffer and opcode
  indices) - the fields the fuzzer swaps;
- ``values``: fixed-width scalars with a meaning (shape entries, scales, zero
  points, tensor types) - where boundary values (0, -1, NaN, 2**31-1) go.

The flatbuffer schema below is the part of TFLite's ``schema.fbs`` the
importer reads (vtable slot byte offset -> kind), checked against the
generated ``tflite`` package's accessors; the protobuf schema is the part of
``onnx.proto`` that holds the graph.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Structure:
    """Byte positions of a file's structure (module doc); ``(pos, width, kind)`` triples."""

    boundaries: set[int] = field(default_factory=set)
    lengths: list[tuple[int, int, str]] = field(default_factory=list)
    indices: list[tuple[int, int, str]] = field(default_factory=list)
    values: list[tuple[int, int, str]] = field(default_factory=list)


# ---- TFLite flatbuffers -----------------------------------------------------------------
# kind: ("str",), ("vec", element size, element kind or None), ("tables", type), ("table", type)
_FB_SCHEMA: dict[str, dict[int, tuple[Any, ...]]] = {
    "Model": {6: ("tables", "OperatorCode"), 8: ("tables", "SubGraph"), 10: ("str",), 12: ("tables", "Buffer"),
              14: ("vec", 4, "buffer"), 16: ("tables", "Metadata"), 18: ("tables", "SignatureDef")},
    "SubGraph": {4: ("tables", "Tensor"), 6: ("vec", 4, "tensor"), 8: ("vec", 4, "tensor"),
                 10: ("tables", "Operator"), 12: ("str",)},
    "Tensor": {4: ("vec", 4, "dim"), 10: ("str",), 12: ("table", "QuantizationParameters"),
               16: ("table", None), 18: ("vec", 4, "dim")},
    "Operator": {6: ("vec", 4, "tensor"), 8: ("vec", 4, "tensor"), 12: ("table", None), 14: ("vec", 1, None),
                 18: ("vec", 1, None), 20: ("vec", 4, "tensor"), 28: ("table", None)},
    "OperatorCode": {6: ("str",)},
    "Buffer": {4: ("vec", 1, None)},
    "QuantizationParameters": {4: ("vec", 4, "f32"), 6: ("vec", 4, "f32"), 8: ("vec", 4, "scale"),
                               10: ("vec", 8, "zero_point"), 14: ("table", None)},
    "Metadata": {4: ("str",)},
    "SignatureDef": {4: ("tables", "TensorMap"), 6: ("tables", "TensorMap"), 8: ("str",)},
    "TensorMap": {4: ("str",)},
}
# scalar fields worth targeting: (table, slot) -> (width, kind)
_FB_SCALARS: dict[tuple[str, int], tuple[int, str]] = {
    ("Tensor", 6): (1, "tensor_type"), ("Tensor", 8): (4, "buffer"), ("Operator", 4): (4, "opcode"),
    ("OperatorCode", 4): (1, "opcode_code"), ("OperatorCode", 10): (4, "opcode_code"),
    ("QuantizationParameters", 16): (4, "axis"), ("Buffer", 6): (8, "u64"), ("Buffer", 8): (8, "u64"),
}


def flatbuffer_structure(buf: bytes, root: str = "Model") -> Structure:
    """Walk a TFLite flatbuffer from its root table and record its structure (module doc)."""
    s = Structure(boundaries={0, 4, 8, len(buf)})
    if len(buf) < 8:
        return s
    s.lengths.append((0, 4, "u32"))
    seen: set[int] = set()

    def u16(p: int) -> int:
        return struct.unpack_from("<H", buf, p)[0]

    def u32(p: int) -> int:
        return struct.unpack_from("<I", buf, p)[0]

    def table(pos: int, kind: str | None) -> None:
        if pos in seen or not 0 <= pos <= len(buf) - 4:
            return
        seen.add(pos)
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        if not 0 <= vt <= len(buf) - 4:
            return
        s.lengths.append((pos, 4, "s32"))
        vt_size, tbl_size = u16(vt), u16(vt + 2)
        s.boundaries.update({pos, vt, vt + 2, vt + 4, vt + vt_size, pos + 4, pos + tbl_size})
        s.lengths += [(vt, 2, "u16"), (vt + 2, 2, "u16")]
        schema = _FB_SCHEMA.get(kind or "", {})
        for slot in range(4, vt_size, 2):
            if vt + slot + 2 > len(buf):
                break
            s.lengths.append((vt + slot, 2, "u16"))
            fo = u16(vt + slot)
            if fo == 0:
                continue
            fp = pos + fo
            s.boundaries.add(fp)
            scalar = _FB_SCALARS.get((kind or "", slot))
            if scalar is not None:
                width, what = scalar
                (s.indices if what in ("buffer", "opcode") else s.values).append((fp, width, what))
            spec = schema.get(slot)
            if spec is None or fp + 4 > len(buf):
                continue
            s.lengths.append((fp, 4, "u32"))
            target = fp + u32(fp)
            if spec[0] == "table":
                table(target, spec[1])
            elif target + 4 <= len(buf):
                vector(target, spec)

    def vector(start: int, spec: tuple[Any, ...]) -> None:
        n = u32(start)
        size = 1 if spec[0] == "str" else (4 if spec[0] == "tables" else spec[1])
        end = start + 4 + n * size
        if end > len(buf):
            return
        s.lengths.append((start, 4, "u32"))
        s.boundaries.update({start, start + 4, end})
        for k in range(n if spec[0] != "str" else 0):
            ep = start + 4 + k * size
            if spec[0] == "tables":
                s.lengths.append((ep, 4, "u32"))
                s.boundaries.add(ep)
                table(ep + u32(ep), spec[1])
            elif spec[2] == "tensor":
                s.indices.append((ep, 4, "tensor"))
            elif spec[2] is not None:
                s.values.append((ep, size, spec[2]))

    table(u32(0), root)
    return s


# ---- ONNX protobuf ----------------------------------------------------------------------
# message -> {field number: sub-message type}
_PB_SCHEMA: dict[str, dict[int, str]] = {
    "ModelProto": {7: "GraphProto", 8: "OperatorSetIdProto", 14: "StringStringEntryProto"},
    "GraphProto": {1: "NodeProto", 5: "TensorProto", 11: "ValueInfoProto", 12: "ValueInfoProto",
                   13: "ValueInfoProto"},
    "NodeProto": {5: "AttributeProto"},
    "AttributeProto": {5: "TensorProto", 6: "GraphProto", 10: "TensorProto", 11: "GraphProto"},
    "TensorProto": {13: "StringStringEntryProto"},
    "ValueInfoProto": {2: "TypeProto"},
    "TypeProto": {1: "TypeProto.Tensor"},
    "TypeProto.Tensor": {2: "TensorShapeProto"},
    "TensorShapeProto": {1: "Dimension"},
}
# varint fields holding a size, count or type: (message, field) -> kind
_PB_VARINTS: dict[tuple[str, int], str] = {
    ("TensorProto", 1): "dim", ("Dimension", 1): "dim", ("TensorProto", 2): "type",
    ("TypeProto.Tensor", 1): "type", ("AttributeProto", 3): "attr", ("AttributeProto", 8): "attr",
    ("OperatorSetIdProto", 2): "opset", ("ModelProto", 1): "ir_version",
}


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the base-128 varint at ``pos``; ValueError past the end."""
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def encode_varint(value: int) -> bytes:
    """The base-128 varint of a non-negative integer (negative: two's complement in 64 bits)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def protobuf_structure(buf: bytes, root: str = "ModelProto") -> Structure:
    """Walk an ONNX protobuf by field and record its structure (module doc)."""
    s = Structure(boundaries={0, len(buf)})

    def message(start: int, end: int, kind: str, depth: int) -> None:
        pos = start
        while pos < end and depth < 32:
            s.boundaries.add(pos)
            try:
                key, p = read_varint(buf, pos)
                number, wire = key >> 3, key & 7
                if wire == 0:
                    _, q = read_varint(buf, p)
                    what = _PB_VARINTS.get((kind, number))
                    if what is not None:
                        s.lengths.append((p, q - p, "varint:" + what))
                    pos = q
                elif wire == 2:
                    n, q = read_varint(buf, p)
                    s.lengths.append((p, q - p, "varint:length"))
                    s.boundaries.update({p, q, q + n})
                    sub = _PB_SCHEMA.get(kind, {}).get(number)
                    if sub is not None:
                        message(q, q + n, sub, depth + 1)
                    elif _PB_VARINTS.get((kind, number)) == "dim":  # packed dims
                        r = q
                        while r < q + n:
                            _, r2 = read_varint(buf, r)
                            s.lengths.append((r, r2 - r, "varint:dim"))
                            r = r2
                    pos = q + n
                elif wire == 5:
                    pos = p + 4
                elif wire == 1:
                    pos = p + 8
                else:
                    return
            except ValueError:
                return
            s.boundaries.add(pos)

    message(0, len(buf), root, 0)
    return s


# ---- JSON (graph files) -------------------------------------------------------------------
def json_structure(buf: bytes) -> Structure:
    """Token boundaries of a JSON text: every structural character and both ends of every string/number."""
    s = Structure(boundaries={0, len(buf)})
    in_str = esc = False
    prev_num = False
    for i, c in enumerate(buf):
        ch = chr(c)
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
                s.boundaries.update({i, i + 1})
            continue
        is_num = ch in "-+0123456789.eE"
        if ch == '"':
            in_str = True
            s.boundaries.add(i)
        elif ch in "{}[],:":
            s.boundaries.update({i, i + 1})
        if is_num != prev_num:
            s.boundaries.add(i)
        prev_num = is_num
    return s


__all__ = ["Structure", "flatbuffer_structure", "protobuf_structure", "json_structure", "read_varint",
           "encode_varint"]
