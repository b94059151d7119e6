"""Read an ONNX model for import: load, validate, opset, fixed input shapes, shape inference, folding.

What the importer gets (:class:`OnnxModel`) is a flat, static view of the
graph: nodes in topological order with their attributes as Python values,
every tensor's static shape and element type, and every constant as numpy
(initializers, ``Constant`` nodes and everything folded from them by
:mod:`onnx_fold`: Shape, Gather of constants, ConstantOfShape, Cast of
constants...). Opsets 7 and up of the default domain are read;
``com.microsoft`` ops (the QOperator contrib ops) get their output shapes
from a proxy of standard ops (:mod:`onnx_shapes`), since the onnx package's
shape inference does not know them.

Open input dimensions are fixed by :mod:`onnx_inputs` (``--input-shape
name=1,3,224,224``, else a dynamic batch becomes 1 with a note; issue 18).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import onnx
from onnx import helper

from hexnn_import.errors import ModelFormatError

MIN_OPSET = 7
MS_DOMAIN = "com.microsoft"


@dataclass
class ONode:
    """One ONNX node: op, domain, input/output names ('' for an absent optional input), attributes."""

    op_type: str
    domain: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any]
    since: int  # since-version of the op's schema at the model's opset (1 for contrib ops)
    index: int = 0
    attr_types: dict[str, int] = field(default_factory=dict)  # AttributeProto type of each attribute

    @property
    def label(self) -> str:
        """What messages call the node: its first output's name (node names are often empty), printable."""
        return printable(self.outputs[0] if self.outputs and self.outputs[0] else (self.name or f"node{self.index}"))

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def input(self, pos: int) -> str:
        """Input name at ``pos``, '' when absent."""
        return self.inputs[pos] if pos < len(self.inputs) else ""


@dataclass
class QConst:
    """A constant that was DequantizeLinear'd: the codes and their quantization (for exact weights)."""

    codes: np.ndarray
    scale: np.ndarray
    zero_point: np.ndarray
    axis: int | None  # None: per tensor

    @property
    def dtype(self) -> str:
        return str(self.codes.dtype)

    def real(self) -> np.ndarray:
        """The dequantized values in float64."""
        if self.axis is None:
            return (self.codes.astype(np.float64) - float(self.zero_point.reshape(-1)[0])) * float(
                self.scale.reshape(-1)[0])
        shape = [1] * self.codes.ndim
        shape[self.axis] = -1
        zp = self.zero_point.astype(np.float64).reshape(shape)
        return (self.codes.astype(np.float64) - zp) * self.scale.astype(np.float64).reshape(shape)


@dataclass
class OnnxModel:
    """The static graph the importer walks (module doc)."""

    label: str
    opset: int
    nodes: list[ONode]
    inputs: list[str]
    outputs: list[str]
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    qconsts: dict[str, QConst] = field(default_factory=dict)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    dtypes: dict[str, np.dtype] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # for graph.meta["notes"] (defaulted input dims...)

    def shape(self, name: str) -> tuple[int, ...] | None:
        if name in self.consts:
            return tuple(self.consts[name].shape)
        return self.shapes.get(name)

    def dtype(self, name: str) -> np.dtype | None:
        if name in self.consts:
            return self.consts[name].dtype
        return self.dtypes.get(name)

    def consumers(self) -> dict[str, list[ONode]]:
        """Tensor name -> nodes reading it."""
        out: dict[str, list[ONode]] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i:
                    out.setdefault(i, []).append(n)
        return out


def printable(text: object) -> str:
    """One line of text for a message: the first line, control characters escaped."""
    s = str(text)
    first = (s.splitlines() or [""])[0]
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in first)


def check_strings(msg: Any, label: str) -> None:
    """Every string field of the protobuf (names, op types, domains) decoded as UTF-8 (ModelFormatError).

    ONNX is proto2: a string field holding invalid UTF-8 comes back as bytes,
    which would surface far from the file as a type error.
    """
    for fd, value in msg.ListFields():
        repeated = fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == fd.LABEL_REPEATED
        if fd.type == fd.TYPE_STRING:
            if any(not isinstance(v, str) for v in (value if repeated else [value])):
                raise ModelFormatError(f"{label}: field {fd.name} of a {msg.DESCRIPTOR.name} is not valid UTF-8")
        elif fd.type == fd.TYPE_MESSAGE and fd.message_type.name != "TensorProto":
            for v in (value if repeated else [value]):
                check_strings(v, label)


