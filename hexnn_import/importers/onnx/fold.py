"""Constant folding of an ONNX graph (issue [ONNX import]: Shape, Gather of constants, Constant,
ConstantOfShape, Cast of constants...).

A node folds when every input it reads is a constant (initializer or an
earlier folded result), or when it is ``Shape`` / ``Size`` of a tensor whose
shape inference gave a static shape. Folded nodes are evaluated one at a
time by the onnx package's reference evaluator (``onnx.reference``), so the
folding follows the ONNX specification for every op and opset. Folding and
shape inference alternate until nothing more folds: a Reshape whose target
was computed by a Shape/Gather/Concat chain only gets its output shape once
that chain is constant.

DequantizeLinear of constant codes also folds (the real values feed float
arithmetic such as a Transpose of weights), but its codes, scales and zero
points are kept as a :class:`~hexnn_import.importers.onnx.reader.QConst`, so
conv-like layers can take QDQ weights exactly (issue: "per-axis weights,
weights with non-zero zero points").

Folded results together may take up to the memory budget (:class:`Budget`,
docs/limits.md): a 411 MB ConstantOfShape weight folds; a fold that would
pass the budget stays in the graph for the op mapping to refuse.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hexnn_import.errors import InputDataError, ModelFormatError
from hexnn_import.memory import budget_bytes
from hexnn_import.importers.onnx.reader import MS_DOMAIN, ONode, OnnxModel, QConst, attrs_of, printable, since_version
from hexnn_import.importers.onnx.lift1d import lift_1d
from hexnn_import.importers.onnx.rewrite import rewrite_channel_shuffles
from hexnn_import.importers.onnx.rank5_split import rewrite_rank5_splits
from hexnn_import.importers.onnx.unsqueeze_pairs import drop_unsqueeze_squeeze
from hexnn_import.importers.onnx.shapes import infer, propagate

#: Ops never folded: random, control flow, and the ones that hold state or subgraphs.
NO_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
           "If", "Loop", "Scan", "SequenceConstruct", "SequenceAt", "SequenceEmpty", "SequenceInsert",
           "SplitToSequence", "ConcatFromSequence", "DynamicQuantizeLinear"}
MAX_ROUNDS = 64
#: Folded constants of at least this many elements reach shape inference as typed inputs, not initializers
#: (their values never matter to a shape, and copying hundreds of MB into a model proto every round would)
TYPED_ONLY_ELEMENTS = 1 << 16


def _evaluate(node: onnx.NodeProto, feeds: dict[str, np.ndarray], opset: int) -> list[np.ndarray]:
    """``node`` evaluated by onnx's reference evaluator at the model's ``opset``.

    The node goes in a one-node GraphProto: a bare NodeProto is evaluated at
    the newest opset whatever ``opsets`` says (onnx ``reference_evaluator.py``),
    which breaks ops whose signature changed (Unsqueeze / Squeeze / ReduceX /
    Split took ``axes`` / ``split`` as attributes before opset 13 or 18).
    """
    from onnx.reference import ReferenceEvaluator

    names = list(dict.fromkeys(i for i in node.input if i))
    graph = helper.make_graph([node], "fold", [helper.make_empty_tensor_value_info(i) for i in names],
                              [helper.make_empty_tensor_value_info(o) for o in node.output if o])
    try:
        ref = ReferenceEvaluator(graph, opsets={"": opset})
    except RuntimeError:  # "No implementation for operator X version v": the evaluator implements only the
        ref = ReferenceEvaluator(node)  # versions where the op changed; a newer one computes the same
    outs = iter(ref.run(None, feeds))
    return [np.asarray(next(outs)) if o else np.zeros(0, np.float32) for o in node.output]


def _shape_fold(node: onnx.NodeProto, shapes: dict[str, tuple[int, ...]]) -> np.ndarray | None:
    """Shape / Size of a tensor with a static inferred shape."""
    shape = shapes.get(node.input[0]) if node.input else None
    if shape is None:
        return None
    if node.op_type == "Size":
        return np.array(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    a = attrs_of(node)
    r = len(shape)
    start, end = a.get("start", 0), a.get("end", r)
    start = max(0, min(r, start + r if start < 0 else start))
    end = max(0, min(r, end + r if end < 0 else end))
    return np.array(shape[start:end], dtype=np.int64)


def _qconst(node: onnx.NodeProto, consts: dict[str, np.ndarray]) -> QConst:
    codes = consts[node.input[0]]
    scale = np.asarray(consts[node.input[1]], dtype=np.float64)
    zp = consts[node.input[2]] if len(node.input) > 2 and node.input[2] else np.zeros(1, dtype=codes.dtype)
    axis = None
    if scale.size > 1:  # per axis (the attribute defaults to 1)
        axis = int(attrs_of(node).get("axis", 1))
        axis = axis + codes.ndim if axis < 0 else axis
    return QConst(np.asarray(codes), scale.reshape(-1), np.asarray(zp).reshape(-1), axis)


def fold_model(model: onnx.ModelProto, opset: int, label: str, batches: dict[str, int] | None = None) -> OnnxModel:
    """Fold constants and infer shapes until stable; return the :class:`OnnxModel` the importer walks.

    ``batches``: inputs the user gave a batch > 1 (a Reshape to a literal
    batch-1 shape is then refused, :func:`check_batch_reshapes`).
    """
    g = model.graph
    consts: dict[str, np.ndarray] = {}
    for t in g.initializer:
        try:
            consts[t.name] = numpy_helper.to_array(t)
        except Exception as exc:  # noqa: BLE001 - unreadable raw data / external file
            raise ModelFormatError(f"{label}: initializer {printable(t.name)} cannot be read "
                                   f"({printable(exc)})") from exc
    inits = list(g.initializer)
    init_names = set(consts)
    graph_inputs = [i.name for i in g.input if i.name not in init_names]
    qconsts: dict[str, QConst] = {}
    nodes = list(g.node)
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, np.dtype] = {}
    literal = set(consts)  # constants written in the file (not computed from shapes)
    typed: list[onnx.ValueInfoProto] = []  # large folded results: type and shape only, for shape inference
    budget = Budget()
    for _ in range(MAX_ROUNDS):
        shapes, dtypes = infer(model, nodes, inits, opset, typed)
        remaining, new, inlined = [], [], False
        for n in nodes:
            if n.op_type == "If" and n.domain in ("", "ai.onnx") and n.input[0] in consts:
                branch, branch_consts = inline_if(n, consts[n.input[0]])
                remaining.extend(branch)
                inlined = True
                consts.update(branch_consts)
                literal.update(branch_consts)
                new.extend(branch_consts)
                continue
            propagate([n], shapes, dtypes, consts, opset)  # shapes flow within the pass (fewer rounds)
            out = _try_fold(n, consts, shapes, dtypes, opset, label, qconsts, budget)
            if out is None:
                remaining.append(n)
                continue
            if n.op_type == "Constant" or all(i in literal for i in n.input if i) and any(n.input):
                literal.update(o for o in n.output if o)
            for name, arr in zip(n.output, out):
                if name:
                    consts[name] = arr
                    new.append(name)
        nodes = remaining
        if not new and not inlined:
            break
        small = [k for k in new if consts[k].size < TYPED_ONLY_ELEMENTS or consts[k].dtype.kind not in "fc"]
        inits = inits + [numpy_helper.from_array(np.asarray(consts[k], order="C"), k) for k in small]
        typed = typed + [_typed_info(k, consts[k]) for k in new if k not in set(small)]
    if batches:
        check_batch_reshapes(nodes, shapes, consts, literal, batches, label)
    nodes = rewrite_channel_shuffles(nodes, shapes, consts, {o.name for o in g.output})
    nodes = drop_unsqueeze_squeeze(nodes, shapes, consts, {o.name for o in g.output})
    nodes = rewrite_rank5_splits(nodes, shapes, consts, {o.name for o in g.output})
    nodes = lift_1d(nodes, shapes, dtypes, consts, qconsts, opset)
    onodes = []
    for k, n in enumerate(nodes):
        onodes.append(ONode(n.op_type, n.domain or "", n.name, list(n.input), list(n.output), attrs_of(n),
                            since_version(n.op_type, n.domain, opset), k, {a.name: int(a.type) for a in n.attribute}))
    out = OnnxModel(label, opset, onodes, graph_inputs, [o.name for o in g.output], consts, qconsts, shapes, dtypes)
    for i in g.input:  # declared input types (the inferred ones may miss unused inputs)
        if i.name not in init_names and i.type.HasField("tensor_type") and i.type.tensor_type.elem_type:
            try:
                out.dtypes.setdefault(i.name, np.dtype(helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)))
            except (KeyError, TypeError, ValueError):  # an element type the onnx package does not know
                raise ModelFormatError(f"{label}: input {printable(i.name)} has unknown element type "
                                       f"{i.type.tensor_type.elem_type}") from None
    return out


def inline_if(node: onnx.NodeProto, cond: np.ndarray) -> tuple[list[onnx.NodeProto], dict[str, np.ndarray]]:
    """The nodes of the branch an ``If`` with a constant condition takes, writing the If's outputs.

    Names made inside the branch get a prefix (they may repeat names of the
    other branch or of the outer graph); names the branch reads from the
    outer scope stay. Branch initializers come back as constants.
    """
    a = {x.name: x for x in node.attribute}
    branch = a["then_branch" if bool(np.asarray(cond).reshape(-1)[0]) else "else_branch"].g
    tag = f"{node.output[0] or node.name}/if/"
    local = {t.name for t in branch.initializer} | {o for n in branch.node for o in n.output if o}
    rename = {k: tag + k for k in local}
    consts = {rename[t.name]: numpy_helper.to_array(t) for t in branch.initializer}
    nodes = []
    for n in branch.node:
        m = onnx.NodeProto()
        m.CopyFrom(n)
        m.input[:] = [rename.get(i, i) for i in n.input]
        m.output[:] = [rename.get(o, o) for o in n.output]
        nodes.append(m)
    for src, dst in zip(branch.output, node.output):
        if dst:
            nodes.append(helper.make_node("Identity", [rename.get(src.name, src.name)], [dst]))
    return nodes, consts


def check_batch_reshapes(nodes: list[onnx.NodeProto], shapes: dict[str, tuple[int, ...]],
                         consts: dict[str, np.ndarray], literal: set[str], batches: dict[str, int],
                         label: str) -> None:
    """InputDataError for a Reshape to a literal shape starting with 1 of a tensor carrying a batch > 1.

    ``Reshape(x, [1, -1])`` from a constant hard-codes the batch of the
    export; with a larger batch it would mix the samples of the batch.
    """
    wanted = set(batches.values())
    for n in nodes:
        if n.op_type != "Reshape" or len(n.input) < 2 or n.input[1] not in literal:
            continue
        target = np.asarray(consts[n.input[1]]).reshape(-1)
        shape = shapes.get(n.input[0])
        if target.size and int(target[0]) == 1 and shape and shape[0] in wanted:
            name = printable(n.output[0] or n.name)
            raise InputDataError(f"{label}: node {name} (Reshape to the constant shape {target.tolist()}) hard-codes "
                                 f"batch 1; the model cannot run batch {shape[0]} (give batch 1 in --input-shape)")


def _predicted_size(n: onnx.NodeProto, consts: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]]) -> float:
    """How many elements ``n``'s largest output would hold, known before evaluating it: the inferred shape,
    or for the ops whose output size comes from their values (ConstantOfShape, Expand, Tile, Range) that
    value; 0 when unknown. A float, so a product of huge dims cannot overflow."""
    sizes = [float(np.prod([float(d) for d in shapes[o]])) for o in n.output if o in shapes]
    try:
        if n.op_type == "ConstantOfShape":
            sizes.append(float(np.prod(np.asarray(consts[n.input[0]], np.float64))))
        elif n.op_type == "Expand":
            a, b = np.shape(consts[n.input[0]]), [float(v) for v in np.asarray(consts[n.input[1]]).reshape(-1)]
            r = max(len(a), len(b))
            a2, b2 = [1.0] * (r - len(a)) + [float(v) for v in a], [1.0] * (r - len(b)) + b
            sizes.append(float(np.prod([max(x, y) for x, y in zip(a2, b2)])))
        elif n.op_type == "Tile":
            reps = np.asarray(consts[n.input[1]], np.float64).reshape(-1)
            sizes.append(float(np.asarray(consts[n.input[0]]).size) * float(np.prod(reps)))
        elif n.op_type == "Range":
            start, limit, delta = (float(np.asarray(consts[i]).reshape(-1)[0]) for i in n.input[:3])
            sizes.append(abs((limit - start) / delta) if delta else float("inf"))
    except (KeyError, IndexError, ValueError, TypeError, OverflowError):
        return max(sizes, default=0.0)  # values that are no size: the evaluation itself refuses them
    return max(sizes, default=0.0)


def _typed_info(name: str, value: np.ndarray) -> onnx.ValueInfoProto:
    """A constant as a typed input of static shape (for shape inference only)."""
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape))


class Budget:
    """The bytes folded results may still take: the memory budget (:mod:`hexnn_import.memory`, docs/limits.md)
    less what the folds of this model already hold (a fold that would pass it stays in the graph)."""

    def __init__(self) -> None:
        self.left = float(budget_bytes())

    def fits(self, nbytes: float) -> bool:
        return nbytes <= self.left

    def take(self, arrays: list[np.ndarray]) -> bool:
        """Charge ``arrays``; False (nothing charged) when they do not fit."""
        nbytes = float(sum(np.asarray(a).nbytes for a in arrays))
        if not self.fits(nbytes):
            return False
        self.left -= nbytes
        return True


def _predicted_bytes(n: onnx.NodeProto, consts: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]],
                     dtypes: dict[str, np.dtype]) -> float:
    """:func:`_predicted_size` in bytes: the inferred output element size (8 bytes when unknown)."""
    itemsize = max((dtypes[o].itemsize for o in n.output if o in dtypes), default=8)
    return _predicted_size(n, consts, shapes) * itemsize


def _try_fold(n: onnx.NodeProto, consts: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]],
              dtypes: dict[str, np.dtype], opset: int, label: str, qconsts: dict[str, QConst],
              budget: Budget) -> list[np.ndarray] | None:
    """The folded outputs of ``n``, or None when it does not fold."""
    if n.domain not in ("", "ai.onnx") or n.op_type in NO_FOLD or n.domain == MS_DOMAIN:
        return None
    if n.op_type in ("Shape", "Size") and n.input and n.input[0] not in consts:
        v = _shape_fold(n, shapes)
        return None if v is None else [v]
    if not all(i in consts for i in n.input if i):
        return None
    if n.op_type not in ("Constant",) and not any(i for i in n.input):
        return None  # a source op without inputs (e.g. RandomX) unless Constant
    if not budget.fits(_predicted_bytes(n, consts, shapes, dtypes)):
        return None  # left to the op mapping (and the memory budget), never evaluated here
    try:
        out = _evaluate(n, {i: consts[i] for i in n.input if i}, opset)
    except Exception as exc:  # noqa: BLE001 - the reference evaluator raises many types
        raise ModelFormatError(f"{label}: constant node {printable(n.output[0] if n.output else n.name)} "
                               f"({printable(n.op_type)}) cannot be evaluated: {type(exc).__name__}: "
                               f"{printable(exc)}") from exc
    if not budget.take(out):
        return None
    if n.op_type == "DequantizeLinear" and len(n.input) >= 2:
        qconsts[n.output[0]] = _qconst(n, consts)
    return out
