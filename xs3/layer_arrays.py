"""The arrays ``xs3-export`` keeps of one lowered layer: its members ``<layer>/<field>`` in ``DIR/layers.npz``
(docs/xs3.md, "``xs3-export``: what a device gets"; :mod:`.export` writes them with :mod:`.npz_bytes`).

Fields: ``kernel``, ``name``, ``op``, the kernel-facing and source shapes, ``zero_point``; ``weights`` (kernel
layout, int8) and ``bso`` (int16, ``(ceil(C_out/16), 7, 16)``) for the kernels with weights; ``params`` and
``param_names`` for those without; a lookup8's ``lut``; the window's ``window_shape`` / ``_start`` / ``_stride``.
The small arrays a chain of layers repeats (kernel and op names, shapes, parameters) are made once and shared,
read-only (issue 38: 100,000 of them on a 10,000-layer chain).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hexnn_import.xs3.kernel_table import kernel_desc
from hexnn_import.xs3.kernels_misc import clamp_lut
from hexnn_import.xs3.legalize import LoweredLayer
from hexnn_import.xs3.lower import LayerResult


def layer_arrays(layer: LoweredLayer, result: LayerResult,
                 desc: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """The arrays of one lowered layer, field -> array (``desc``: its :meth:`~.legalize.LoweredLayer.describe`,
    or the manifest entry holding it, when the caller has it)."""
    desc = layer.describe() if desc is None else desc
    arrays: dict[str, np.ndarray] = {
        "kernel": _text(layer.kernel), "name": np.array(result.name), "op": _text(result.layer.opname),
        "input_shape": _int64s(desc["input_shape"]), "output_shape": _int64s(desc["output_shape"]),
        "source_input_shape": _int64s(result.layer.x.shape), "source_output_shape": _int64s(result.layer.y.shape),
        "zero_point": np.array(desc["zero_point"], dtype=np.int64),
    }
    if layer.weights is not None and layer.bso is not None:
        arrays["weights"] = np.asarray(layer.weights, dtype=np.int8)
        arrays["bso"] = np.asarray(layer.bso, dtype=np.int16)
    if layer.op.params:
        arrays["params"] = _int64s(layer.op.params)
        arrays["param_names"] = _text(tuple(kernel_desc(layer.kernel).fields))
    # a lookup8's table: a clamp's after the kernel (the last of :meth:`~.legalize.LoweredLayer.calls`), or the
    # layer's own
    table = clamp_lut(*layer.op.clamp) if layer.op.clamp is not None else layer.op.table
    if table is not None:
        arrays["lut"] = np.asarray(table, dtype=np.int8)
    if "window" in desc:
        for key in ("shape", "start", "stride"):
            arrays[f"window_{key}"] = _int64s(desc["window"][key])
    return arrays


#: read-only arrays shared by the layers that give the same kernel / op names, shapes or parameters (10,000 layers
#: of a chain repeat them), by the value they were made from
_SHARED: dict[tuple[str, Any], np.ndarray] = {}


def _shared(kind: str, key: Any, make: Any) -> np.ndarray:
    arr = _SHARED.get((kind, key))
    if arr is None:
        if len(_SHARED) >= 4096:
            _SHARED.clear()
        arr = make()
        arr.flags.writeable = False
        _SHARED[(kind, key)] = arr
    return arr


def _text(value: str | tuple[str, ...]) -> np.ndarray:
    """``np.array(value)`` of a string or a tuple of strings (a unicode array)."""
    if not (type(value) is str or all(type(v) is str for v in value)):
        return np.array(value)
    return _shared("str", value, lambda: np.array(value))


def _int64s(values: Any) -> np.ndarray:
    """``np.array(values, dtype=np.int64)`` of a list or tuple of ints (a shape, a window, parameters)."""
    key = tuple(values) if type(values) in (list, tuple) else None
    if key is None or not all(type(v) is int for v in key):
        return np.array(values, dtype=np.int64)
    return _shared("int64", key, lambda: np.array(key, dtype=np.int64))
