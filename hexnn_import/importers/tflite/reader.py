"""Read a .tflite flatbuffer into plain Python objects, with every failure a ModelFormatError.

Parsing is eager: every field the importer needs is read here, inside one
guard, so a truncated or corrupt file fails at load time with one clear line
instead of deep inside an op handler. Opcodes are
``max(deprecated_builtin_code, builtin_code)`` (the schema's rule for files
written before and after the 127-op extension); ``*AsNumpy()`` accessors,
which return the int 0 when a vector is absent, are guarded. Values the
importer would trip over are checked here too (issue [Robust]): scales,
zero points and per-channel axes, recorded ranges, strides / windows /
enums of option tables, tensor sizes, strings cut by the end of the file.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tflite
from tflite.utils import BUILTIN_OPCODE2NAME

from hexnn_import.errors import ModelFormatError, ResourceError
from hexnn_import.graph_memory import check_node_count
from hexnn_import.memory import budget_bytes, check_bytes, format_size
from hexnn_import.importers.tflite.fb_fields import Fields
from hexnn_import.importers.tflite.option_tables import read_options
from hexnn_import.importers.tflite.sparse import Sparsity, densify, read_sparsity

#: TensorType enum value -> (name, numpy dtype)
TENSOR_TYPES: dict[int, tuple[str, Any]] = {
    0: ("float32", np.float32), 1: ("float16", np.float16), 2: ("int32", np.int32), 3: ("uint8", np.uint8),
    4: ("int64", np.int64), 5: ("string", None), 6: ("bool", np.bool_), 7: ("int16", np.int16),
    8: ("complex64", np.complex64), 9: ("int8", np.int8), 10: ("float64", np.float64),
    12: ("uint64", np.uint64), 13: ("resource", None), 15: ("uint32", np.uint32), 16: ("uint16", np.uint16),
    17: ("int4", None),
}


@dataclass
class TFQuant:
    """Quantization of one tensor: per-tensor when ``scale`` has one entry."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


@dataclass
class TFTensor:
    """A tensor of the subgraph; ``data`` is set for constant tensors."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    quant: TFQuant | None
    data: np.ndarray | None
    shape_signature: tuple[int, ...] | None = None


@dataclass
class TFOperator:
    """One operator: its builtin name (or ``CUSTOM:<code>``), tensor indices and options table."""

    index: int
    opname: str
    inputs: list[int]
    outputs: list[int]
    options: Any = None  # the tflite *Options object, or None
    custom_code: str = ""
    custom_options: bytes = b""  # a CUSTOM operator's raw options (flexbuffer for TFLite's own custom ops)


@dataclass
class TFModel:
    """The main subgraph (index 0), fully read, and the file's other subgraphs (``subgraphs``)."""

    tensors: list[TFTensor]
    operators: list[TFOperator]
    inputs: list[int]
    outputs: list[int]
    version: int = 3
    description: str = ""
    notes: list[str] = field(default_factory=list)
    #: the file's other subgraphs by index (control flow bodies: WHILE cond / body, IF branches)
    subgraphs: dict[int, "TFModel"] = field(default_factory=dict)


#: (table class, vector field) -> (vtable slot, stored element type), as in the generated accessors
_VECTORS = {("Tensor", "Shape"): (4, np.int32), ("Tensor", "ShapeSignature"): (18, np.int32),
            ("QuantizationParameters", "Scale"): (8, np.float32),
            ("QuantizationParameters", "ZeroPoint"): (10, np.int64),
            ("QuantizationParameters", "Min"): (4, np.float32), ("QuantizationParameters", "Max"): (6, np.float32),
            ("Operator", "Inputs"): (6, np.int32), ("Operator", "Outputs"): (8, np.int32),
            ("Operator", "CustomOptions"): (14, np.uint8), ("SubGraph", "Inputs"): (6, np.int32),
            ("SubGraph", "Outputs"): (8, np.int32), ("Buffer", "Data"): (4, np.uint8)}
_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from
_U16 = struct.Struct("<H").unpack_from


