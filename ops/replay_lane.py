"""The engine's short way to a node's stored replay (speed, issue 37).

A kernel that keeps a :class:`~hexnn_import.ops.node_cache.Replay` (the supernodes, depthwise, average pool,
channel scale, bias add, requantize) starts its ``compute`` with :func:`~hexnn_import.ops.node_cache.replay_get`
and returns ``replay(inputs[0])`` when it matches. On the way there a run passes the registry's input and output
checks (:meth:`Kernel.__call__`), a _d32 op's flat-twin plumbing (:class:`~hexnn_import.ops.d32_io.D32Twin`:
the logical view of its input, the twin's kernel) and the replay's own match; on a small model (DS-CNN: 13 nodes,
~2.7 M MACs) that is a third of a run. :class:`ReplayLane` wraps such a kernel: when the node's stored replay
matches (:meth:`Replay.matches`: the data of the same shape and type, and every other input the very object it
was built from - checked first, by identity alone - or else the range scalars equal in value), it calls the
replay itself and lays a _d32 op's output out as d32, exactly what
the full path returns then; otherwise the kernel runs as before. The checks it skips would pass: the input count
is the replay's, the other inputs are the objects the full run checked, and the replay returns the arrays (and
types) the full path returns on a hit.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hexnn_import.errors import HexnnError
from hexnn_import.ops.d32 import D32Tensor
from hexnn_import.ops.d32_io import D32Twin, d32_output
from hexnn_import.ops.node_cache import PREFIX, Replay
from hexnn_import.ops.registry import Kernel, KernelContext

#: Flat ops whose ``compute`` begins ``replay = replay_get(ctx.state, inputs); if replay: return replay(inputs[0])``.
REPLAY_FIRST = frozenset({
    "Supernode_8x8p32to8", "Supernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8", "DepthwiseSupernode_8x8p8to8",
    "QuantizedDepthwiseConv2d_8x8to32", "QuantizedAvgPool_8", "Requantize_32to8", "QuantizedChannelScale_32xf",
    "QuantizedBiasAdd_32p32to32", "Requantize_8to8", "QuantizedSoftmax_8",
    "QuantizedMean_8", "QuantizedPRelu_8_V2"})
_REPLAY = PREFIX + "replay"
#: numpy's errors that :meth:`Kernel.__call__` turns into the node's OpError
_NUMPY_ERRORS = (ValueError, IndexError, TypeError, ZeroDivisionError, OverflowError, FloatingPointError)


def _twin_compute_ok(kernel: D32Twin) -> bool:
    """True when the _d32 kernel's ``compute`` is D32Twin's (or the depthwise supernode's, which hands its
    flat inputs to the same replay-first body) and only input 0 is d32."""
    from hexnn_import.ops.kernels.d32_conv import _DepthwiseSupernodeD32

    return (type(kernel).compute in (D32Twin.compute, _DepthwiseSupernodeD32.compute)
            and tuple(kernel.D32_INPUTS) == (0,))


def lane_for(kernel: Kernel) -> Kernel | ReplayLane:
    """``kernel`` wrapped in a :class:`ReplayLane` when its op replays first (flat, or a _d32 twin of one),
    else ``kernel`` itself."""
    if isinstance(kernel, D32Twin):
        return ReplayLane(kernel, True) if kernel.FLAT_OP in REPLAY_FIRST and _twin_compute_ok(kernel) else kernel
    if kernel.op in REPLAY_FIRST and type(kernel).__call__ is Kernel.__call__:
        return ReplayLane(kernel, False)
    return kernel


class ReplayLane:
    """A replay-first kernel with the short way to its replay (module doc); called as the kernel is."""

    __slots__ = ("d32", "hits", "kernel")

    def __init__(self, kernel: Kernel, d32: bool):
        self.kernel, self.d32, self.hits = kernel, d32, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kernel, name)

    def __call__(self, ctx: KernelContext, inputs: Sequence[Any]) -> tuple[Any, ...]:
        r = ctx.state.get(_REPLAY)
        if r is not None and r.data == (0,) and len(inputs) == r.n:
            x = inputs[0]
            if self.d32:
                x = x.logical_view() if type(x) is D32Tensor else None
            elif type(x) is not np.ndarray:
                x = None
            if x is not None and ((x.shape, x.dtype.char),) == r.forms and (
                    tuple(map(id, inputs[1:])) == r.all_ids or _matched((x, *inputs[1:]), r)):
                self.hits += 1
                try:
                    outs = r.fn(x)
                except HexnnError:
                    raise
                except _NUMPY_ERRORS as exc:
                    raise ctx.fail(f"{type(exc).__name__}: {exc}") from exc
                return (d32_output(outs[0]), *outs[1:]) if self.d32 else outs
        return self.kernel(ctx, inputs)


def _matched(inputs: Sequence[Any], r: Replay) -> bool:
    """``r.matches(inputs)``, the replay then bound to these inputs' objects (:meth:`Replay.rebind`)."""
    if not r.matches(inputs):
        return False
    r.rebind(inputs)
    return True
