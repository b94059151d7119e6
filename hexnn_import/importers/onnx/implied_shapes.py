"""Sizes an ONNX model implies for its open input dimensions: its metadata, then its first layers (issue 34).

:mod:`onnx.inputs` fixes the open dimensions it can (a dynamic batch, a ``dim_param`` shared with a known
dimension); for the others it asks this module, which reads two things the file itself holds:

* **metadata** (``metadata_props``): an ultralytics export (``YOLO.export(format="onnx", dynamic=True)``,
  ultralytics ``engine/exporter.py`` writes ``imgsz``, ``batch``, ``channels``, ``stride``...) gives the
  image size it was exported at as ``imgsz`` (``[H, W]``, or one number for both): the height and width
  of a 4-D NCHW input;
* **the layers that read the input**: onnx's own shape inference runs once on a light copy of the graph
  (weights of more than 64 elements replaced by declared inputs of the same shape) in which every open
  dimension is a symbol of its own; a node whose operands must agree then names the symbol's size
  (the ONNX operator specification of each op):

  - Concat: every axis but ``axis`` has one size on all inputs;
  - MatMul / Gemm (the contracted dimension), Conv / ConvTranspose (input channels from the weight),
    LSTM / GRU / RNN (``initial_h`` / ``initial_c``: directions, batch as in ``X``, ``hidden_size``; ``X``'s
    input size from ``W``);
  - Reshape to a constant target with no ``-1``: one symbol in the data's shape takes the size that keeps
    the element count.

  Where a size shows only once the other open dimensions have one (an LSTM's batch behind a Pad whose
  output shape needs the sample count), each open dimension is tried with the others at two sizes
  (:func:`from_layers_whatever_the_rest`); a size found alike on both is implied. Two nodes that name
  different sizes for one symbol leave it open. Nothing here is a guess from a model
  family: a size is implied only where the file allows no other. Broadcasting ops (Add, Mul...) imply
  nothing: a dimension facing a size N may be N or 1 ("Broadcasting in ONNX").
"""
from __future__ import annotations

import math
import re
from typing import Mapping

import numpy as np
import onnx
from onnx import helper, shape_inference

#: (input name, axis) -> (size, where it comes from)
Implied = dict[tuple[str, int], tuple[int, str]]
MAX_TRIED = 8  # open dimensions beyond this many are not tried one by one (two inferences each)
TRIALS = (256, 320)  # sizes the other open dimensions take in from_layers_whatever_the_rest
#: ultralytics writes ``str(imgsz)``: ``[320, 320]``, ``[480, 640]`` or one number
IMGSZ = re.compile(r"\s*[\[(]?\s*(\d{1,6})\s*(?:,\s*(\d{1,6})\s*)?[\])]?\s*$")
MAX_SIZE = 1 << 16  # a metadata size above this is not taken (the memory budget refuses such inputs anyway)
SMALL = 64  # weights up to this many elements stay values in the probe copy (Reshape targets, pads)


def from_metadata(probe: Probe, open_dims: Mapping[str, list[int]],
                  ranks: Mapping[str, int]) -> Implied:
    """The ultralytics ``imgsz`` (module doc) for the open height / width of each 4-D input."""
    props = probe.metadata
    found = IMGSZ.match(props.get("imgsz", ""))
    if found is None:
        return {}
    hw = [int(found[1]), int(found[2] or found[1])]
    if not all(0 < v <= MAX_SIZE for v in hw):
        return {}
    out: Implied = {}
    for name, axes in open_dims.items():
        if ranks.get(name) != 4:
            continue
        for axis, v in ((2, hw[0]), (3, hw[1])):
            if axis in axes:
                out[(name, axis)] = (int(v), f"from the model's metadata (imgsz {props['imgsz']})")
    return out