def _np_or_empty(obj: Any, name: str, dtype: Any) -> np.ndarray:
    """A vector field of a flatbuffer table as ``dtype`` (empty when absent).

    The fields the reader uses are read straight from the table as the
    generated ``<name>AsNumpy`` accessor reads them (flatbuffers ``Table.Offset``,
    ``Vector``, ``VectorLen``, ``GetVectorAsNumpy``: the same offsets, the same
    ``unpack_from`` and ``frombuffer`` calls), without the per-call overhead of
    the flatbuffers package (reading the full MobileNetV2: 0.04-0.06 s -> 0.03 s, side by side).
    """
    spec = _VECTORS.get((type(obj).__name__, name))
    if spec is None:
        if getattr(obj, f"{name}IsNone")():
            return np.zeros(0, dtype=dtype)
        arr = getattr(obj, f"{name}AsNumpy")()
        if isinstance(arr, int):  # the accessor returns 0 when the vector is absent
            return np.zeros(0, dtype=dtype)
        return np.asarray(arr, dtype=dtype)
    slot, stored = spec
    tab = obj._tab
    buf, pos = tab.Bytes, tab.Pos
    vtable = pos - _I32(buf, pos)[0]
    if slot >= _U16(buf, vtable)[0]:
        return np.zeros(0, dtype=dtype)
    off = _U16(buf, vtable + slot)[0]
    if off == 0:
        return np.zeros(0, dtype=dtype)
    at = pos + off
    at += _U32(buf, at)[0]
    arr = np.frombuffer(buf, stored, _U32(buf, at)[0], at + 4)
    return arr if arr.dtype == np.dtype(dtype) else arr.astype(dtype)


def _string(obj: Any, text: bytes | None, slot: int) -> bytes | None:
    """``text`` as read by a generated string accessor, checked to be whole.

    The accessor slices the file, so a string running past its end comes
    back cut short instead of failing; its declared length (vtable ``slot``)
    tells the two apart (ValueError, which :func:`parse_tflite` reports).
    """
    if text is None:
        return None
    tab = obj._tab
    declared = tab.VectorLen(tab.Offset(slot))
    if len(text) != declared:
        raise ValueError(f"a string of {declared} bytes runs past the end of the file")
    return text


def _raw_builtin_code(oc: Any) -> int:
    """The ``builtin_code`` field as stored (0 when absent).

    The ``tflite`` package's ``OperatorCode.BuiltinCode()`` returns the
    deprecated field whenever the stored code is below 127, so a file that
    writes only ``builtin_code`` (ai-edge-quantizer does) would read as ADD.
    """
    import flatbuffers

    o = oc._tab.Offset(10)
    return int(oc._tab.Get(flatbuffers.number_types.Int32Flags, o + oc._tab.Pos)) if o else 0


def _options(f: Fields, raw: bytes, opname: str, where: str = "") -> tuple[Any, dict[str, Any]]:
    """The builtin options table of the Operator whose fields ``f`` reads (``Operator.BuiltinOptions()``,
    ``BuiltinOptionsType()``) as its ``tflite`` class, every field read (:func:`.option_tables.read_options`:
    their values by accessor name); ``(None, {})`` when it has none or of a type the package does not know."""
    pos = f.table(12)
    if not pos:
        return None, {}
    cls_name = _OPTION_CLASS.get(f.scalar(10, "u8"))
    if cls_name is None or not hasattr(tflite, cls_name):
        return None, {}
    want = _expected_options(opname)
    if want is not None and cls_name != want:
        raise ModelFormatError(f"{where or opname}: options table {cls_name} does not belong to {opname} "
                               f"(expected {want})")
    return read_options(getattr(tflite, cls_name), raw, pos)


def _expected_options(opname: str) -> str | None:
    """The options table a builtin carries (schema.fbs: by name, with the shared tables); None if unknown."""
    shared = _SHARED_OPTIONS.get(opname)
    if shared is not None:
        return shared
    return _OPTION_BY_KEY.get(opname.replace("_", "").lower() + "options")


def _build_option_class_map() -> dict[int, str]:
    out: dict[int, str] = {}
    for name in dir(tflite.BuiltinOptions):
        if not name.startswith("_"):
            out[int(getattr(tflite.BuiltinOptions, name))] = name
    return out


