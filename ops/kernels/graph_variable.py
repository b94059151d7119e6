"""Variable and Assign: graph state that persists across executions (op texts "Variable", "Assign").

Where the value lives: in the Variable node's per-node state
(``ctx.state["variable_values"]``, one array per output), which the engine
keeps across :meth:`Engine.run` calls (SEMANTICS §5's node state, the same
mechanism as auto ranges).

- **Initialisation** ("Value to initialize the Variable with during graph
  preparation"): :func:`prepare_variables`, called when the engine is built,
  copies the Const inputs (input i initialises output i). A *zero-length*
  Const - numpy data of element size 0 (``np.dtype("V0")``, output def dtype
  :data:`MUTED_DTYPE` ``"void"``) with a non-zero shape - sets output i to
  that shape, of the element type of the Variable's output def i, all "zero":
  for 1-byte elements the ``zero_offset`` of the output def (0 when the IR's
  OutputDef carries none), for wider ones actual zero. A Variable with no
  inputs starts as zeros of its output defs. When an input is not a Const
  the Variable takes its value from its inputs on its first execution.
- **Execution**: the outputs *are* the variable's arrays ("a reference to
  the variable data, it is not copied"), so an Assign writing into them
  changes the value seen by later users in the same execution. At the start
  of each execution the Variable replaces its arrays by fresh copies, so
  arrays handed out by an earlier execution (results, "mark all") are never
  written afterwards.
- **Assign** (2N inputs: input 2i a Variable output, "WRITTEN BY THIS
  OPERATION", input 2i+1 the value): writes each value into its variable in
  place, in order; value and variable must have the same 4-D shape and
  dtype. Output i (0..N of them) is a copy of input 2i+1, or - when output
  def i has element size 0 (dtype ``"void"``, "muted") - a zero-size-element
  placeholder ``np.zeros(shape, "V0")`` with no copy. The engine checks at
  preparation that every input 2i comes from a Variable, and records the
  muted outputs in ``ctx.state["muted_outputs"]``.
- **Host access** (variable_read / variable_write, "after the graph is
  prepared (before execute, or between executions)"): :func:`read_value`,
  :func:`write_value`, exposed as ``Engine.read_variable`` /
  ``Engine.write_variable``; selected by node id and output index.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from hexnn_import.errors import GraphError, OpError
from hexnn_import.ops.catalog import NUMPY_DTYPES
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: ctx.state keys (module doc).
VALUES_KEY, MUTED_KEY = "variable_values", "muted_outputs"
#: Element type of an output def (or zero-length Const) whose element size is 0.
MUTED_DTYPE = "void"
#: numpy dtype of zero-size elements.
ZERO_SIZE = np.dtype("V0")


def as4d(a: np.ndarray) -> np.ndarray:
    """``a`` with its shape left-padded to 4-D."""
    return a.reshape((1,) * max(0, 4 - a.ndim) + a.shape)


def initial_values(ctx: KernelContext, inputs: Sequence[np.ndarray], output_defs: Sequence[Any] | None,
                   n: int) -> list[np.ndarray]:
    """The starting arrays of a Variable with ``n`` outputs (module doc)."""
    if inputs and len(inputs) != n:
        raise ctx.fail(f"has {len(inputs)} inputs and {n} outputs; input i initialises output i, "
                       "so the counts must match")
    values = []
    for i in range(n):
        src = np.asarray(inputs[i]) if inputs else None
        if src is not None and src.dtype.itemsize > 0:
            values.append(np.array(as4d(src), copy=True))
            continue
        if not output_defs:
            raise ctx.fail(f"output {i} is initialised from {'a zero-length Const' if inputs else 'nothing'}; "
                           "its element type comes from the node's output defs (run it in the engine)")
        od = output_defs[i]
        dtype = NUMPY_DTYPES.get(od.dtype)
        if dtype is None:
            raise ctx.fail(f"output {i} has element type {od.dtype!r}, which has no element size to "
                           "initialise a variable with")
        shape = as4d(src).shape if src is not None else tuple(od.shape)
        fill = getattr(od, "zero_offset", 0) if dtype.itemsize == 1 else 0
        values.append(np.full(shape, fill, dtype=dtype))
    return values


def prepare_variables(nodes: Iterable[Any], state: dict[int, dict[str, Any]]) -> None:
    """Initialise Variables from Const inputs and check/record Assign nodes (module doc).

    ``nodes`` are the graph's nodes in list order (``node_id``, ``op``,
    ``inputs``, ``output_defs``, ``data``, ``label``); ``state`` the engine's
    per-node state by node id.
    """
    by_id: dict[int, Any] = {}
    for node in nodes:
        by_id[node.node_id] = node
        if node.op == "Variable":
            srcs = [by_id[r.src_id] for r in node.inputs]
            if all(s.op == "Const" for s in srcs):
                ctx = KernelContext(node=node.label, op=node.op)
                state.setdefault(node.node_id, {})[VALUES_KEY] = initial_values(
                    ctx, [s.data for s in srcs], node.output_defs, len(node.output_defs))
        elif node.op == "Assign":
            for i in range(0, len(node.inputs), 2):
                src = by_id[node.inputs[i].src_id]
                if src.op != "Variable":
                    raise OpError(node.label, node.op, f"input {i} must be connected to a Variable output "
                                                       f"(it is written); it reads {src.label} ({src.op})")
            muted = frozenset(i for i, od in enumerate(node.output_defs) if od.dtype == MUTED_DTYPE)
            state.setdefault(node.node_id, {})[MUTED_KEY] = muted


@register("Variable")
class Variable(Kernel):
    """The variable's current arrays, by reference (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """One array per output."""
        values = ctx.state.get(VALUES_KEY)
        if values is None:
            n = ctx.n_outputs if ctx.n_outputs is not None else len(inputs)
            if n == 0:
                raise ctx.fail("has no inputs and no known output count to initialise from")
            values = initial_values(ctx, inputs, None, n)
        values = [v.copy() for v in values]
        ctx.state[VALUES_KEY] = values
        if ctx.n_outputs is not None and len(values) != ctx.n_outputs:
            raise ctx.fail(f"holds {len(values)} values but declares {ctx.n_outputs} outputs")
        return tuple(values)