class Probe:
    """A light copy of the graph (module doc), made once, whose input dims each probe rewrites."""

    def __init__(self, model: onnx.ModelProto):
        g = model.graph
        inits = {t.name for t in g.initializer}
        inputs = [vi for vi in g.input if vi.name not in inits and vi.type.HasField("tensor_type")]
        small = []
        for t in g.initializer:
            if math.prod(t.dims) <= SMALL:
                small.append(t)
            else:
                inputs.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        outputs = [helper.make_tensor_value_info(o.name, o.type.tensor_type.elem_type, None) for o in g.output
                   if o.type.HasField("tensor_type")]
        graph = helper.make_graph(list(g.node), g.name or "g", inputs, outputs, small)
        self.model = helper.make_model(graph, opset_imports=list(model.opset_import))
        self.model.ir_version = model.ir_version or 8
        self.metadata = {p.key: p.value for p in model.metadata_props}

    def infer(self, values: Mapping[str, list[int | None]],
              strict: bool = False) -> tuple[onnx.ModelProto, dict[str, tuple[str, int]]]:
        """onnx's shape inference with each input's dims from ``values`` (None: a symbol of its own);
        returns the inferred copy and symbol -> (input, axis). Raises what onnx raises."""
        symbols: dict[str, tuple[str, int]] = {}
        for vi in self.model.graph.input:
            if vi.name not in values:
                continue
            shape = vi.type.tensor_type.shape
            shape.ClearField("dim")
            for k, v in enumerate(values[vi.name]):
                d = shape.dim.add()
                if v is None:
                    d.dim_param = f"hexnn_open_{len(symbols)}"
                    symbols[d.dim_param] = (vi.name, k)
                else:
                    d.dim_value = int(v)
        return shape_inference.infer_shapes(self.model, strict_mode=strict, data_prop=True), symbols


def _array(t: onnx.TensorProto) -> "np.ndarray | None":
    """A constant's values, or None for one a damaged file makes unreadable (the importer names that file's
    fault itself; an implied size is only a guess and must not be where it fails)."""
    try:
        return onnx.numpy_helper.to_array(t)
    except (TypeError, ValueError):
        return None