_OPTION_CLASS = _build_option_class_map()
_OPTION_BY_KEY = {name.lower(): name for name in _OPTION_CLASS.values()}
#: builtins whose options table is shared, so not named after the op (schema.fbs)
_SHARED_OPTIONS = {
    **dict.fromkeys(("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"), "Pool2DOptions"),
    **dict.fromkeys(("MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ANY", "REDUCE_ALL"),
                    "ReducerOptions"),
    **dict.fromkeys(("MAXIMUM", "MINIMUM"), "MaximumMinimumOptions"),
    "L2_NORMALIZATION": "L2NormOptions", "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
}


def read_tflite(path: str | Path) -> TFModel:
    """Load and fully parse a .tflite file; ModelFormatError on any problem."""
    p = Path(path)
    try:
        if p.is_file():
            check_bytes(p.stat().st_size, f"model {p}")
        raw = p.read_bytes()
    except FileNotFoundError as exc:
        raise ModelFormatError(f"{p}: no such file") from exc
    except IsADirectoryError as exc:
        raise ModelFormatError(f"{p}: is a directory, not a model file") from exc
    except OSError as exc:
        raise ModelFormatError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    return parse_tflite(raw, str(p))


def parse_tflite(raw: bytes, label: str = "model") -> TFModel:
    """Parse TFLite flatbuffer bytes (see :func:`read_tflite`)."""
    if len(raw) == 0:
        raise ModelFormatError(f"{label}: file is empty")
    if len(raw) < 8 or raw[4:8] != b"TFL3":
        raise ModelFormatError(f"{label}: not a TFLite model (no TFL3 file identifier)")
    try:
        return _parse(raw, label)
    except (ModelFormatError, ResourceError):
        raise
    except Exception as exc:  # flatbuffers raises assorted errors on truncated/corrupt data
        raise ModelFormatError(f"{label}: truncated or corrupt TFLite file ({type(exc).__name__}: {exc})") from exc


def _parse(raw: bytes, label: str) -> TFModel:
    model = tflite.Model.GetRootAs(raw, 0)
    n_sub = model.SubgraphsLength()
    if n_sub < 1:
        raise ModelFormatError(f"{label}: the model has no subgraph")
    if n_sub > MAX_SUBGRAPHS:
        raise ModelFormatError(f"{label}: the model has {n_sub} subgraphs (at most {MAX_SUBGRAPHS} are read)")
    # the graph the main subgraph's operators make, within the memory budget, before any of them is read (issue 38)
    check_node_count(model.Subgraphs(0).OperatorsLength(), f"model {label}")
    buffers = list(Fields(raw, model._tab.Pos).offsets(12))  # each Buffer table's position (tflite.Buffer at use)
    opcodes = []
    for i in range(model.OperatorCodesLength()):
        oc = model.OperatorCodes(i)
        code = max(int(oc.DeprecatedBuiltinCode()), _raw_builtin_code(oc))
        name = BUILTIN_OPCODE2NAME.get(code, f"BUILTIN_{code}")
        custom = _string(oc, oc.CustomCode(), 6)
        custom = custom.decode("utf-8", "replace") if custom else ""
        opcodes.append((f"CUSTOM:{custom}" if name == "CUSTOM" else name, custom))
    budget = min(budget_bytes(), MAX_TENSOR_BYTES)
    desc = _string(model, model.Description(), 10)
    graphs = [_subgraph(model.Subgraphs(k), k, buffers, opcodes, raw, label, budget) for k in range(n_sub)]
    main = graphs[0]
    main.version = int(model.Version())
    main.description = desc.decode("utf-8", "replace") if desc else ""
    main.subgraphs = {k: g for k, g in enumerate(graphs) if k > 0}
    return main


#: most subgraphs a file may have (control flow: a WHILE's cond and body, IF branches)
MAX_SUBGRAPHS = 64


