"""The Hexagon-semantics engine: runs a Graph on numpy inputs with the ops/ kernels.

Execution follows hexagon_nn (hexagon_nn_prepare_notes.txt, "The 'prepare'
process"): nodes run in list order; Const nodes hold their data; the INPUT
node hands out the fed tensors; the OUTPUT node's inputs are the results.
Per-node state (the auto-range widening of SEMANTICS §5) lives in the
:class:`Engine` and persists across :meth:`Engine.run` calls, as it does on
the device between executions of one prepared graph.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hexnn_import.errors import InputDataError
from hexnn_import.graph import ELEMENT_DTYPES, Graph, Node, Ref
from hexnn_import.ops.d32 import D32Tensor
from hexnn_import.ops.kernels.graph_variable import prepare_variables, read_value, write_value
from hexnn_import.ops.registry import Kernel, KernelContext, get_kernel


class Engine:
    """Runs one graph; create once, call :meth:`run` many times (the graph must not change meanwhile)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.state: dict[int, dict[str, Any]] = {}
        self._kernels: dict[int, Kernel] = {}
        # position of the last node reading each ref, so tensors can be dropped once read
        self._last_use: dict[Ref, int] = {}
        for pos, node in enumerate(graph.nodes):
            for r in node.inputs:
                self._last_use[r] = pos
            if not node.is_const and node.op not in ("INPUT", "OUTPUT"):
                self._kernels[node.node_id] = get_kernel(node.op, node.label)
        # Variables take their initial values at preparation; Assign targets are checked
        prepare_variables(graph.nodes, self.state)

    def read_variable(self, node_id: int, output_idx: int = 0) -> np.ndarray:
        """Host-side variable_read (op text of Variable): a copy of a Variable output's current value."""
        return read_value(self.graph.node(node_id), self.state, output_idx)

    def write_variable(self, node_id: int, array: np.ndarray, output_idx: int = 0) -> None:
        """Host-side variable_write (op text of Variable): replace a Variable output's value between runs."""
        write_value(self.graph.node(node_id), self.state, array, output_idx)

    def run(self, feeds: Sequence[np.ndarray], mark_all: bool = False
            ) -> tuple[list[np.ndarray], dict[Ref, np.ndarray]]:
        """Execute the graph.

        ``feeds`` are the INPUT node's outputs in order, already in graph
        element types (quint8 as uint8, float as float32). Returns the OUTPUT
        node's inputs in order, and with ``mark_all`` every node output by
        ref (``{}`` otherwise).
        """
        values: dict[Ref, np.ndarray] = {}
        keep_all: dict[Ref, np.ndarray] = {}
        outs: list[np.ndarray] = []
        for pos, node in enumerate(self.graph.nodes):
            if node.is_const:
                values[Ref(node.node_id, 0)] = node.data
                continue
            if node.op == "INPUT":
                self._feed(node, feeds, values)
                continue
            args = [values[r] for r in node.inputs]
            if node.op == "OUTPUT":
                outs = [flat_value(a) for a in args]
                continue
            ctx = KernelContext(node=node.label, op=node.op, padding=int(node.padding),
                                state=self.state.setdefault(node.node_id, {}), n_outputs=len(node.output_defs),
                                out_shapes=tuple(tuple(od.shape) for od in node.output_defs))
            results = self._kernels[node.node_id](ctx, args)
            for i, arr in enumerate(results):
                values[Ref(node.node_id, i)] = arr
                if mark_all:
                    keep_all[Ref(node.node_id, i)] = flat_value(arr)
            # free tensors no later node reads (buffer reuse by the garbage collector)
            for r in node.inputs:
                if self._last_use.get(r) == pos and not self.graph.node(r.src_id).is_const:
                    values.pop(r, None)
        return outs, keep_all

    def _feed(self, node: Node, feeds: Sequence[np.ndarray], values: dict[Ref, np.ndarray]) -> None:
        if len(feeds) != len(node.output_defs):
            raise InputDataError(f"graph takes {len(node.output_defs)} inputs, got {len(feeds)}")
        for i, (arr, od) in enumerate(zip(feeds, node.output_defs)):
            want = ELEMENT_DTYPES.get(od.dtype)
            a = np.asarray(arr)
            if want is not None and a.dtype != want:
                raise InputDataError(f"input {i} has dtype {a.dtype}, the graph takes {od.dtype}")
            if int(np.prod(a.shape)) != int(np.prod(od.shape)):
                raise InputDataError(f"input {i} has shape {a.shape}, the graph takes {list(od.shape)}")
            values[Ref(node.node_id, i)] = a.reshape(od.shape)


def flat_value(value: Any) -> Any:
    """A d32 tensor (SEMANTICS §7) as its logical flat array; anything else unchanged.

    Between nodes d32 tensors travel as :class:`D32Tensor` objects (the real
    padded layout); graph outputs and "mark all" tensors are handed out flat.
    """
    return value.logical() if isinstance(value, D32Tensor) else value
