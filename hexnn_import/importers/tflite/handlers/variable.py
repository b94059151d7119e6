"""TFLite resource variables (a streaming model's state) as hexagon_nn Variable / Assign nodes.

A converter with resource variables enabled writes ``CALL_ONCE(init)``, whose subgraph assigns each
variable its initial constant (``VAR_HANDLE`` + ``ASSIGN_VARIABLE``), then in the main subgraph
``VAR_HANDLE`` -> ``READ_VARIABLE`` at the start of a run and ``ASSIGN_VARIABLE`` at its end. LiteRT keeps
the values between invocations; the engine's Variable node keeps its arrays between runs
(op texts "Variable", "Assign"), so a Runner carries the state from one run to the next the same way.

Each variable (keyed by container and shared name) is one Variable node with three outputs: the
quint8 codes and their float min and max, initialised at preparation from the init subgraph's constant
(quantized on its own min / max; zeros when none is assigned there). READ_VARIABLE reads the three;
ASSIGN_VARIABLE is one Assign writing the value's codes, min and max, so a float model's state keeps
the range its last run computed (run-time ranges) and a quantized model's keeps its scale. The Variable's
outputs are references (an Assign writes them in place), so no operator may read a variable's value
after the ASSIGN_VARIABLE that overwrites it; such a model is refused.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import OutputDef, Ref, shape4
from hexnn_import.importers.nodes.builder import calibrated_range
from hexnn_import.importers.tflite.importer import TFLiteImporter, is_quantized, tflite_op
from hexnn_import.importers.tflite.reader import TFModel, TFOperator
from hexnn_import.importers.nodes.values import Value
from hexnn_import.ops.quant import quantize_u8
from hexnn_import.importers.nodes.weights import to_quint8

VAR_EMITS = ("Variable", "Assign")
Key = tuple[str, str]


def _key(op: TFOperator) -> Key:
    o = op.options
    dec = (lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v or ""))
    return (dec(o.Container()), dec(o.SharedName())) if o is not None else ("", "")


def _handles(g: TFModel) -> dict[int, Key]:
    """Resource tensor -> variable key, for the VAR_HANDLEs of one subgraph."""
    return {op.outputs[0]: _key(op) for op in g.operators if op.opname == "VAR_HANDLE" and op.outputs}


def initial_values(model: TFModel) -> dict[Key, np.ndarray] | str:
    """The constants the CALL_ONCE init subgraphs assign (or why they are not just that)."""
    out: dict[Key, np.ndarray] = {}
    for op in model.operators:
        if op.opname != "CALL_ONCE":
            continue
        init = model.subgraphs.get(op.options.InitSubgraphIndex()) if op.options is not None else None
        if init is None:
            return "a CALL_ONCE naming a subgraph the file does not have"
        handles = _handles(init)
        for o in init.operators:
            if o.opname == "VAR_HANDLE":
                continue
            value = init.tensors[o.inputs[1]] if o.opname == "ASSIGN_VARIABLE" and len(o.inputs) > 1 else None
            if value is None or value.data is None or o.inputs[0] not in handles:
                return f"an init subgraph with {o.opname} (only constant ASSIGN_VARIABLEs)"
            out[handles[o.inputs[0]]] = np.asarray(value.data)
    return out


def _state(imp: TFLiteImporter) -> dict:
    """Per-import bookkeeping: handle tensor -> key, key -> Variable node id and shape."""
    st = imp.__dict__.get("_resource_state")
    if st is None:
        st = imp.__dict__["_resource_state"] = {"handles": _handles(imp.model), "nodes": {}}
    return st


def _check_call_once(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """An init subgraph of VAR_HANDLE and ASSIGN_VARIABLE of constants only."""
    init = initial_values(imp.model)
    return init if isinstance(init, str) else None


@tflite_op("CALL_ONCE", VAR_EMITS, _check_call_once)
def call_once(imp: TFLiteImporter, op: TFOperator) -> None:
    """No node: the initial values initialise the Variables at preparation (module doc)."""


def _check_handle(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Names a variable (container, shared name); no node of its own."""
    return None


@tflite_op("VAR_HANDLE", VAR_EMITS, _check_handle)
def var_handle(imp: TFLiteImporter, op: TFOperator) -> None:
    """No node: the handle names a variable, made by its first READ_VARIABLE or ASSIGN_VARIABLE."""