def _subgraph(sg: Any, k: int, buffers: list[int], opcodes: list[tuple[str, str]], raw: bytes, label: str,
              budget: int) -> TFModel:
    """One subgraph read whole (tensors, operators, inputs, outputs); ``k`` > 0 names it in messages."""
    where_sg = f"{label}: subgraph {k}" if k else label
    tensors = [_tensor(raw, pos, i, buffers, label, budget) for i, pos in enumerate(Fields(raw, sg._tab.Pos).offsets(4))]
    n_t = len(tensors)
    largest = max((max(t.shape) for t in tensors if t.shape), default=1)
    operators = []
    writer: dict[int, int] = {}
    for i, pos in enumerate(Fields(raw, sg._tab.Pos).offsets(10)):
        op = tflite.Operator()
        op.Init(raw, pos)
        f = Fields(raw, pos)
        oi = f.scalar(4, "u32")
        if not 0 <= oi < len(opcodes):
            raise ModelFormatError(f"{where_sg}: operator {i} names opcode {oi}, the model has {len(opcodes)}")
        ins, outs = (_ints(f.vector(slot, np.int32)) for slot in (6, 8))
        for t in ins + outs:
            if t != -1 and not 0 <= t < n_t:
                raise ModelFormatError(f"{where_sg}: operator {i} ({opcodes[oi][0]}) names tensor {t}, "
                                       f"the model has {n_t}")
        custom = _np_or_empty(op, "CustomOptions", np.uint8).tobytes() if opcodes[oi][1] else b""
        where = f"{where_sg}: operator {i} ({opcodes[oi][0]})"
        options, values = _options(f, raw, opcodes[oi][0], where)
        _check_option_values(values, largest, where)
        operators.append(TFOperator(i, opcodes[oi][0], ins, outs, options, opcodes[oi][1], custom))
        _check_writes(tensors, outs, writer, i, where)
        if opcodes[oi][0] == "RESHAPE":
            _check_new_shape(tensors, ins, options, where)
    g_in = [int(v) for v in _np_or_empty(sg, "Inputs", np.int32)]
    g_out = [int(v) for v in _np_or_empty(sg, "Outputs", np.int32)]
    for t in g_in + g_out:
        if not 0 <= t < n_t:
            raise ModelFormatError(f"{where_sg}: graph input/output names tensor {t}, the model has {n_t}")
    return TFModel(tensors, operators, g_in, g_out)


def _ints(vector: np.ndarray | None) -> list[int]:
    """A vector field as Python ints (empty when absent)."""
    return [] if vector is None else vector.tolist()


def _check_writes(tensors: list[TFTensor], outs: list[int], writer: dict[int, int], i: int, where: str) -> None:
    """TFLite's structure rules (issue 38, finding 7): an operator writes no constant tensor, and no tensor has
    two writers."""
    for t in outs:
        if t == -1:
            continue
        if tensors[t].data is not None:
            raise ModelFormatError(f"{where}: writes tensor {tensors[t].name}, a constant")
        if t in writer:
            raise ModelFormatError(f"{where}: writes tensor {tensors[t].name}, which operator {writer[t]} writes too")
        writer[t] = i


def _check_new_shape(tensors: list[TFTensor], ins: list[int], options: Any, where: str) -> None:
    """A RESHAPE's new shape (its constant shape input, else ``new_shape``) has dimensions >= -1 and at most one
    -1 (reshape.cc ``GetOutputShape``; issue 38: ``[-2, 32]`` converted)."""
    dims: np.ndarray | None = None
    if len(ins) > 1 and ins[1] != -1 and tensors[ins[1]].data is not None:
        dims = np.asarray(tensors[ins[1]].data).reshape(-1)
    elif options is not None and hasattr(options, "NewShapeLength") and options.NewShapeLength():
        dims = np.asarray(options.NewShapeAsNumpy()).reshape(-1)
    if dims is not None and dims.dtype.kind in "iu" and (np.any(dims < -1) or np.count_nonzero(dims == -1) > 1):
        raise ModelFormatError(f"{where}: new shape {[int(v) for v in dims]} has a dimension below -1 or more than "
                               f"one -1")


