"""An ONNX model as a reference in onnxruntime: its session, every tensor marked, its quantization, its inputs.

``ort_reference_session`` opens the session a reference run uses (exact U8U8 kernels where onnxruntime
takes them). ``mark_all_outputs`` is Polygraphy's "mark all": each node output that is
not yet a graph output becomes one, typed from shape inference where known
(onnxruntime accepts an untyped output too). ``quant_params`` finds the
(scale, zero point, axis) of the 8-bit tensors of a QDQ or QOperator model
from the nodes that produce or consume them (ONNX operators
QuantizeLinear / DequantizeLinear; com.microsoft QLinear* contrib ops); ``graph_inputs`` describes the
model's real inputs. (The ONNX importer's own tensor reader is ``importers/onnx/tensor_store.py``.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.graph import GraphIO
from hexnn_import.litert_runtime import ort_quiet_run_options

QuantParams = tuple[np.ndarray, np.ndarray, int]

#: QLinear op -> input positions of its output's (scale, zero point)
_QLINEAR_OUT = {"QLinearConv": (6, 7), "QLinearMatMul": (6, 7), "QLinearAdd": (6, 7), "QLinearMul": (6, 7),
                "QLinearAveragePool": (3, 4), "QLinearGlobalAveragePool": (3, 4), "QLinearSigmoid": (3, 4),
                "QLinearLeakyRelu": (3, 4), "QLinearSoftmax": (3, 4), "QLinearConcat": (0, 1)}
#: ops whose 8-bit output keeps the quantization of their first input
_PASS_THROUGH = {"MaxPool", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Relu",
                 "Slice", "Gather", "Pad", "DepthToSpace", "SpaceToDepth", "Resize"}
_ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
                10: "float16", 11: "float64"}


def _to_array(tensor: Any) -> np.ndarray | None:
    """An initializer's values, or None when the tensor cannot be read (raw data of the wrong size, an
    unknown type: onnxruntime then refuses the model with its own message, which the runner reports)."""
    from onnx import numpy_helper

    try:
        return numpy_helper.to_array(tensor)
    except Exception:  # noqa: BLE001 - onnx raises ValueError, TypeError, KeyError... on a damaged tensor
        return None


def _initializers(model: Any) -> dict[str, np.ndarray]:
    arrays = {t.name: _to_array(t) for t in model.graph.initializer}
    return {k: v for k, v in arrays.items() if v is not None}


def quant_params(model: Any) -> dict[str, QuantParams]:
    """Tensor name -> (scales, zero points, axis) for every 8/16-bit tensor whose quantization is known.

    A quantization this cannot read (a scale with no values, a node without its output) is left out:
    the tensor then compares as plain values.
    """
    consts = _initializers(model)
    for node in model.graph.node:  # Constant nodes hold scales too
        if node.op_type == "Constant" and node.attribute and node.output:
            arr = _to_array(node.attribute[0].t)
            if arr is not None:
                consts[node.output[0]] = arr
    out: dict[str, QuantParams] = {}

    def take(name: str, s: str, z: str | None, axis: int = 1) -> None:
        if name and s in consts and name not in out and np.asarray(consts[s]).size:
            zp = consts[z] if z and z in consts and np.asarray(consts[z]).size else np.zeros(1, np.int64)
            out[name] = (np.asarray(consts[s]), np.asarray(zp), axis)

    for node in model.graph.node:
        axis = next((int(a.i) for a in node.attribute if a.name == "axis"), 1)
        ins = list(node.input) + [""] * 3
        first_out = node.output[0] if node.output else ""
        if node.op_type == "QuantizeLinear":
            take(first_out, ins[1], ins[2], axis)
        elif node.op_type == "DequantizeLinear":
            take(ins[0], ins[1], ins[2], axis)
        elif node.op_type in _QLINEAR_OUT:
            s, z = _QLINEAR_OUT[node.op_type]
            ins = list(node.input) + [""] * 8
            take(first_out, ins[s], ins[z])
    for node in model.graph.node:  # layout ops pass their input's quantization on
        if node.op_type in _PASS_THROUGH and node.input and node.output and node.input[0] in out:
            out.setdefault(node.output[0], out[node.input[0]])
    return out


def graph_inputs(model: Any, quant: dict[str, QuantParams]) -> list[GraphIO]:
    """The model's real inputs (initializers excluded): shape (-1 for symbolic dims), dtype, quantization."""
    inits = {t.name for t in model.graph.initializer}
    specs = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = tuple(int(d.dim_value) if d.HasField("dim_value") else -1 for d in tt.shape.dim)
        dtype = _ONNX_DTYPES.get(int(tt.elem_type), "float32")
        q = quant.get(vi.name)
        scale = float(np.asarray(q[0]).reshape(-1)[0]) if q is not None and np.asarray(q[0]).size == 1 else None
        zp = int(np.asarray(q[1]).reshape(-1)[0]) if scale is not None and q is not None else None
        specs.append(GraphIO(vi.name, shape, dtype, scale, zp))
    return specs


