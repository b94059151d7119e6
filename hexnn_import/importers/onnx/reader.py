"""The ONNX model the importer walks, and its loading: load, validate, opset, shape inference (the whole read,
with fixed input shapes and folding, is :func:`.importer.read_onnx`).

What the importer gets (:class:`OnnxModel`) is a flat, static view of the
graph: nodes in topological order with their attributes as Python values,
every tensor's static shape and element type, and every constant as numpy
(initializers, ``Constant`` nodes and everything folded from them by
:mod:`onnx.fold`: Shape, Gather of constants, ConstantOfShape, Cast of
constants...). Opsets 7 and up of the default domain are read;
``com.microsoft`` ops (the QOperator contrib ops) get their output shapes
from a proxy of standard ops (:mod:`onnx.shapes`), since the onnx package's
shape inference does not know them.

Open input dimensions are fixed by :mod:`onnx.inputs` (``--input-shape
name=1,3,224,224``, else a dynamic batch becomes 1 with a note; issue 18;
other sizes the model's metadata or first layers imply, else one error
naming every open dimension; issue 34).
"""
from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Iterator

import numpy as np
import onnx
from onnx import helper

from hexnn_import.errors import ModelFormatError
from hexnn_import.memory import check_bytes

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
    """Parse an .onnx file (ModelFormatError naming the file when it is not a readable model).

    Nothing is allocated from what the file declares before it is checked:
    the file's size, then every tensor's declared size (initializers,
    constants of nodes and subgraphs, declared inputs / outputs / value
    infos) against the memory budget (:mod:`hexnn_import.memory`); external
    data is then read by :func:`load_external_data`, never by the onnx package.
    """
    p = Path(path)
    if p.is_file():
        check_bytes(p.stat().st_size, f"model {p}")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # noqa: BLE001 - protobuf raises several unrelated types
        raise ModelFormatError(f"{path}: not a readable ONNX model ({type(exc).__name__}: {printable(exc)})") from exc
    check_strings(model, str(path))
    for t in model.graph.initializer:
        if not isinstance(t.name, str):
            raise ModelFormatError(f"{path}: an initializer name is not valid UTF-8")
    if not model.graph.node and not model.graph.output:
        raise ModelFormatError(f"{path}: the ONNX model has an empty graph")
    check_declared_sizes(model, str(path))
    load_external_data(model, p, str(path))
    return model


def _itemsize(elem_type: int) -> int:
    """Bytes per element of an ONNX element type (1 for strings and types numpy does not know)."""
    try:
        return max(int(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).itemsize), 1)
    except (KeyError, TypeError, ValueError):
        return 1


def _tensors(graph: onnx.GraphProto, where: str = "") -> Iterator[tuple[str, onnx.TensorProto]]:
    """Every TensorProto of ``graph`` and its subgraphs, with what messages call it."""
    for t in graph.initializer:
        yield f"{where}initializer {printable(t.name)}", t
    for st in graph.sparse_initializer:
        yield f"{where}sparse initializer {printable(st.values.name)}", st.values
        yield f"{where}sparse initializer {printable(st.values.name)} (indices)", st.indices
    for k, n in enumerate(graph.node):
        node = printable(n.output[0] if n.output and n.output[0] else (n.name or f"node{k}"))
        for a in n.attribute:
            at = f"{where}attribute {printable(a.name)} of node {node}"
            if a.HasField("t"):
                yield at, a.t
            for t in a.tensors:
                yield at, t
            if a.HasField("sparse_tensor"):
                yield at, a.sparse_tensor.values
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from _tensors(g, f"{at}: ")


def check_declared_sizes(model: onnx.ModelProto, label: str) -> None:
    """ResourceError for a tensor whose declared dims x element size exceed the memory budget.

    Checked from the dims alone, before any array is built: every
    TensorProto (:func:`_tensors`), and the shapes declared for graph
    inputs, outputs and value infos (a symbolic dimension counts as 1).
    """
    for where, t in _tensors(model.graph):
        nbytes = math.prod(max(int(d), 1) for d in t.dims) * _itemsize(t.data_type)
        check_bytes(nbytes, f"{label}: {where} of shape {[int(d) for d in t.dims]}")
    g = model.graph
    for kind, infos in (("input", g.input), ("output", g.output), ("value", g.value_info)):
        for vi in infos:
            if not vi.type.HasField("tensor_type"):
                continue
            tt = vi.type.tensor_type
            dims = [int(d.dim_value) if d.HasField("dim_value") else 1 for d in tt.shape.dim]
            check_bytes(math.prod(max(d, 1) for d in dims) * _itemsize(tt.elem_type),
                        f"{label}: {kind} {printable(vi.name)} of shape {dims}")


