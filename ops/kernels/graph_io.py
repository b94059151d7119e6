"""Graph plumbing ops: INPUT, OUTPUT, Const, Nop, Sink (op texts, first section of hexagon_nn_ops.txt).

The engine (:mod:`hexnn_import.engine`) handles INPUT, OUTPUT and Const
itself: it hands the fed tensors out as the INPUT node's outputs, collects
the OUTPUT node's inputs as the results, and reads a Const node's data from
the graph. The kernels here exist so that every documented op has one, and
do what the op texts say when they are called directly (``run_op`` or
another runner); what the engine would supply travels in ``ctx.state``:

- **INPUT** ("inputs data from hexagon_nn_execute()"): returns the arrays in
  ``ctx.state["feeds"]`` (a sequence, one per output), unchanged; their count
  must equal the node's output count when that is known.
- **OUTPUT** ("outputs data for hexagon_nn_execute()"): stores its inputs,
  in order, as the list ``ctx.state["results"]`` and gives no outputs.
- **Const** ("node for constant data"): returns ``ctx.state["data"]`` as its
  one output (the engine keeps the data on the graph node instead).
- **Nop** ("copies input to output"): output i is a copy of input i; the
  node must declare as many outputs as it has inputs.
- **Sink** ("does nothing"): takes any inputs, gives no outputs.

A missing ``feeds`` / ``data`` entry is an error naming the node.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.registry import Kernel, KernelContext, register

#: ctx.state keys used when these kernels run outside the engine (module doc).
FEEDS_KEY, RESULTS_KEY, DATA_KEY = "feeds", "results", "data"


@register("INPUT")
class Input(Kernel):
    """The tensors handed to execute, from ``ctx.state["feeds"]`` (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """The fed tensors, in order."""
        feeds = ctx.state.get(FEEDS_KEY)
        if feeds is None:
            raise ctx.fail("no input tensors: outside the engine, put them in ctx.state['feeds']")
        if ctx.n_outputs is not None and len(feeds) != ctx.n_outputs:
            raise ctx.fail(f"got {len(feeds)} input tensors, the node declares {ctx.n_outputs} outputs")
        return tuple(np.asarray(f) for f in feeds)


@register("OUTPUT")
class Output(Kernel):
    """Keeps its inputs as the results in ``ctx.state["results"]``; no outputs (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()``; the inputs are recorded."""
        ctx.state[RESULTS_KEY] = list(inputs)
        return ()


@register("Const")
class Const(Kernel):
    """The constant data held in ``ctx.state["data"]`` (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(data,)``."""
        if DATA_KEY not in ctx.state:
            raise ctx.fail("no constant data: the engine reads it from the graph node; outside the engine, "
                           "put it in ctx.state['data']")
        return (np.asarray(ctx.state[DATA_KEY]),)


@register("Nop")
class Nop(Kernel):
    """Output i is a copy of input i (op text: "copies input to output")."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """Copies of the inputs."""
        if ctx.n_outputs is not None and ctx.n_outputs != len(inputs):
            raise ctx.fail(f"has {len(inputs)} inputs but declares {ctx.n_outputs} outputs; Nop copies input i "
                           "to output i, so the counts must match")
        return tuple(np.array(x, copy=True) for x in inputs)


@register("Sink")
class Sink(Kernel):
    """Consumes its inputs and does nothing (op text)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()``."""
        return ()