class _Rules:
    """The node rules of the module doc on one inferred probe copy."""

    def __init__(self, inferred: onnx.ModelProto, symbols: dict[str, tuple[str, int]]):
        self.symbols = symbols
        self.found: dict[str, set[tuple[int, str]]] = {}
        self.dims: dict[str, list[int | str | None]] = {}
        g = inferred.graph
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
                self.dims[vi.name] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                                      for d in vi.type.tensor_type.shape.dim]
        self.consts = {t.name: a for t in g.initializer if (a := _array(t)) is not None}
        for n in g.node:
            if n.op_type == "Constant" and n.output:
                for a in n.attribute:
                    if a.name == "value" and (arr := _array(a.t)) is not None:
                        self.consts[n.output[0]] = arr
        for t in g.initializer:
            self.dims[t.name] = list(t.dims)

    def same(self, a: int | str | None, b: int | str | None, node: onnx.NodeProto) -> None:
        """``a`` and ``b`` are one size: a symbol facing a known size takes it."""
        for s, v in ((a, b), (b, a)):
            if isinstance(s, str) and s in self.symbols and isinstance(v, int) and v > 0:
                self.found.setdefault(s, set()).add((v, f"{node.op_type} {_label(node)}"))

    def shape(self, name: str) -> list[int | str | None] | None:
        return self.dims.get(name) if name else None

    def run(self, nodes: list[onnx.NodeProto]) -> None:
        for n in nodes:
            fn = getattr(self, f"_{n.op_type.lower()}", None)
            if fn is not None and n.domain in ("", "ai.onnx"):
                fn(n)

    def _concat(self, n: onnx.NodeProto) -> None:
        shapes = [s for s in (self.shape(i) for i in n.input) if s is not None]
        axis = next((helper.get_attribute_value(a) for a in n.attribute if a.name == "axis"), 0)
        for a in shapes:
            for b in shapes:
                if len(a) == len(b):
                    for k, (x, y) in enumerate(zip(a, b)):
                        if k != axis % len(a):
                            self.same(x, y, n)

    def _matmul(self, n: onnx.NodeProto) -> None:
        a, b = self.shape(n.input[0]), self.shape(n.input[1])
        if a and b:
            self.same(a[-1], b[-2] if len(b) >= 2 else b[0], n)

    def _gemm(self, n: onnx.NodeProto) -> None:
        a, b = self.shape(n.input[0]), self.shape(n.input[1])
        at = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        if a and b and len(a) == 2 and len(b) == 2:
            self.same(a[0 if at.get("transA") else 1], b[1 if at.get("transB") else 0], n)

    def _conv(self, n: onnx.NodeProto) -> None:
        x, w = self.shape(n.input[0]), self.shape(n.input[1])
        group = next((helper.get_attribute_value(a) for a in n.attribute if a.name == "group"), 1)
        if x and w and len(x) >= 2 and isinstance(w[1], int):
            self.same(x[1], w[1] * group, n)

    def _convtranspose(self, n: onnx.NodeProto) -> None:
        x, w = self.shape(n.input[0]), self.shape(n.input[1])
        if x and w and len(x) >= 2:
            self.same(x[1], w[0], n)

    def _lstm(self, n: onnx.NodeProto) -> None:
        x, w = self.shape(n.input[0]), self.shape(n.input[1])
        at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if not x or len(x) != 3:
            return
        layout = int(at.get("layout", 0))
        batch = x[0] if layout else x[1]
        if w and len(w) == 3:
            self.same(x[2], w[2], n)
        for pos in (5, 6):
            h = self.shape(n.input[pos]) if len(n.input) > pos else None
            if h and len(h) == 3:
                self.same(h[0] if layout else h[1], batch, n)
                self.same(h[1] if layout else h[0], w[0] if w else None, n)
                self.same(h[2], int(at["hidden_size"]) if "hidden_size" in at else None, n)

    _gru = _rnn = _lstm

    def _reshape(self, n: onnx.NodeProto) -> None:
        x = self.shape(n.input[0])
        target = self.consts.get(n.input[1]) if len(n.input) > 1 else None
        if not x or target is None or target.ndim != 1:
            return
        want = [int(v) for v in target]
        if any(v < 0 for v in want):
            return
        if not any(a.name == "allowzero" and a.i for a in n.attribute):  # 0 copies the data's dimension
            want = [x[k] if v == 0 and k < len(x) else v for k, v in enumerate(want)]  # type: ignore[misc]
        if not all(isinstance(v, int) for v in want):
            return
        open_ = [s for s in x if not isinstance(s, int)]
        known = math.prod(v for v in x if isinstance(v, int))
        if len(open_) == 1 and isinstance(open_[0], str) and known and math.prod(want) % known == 0:
            self.same(open_[0], math.prod(want) // known, n)


def _label(node: onnx.NodeProto) -> str:
    return node.name or (node.output[0] if node.output else node.op_type)


def from_layers(probe: Probe, values: Mapping[str, list[int | None]]) -> Implied:
    """Sizes the first layers imply (module doc) for the ``None`` entries of ``values`` (input -> dims)."""
    if not any(v is None for dims in values.values() for v in dims):
        return {}
    try:
        inferred, symbols = probe.infer(values)
    except Exception:  # noqa: BLE001 - inference fails on graphs it cannot follow; nothing is implied then
        return {}
    rules = _Rules(inferred, symbols)
    rules.run(list(inferred.graph.node))
    out: Implied = {}
    for sym, seen in rules.found.items():
        sizes = {v for v, _ in seen}
        if len(sizes) == 1:
            v, where = min(seen)
            out[symbols[sym]] = (v, f"as {where} requires")
    return out


def from_layers_whatever_the_rest(probe: Probe, values: Mapping[str, list[int | None]]) -> Implied:
    """Sizes implied whatever the other open dimensions are: each open dimension stays a symbol while the
    others take each size of :data:`TRIALS` in turn; a size found alike on every trial is implied (an open
    sample count hides the batch of the LSTM state that follows, which no sample count changes)."""
    open_ = [(n, k) for n, dims in values.items() for k, v in enumerate(dims) if v is None]
    out: Implied = {}
    if not 2 <= len(open_) <= MAX_TRIED:
        return out
    for name, axis in open_:
        seen = []
        for t in TRIALS:
            trial = {n: [t if v is None and (n, k) != (name, axis) else v for k, v in enumerate(dims)]
                     for n, dims in values.items()}
            seen.append(from_layers(probe, trial).get((name, axis)))
        if seen[0] is not None and all(s is not None and s[0] == seen[0][0] for s in seen):
            out[(name, axis)] = seen[0]
    return out


__all__ = ["Probe", "from_metadata", "from_layers", "from_layers_whatever_the_rest", "Implied"]