def load_model(path: str | Path) -> onnx.ModelProto:
    """Parse an .onnx file (ModelFormatError naming the file when it is not a readable model)."""
    try:
        model = onnx.load(str(path), load_external_data=True)
    except Exception as exc:  # noqa: BLE001 - protobuf raises several unrelated types
        raise ModelFormatError(f"{path}: not a readable ONNX model ({type(exc).__name__}: {printable(exc)})") from exc
    check_strings(model, str(path))
    for t in model.graph.initializer:
        if not isinstance(t.name, str):
            raise ModelFormatError(f"{path}: an initializer name is not valid UTF-8")
    if not model.graph.node and not model.graph.output:
        raise ModelFormatError(f"{path}: the ONNX model has an empty graph")
    return model


def model_opset(model: onnx.ModelProto, label: str) -> int:
    """The default-domain opset; ModelFormatError when it is older than 7."""
    version = None
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            version = int(imp.version)
    if version is None:
        version = MIN_OPSET if not any(n.domain in ("", "ai.onnx") for n in model.graph.node) else 1
    if version < MIN_OPSET:
        raise ModelFormatError(f"{label}: ONNX opset {version} is older than the opset {MIN_OPSET} this importer reads")
    return version


def fix_input_shapes(model: onnx.ModelProto, shapes: Mapping[str, tuple[int, ...]],
                     label: str) -> tuple[list[str], dict[str, int]]:
    """Fix every input's shape: given, defaulted or refused (:mod:`onnx_inputs`); returns (notes, user batches)."""
    from hexnn_import.importers.onnx_inputs import fix_input_shapes as fix

    return fix(model, shapes, label)


def attrs_of(node: onnx.NodeProto) -> dict[str, Any]:
    """Attributes as Python values (tensors as numpy, strings decoded)."""
    out: dict[str, Any] = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        elif isinstance(v, onnx.TensorProto):
            v = onnx.numpy_helper.to_array(v)
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode("utf-8", "replace") for s in v]
        out[a.name] = v
    return out


def attr_type_problem(node: ONode, opset: int) -> str | None:
    """An attribute whose type is not the one the op's schema declares (None when all match or unknown)."""
    if node.domain not in ("", "ai.onnx"):
        return None
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, "")
    except Exception:  # noqa: BLE001 - SchemaError: an op the onnx package does not know
        return None
    for name, t in node.attr_types.items():
        spec = schema.attributes.get(name)
        want = None if spec is None else int(getattr(spec.type, "value", spec.type))
        if want is not None and want != t:
            return (f"attribute {printable(name)} of type {onnx.AttributeProto.AttributeType.Name(t)}, "
                    f"the op takes {onnx.AttributeProto.AttributeType.Name(want)}")
        if node.attrs.get(name) is None:
            return f"attribute {printable(name)} has no value"
    return None


def since_version(op_type: str, domain: str, opset: int) -> int:
    """The since-version of the schema that applies at ``opset`` (1 for unknown / contrib ops)."""
    if domain not in ("", "ai.onnx"):
        return 1
    try:
        return int(onnx.defs.get_schema(op_type, opset, "").since_version)
    except Exception:  # noqa: BLE001 - SchemaError for unknown ops
        return 1


def read_onnx(path: str | Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> OnnxModel:
    """Load, validate and fold an .onnx file into an :class:`OnnxModel` (module doc)."""
    from hexnn_import.importers.onnx_fold import fold_model

    label = str(path)
    model = load_model(path)
    opset = model_opset(model, label)
    notes, batches = fix_input_shapes(model, input_shapes or {}, label)
    out = fold_model(model, opset, label, batches)
    out.notes = notes + out.notes
    return out


__all__ = ["ONode", "QConst", "OnnxModel", "read_onnx", "load_model", "model_opset", "fix_input_shapes", "printable",
           "attrs_of", "since_version", "MS_DOMAIN", "MIN_OPSET"]
