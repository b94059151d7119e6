"""Static shapes and element types of every ONNX tensor (onnx shape inference plus contrib-op proxies).

The onnx package infers shapes of the standard ops only; a QOperator model
(onnxruntime's quantizer, format QOperator) has ``com.microsoft`` ops such
as QLinearAdd in the middle of the graph, after which nothing would be
known. For inference only, each contrib op is replaced by a *proxy* of
standard ops with the same output shape and type: its quantized inputs are
Cast to float, the matching float op is applied (Add, Concat,
GlobalAveragePool, Gemm...), and the result is Cast back to the output's
type (the type of its zero point). The proxies never run.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper

from hexnn_import.importers.onnx.reader import MS_DOMAIN, attrs_of

Proxy = Callable[[onnx.NodeProto, Callable[[str], int]], list[onnx.NodeProto]]


def _cast(src: str, dst: str, to: int) -> onnx.NodeProto:
    return helper.make_node("Cast", [src], [dst], to=to)


def _float_op(op: str, data_pos: list[int], zp_pos: int | None, **attrs) -> Proxy:  # type: ignore[no-untyped-def]
    """Proxy: Cast the inputs at ``data_pos`` to float, apply ``op``, Cast to the type of input ``zp_pos``."""

    def build(node: onnx.NodeProto, elem: Callable[[str], int]) -> list[onnx.NodeProto]:
        out = node.output[0]
        tag = f"__proxy_{out}"
        nodes, ins = [], []
        for k, p in enumerate(data_pos):
            nodes.append(_cast(node.input[p], f"{tag}_in{k}", TensorProto.FLOAT))
            ins.append(f"{tag}_in{k}")
        a = {k: v for k, v in attrs_of(node).items() if k in attrs.get("keep", ())}
        a.update({k: v for k, v in attrs.items() if k != "keep"})
        to = TensorProto.FLOAT
        if zp_pos is not None and zp_pos < len(node.input) and node.input[zp_pos]:
            to = elem(node.input[zp_pos]) or TensorProto.UINT8
        elif zp_pos is not None:
            to = TensorProto.UINT8
        nodes.append(helper.make_node(op, ins, [f"{tag}_f"], **a))
        nodes.append(_cast(f"{tag}_f", out, to))
        return nodes

    return build


def _variadic_concat(node: onnx.NodeProto, elem: Callable[[str], int]) -> list[onnx.NodeProto]:
    """QLinearConcat(Y_scale, Y_zp, (X, X_scale, X_zp)...) -> Concat of the X inputs."""
    data = list(range(2, len(node.input), 3))
    return _float_op("Concat", data, 1, axis=attrs_of(node).get("axis", 0))(node, elem)


def _channels_last_pool(op: str) -> Proxy:
    """QLinear(Global)AveragePool, also with ``channels_last``: the float pool between transposes."""

    def build(node: onnx.NodeProto, elem: Callable[[str], int]) -> list[onnx.NodeProto]:
        a = attrs_of(node)
        keep = {k: v for k, v in a.items() if k in ("kernel_shape", "strides", "pads", "auto_pad", "ceil_mode",
                                                     "count_include_pad", "dilations")}
        if not a.get("channels_last", 0):
            return _float_op(op, [0], 4, **keep)(node, elem)
        out = node.output[0]
        tag = f"__proxy_{out}"
        to = elem(node.input[4]) if len(node.input) > 4 and node.input[4] else TensorProto.UINT8
        return [_cast(node.input[0], f"{tag}_f", TensorProto.FLOAT),
                helper.make_node("Transpose", [f"{tag}_f"], [f"{tag}_t"], perm=[0, 3, 1, 2]),
                helper.make_node(op, [f"{tag}_t"], [f"{tag}_p"], **keep),
                helper.make_node("Transpose", [f"{tag}_p"], [f"{tag}_b"], perm=[0, 2, 3, 1]),
                _cast(f"{tag}_b", out, to)]

    return build


def _identity(node: onnx.NodeProto, elem: Callable[[str], int]) -> list[onnx.NodeProto]:
    return [helper.make_node("Identity", [node.input[0]], [node.output[0]])]


def _qgemm(node: onnx.NodeProto, elem: Callable[[str], int]) -> list[onnx.NodeProto]:
    a = attrs_of(node)
    keep = {k: a[k] for k in ("transA", "transB") if k in a}
    return _float_op("Gemm", [0, 3], 8 if len(node.input) > 8 and node.input[8] else None, **keep)(node, elem)


PROXIES: dict[str, Proxy] = {
    "QLinearAdd": _float_op("Add", [0, 3], 7),
    "QLinearMul": _float_op("Mul", [0, 3], 7),
    "QLinearConcat": _variadic_concat,
    "QLinearGlobalAveragePool": _channels_last_pool("GlobalAveragePool"),
    "QLinearAveragePool": _channels_last_pool("AveragePool"),
    "QLinearSigmoid": _identity,
    "QLinearLeakyRelu": _identity,
    "QLinearSoftmax": _identity,
    "QGemm": _qgemm,
}


def infer(model: onnx.ModelProto, nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto],
          opset: int, typed: list[onnx.ValueInfoProto] | None = None
          ) -> tuple[dict[str, tuple[int, ...]], dict[str, np.dtype]]:
    """Static shapes and numpy dtypes of the tensors of ``nodes`` (unknown or symbolic ones left out).

    ``typed``: constants given by type and shape only (large folded results, whose values no shape needs).
    """
    g = model.graph
    typed = list(typed or [])
    elem_types: dict[str, int] = {t.name: t.data_type for t in inits}
    for vi in list(g.input) + typed + list(g.value_info) + list(g.output):
        if vi.type.HasField("tensor_type"):
            elem_types.setdefault(vi.name, vi.type.tensor_type.elem_type)

    def elem(name: str) -> int:
        return elem_types.get(name, 0)

    proxied: list[onnx.NodeProto] = []
    for n in nodes:
        if n.domain == MS_DOMAIN and n.op_type in PROXIES:
            try:
                proxied.extend(PROXIES[n.op_type](n, elem))
            except (IndexError, KeyError, ValueError):
                proxied.append(n)
        else:
            proxied.append(n)
    init_names = {t.name for t in inits}
    graph = helper.make_graph(proxied, g.name or "g", [i for i in g.input if i.name not in init_names] + typed,
                              list(g.output), inits)
    opsets = [o for o in model.opset_import]
    m = helper.make_model(graph, opset_imports=opsets, ir_version=model.ir_version or 8)
    try:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - inference errors leave the shapes unknown; the import reports them
        pass
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, np.dtype] = {}
    for vi in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
        if vi.name.startswith("__proxy_") or not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if tt.elem_type:
            try:
                dtypes[vi.name] = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
            except (KeyError, TypeError):  # no numpy dtype for it: the dtype stays unknown, the shape is kept
                pass
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            shapes[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
    return shapes, dtypes


#: largest input (elements) :func:`propagate` evaluates on zeros to learn an output shape
MAX_PROBE_ELEMENTS = 1 << 24


def _node_model(node: onnx.NodeProto, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, np.dtype],
                consts: dict[str, np.ndarray], opset: int) -> onnx.ModelProto:
    """A one-node model whose inputs have the known static shapes (constants as initializers)."""
    from onnx import numpy_helper

    ins, inits = [], []
    for name in dict.fromkeys(i for i in node.input if i):
        if name in consts:
            inits.append(numpy_helper.from_array(np.asarray(consts[name], order="C"), name))
        else:
            ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtypes[name]),
                                                     list(shapes[name])))
    outs = [helper.make_value_info(o, onnx.TypeProto()) for o in node.output if o]
    g = helper.make_graph([node], "probe", ins, outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _probe(node: onnx.NodeProto, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, np.dtype],
           consts: dict[str, np.ndarray], opset: int) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Output shapes and dtypes of one node: onnx inference of the node alone, else a run on zeros."""
    m = _node_model(node, shapes, dtypes, consts, opset)
    found: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    try:
        inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
        for vi in inferred.graph.output:
            tt = vi.type.tensor_type
            if tt.elem_type and tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
                found[vi.name] = (tuple(int(d.dim_value) for d in tt.shape.dim),
                                  np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type)))
    except Exception:  # noqa: BLE001 - fall back to running the node
        pass
    if len(found) == len([o for o in node.output if o]):
        return found
    size = sum(int(np.prod(shapes[i], dtype=np.int64)) for i in node.input if i and i not in consts)
    if size > MAX_PROBE_ELEMENTS:
        return found
    from onnx.reference import ReferenceEvaluator

    feeds = {i: np.zeros(shapes[i], dtypes[i]) for i in node.input if i and i not in consts}
    try:
        outs = ReferenceEvaluator(m).run(None, feeds)
    except Exception:  # noqa: BLE001 - the node cannot run on zeros: its shape stays unknown
        return found
    for name, arr in zip([o for o in node.output if o], outs):
        arr = np.asarray(arr)
        found[name] = (tuple(arr.shape), arr.dtype)
    return found


