"""Constant folding of a TFLite model before op mapping (the TFLite twin of ``onnx/fold.py``).

Converters leave computation on constants in the graph: keras ``Flatten`` /
``Reshape`` and squeeze-excite blocks compute the target shape at run time
(SHAPE -> STRIDED_SLICE -> PACK / CONCATENATION -> RESHAPE, int32), float16
and weight-only models feed weights through DEQUANTIZE, sparse models
through DENSIFY. Once the input shapes are fixed all of these are
constants. :func:`fold_constants` evaluates, in operator order, every
operator whose inputs are constants (SHAPE: whose input shape is known)
with numpy, stores the result as the output tensor's data and drops the
operator, so shape arithmetic never reaches the op mapper.

What folds:

- pure data movement (RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE, GATHER,
  STRIDED_SLICE, SLICE, PACK, CONCATENATION, TILE, DENSIFY, IDENTITY) of
  any type, quantized included when every input and the output share one
  quantization (the codes are copied, so nothing is rounded);
- arithmetic and casts on unquantized tensors (int32/int64/float/bool):
  ADD, SUB, MUL, DIV, FLOOR_DIV, FLOOR_MOD, MAXIMUM, MINIMUM, NEG, CAST,
  FILL, RANGE, REDUCE_PROD, SUM, REDUCE_MAX, REDUCE_MIN, comparisons,
  LOGICAL ops, SELECT / SELECT_V2, ZEROS_LIKE, ONES_LIKE, SHAPE, RANK;
- DEQUANTIZE of a constant: float16 -> float32, int8 / uint8 / int16
  (per-tensor or per-channel) -> ``scale * (q - zero_point)`` in float32,
  as TFLite's dequantize kernel computes it.

Float weights left quantized in a float graph (TFLite's dynamic-range /
hybrid ops: int8 weights straight into CONV_2D / FULLY_CONNECTED with float
activations) are dequantized the same way by :func:`dequantize_hybrid_weights`,
so the float path quantizes them again per output channel (a symmetric int8
per-channel weight comes back on the same codes).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from hexnn_import.importers.tflite.strided_slice import resolve_strided_slice
from hexnn_import.importers.tflite.reader import TENSOR_TYPES, TFModel, TFOperator, TFQuant, TFTensor

Folder = Callable[[TFOperator, list[TFTensor], TFTensor], "np.ndarray | None"]

#: the largest constant folding may make (elements); a shape subgraph is tiny, a TILE of a weight is not
MAX_FOLD_ELEMENTS = 1 << 26

MOVEMENT = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE", "GATHER", "STRIDED_SLICE", "SLICE", "PACK",
            "CONCATENATION", "TILE", "DENSIFY", "IDENTITY"}


def _same_quant(a: TFQuant | None, b: TFQuant | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return (a.scale.shape == b.scale.shape and np.array_equal(a.scale, b.scale)
            and np.array_equal(a.zero_point, b.zero_point))


def _quantized(t: TFTensor) -> bool:
    return t.quant is not None and t.dtype in ("int8", "uint8", "int16", "int32")


def _opt(op: TFOperator, name: str, default: int = 0) -> int:
    return int(getattr(op.options, name)()) if op.options is not None and hasattr(op.options, name) else default


# ---- movement ------------------------------------------------------------------------
def _reshape(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return ins[0].data.reshape(out.shape)  # the output tensor's (fixed) shape is the target


def _transpose(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return np.transpose(ins[0].data, [int(v) for v in ins[1].data.reshape(-1)])


def _gather(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray | None:
    if _opt(op, "BatchDims"):
        return None
    data, idx = ins[0].data, ins[1].data.astype(np.int64)
    axis = _opt(op, "Axis") % max(data.ndim, 1)
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    if np.any((idx < 0) | (idx >= data.shape[axis])):
        return None
    return np.take(data, idx, axis=axis)


def _strided_slice(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray | None:
    data = ins[0].data
    vals = [[int(v) for v in t.data.reshape(-1)] for t in ins[1:4]]
    res = resolve_strided_slice(tuple(data.shape), *vals, _opt(op, "BeginMask"), _opt(op, "EndMask"),
                                _opt(op, "EllipsisMask"), _opt(op, "NewAxisMask"), _opt(op, "ShrinkAxisMask"))
    if isinstance(res, str) or _opt(op, "Offset"):
        return None
    index = np.ix_(*[b + s * np.arange(n) for b, s, n in zip(res.begin, res.step, res.size)])
    return data[index].reshape(res.out_shape)


def _slice(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    data = ins[0].data
    begin = [int(v) for v in ins[1].data.reshape(-1)]
    size = [int(v) for v in ins[2].data.reshape(-1)]
    return data[tuple(slice(b, data.shape[d] if s < 0 else b + s) for d, (b, s) in enumerate(zip(begin, size)))]


def _pack(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return np.stack([t.data for t in ins], axis=_opt(op, "Axis"))


def _concat(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray | None:
    if _opt(op, "FusedActivationFunction"):
        return None
    return np.concatenate([t.data for t in ins], axis=_opt(op, "Axis"))


def _tile(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return np.tile(ins[0].data, [int(v) for v in ins[1].data.reshape(-1)])


# ---- arithmetic on unquantized tensors ---------------------------------------------------
def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Folder:
    def fold(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray | None:
        if _opt(op, "FusedActivationFunction"):
            return None
        with np.errstate(all="ignore"):
            return fn(ins[0].data, ins[1].data)
    return fold


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        q = np.abs(a) // np.where(b == 0, 1, np.abs(b))  # TFLite DIV on ints truncates toward zero
        return np.where(b == 0, 0, np.sign(a) * np.sign(b) * q)
    return a / b


def _reduce(fn: Callable[..., np.ndarray]) -> Folder:
    def fold(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
        axes = tuple(int(v) % max(ins[0].data.ndim, 1) for v in ins[1].data.reshape(-1))
        return fn(ins[0].data, axis=axes, keepdims=bool(_opt(op, "KeepDims")))
    return fold


def _cast(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return ins[0].data


def _fill(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return np.full([int(v) for v in ins[0].data.reshape(-1)], ins[1].data.reshape(-1)[0])


def _range(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    start, limit, delta = (t.data.reshape(-1)[0] for t in ins)
    return np.arange(start, limit, delta)


def _select(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return np.where(ins[0].data.astype(bool), ins[1].data, ins[2].data)


def _shape(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return np.asarray(ins[0].shape, dtype=np.int64)


def _rank(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray:
    return np.asarray(len(ins[0].shape), dtype=np.int64)


def dequantize_const(t: TFTensor) -> np.ndarray | None:
    """Real values of a constant (TFLite's DEQUANTIZE): float16 widened, codes scaled per tensor / channel."""
    if t.data is None:
        return None
    if t.dtype == "float16":
        return t.data.astype(np.float32)
    if t.dtype in ("int8", "uint8", "int16", "int32") and t.quant is not None:
        shape = [1] * t.data.ndim
        if t.quant.per_channel:
            shape[t.quant.axis] = -1
        scale = t.quant.scale.astype(np.float32).reshape(shape)
        zp = t.quant.zero_point.astype(np.int64).reshape(shape)
        return ((t.data.astype(np.int64) - zp).astype(np.float32) * scale).astype(np.float32)
    return None


def _dequantize(op: TFOperator, ins: list[TFTensor], out: TFTensor) -> np.ndarray | None:
    return dequantize_const(ins[0])


FOLDERS: dict[str, Folder] = {
    "RESHAPE": _reshape, "SQUEEZE": _reshape, "EXPAND_DIMS": _reshape, "DENSIFY": _reshape, "IDENTITY": _reshape,
    "TRANSPOSE": _transpose, "GATHER": _gather, "STRIDED_SLICE": _strided_slice, "SLICE": _slice,
    "PACK": _pack, "CONCATENATION": _concat, "TILE": _tile,
    "ADD": _binary(np.add), "SUB": _binary(np.subtract), "MUL": _binary(np.multiply), "DIV": _binary(_int_div),
    "FLOOR_DIV": _binary(np.floor_divide), "FLOOR_MOD": _binary(np.mod), "MAXIMUM": _binary(np.maximum),
    "MINIMUM": _binary(np.minimum), "EQUAL": _binary(np.equal), "NOT_EQUAL": _binary(np.not_equal),
    "LESS": _binary(np.less), "LESS_EQUAL": _binary(np.less_equal), "GREATER": _binary(np.greater),
    "GREATER_EQUAL": _binary(np.greater_equal), "LOGICAL_AND": _binary(np.logical_and),
    "LOGICAL_OR": _binary(np.logical_or), "LOGICAL_NOT": lambda op, i, o: np.logical_not(i[0].data),
    "NEG": lambda op, i, o: np.negative(i[0].data), "CAST": _cast, "FILL": _fill, "RANGE": _range,
    "REDUCE_PROD": _reduce(np.prod), "SUM": _reduce(np.sum), "REDUCE_MAX": _reduce(np.max),
    "REDUCE_MIN": _reduce(np.min), "SELECT": _select, "SELECT_V2": _select,
    "ZEROS_LIKE": lambda op, i, o: np.zeros_like(i[0].data), "ONES_LIKE": lambda op, i, o: np.ones_like(i[0].data),
    "SHAPE": _shape, "RANK": _rank, "DEQUANTIZE": _dequantize,
}
#: ops that read only their first input's shape, not its values
SHAPE_ONLY = {"SHAPE", "RANK"}


def _foldable(op: TFOperator, ins: list[TFTensor], outs: list[TFTensor]) -> bool:
    if op.opname not in FOLDERS or len(outs) != 1 or not ins:
        return False
    if op.opname in SHAPE_ONLY:
        return all(v >= 0 for v in ins[0].shape)
    if any(t.data is None for t in ins):
        return False
    if op.opname == "DEQUANTIZE":
        return True
    if op.opname in MOVEMENT:  # codes copied: the quantization must not change
        data_ins = ins[:1] if op.opname not in ("PACK", "CONCATENATION") else ins
        return all(_same_quant(t.quant, outs[0].quant) or not (_quantized(t) or _quantized(outs[0]))
                   for t in data_ins)
    return not any(_quantized(t) for t in [*ins, *outs])


def fold_constants(model: TFModel) -> int:
    """Fold every foldable operator in place (module doc); returns how many were folded."""
    kept: list[TFOperator] = []
    folded = 0
    for op in model.operators:
        ins = [model.tensors[i] for i in op.inputs if i >= 0]
        outs = [model.tensors[i] for i in op.outputs if i >= 0]
        result = None
        if _foldable(op, ins, outs):
            try:
                result = FOLDERS[op.opname](op, ins, outs[0])
            except (ValueError, IndexError, TypeError, OverflowError):
                result = None  # left to the op mapper, which names what is wrong
        if result is not None and _store(outs[0], np.asarray(result)):
            folded += 1
            continue
        kept.append(op)
    model.operators = kept
    return folded


def _store(out: TFTensor, value: np.ndarray) -> bool:
    """Write a folded value into its tensor (its dtype; its file shape when the sizes agree)."""
    if value.size > MAX_FOLD_ELEMENTS:
        return False
    npdt = next((dt for name, dt in TENSOR_TYPES.values() if name == out.dtype), None)
    if npdt is None:
        return False
    shape = tuple(out.shape) if out.shape and all(v >= 0 for v in out.shape) else value.shape
    if int(np.prod(shape)) != value.size:
        if out.shape and any(v < 0 for v in out.shape):
            shape = value.shape
        else:
            return False
    out.data = value.astype(npdt).reshape(shape)
    out.shape = tuple(int(v) for v in shape)
    return True


def dequantize_hybrid_weights(model: TFModel) -> int:
    """Dequantize quantized constants that only float operators read (hybrid / dynamic-range ops).

    A constant qualifies when every operator reading it also reads a
    non-constant float32 tensor. Returns how many tensors changed.
    """
    readers: dict[int, list[TFOperator]] = {}
    for op in model.operators:
        for i in op.inputs:
            if i >= 0:
                readers.setdefault(i, []).append(op)
    changed = 0
    for i, ops in readers.items():
        t = model.tensors[i]
        if t.data is None or t.quant is None or t.dtype not in ("int8", "uint8", "int16"):
            continue
        if all(any(model.tensors[j].dtype == "float32" and model.tensors[j].data is None
                   for j in op.inputs if j >= 0) for op in ops):
            t.data = dequantize_const(t)
            t.dtype, t.quant = "float32", None
            changed += 1
    return changed


__all__ = ["fold_constants", "dequantize_hybrid_weights", "dequantize_const", "FOLDERS", "MAX_FOLD_ELEMENTS"]