def external_data_path(location: str, folder: Path, what: str) -> Path:
    """The file ``location`` names, which must lie inside the model's ``folder`` (ModelFormatError otherwise).

    The project's own rule (issue 20, finding 5), whatever onnx version is
    installed: a relative path with no ``..`` component (either separator),
    not absolute, whose resolved path (symlinks followed) lies inside the
    resolved folder, and a regular file.
    """
    loc = str(location)
    shown = printable(loc)
    if not loc or "\x00" in loc:
        raise ModelFormatError(f"{what}: external data has no usable location ('{shown}')")
    if PurePosixPath(loc).is_absolute() or PureWindowsPath(loc).is_absolute() or PureWindowsPath(loc).drive \
            or loc.startswith(("/", "\\")):
        raise ModelFormatError(f"{what}: external data location '{shown}' is an absolute path; only files inside "
                               f"the model's folder are read")
    if ".." in re.split(r"[\\/]", loc):
        raise ModelFormatError(f"{what}: external data location '{shown}' has a '..' component; only files inside "
                               f"the model's folder are read")
    root = Path(os.path.realpath(folder))
    target = Path(os.path.realpath(folder / loc))
    if target != root and root not in target.parents:
        raise ModelFormatError(f"{what}: external data location '{shown}' resolves outside the model's folder "
                               f"(a symbolic link?); only files inside it are read")
    if not target.is_file():
        raise ModelFormatError(f"{what}: external data file '{shown}' {_not_a_file(target)}")
    return target


def _not_a_file(target: Path) -> str:
    """What a path that is not a regular file is, for the message (issue 38, finding 10: a FIFO was reported as
    a file that does not exist)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return "does not exist beside the model"
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    kind = next((name for test, name in kinds if test(mode)), "not a regular file")
    return f"is {kind}, not a regular file; only regular files are read"


def load_external_data(model: onnx.ModelProto, path: Path, label: str) -> None:
    """Read every tensor's external data into ``raw_data``, from files inside the model's folder only.

    ``location`` / ``offset`` / ``length`` are the keys of the ONNX external
    data format (onnx ``docs/ExternalData.md``); the bytes read must be what
    the tensor's dims and type need, and within the memory budget.
    """
    folder = path.parent
    for where, t in _tensors(model.graph):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        what = f"{label}: {where}"
        info = {e.key: e.value for e in t.external_data}
        target = external_data_path(info.get("location", ""), folder, what)
        try:
            offset = int(info.get("offset") or 0)
            length = None if info.get("length") in (None, "") else int(info["length"])
        except ValueError as exc:
            raise ModelFormatError(f"{what}: external data offset / length is not a number") from exc
        size = target.stat().st_size
        if offset < 0 or offset > size or (length is not None and (length < 0 or offset + length > size)):
            raise ModelFormatError(f"{what}: external data [offset {offset}, length {length}] lies outside its "
                                   f"file of {size} bytes")
        n = size - offset if length is None else length
        need = math.prod(max(int(d), 0) for d in t.dims) * _itemsize(t.data_type)
        if t.data_type != onnx.TensorProto.STRING and n != need:
            raise ModelFormatError(f"{what}: external data holds {n} bytes, its dims {list(t.dims)} need {need}")
        check_bytes(n, what)
        with open(target, "rb") as fh:
            fh.seek(offset)
            data = fh.read(n)
        t.raw_data = data
        t.data_location = onnx.TensorProto.DEFAULT
        del t.external_data[:]


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


__all__ = ["ONode", "QConst", "OnnxModel", "load_model", "model_opset", "printable",
           "attrs_of", "since_version", "MS_DOMAIN", "MIN_OPSET", "check_declared_sizes", "external_data_path",
           "load_external_data"]