def propagate(nodes: list[onnx.NodeProto], shapes: dict[str, tuple[int, ...]], dtypes: dict[str, np.dtype],
              consts: dict[str, np.ndarray], opset: int) -> None:
    """Shapes onnx's inference gave up on, node by node in order (issue 18, item 3).

    Whole-model inference stops at the first node it cannot infer and
    leaves everything after it unknown. Here each standard node whose
    inputs all have static shapes (integer and bool inputs: are constants) and whose outputs
    do not is inferred alone, or run once on zeros by the reference
    evaluator, and what it learns feeds the nodes after it.
    """
    for n in nodes:
        if n.domain not in ("", "ai.onnx") or n.op_type in ("If", "Loop", "Scan"):
            continue
        outs = [o for o in n.output if o]
        if not outs or all(o in shapes or o in consts for o in outs):
            continue
        ins = [i for i in n.input if i]
        if not all(i in consts or (i in shapes and i in dtypes) for i in ins):
            continue
        if any(i not in consts and dtypes[i].kind in "iub" and dtypes[i] not in (np.int8, np.uint8) for i in ins):
            continue  # integer inputs (shapes, indices, axes) must be known values, not zeros
        for name, (shape, dt) in _probe(n, shapes, dtypes, consts, opset).items():
            shapes.setdefault(name, shape)
            dtypes.setdefault(name, dt)
