"""XS3 kernels as ops of the one graph, run by the one engine (``XS3_<kernel>``, source ``lib_nn``).

Every kernel of :data:`hexnn_import.xs3.kernel_table.KERNELS` is an
extension op (:func:`hexnn_import.ops.catalog.register_spec`) with one
kernel class. A node's inputs follow hexagon_nn's habit of passing
everything as inputs:

    x0, x0_min, x0_max, [x1, x1_min, x1_max,] weights, bso, table, params, out_min, out_max

- ``x*``: quint8 activations (an int8 tensor's codes XOR 0x80, SEMANTICS §1);
- ``weights`` (int8, kernel layout), ``bso`` (int16 ``(groups, 7, 16)``) and
  ``table`` (int8 ``[256]``): Consts, a one-element zero where the kernel has none;
- ``params``: an int32 Const, :func:`encode_call`'s layout (module constants below);
- ``out_min`` / ``out_max``: the output tensor's range, handed out as the node's
  outputs 1 and 2.

Outputs: quint8 data in the node's declared shape, its min, its max. The
layer runs in the exact fast form (:mod:`.kernels_fast`) where one exists, else
through the kernel's literal reference; both give lib_nn's integers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.ops import compiled
from hexnn_import.ops.catalog import register_spec
from hexnn_import.ops.registry import Kernel, KernelContext, register
from hexnn_import.ops.op_groups import XS3_PREFIX
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernel_table import KERNELS, KernelCall, KernelDesc, kernel_desc, run_literal
from hexnn_import.xs3.vpu import VPUOptions
from hexnn_import.xs3.window import Window

#: params layout: fixed header, then the kernel's own ``params`` (KernelCall.params)
P_ZERO_POINT, P_ROWS, P_OUT_BITS, P_SYMMETRIC, P_HAS_WINDOW = 0, 1, 2, 3, 4
P_WINDOW = slice(5, 11)  # k_h, k_w, start_row, start_col, stride_v, stride_h
P_X_RANK, P_X_SHAPE = 11, slice(12, 18)  # rank, then the shape left-padded with 1s to 6
P_Y_RANK, P_Y_SHAPE = 18, slice(19, 25)
P_N_EXTRA, P_EXTRA = 25, 26

#: trailing inputs after the activations
TRAILING = ("weights", "bso", "table", "params", "out_min", "out_max")


def _padded(shape: tuple[int, ...]) -> list[int]:
    if len(shape) > 6:
        raise XS3Error(f"shape {list(shape)} has rank {len(shape)} > 6")
    return [1] * (6 - len(shape)) + [int(v) for v in shape]


def encode_call(call: KernelCall, options: VPUOptions) -> np.ndarray:
    """The int32 parameter vector of a node running ``call`` (layout: the P_* constants)."""
    w = call.window
    win = [w.k_h, w.k_w, w.start_row, w.start_col, w.stride_v, w.stride_h] if w is not None else [0] * 6
    vec = [call.zero_point, call.rows, call.out_bits, int(options.symmetric_output), int(w is not None), *win,
           len(call.x_shape), *_padded(call.x_shape), len(call.y_shape), *_padded(call.y_shape),
           len(call.params), *call.params]
    return np.asarray(vec, dtype=np.int64).astype(np.int32)


def decode_call(kernel: str, params: np.ndarray, weights: np.ndarray | None, bso: np.ndarray | None,
                table: np.ndarray | None) -> tuple[KernelCall, VPUOptions]:
    """The :class:`KernelCall` and options a node's inputs describe (the inverse of :func:`encode_call`)."""
    p = [int(v) for v in np.asarray(params).reshape(-1)]
    if len(p) < P_EXTRA or len(p) != P_EXTRA + p[P_N_EXTRA]:
        raise XS3Error(f"{kernel}: the parameter vector has {len(p)} values, not the XS3 node layout")
    win = Window(*p[P_WINDOW]) if p[P_HAS_WINDOW] else None
    x_shape = tuple(p[P_X_SHAPE][6 - p[P_X_RANK]:]) if p[P_X_RANK] else ()
    y_shape = tuple(p[P_Y_SHAPE][6 - p[P_Y_RANK]:]) if p[P_Y_RANK] else ()
    rank = kernel_desc(kernel).weight_rank
    if weights is not None and rank and weights.ndim > rank:  # graph Consts are left-padded to 4-D
        weights = np.ascontiguousarray(weights.reshape(weights.shape[-rank:]))
    if bso is not None and bso.ndim == 4:
        bso = bso.reshape(bso.shape[1:])
    call = KernelCall(kernel, weights, bso, p[P_ZERO_POINT], win, x_shape, y_shape, p[P_ROWS], p[P_OUT_BITS],
                      tuple(p[P_EXTRA:]), table)
    return call, VPUOptions(symmetric_output=bool(p[P_SYMMETRIC]))