def write_into(ctx: KernelContext, target: np.ndarray, value: np.ndarray, pair: int) -> None:
    """Write ``value`` into the variable array ``target`` in place (same 4-D shape and dtype)."""
    if not isinstance(target, np.ndarray) or not target.flags.writeable:
        raise ctx.fail(f"input {2 * pair} is not a writeable Variable output")
    v = as4d(np.asarray(value))
    if v.shape != as4d(target).shape or v.dtype != target.dtype:
        raise ctx.fail(f"value (input {2 * pair + 1}) has shape {list(v.shape)} and dtype {v.dtype}, the "
                       f"variable (input {2 * pair}) {list(as4d(target).shape)} and {target.dtype}; they must match")
    np.copyto(target, v.reshape(target.shape))


@register("Assign")
class Assign(Kernel):
    """Write values into Variables; outputs are copies of the values or muted (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """Copies of the written values (``ctx.n_outputs`` of them, all N when unknown)."""
        if len(inputs) % 2:
            raise ctx.fail(f"has {len(inputs)} inputs; Assign takes pairs (variable, value)")
        n = len(inputs) // 2
        n_out = ctx.n_outputs if ctx.n_outputs is not None else n
        if n_out > n:
            raise ctx.fail(f"declares {n_out} outputs but writes only {n} variables")
        for i in range(n):
            write_into(ctx, inputs[2 * i], inputs[2 * i + 1], i)
        muted = ctx.state.get(MUTED_KEY, frozenset())
        outs = []
        for i in range(n_out):
            v = as4d(np.asarray(inputs[2 * i + 1]))
            outs.append(np.zeros(v.shape, ZERO_SIZE) if i in muted else v.copy())
        return tuple(outs)


def _values(node: Any, state: dict[int, dict[str, Any]], output_idx: int) -> list[np.ndarray]:
    if node.op != "Variable":
        raise GraphError(f"node {node.label} is a {node.op}, not a Variable")
    values = state.get(node.node_id, {}).get(VALUES_KEY)
    if values is None:
        raise OpError(node.label, node.op, "has no value yet: its inputs are not all Const, so it takes "
                                           "its value on the first execution")
    if not 0 <= output_idx < len(values):
        raise OpError(node.label, node.op, f"has no output {output_idx} (it has {len(values)})")
    return values


def read_value(node: Any, state: dict[int, dict[str, Any]], output_idx: int = 0) -> np.ndarray:
    """variable_read: a copy of the current value of output ``output_idx`` of a Variable node."""
    return _values(node, state, output_idx)[output_idx].copy()


def write_value(node: Any, state: dict[int, dict[str, Any]], array: np.ndarray, output_idx: int = 0) -> None:
    """variable_write: replace the value of output ``output_idx``.

    The dtype must stay the same; the shape may change as long as its element
    count fits the output def's (maximum) shape.
    """
    values = _values(node, state, output_idx)
    a = np.asarray(array)
    current = values[output_idx]
    if a.dtype != current.dtype:
        raise OpError(node.label, node.op, f"variable_write of dtype {a.dtype} into output {output_idx}, "
                                           f"which holds {current.dtype}")
    if a.ndim > 4:
        raise OpError(node.label, node.op, f"variable_write of shape {list(a.shape)}: more than 4 dimensions")
    capacity = int(np.prod(node.output_defs[output_idx].shape))
    if a.size > capacity:
        raise OpError(node.label, node.op, f"variable_write of {a.size} elements into output {output_idx}, "
                                           f"whose output def holds at most {capacity}")
    values[output_idx] = np.array(as4d(a), copy=True)