def _tensor(raw: bytes, pos: int, index: int, buffers: list[int], label: str, budget: int) -> TFTensor:
    """The Tensor table at ``pos``, its fields read as the generated accessors read them (:mod:`.fb_fields`)."""
    f = Fields(raw, pos)
    name = printable((f.string(10) or b"").decode("utf-8", "replace")) or f"tensor_{index}"
    ttype = f.scalar(6, "i8")
    if ttype not in TENSOR_TYPES:
        raise ModelFormatError(f"{label}: tensor {name} has unknown type {ttype}")
    tname, npdt = TENSOR_TYPES[ttype]
    dims = f.vector(4, np.int32)
    shape = () if dims is None else tuple(dims.tolist())
    itemsize = np.dtype(npdt).itemsize if npdt is not None else 1
    nbytes = math.prod(max(v, 1) for v in shape) * itemsize
    if nbytes > budget:   # the budget is read once per file (the check itself reads it again)
        check_tensor_bytes(nbytes, f"{label}: tensor {name} of shape {list(shape)}")
    sig = f.vector(18, np.int32)
    qpos = f.table(12)
    quant = _quantization(Fields(raw, qpos, checked=False), tname, shape, f"{label}: tensor {name}") if qpos else None
    if quant is None and tname in ("int8", "uint8"):
        # 8-bit data with no quantization holds plain integers (TFLite reads them so): scale 1, zero point 0
        quant = TFQuant(np.ones(1), np.zeros(1, np.int64))
    data = None
    bi = f.scalar(8, "u32")
    if bi != 0:
        if not 0 <= bi < len(buffers):
            raise ModelFormatError(f"{label}: tensor {name} names buffer {bi}, the file holds {len(buffers)}")
        sparsity = _sparsity(tflite.Tensor(), raw, pos, name, label) if f.at(16) else None
        buffer = tflite.Buffer()
        buffer.Init(raw, buffers[bi])
        data = _buffer_data(buffer, raw, name, label, tname, npdt, shape, sparsity)
    return TFTensor(index, name, shape, tname, quant, data, tuple(sig.tolist()) if sig is not None and sig.size
                    else None)


_EMPTY_F32 = np.zeros(0, np.float32)


def _quantization(q: Fields, tname: str, shape: tuple[int, ...], where: str) -> TFQuant | None:
    """A QuantizationParameters table: the per-tensor or per-channel quantization (None without scales), its
    values checked (:func:`_check_quant`, :func:`_check_min_max`)."""
    scale, zp = q.vector(8, np.float32), q.vector(10, np.int64)
    zp = np.zeros(0, np.int64) if zp is None else zp
    quant = None
    if scale is not None and scale.size:
        scale = scale.astype(np.float64)
        if zp.size not in (0, scale.size):
            raise ModelFormatError(f"{where} has {scale.size} scales but {zp.size} zero points")
        quant = TFQuant(scale, zp if zp.size else np.zeros(scale.size, np.int64), q.scalar(16, "i32"))
        _check_quant(quant, tname, shape, where)
    lo, hi = q.vector(4, np.float32), q.vector(6, np.float32)
    if lo is not None or hi is not None:
        _check_min_max(_EMPTY_F32 if lo is None else lo, _EMPTY_F32 if hi is None else hi, where)
    return quant


#: the largest tensor hexagon_nn can take: ``hexagon_nn_tensordef.dataLen``, the size of a tensor's
#: allocation, is a C ``int`` (nnlib ``hexagon/include/nn_graph_if.h``; ``hexagon_nn_append_const_node``'s
#: ``dataLen`` too), so 2 GiB - 1 byte
MAX_TENSOR_BYTES = 2 ** 31 - 1


def check_tensor_bytes(nbytes: int, what: str) -> None:
    """A tensor of ``nbytes`` (its declared shape x item size) fits hexagon_nn (ModelFormatError) and the
    memory budget (ResourceError, :mod:`hexnn_import.memory`); checked before anything is allocated."""
    if nbytes > MAX_TENSOR_BYTES:
        raise ModelFormatError(f"{what} would hold {format_size(nbytes)} ({nbytes} bytes), above the "
                               f"{MAX_TENSOR_BYTES} bytes a hexagon_nn tensor can hold (its dataLen is a 32-bit int)")
    check_bytes(nbytes, what)
_F32_MAX = float(np.finfo(np.float32).max)
_F32_TINY = float(np.finfo(np.float32).tiny)
#: zero-point bounds by tensor type (a zero point outside its type is a range without 0)
_ZP_BOUNDS = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535),
              "int32": (-2 ** 31, 2 ** 31 - 1)}


