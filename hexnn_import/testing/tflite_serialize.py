"""Serialize the parts collected by ``TFLiteBuilder`` into a TFLite flatbuffer.

Follows ``tensorflow/lite/schema/schema.fbs`` (schema version 3): one
subgraph, buffer 0 empty, opcodes with ``deprecated_builtin_code`` =
min(code, 127) next to the full ``builtin_code`` (codes past 127 only fit in
the latter), buffer data aligned to 16 bytes as the converter does.
Flatbuffers are built back to front, so every child (vector, string, table)
is written before the table that refers to it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import flatbuffers
import numpy as np
import numpy.typing as npt
import tflite

from hexnn_import.testing.tflite_options import write_options

SCHEMA_VERSION = 3
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127

_TENSOR_TYPES: dict[str, int] = {
    "float32": tflite.TensorType.FLOAT32,
    "float16": tflite.TensorType.FLOAT16,
    "int8": tflite.TensorType.INT8,
    "uint8": tflite.TensorType.UINT8,
    "int16": tflite.TensorType.INT16,
    "int32": tflite.TensorType.INT32,
    "int64": tflite.TensorType.INT64,
    "bool": tflite.TensorType.BOOL,
}


def tensor_type(dtype: npt.DTypeLike) -> int:
    """Return the ``tflite.TensorType`` value of a numpy dtype (or dtype name)."""
    name = np.dtype(dtype).name
    if name not in _TENSOR_TYPES:
        raise ValueError(f"dtype {name} has no TFLite tensor type in this builder")
    return int(_TENSOR_TYPES[name])


@dataclass
class TensorSpec:
    """One tensor as the builder records it; ``scale`` None means not quantized."""

    name: str
    shape: list[int]
    dtype: np.dtype
    buffer: int
    scale: list[float] | None = None
    zero_point: list[int] | None = None
    quantized_dimension: int = 0
    shape_signature: list[int] | None = None  # -1 marks a dynamic dimension


@dataclass
class OperatorSpec:
    """One operator: opcode index, tensor indices (-1 = omitted), options."""

    opcode: int
    inputs: list[int]
    outputs: list[int]
    options_table: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    custom_options: bytes | None = None


def _int_vector(fb: flatbuffers.Builder, values: Sequence[int]) -> int:
    return fb.CreateNumpyVector(np.asarray(values, dtype=np.int32).reshape(-1))


def _offset_vector(fb: flatbuffers.Builder, offsets: Sequence[int]) -> int:
    fb.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        fb.PrependUOffsetTRelative(off)
    return fb.EndVector()


def _byte_vector(fb: flatbuffers.Builder, data: bytes, alignment: int = 16) -> int:
    fb.StartVector(1, len(data), alignment)
    fb.head -= len(data)
    fb.Bytes[fb.head:fb.head + len(data)] = data
    return fb.EndVector()


def _buffer(fb: flatbuffers.Builder, data: bytes) -> int:
    vec = _byte_vector(fb, data) if data else None
    tflite.BufferStart(fb)
    if vec is not None:
        tflite.BufferAddData(fb, vec)
    return tflite.BufferEnd(fb)


def _quantization(fb: flatbuffers.Builder, t: TensorSpec) -> int:
    scale = fb.CreateNumpyVector(np.asarray(t.scale, dtype=np.float32))
    zero_point = fb.CreateNumpyVector(np.asarray(t.zero_point, dtype=np.int64))
    tflite.QuantizationParametersStart(fb)
    tflite.QuantizationParametersAddScale(fb, scale)
    tflite.QuantizationParametersAddZeroPoint(fb, zero_point)
    tflite.QuantizationParametersAddQuantizedDimension(fb, t.quantized_dimension)
    return tflite.QuantizationParametersEnd(fb)


def _tensor(fb: flatbuffers.Builder, t: TensorSpec) -> int:
    name = fb.CreateString(t.name)
    shape = _int_vector(fb, t.shape)
    quant = _quantization(fb, t) if t.scale is not None else None
    sig = _int_vector(fb, t.shape_signature) if t.shape_signature is not None else None
    tflite.TensorStart(fb)
    tflite.TensorAddShape(fb, shape)
    if sig is not None:
        tflite.TensorAddShapeSignature(fb, sig)
    tflite.TensorAddType(fb, tensor_type(t.dtype))
    tflite.TensorAddBuffer(fb, t.buffer)
    tflite.TensorAddName(fb, name)
    if quant is not None:
        tflite.TensorAddQuantization(fb, quant)
    return tflite.TensorEnd(fb)


def _opcode(fb: flatbuffers.Builder, builtin: int, custom: str | None, version: int) -> int:
    custom_off = fb.CreateString(custom) if custom is not None else None
    tflite.OperatorCodeStart(fb)
    tflite.OperatorCodeAddDeprecatedBuiltinCode(fb, min(builtin, _PLACEHOLDER_FOR_GREATER_OP_CODES))
    tflite.OperatorCodeAddBuiltinCode(fb, builtin)
    if custom_off is not None:
        tflite.OperatorCodeAddCustomCode(fb, custom_off)
    tflite.OperatorCodeAddVersion(fb, version)
    return tflite.OperatorCodeEnd(fb)


def _operator(fb: flatbuffers.Builder, op: OperatorSpec) -> int:
    inputs = _int_vector(fb, op.inputs)
    outputs = _int_vector(fb, op.outputs)
    options = write_options(fb, op.options_table, op.options) if op.options_table else None
    custom = _byte_vector(fb, op.custom_options, 1) if op.custom_options else None
    tflite.OperatorStart(fb)
    tflite.OperatorAddOpcodeIndex(fb, op.opcode)
    tflite.OperatorAddInputs(fb, inputs)
    tflite.OperatorAddOutputs(fb, outputs)
    if options is not None:
        tflite.OperatorAddBuiltinOptionsType(fb, getattr(tflite.BuiltinOptions, op.options_table))
        tflite.OperatorAddBuiltinOptions(fb, options)
    if custom is not None:
        tflite.OperatorAddCustomOptions(fb, custom)
        tflite.OperatorAddCustomOptionsFormat(fb, tflite.CustomOptionsFormat.FLEXBUFFERS)
    return tflite.OperatorEnd(fb)


def serialize_model(
    description: str,
    buffers: Sequence[bytes],
    tensors: Sequence[TensorSpec],
    opcodes: Sequence[tuple[int, str | None, int]],
    operators: Sequence[OperatorSpec],
    inputs: Sequence[int],
    outputs: Sequence[int],
) -> bytes:
    """Return the model's flatbuffer bytes with file identifier ``TFL3``."""
    size = sum(len(b) + 32 for b in buffers) + 1024 * (1 + len(tensors) + len(operators))
    fb = flatbuffers.Builder(size)
    tensor_offs = [_tensor(fb, t) for t in tensors]
    op_offs = [_operator(fb, op) for op in operators]
    tensors_vec = _offset_vector(fb, tensor_offs)
    ops_vec = _offset_vector(fb, op_offs)
    in_vec, out_vec = _int_vector(fb, inputs), _int_vector(fb, outputs)
    sg_name = fb.CreateString("main")
    tflite.SubGraphStart(fb)
    tflite.SubGraphAddTensors(fb, tensors_vec)
    tflite.SubGraphAddInputs(fb, in_vec)
    tflite.SubGraphAddOutputs(fb, out_vec)
    tflite.SubGraphAddOperators(fb, ops_vec)
    tflite.SubGraphAddName(fb, sg_name)
    subgraphs_vec = _offset_vector(fb, [tflite.SubGraphEnd(fb)])
    opcodes_vec = _offset_vector(fb, [_opcode(fb, *key) for key in opcodes])
    buffers_vec = _offset_vector(fb, [_buffer(fb, data) for data in buffers])
    desc = fb.CreateString(description)
    tflite.ModelStart(fb)
    tflite.ModelAddVersion(fb, SCHEMA_VERSION)
    tflite.ModelAddOperatorCodes(fb, opcodes_vec)
    tflite.ModelAddSubgraphs(fb, subgraphs_vec)
    tflite.ModelAddDescription(fb, desc)
    tflite.ModelAddBuffers(fb, buffers_vec)
    fb.Finish(tflite.ModelEnd(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())