def _check_read(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A handle from VAR_HANDLE; a float32 or per-tensor int8 / uint8 value; no read after its overwrite."""
    key = _state(imp)["handles"].get(op.inputs[0] if op.inputs else -1)
    if key is None:
        return "a variable handle not made by VAR_HANDLE"
    t = imp.tensor(op.outputs[0])
    if t.dtype != "float32" and not is_quantized(t):
        return f"a variable of type {t.dtype}"
    assigns = [o.index for o in imp.model.operators if o.opname == "ASSIGN_VARIABLE"
               and _state(imp)["handles"].get(o.inputs[0]) == key]
    readers = [o.index for o in imp.model.operators if op.outputs[0] in o.inputs]
    if assigns and readers and max(readers) > min(assigns):
        return "a variable read after the ASSIGN_VARIABLE that overwrites it"
    return None


def _variable(imp: TFLiteImporter, key: Key, index: int) -> tuple[int, tuple[int, int, int, int]]:
    """The Variable node of ``key`` (made once; ``index``: a tensor of the variable's shape and type)."""
    st = _state(imp)
    if key in st["nodes"]:
        return st["nodes"][key]
    t = imp.tensor(index)
    shape = shape4(t.shape)
    init = initial_values(imp.model)
    data = init.get(key) if isinstance(init, dict) else None
    if is_quantized(t):
        rng = imp.qrange(t)
        codes = to_quint8(np.zeros(t.shape, t.dtype) if data is None else data, t.dtype)
    else:
        real = np.zeros(t.shape) if data is None else np.asarray(data, np.float64)
        rng = calibrated_range(float(real.min()), float(real.max()))
        codes = quantize_u8(real, *rng)
    g = imp.graph
    name = "/".join(k for k in key if k) or t.name
    refs = [g.const_ref(np.ascontiguousarray(codes.reshape(shape)), f"{name}/initial"),
            imp.float_const(rng[0], f"{name}/initial/min"), imp.float_const(rng[1], f"{name}/initial/max")]
    node = g.append("Variable", refs, [OutputDef(shape, "quint8"), OutputDef.scalar(), OutputDef.scalar()],
                    name=f"{name}/variable")
    st["nodes"][key] = (node.node_id, shape)
    return node.node_id, shape


@tflite_op("READ_VARIABLE", VAR_EMITS, _check_read)
def read_variable(imp: TFLiteImporter, op: TFOperator) -> None:
    """The variable's codes, min and max (module doc)."""
    key = _state(imp)["handles"][op.inputs[0]]
    nid, shape = _variable(imp, key, op.outputs[0])
    t = imp.tensor(op.outputs[0])
    rng = imp.qrange(t) if is_quantized(t) else None
    imp.set_output(op.outputs[0], Value(Ref(nid, 0), shape, "quint8", Ref(nid, 1), Ref(nid, 2), rng))


def _check_assign(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A handle from VAR_HANDLE; a float32 or per-tensor int8 / uint8 value of the variable's shape."""
    if _state(imp)["handles"].get(op.inputs[0] if op.inputs else -1) is None or len(op.inputs) < 2:
        return "a variable handle not made by VAR_HANDLE"
    t = imp.tensor(op.inputs[1])
    if t.dtype != "float32" and not is_quantized(t):
        return f"a value of type {t.dtype}"
    return None


@tflite_op("ASSIGN_VARIABLE", VAR_EMITS, _check_assign)
def assign_variable(imp: TFLiteImporter, op: TFOperator) -> None:
    """One Assign of the value's codes, min and max into the variable (muted outputs)."""
    key = _state(imp)["handles"][op.inputs[0]]
    nid, shape = _variable(imp, key, op.inputs[1])
    v = imp.qvalue(op.inputs[1])
    assert v.mn is not None and v.mx is not None
    if tuple(v.shape) != tuple(shape):
        raise ValueError(f"ASSIGN_VARIABLE of shape {list(v.shape)} into a variable of shape {list(shape)}")
    refs = [Ref(nid, 0), v.data, Ref(nid, 1), v.mn, Ref(nid, 2), v.mx]
    muted = [OutputDef(shape, "void"), OutputDef((1, 1, 1, 1), "void"), OutputDef((1, 1, 1, 1), "void")]
    imp.graph.append("Assign", refs, muted, name=f"{'/'.join(k for k in key if k) or 'variable'}/assign")