def op_entry(desc: KernelDesc) -> dict[str, Any]:
    """The catalog entry of a kernel's op (catalog_data's format)."""
    acts = []
    for i in range(desc.n_inputs):
        acts += [f"in{i}:quint8", f"in{i}_min:float", f"in{i}_max:float"]
    return {"inputs": acts + ["weights:any", "bso:any", "table:any", "params:int32", "out_min:float",
                              "out_max:float"],
            "outputs": ["out:quint8", "out_min:float", "out_max:float"], "source": "lib_nn",
            "doc": f"lib_nn {desc.name} ({desc.source}) on the simulated XS3 VPU"}


class XS3Kernel(Kernel):
    """Runs one XS3 node: decodes its call once (node state), then the fast form or the literal kernel."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        st = ctx.state
        desc = kernel_desc(self.op[len(XS3_PREFIX):])
        n_act = 3 * desc.n_inputs
        if len(inputs) != n_act + len(TRAILING):
            raise ctx.fail(f"got {len(inputs)} inputs, an XS3 {desc.name} node takes {n_act + len(TRAILING)}")
        weights, bso, table, params, out_min, out_max = inputs[n_act:]
        if "call" not in st:
            w = np.asarray(weights) if desc.layout is not None else None
            b = np.asarray(bso) if desc.layout is not None else None
            t = np.asarray(table).reshape(-1) if np.asarray(table).size == 256 else None
            try:
                call, options = decode_call(desc.name, params, w, b, t)
            except XS3Error as exc:
                raise ctx.fail(str(exc)) from exc
            st["call"], st["options"] = call, options
            from hexnn_import.xs3.kernels_fast import fast_call

            literal = bool(ctx.state.get("literal"))
            st["fast"] = fast_call(call, options) if desc.n_inputs == 1 and not literal else None
            st["table"] = byte_table(call, options) if desc.elementwise and not literal else None
            st["want"] = int(np.prod(call.x_shape))
        call, options, fast, table, want = st["call"], st["options"], st["fast"], st["table"], st["want"]
        xs = [np.asarray(inputs[3 * i]) for i in range(desc.n_inputs)]
        for i, x in enumerate(xs):
            if x.size != want:
                raise ctx.fail(f"input {i} holds {x.size} values, the layer was lowered for {list(call.x_shape)} "
                               f"({want}); the file's shapes are inconsistent")
        shape = ctx.out_shapes[0] if ctx.out_shapes else None
        if table is not None:  # quint8 bytes in, quint8 bytes out: one look-up
            data = _look_up(table, xs)
        elif fast is not None:
            data = fast.run_quint8(xs[0].astype(np.uint8, copy=False))
        else:
            x8 = [(x.astype(np.uint8, copy=False) ^ np.uint8(0x80)).view(np.int8) for x in xs]
            try:
                y = run_literal(call, x8, options)
            except XS3Error as exc:
                raise ctx.fail(str(exc)) from exc
            data = y.view(np.uint8) ^ np.uint8(0x80)
        if shape is not None:
            data = data.reshape(shape)
        return data, out_min, out_max


def _look_up(table: np.ndarray, xs: list[np.ndarray]) -> np.ndarray:
    """``table`` at the byte index of the inputs (the compiled pair look-up where numba is installed)."""
    a = xs[0].astype(np.uint8, copy=False).reshape(-1)
    if len(xs) == 1:
        return table[a]
    b = xs[1].astype(np.uint8, copy=False).reshape(-1)
    got = compiled.pair_lookup(a, b, table, None)  # None without numba (or before an engine's first run)
    if got is not None:
        return got[0]
    return table[(a.astype(np.uint16) << 8) | b]


def byte_table(call: KernelCall, options: VPUOptions) -> np.ndarray:
    """The quint8 output of an element-wise kernel for every combination of quint8 input bytes (first input the
    most significant byte of the index), computed once by its literal kernel: the run then looks it up."""
    n = call.desc.n_inputs
    grid = np.indices((256,) * n, dtype=np.int64).reshape(n, -1).astype(np.uint8)  # quint8 codes
    xs = [(g ^ np.uint8(0x80)).view(np.int8) for g in grid]
    flat = KernelCall(call.kernel, call.weights, call.bso, call.zero_point, call.window, (grid.shape[1],),
                      (grid.shape[1],), call.rows, call.out_bits, call.params, call.table)
    y = np.asarray(run_literal(flat, xs, options)).astype(np.int8).reshape(-1)
    return y.view(np.uint8) ^ np.uint8(0x80)


def register_ops() -> None:
    """Register every kernel of the table as a graph op (idempotent; new table entries join on the next call)."""
    for desc in list(KERNELS.values()):
        if desc.op not in XS3Kernel.ops:
            register_spec(desc.op, op_entry(desc))
            register(desc.op)(XS3Kernel)


register_ops()