def printable(text: str) -> str:
    """``text`` with control characters escaped, so names in messages stay on one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def _check_quant(q: TFQuant, tname: str, shape: tuple[int, ...], where: str) -> None:
    """Quantization parameters SEMANTICS §1 can use: positive finite normal float32 scales, zero points inside the type,
    per-channel scales along an axis of the tensor with one scale per channel."""
    if q.scale.size == 1 and q.zero_point.size == 1:  # per-tensor: the same checks on Python floats (issue 38)
        _check_one_quant(float(q.scale[0]), int(q.zero_point[0]), tname, where)
        return
    bad = q.scale[~(np.isfinite(q.scale) & (q.scale > 0))]
    if bad.size:
        raise ModelFormatError(f"{where}: quantization scale {float(bad[0])} is not a positive finite number")
    tiny = q.scale[q.scale.astype(np.float32) < np.finfo(np.float32).tiny]  # issue 38: 1.4e-45 broke every code
    if tiny.size:
        raise ModelFormatError(f"{where}: quantization scale {float(tiny[0]):g} is below float32's smallest normal "
                               f"number ({float(np.finfo(np.float32).tiny):g})")
    bounds = _ZP_BOUNDS.get(tname)
    if bounds is not None:
        out = q.zero_point[(q.zero_point < bounds[0]) | (q.zero_point > bounds[1])]
        if out.size:
            raise ModelFormatError(f"{where}: zero point {int(out[0])} is outside the {tname} range "
                                   f"[{bounds[0]}, {bounds[1]}]")
        # the real range the codes span, (qmin - zp) * scale .. (qmax - zp) * scale, must be a float32 range
        zp = q.zero_point.astype(np.float64) if q.zero_point.size in (1, q.scale.size) else np.zeros(1)
        reach = np.maximum(np.abs(bounds[0] - zp), np.abs(bounds[1] - zp)) * q.scale.astype(np.float64)
        if np.any(reach >= _F32_MAX):
            raise ModelFormatError(f"{where}: quantization scale {float(q.scale.max()):g} makes the {tname} "
                                   f"range beyond float32")
    if q.per_channel and shape and (not 0 <= q.axis < len(shape) or shape[q.axis] != q.scale.size):
        raise ModelFormatError(f"{where}: {q.scale.size} per-channel scales along axis {q.axis} do not fit "
                               f"shape {list(shape)}")


def _check_one_quant(scale: float, zp: int, tname: str, where: str) -> None:
    """:func:`_check_quant` of one scale and zero point, each comparison as numpy makes it on the arrays."""
    if not (math.isfinite(scale) and scale > 0):
        raise ModelFormatError(f"{where}: quantization scale {scale} is not a positive finite number")
    if float(np.float32(scale)) < _F32_TINY:
        raise ModelFormatError(f"{where}: quantization scale {scale:g} is below float32's smallest normal "
                               f"number ({_F32_TINY:g})")
    bounds = _ZP_BOUNDS.get(tname)
    if bounds is not None:
        if not bounds[0] <= zp <= bounds[1]:
            raise ModelFormatError(f"{where}: zero point {zp} is outside the {tname} range "
                                   f"[{bounds[0]}, {bounds[1]}]")
        if max(abs(bounds[0] - float(zp)), abs(bounds[1] - float(zp))) * scale >= _F32_MAX:
            raise ModelFormatError(f"{where}: quantization scale {scale:g} makes the {tname} range beyond float32")


#: float option fields that must be finite numbers (issue 38, finding 7)
_FLOAT_FIELDS = ("Beta", "Alpha", "Bias", "Epsilon", "CellClip", "ProjClip", "Min", "Max")
_WINDOW_FIELDS = ("Stride", "Filter", "DilationFactor", "DilationH", "DilationW")
#: enum-valued option fields -> the values schema.fbs defines
_ENUM_FIELDS = {
    "Padding": {int(getattr(tflite.Padding, n)) for n in dir(tflite.Padding) if not n.startswith("_")},
    "FusedActivationFunction": {int(getattr(tflite.ActivationFunctionType, n))
                                for n in dir(tflite.ActivationFunctionType) if not n.startswith("_")},
}


def _check_option_values(values: dict[str, Any], largest: int, where: str) -> None:
    """Strides, windows and dilations of an options table (``values``: its fields by accessor name, as
    :func:`.option_tables.read_options` read them) lie in ``[1, largest tensor dimension]``;
    paddings and fused activations are values of their enums; float parameters (a softmax's beta, a leaky
    ReLU's alpha, clips, epsilons) are finite.

    A larger value cannot describe a layer of the model, and the graph
    holds windows and strides as 'shape tensors' of that size (a corrupt
    window of 2**29 would allocate gigabytes).
    """
    for name, value in values.items():
        if name.startswith(_WINDOW_FIELDS):
            v = int(value)
            if not 1 <= v <= max(largest, 1):
                raise ModelFormatError(f"{where}: {name} {v} is outside [1, {max(largest, 1)}] (the largest tensor "
                                       f"dimension of the model)")
        elif name in _ENUM_FIELDS:
            v = int(value)
            if v not in _ENUM_FIELDS[name]:
                raise ModelFormatError(f"{where}: {name} {v} is not one of the schema's values "
                                       f"{sorted(_ENUM_FIELDS[name])}")
        elif name in _FLOAT_FIELDS:
            if isinstance(value, float) and not math.isfinite(value):  # a NaN softmax beta converted, failed at run
                raise ModelFormatError(f"{where}: {name} {value} is not a finite number")


def _check_min_max(mins: np.ndarray, maxs: np.ndarray, where: str) -> None:
    """Recorded float ranges (``min`` / ``max`` of the quantization table) are finite with min <= max."""
    if mins.size != maxs.size:
        raise ModelFormatError(f"{where}: {mins.size} range minimums but {maxs.size} maximums")
    lo, hi = mins.astype(np.float64), maxs.astype(np.float64)
    bad = ~(np.isfinite(lo) & np.isfinite(hi) & (lo <= hi))
    if bad.any():
        k = int(np.argmax(bad))
        raise ModelFormatError(f"{where}: quantization range [{lo[k]}, {hi[k]}] is not finite with min <= max")


def _sparsity(t: Any, raw: bytes, pos: int, name: str, label: str) -> Sparsity | None:
    """The sparsity table of the Tensor at ``pos`` (``t``, a ``tflite.Tensor`` set there)."""
    t.Init(raw, pos)
    try:
        return read_sparsity(t)
    except ValueError as exc:
        raise ModelFormatError(f"{label}: tensor {name}: {exc}") from exc


def _buffer_data(buf: Any, raw: bytes, name: str, label: str, tname: str, npdt: Any,
                 shape: tuple[int, ...], sparsity: Sparsity | None = None) -> np.ndarray | None:
    offset = int(buf.Offset()) if hasattr(buf, "Offset") else 0
    if offset > 1:
        size = int(buf.Size())
        if offset + size > len(raw):
            raise ModelFormatError(f"{label}: tensor {name}: buffer lies past the end of the file (truncated?)")
        payload = raw[offset:offset + size]
    else:
        arr = _np_or_empty(buf, "Data", np.uint8)
        if arr.size == 0:
            return None
        payload = arr.tobytes()
    if npdt is None:
        raise ModelFormatError(f"{label}: tensor {name} has type {tname}, which is not supported")
    itemsize = np.dtype(npdt).itemsize
    count = int(np.prod(shape)) if shape else 1
    if sparsity is not None:  # the buffer holds only the stored (non-zero) values
        if len(payload) % itemsize or len(payload) > count * itemsize:
            raise ModelFormatError(f"{label}: sparse tensor {name}: buffer holds {len(payload)} bytes, not a whole "
                                   f"number of {tname} values up to shape {list(shape)}")
        values = np.frombuffer(payload, dtype=np.dtype(npdt).newbyteorder("<")).astype(npdt)
        try:
            return densify(values, sparsity, shape)
        except ValueError as exc:
            raise ModelFormatError(f"{label}: sparse tensor {name}: {exc}") from exc
    if len(payload) != count * itemsize:
        raise ModelFormatError(f"{label}: tensor {name}: buffer holds {len(payload)} bytes, "
                               f"shape {list(shape)} of {tname} needs {count * itemsize}")
    return np.frombuffer(payload, dtype=np.dtype(npdt).newbyteorder("<")).astype(npdt).reshape(shape)
