"""Builtin-options tables for :class:`~hexnn_import.testing.tflite_builder.TFLiteBuilder`.

An operator's options are given as a plain dict of schema field names in
snake_case (``{"stride_w": 2, "padding": "VALID"}``), and written by one
generic function that looks up the ``tflite`` package's generated builder
functions by name (``Conv2DOptionsAddStrideW``).  So any builtin op gets its
options without new code here: only the op -> table name and the defaults
the schema does not supply (strides of 1, softmax beta 1.0) live in tables.
"""
from __future__ import annotations

from typing import Any, Mapping

import flatbuffers
import numpy as np
import tflite

# Op -> options table where the name is not the CamelCase of the op name.
_TABLE_OVERRIDES: dict[str, str] = {
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions",
    "REDUCE_PROD": "ReducerOptions",
    "REDUCE_ANY": "ReducerOptions",
    "BATCH_MATMUL": "BatchMatMulOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "PADV2": "PadV2Options",
    "SPLIT_V": "SplitVOptions",
    "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions",
}

# Values the schema defaults to 0 but a converter always sets.
_DEFAULTS: dict[str, dict[str, Any]] = {
    "CONV_2D": {"stride_w": 1, "stride_h": 1},
    "DEPTHWISE_CONV_2D": {"stride_w": 1, "stride_h": 1, "depth_multiplier": 1},
    "TRANSPOSE_CONV": {"stride_w": 1, "stride_h": 1},
    "MAX_POOL_2D": {"stride_w": 1, "stride_h": 1, "filter_width": 1, "filter_height": 1},
    "AVERAGE_POOL_2D": {"stride_w": 1, "stride_h": 1, "filter_width": 1, "filter_height": 1},
    "L2_POOL_2D": {"stride_w": 1, "stride_h": 1, "filter_width": 1, "filter_height": 1},
    "SOFTMAX": {"beta": 1.0},
}

# Fields whose values may be given as enum member names.
_ENUM_FIELDS: dict[str, type] = {
    "padding": tflite.Padding,
    "fused_activation_function": tflite.ActivationFunctionType,
    "weights_format": tflite.FullyConnectedOptionsWeightsFormat,
    "mode": tflite.MirrorPadMode,
}


def op_code(op: int | str) -> int:
    """Return the ``tflite.BuiltinOperator`` value of ``op`` given by value or name."""
    if isinstance(op, str):
        try:
            return int(getattr(tflite.BuiltinOperator, op.upper()))
        except AttributeError:
            raise ValueError(f"unknown TFLite builtin operator {op!r}") from None
    return int(op)


def op_name(code: int) -> str:
    """Return the ``tflite.BuiltinOperator`` member name of ``code``."""
    for name, value in vars(tflite.BuiltinOperator).items():
        if not name.startswith("_") and value == code:
            return name
    raise ValueError(f"unknown TFLite builtin operator code {code}")


def _camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


def options_table(op: int | str) -> str | None:
    """Return the options table name (``"Pool2DOptions"``) of a builtin op, or None if it has none."""
    name = op_name(op_code(op))
    table = _TABLE_OVERRIDES.get(name, _camel(name.lower()) + "Options")
    return table if hasattr(tflite.BuiltinOptions, table) else None


def default_options(op: int | str) -> dict[str, Any]:
    """Return the defaults this builder applies to ``op``'s options before the caller's."""
    return dict(_DEFAULTS.get(op_name(op_code(op)), {}))


def _enum_value(field: str, value: Any) -> Any:
    enum = _ENUM_FIELDS.get(field)
    if enum is not None and isinstance(value, str):
        try:
            return int(getattr(enum, value.upper()))
        except AttributeError:
            raise ValueError(f"unknown {enum.__name__} value {value!r} for field {field}") from None
    return value


def check_fields(table: str, fields: Mapping[str, Any]) -> None:
    """Raise ValueError if ``table`` lacks one of ``fields`` or an enum value name is unknown."""
    for name, value in fields.items():
        if not hasattr(tflite, f"{table}Add{_camel(name)}"):
            raise ValueError(f"{table} has no field {name!r}")
        _enum_value(name, value)


def write_options(fb: flatbuffers.Builder, table: str, fields: Mapping[str, Any]) -> int:
    """Write one options table with ``fields`` (snake_case schema names) and return its offset.

    List / array values become vectors (int32 unless an ndarray of another
    dtype is given) and are written before the table starts, as flatbuffers
    requires; enum fields accept member names ("SAME", "RELU6").
    """
    check_fields(table, fields)
    vectors: dict[str, int] = {}
    for field, value in fields.items():
        if isinstance(value, (list, tuple, np.ndarray)):
            arr = np.asarray(value)
            if not isinstance(value, np.ndarray):
                arr = arr.astype(np.int32)
            vectors[field] = fb.CreateNumpyVector(arr.reshape(-1))
    getattr(tflite, f"{table}Start")(fb)
    for field, value in fields.items():
        value = vectors[field] if field in vectors else _enum_value(field, value)
        getattr(tflite, f"{table}Add{_camel(field)}")(fb, value)
    return getattr(tflite, f"{table}End")(fb)