def mark_all_outputs(model: Any) -> Any:
    """A copy of ``model`` in which every node output is also a graph output."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    try:
        inferred = onnx.shape_inference.infer_shapes(m)
        known = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    except Exception:  # shape inference is only a help: untyped outputs work too
        known = {}
    have = {o.name for o in m.graph.output}
    for node in m.graph.node:
        for name in node.output:
            if not name or name in have:
                continue
            have.add(name)
            if name in known:
                m.graph.output.append(known[name])
            else:
                m.graph.output.append(onnx.ValueInfoProto(name=name))
    return m


def ort_reference_session(ort: Any, model: bytes | str, threads: int | None = None, optimize: bool = True) -> Any:
    """An onnxruntime session for a reference run: quiet, ``threads`` intra-op threads (None: its default),
    graph optimizations on or off, and ``session.x64quantprecision`` on where onnxruntime accepts it
    (onnxruntime_session_options_config_keys.h ``kOrtSessionOptionsAvx2PrecisionMode``).

    On x86-64 with SSE4.1 / AVX2 / AVX-512 but no VNNI, onnxruntime's U8S8 kernels (QLinearConv,
    MatMulInteger, QGemm, and the int8 kernels it fuses QDQ chains into) sum pairs of products in 16 bits
    with saturation (``vpmaddubsw``), so a quantized model's results depend on the CPU: on the 2-core AMD
    EPYC development machine ORT-quantized torchvision models came out tens of codes off. The option makes
    onnxruntime rewrite int8 weights to uint8 and use its exact U8U8 kernels; on VNNI machines it changes
    nothing. Its rewrite fails on some models (a QGemm with int8 activations has no kernel for uint8
    weights; a weight shared by two nodes): those are loaded without it, as before.

    Quiet (issue 38, finding 8): the session logs errors only (``log_severity_level`` 3; the attempt with the
    precision option, whose failure is expected and retried, fatal only), and every ``run`` takes
    :func:`~hexnn_import.litert_runtime.ort_quiet_run_options` unless given its own (:class:`QuietSession`):
    onnxruntime's coloured ``[E:onnxruntime:...]`` line never comes before the project's one-line error.
    """
    def options(precise: bool) -> Any:
        so = ort.SessionOptions()
        so.log_severity_level = 4 if precise else 3
        if threads is not None:
            so.intra_op_num_threads = threads
        if not optimize:
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if precise:
            so.add_session_config_entry("session.x64quantprecision", "1")
        return so

    try:
        session = ort.InferenceSession(model, options(True), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - onnxruntime's own error types have no stable import path
        session = ort.InferenceSession(model, options(False), providers=["CPUExecutionProvider"])
    return QuietSession(session, ort_quiet_run_options(ort))


class QuietSession:
    """An onnxruntime ``InferenceSession`` whose ``run`` logs nothing below fatal unless given run options of
    its own; everything else (``get_inputs``, ``get_outputs``...) is the session's."""

    def __init__(self, session: Any, quiet: Any) -> None:
        self.session = session
        self.quiet = quiet

    def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
        return self.session.run(output_names, input_feed, self.quiet if run_options is None else run_options)

    def __getattr__(self, name: str) -> Any:
        if name in ("session", "quiet"):  # not set (an unpickled copy): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.session, name)
