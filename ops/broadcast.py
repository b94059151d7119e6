"""Broadcasting of 4-D ``[b, h, w, d]`` tensors for the elementwise ops.

The op texts of the binary elementwise ops (QuantizedAdd_8p8to32,
QuantizedMaximum, QuantizedMin_8, Add_f, the comparisons, ...) say: "the
shapes of A and B must match on each dimension, except where one of them is
1; it will be broadcast to the other". That is numpy's rule on 4-D shapes;
these helpers apply it and raise the project's OpError (via ``ctx.fail``)
naming the node, the op and both shapes when the shapes do not broadcast.

Arrays of fewer than 4 dimensions are left-padded with 1s (a scalar
``[1,1,1,1]`` or a bare number broadcasts everywhere); more than 4 is an
error. The returned arrays are read-only numpy broadcast views: index them or
compute with them, do not write into them.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hexnn_import.ops.registry import KernelContext

#: Names of the four axes, used in error messages.
AXES = ("b", "h", "w", "d")


def as_4d(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """``arr`` as a 4-D array, left-padding its shape with 1s; more than 4 dims is an error."""
    a = np.asarray(arr)
    if a.ndim > 4:
        raise ctx.fail(f"{what} has shape {list(a.shape)}, more than 4 dimensions")
    return a.reshape((1,) * (4 - a.ndim) + a.shape)


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(int(s)) for s in shape) + "]"


def broadcast_shapes(ctx: KernelContext, shapes: Sequence[Sequence[int]],
                     names: Sequence[str]) -> tuple[int, int, int, int]:
    """The common 4-D shape of ``shapes`` under numpy's rule (sizes match or one is 1).

    Each shape is left-padded to 4-D first. The error names every input and
    the first axis where they disagree.
    """
    padded = []
    for shape, name in zip(shapes, names):
        if len(shape) > 4:
            raise ctx.fail(f"{name} has shape {_shape_text(shape)}, more than 4 dimensions")
        padded.append((1,) * (4 - len(shape)) + tuple(int(s) for s in shape))
    out = []
    for axis in range(4):
        sizes = {p[axis] for p in padded} - {1}
        if len(sizes) > 1:
            listing = ", ".join(f"{n} {_shape_text(p)}" for n, p in zip(names, padded))
            raise ctx.fail(f"shapes do not broadcast: {listing}; axis {axis} ({AXES[axis]}) has sizes "
                           f"{sorted(sizes)}, sizes must match or be 1")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)  # type: ignore[return-value]


def broadcast_arrays(ctx: KernelContext, arrays: Sequence[np.ndarray],
                     names: Sequence[str]) -> list[np.ndarray]:
    """Broadcast every array to the common 4-D shape (read-only views)."""
    shape = broadcast_shapes(ctx, [np.shape(a) for a in arrays], names)
    return [np.broadcast_to(as_4d(ctx, a, n), shape) for a, n in zip(arrays, names)]


def broadcast_pair(ctx: KernelContext, a: np.ndarray, b: np.ndarray, a_name: str = "input A",
                   b_name: str = "input B") -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` broadcast to their common 4-D shape, as the binary op texts require."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 4 and a.shape == b.shape:
        return a, b  # already one 4-D shape (the usual case): nothing to broadcast
    out_a, out_b = broadcast_arrays(ctx, [a, b], [a_name, b_name])
    return out_a, out_b


def broadcast_onto(ctx: KernelContext, arr: np.ndarray, shape: Sequence[int], what: str,
                   target: str = "input data") -> np.ndarray:
    """``arr`` broadcast one way onto ``shape`` (e.g. per-channel parameters onto the data).

    ``arr`` may have size 1 on any axis; every other axis must equal
    ``shape``'s. Unlike :func:`broadcast_pair`, ``shape`` itself never grows.
    """
    a = as_4d(ctx, arr, what)
    if len(shape) > 4:
        raise ctx.fail(f"{target} has shape {_shape_text(shape)}, more than 4 dimensions")
    target_shape = (1,) * (4 - len(shape)) + tuple(int(s) for s in shape)
    for axis in range(4):
        if a.shape[axis] not in (1, target_shape[axis]):
            raise ctx.fail(f"{what} has shape {_shape_text(a.shape)}, which does not broadcast onto "
                           f"{target} shape {_shape_text(target_shape)}: axis {axis} ({AXES[axis]}) "
                           f"is {a.shape[axis]}, expected 1 or {target_shape[axis]}")
    return np.broadcast_to(a, target_shape)
