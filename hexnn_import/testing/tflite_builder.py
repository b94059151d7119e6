"""Build TFLite flatbuffer models in Python with the ``tflite`` schema package.

No TensorFlow: tensors, buffers and operators are collected in plain Python
lists and serialized by :meth:`TFLiteBuilder.build` with the generated
flatbuffer builder functions, in the shape the TFLite converter writes them
(schema version 3, empty buffer 0, one subgraph, opcodes carrying both
``deprecated_builtin_code`` and ``builtin_code``).  Used by the tests and by
``models/make_models.py``::

    b = TFLiteBuilder()
    x = b.add_tensor("x", [1, 4], "float32")
    y = b.add_tensor("y", [1, 4], "float32")
    b.add_operator("RELU", [x], [y])
    b.set_io([x], [y])
    model = b.build()
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import tflite

from hexnn_import.testing.tflite_options import check_fields, default_options, op_code, options_table
from hexnn_import.testing.tflite_serialize import (
    OperatorSpec, TensorSpec, serialize_model, tensor_type,
)


def _quant_lists(name: str, shape: list[int], scale: Any, zero_point: Any,
                 dim: int) -> tuple[list[float], list[int]]:
    """Normalize scale / zero point to lists and check them against the shape."""
    scales = [float(v) for v in np.atleast_1d(np.asarray(scale, dtype=np.float64))]
    zps = [int(z) for z in np.atleast_1d(0 if zero_point is None else zero_point)]
    if zero_point is None:
        zps = zps * len(scales)
    if len(zps) != len(scales):
        raise ValueError(f"tensor {name}: {len(scales)} scales but {len(zps)} zero points")
    if len(scales) > 1 and (not 0 <= dim < len(shape) or shape[dim] != len(scales)):
        raise ValueError(f"tensor {name}: {len(scales)} scales for dimension {dim} of shape {shape}")
    return scales, zps


class TFLiteBuilder:
    """Collects buffers, tensors and operators of one subgraph; :meth:`build` serializes them."""

    def __init__(self, description: str = "hexnn_import.testing.tflite_builder") -> None:
        self.description = description
        self._buffers: list[bytes] = [b""]  # buffer 0: the schema's mandatory empty buffer
        self._tensors: list[TensorSpec] = []
        self._opcodes: list[tuple[int, str | None, int]] = []
        self._operators: list[OperatorSpec] = []
        self._inputs: list[int] = []
        self._outputs: list[int] = []

    # -- buffers and tensors -------------------------------------------------
    def add_buffer(self, data: bytes | np.ndarray | None = None) -> int:
        """Append a buffer (raw little-endian bytes, an array, or empty) and return its index."""
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<")).tobytes()
        self._buffers.append(bytes(data or b""))
        return len(self._buffers) - 1

    def add_tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: npt.DTypeLike,
        data: npt.ArrayLike | None = None,
        *,
        scale: float | Sequence[float] | np.ndarray | None = None,
        zero_point: int | Sequence[int] | np.ndarray | None = None,
        quantized_dimension: int = 0,
        buffer: int | None = None,
        shape_signature: Sequence[int] | None = None,
    ) -> int:
        """Add a tensor and return its index.

        ``data`` makes it a constant (cast to ``dtype``, size checked against
        ``shape``); ``buffer`` instead points it at an existing buffer from
        :meth:`add_buffer`; with neither it gets its own empty buffer, as
        converter output does. ``shape_signature`` (-1 for a dynamic
        dimension) is written next to the shape, as the converter does for
        models with a dynamic batch.  ``scale`` / ``zero_point`` given as scalars
        quantize per tensor, as sequences per channel along
        ``quantized_dimension``; a missing zero point is 0.
        """
        dt = np.dtype(dtype)
        tensor_type(dt)
        shape = [int(d) for d in shape]
        if data is not None and buffer is not None:
            raise ValueError(f"tensor {name}: give data or buffer, not both")
        if buffer is not None:
            if not 0 <= buffer < len(self._buffers):
                raise ValueError(f"tensor {name}: no buffer {buffer}")
        elif data is not None:
            arr = np.asarray(data).astype(dt)
            if arr.size != int(np.prod(shape, dtype=np.int64)):
                raise ValueError(f"tensor {name}: data of size {arr.size} does not fit shape {shape}")
            buffer = self.add_buffer(arr.reshape(shape))
        else:
            buffer = self.add_buffer(None)
        t = TensorSpec(name, shape, dt, buffer, quantized_dimension=int(quantized_dimension),
                       shape_signature=None if shape_signature is None else [int(d) for d in shape_signature])
        if scale is not None:
            t.scale, t.zero_point = _quant_lists(name, shape, scale, zero_point, t.quantized_dimension)
        self._tensors.append(t)
        return len(self._tensors) - 1

    def add_const(self, name: str, data: npt.ArrayLike, dtype: npt.DTypeLike | None = None,
                  **quant: Any) -> int:
        """Add a constant tensor whose shape (and, by default, dtype) come from ``data``."""
        arr = np.asarray(data)
        return self.add_tensor(name, arr.shape, dtype or arr.dtype, arr, **quant)

    def tensor_index(self, name: str) -> int:
        """Return the index of the tensor called ``name``."""
        for i, t in enumerate(self._tensors):
            if t.name == name:
                return i
        raise KeyError(name)

    # -- operators -----------------------------------------------------------
    def _opcode_index(self, builtin: int, custom: str | None, version: int) -> int:
        key = (builtin, custom, version)
        if key not in self._opcodes:
            self._opcodes.append(key)
        return self._opcodes.index(key)

    def add_operator(
        self,
        op: int | str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        options: Mapping[str, Any] | None = None,
        *,
        fused_activation: str | int | None = None,
        version: int = 1,
        options_type: str | None = None,
    ) -> int:
        """Add a builtin operator (``tflite.BuiltinOperator`` value or name); return its index.

        ``inputs`` may hold -1 for an omitted optional input.  ``options`` are
        snake_case schema fields of the op's options table, merged over the
        builder's defaults (strides 1, softmax beta 1.0); ``fused_activation``
        ("RELU", "RELU6", ...) sets ``fused_activation_function``.
        ``options_type`` names the table for ops this builder cannot guess.
        """
        code = op_code(op)
        table = options_type or options_table(code)
        opts = default_options(code) if table else {}
        opts.update(options or {})
        if fused_activation is not None:
            opts["fused_activation_function"] = fused_activation
        if opts and table is None:
            raise ValueError(f"operator {op} has no options table; got options {sorted(opts)}")
        if table is not None:
            check_fields(table, opts)
        index = self._opcode_index(code, None, version)
        self._operators.append(OperatorSpec(index, list(inputs), list(outputs), table, opts))
        return len(self._operators) - 1

    def add_custom_operator(self, custom_code: str, inputs: Sequence[int], outputs: Sequence[int],
                            custom_options: bytes = b"", version: int = 1) -> int:
        """Add a CUSTOM operator named ``custom_code`` with raw ``custom_options`` bytes."""
        index = self._opcode_index(int(tflite.BuiltinOperator.CUSTOM), custom_code, version)
        self._operators.append(
            OperatorSpec(index, list(inputs), list(outputs), custom_options=bytes(custom_options)))
        return len(self._operators) - 1

    def set_io(self, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        """Declare the graph's input and output tensors (by index)."""
        self._inputs, self._outputs = list(inputs), list(outputs)

    # -- serialization -------------------------------------------------------
    def build(self) -> bytes:
        """Serialize the model to TFLite flatbuffer bytes (file identifier "TFL3")."""
        return serialize_model(self.description, self._buffers, self._tensors, self._opcodes,
                               self._operators, self._inputs, self._outputs)
