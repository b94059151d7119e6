"""NCHW -> NHWC layout tracking: which ONNX axis each graph axis holds.

Every ONNX tensor of rank r <= 4 is first viewed as 4-D by left-padding its
shape with 1s (``onnx4``: the same right-aligned frame numpy broadcasting
uses). Its graph value is ``onnx4.transpose(perm)``: graph axis ``i`` holds
``onnx4`` axis ``perm[i]``. ``IDENTITY`` is the ONNX order; ``NHWC`` is what
convolutions, pools and resizes want from an NCHW tensor.

An ONNX op that only needs *an* order (elementwise, concat along an axis,
reductions, slices) maps its axes through the perm and keeps it; an ONNX
Transpose only changes the perm (no node); Squeeze / Unsqueeze / a Reshape
that only adds or drops size-1 axes keep the data where it is with a new
perm. A transpose node is materialized only where an op really needs a
given order and the data is not already in it (issue [ONNX import]: "no
Transpose node remains between two convolutions of an NCHW model").
"""
from __future__ import annotations

import numpy as np

Perm = tuple[int, int, int, int]

#: largest tensor (elements, one byte each) the importer builds: a 32-bit Hexagon's address space
MAX_ELEMENTS = 2 ** 31 - 1

IDENTITY: Perm = (0, 1, 2, 3)
NHWC: Perm = (0, 2, 3, 1)


def onnx4(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The shape left-padded with 1s to rank 4 (ValueError above rank 4)."""
    s = tuple(int(v) for v in shape)
    if len(s) > 4:
        raise ValueError(f"rank {len(s)} > 4")
    return (1,) * (4 - len(s)) + s  # type: ignore[return-value]


def axis4(axis: int, rank: int) -> int:
    """An ONNX axis (negative allowed) of a rank-``rank`` tensor as its ``onnx4`` axis."""
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        raise ValueError(f"axis {axis} out of range for rank {rank}")
    return a + 4 - rank


def graph_axis(axis: int, rank: int, perm: Perm) -> int:
    """The graph axis that holds ONNX ``axis`` of a rank-``rank`` tensor laid out with ``perm``."""
    return perm.index(axis4(axis, rank))


def graph_shape(shape: tuple[int, ...], perm: Perm) -> tuple[int, int, int, int]:
    """The graph shape of an ONNX shape laid out with ``perm``."""
    s = onnx4(shape)
    return tuple(s[p] for p in perm)  # type: ignore[return-value]


def relayout(src: Perm, dst: Perm) -> Perm:
    """The transpose of graph data laid out with ``src`` that gives the layout ``dst``."""
    return tuple(src.index(d) for d in dst)  # type: ignore[return-value]


def keeps_order(shape4: tuple[int, ...], q: Perm) -> bool:
    """A transpose ``q`` of data of ``shape4`` that moves only size-1 axes (the same row-major bytes)."""
    order = [a for a in q if shape4[a] != 1]
    return order == sorted(order)


def after_transpose(perm: Perm, t: tuple[int, ...]) -> Perm:
    """The layout of ``Transpose(x, t)`` when its data stays where ``x``'s is (no node).

    ``t`` is the ONNX perm of rank r; on ``onnx4`` it becomes ``t4``. The
    output's ``onnx4`` axis ``j`` is input axis ``t4[j]``, so input axis
    ``p`` is output axis ``inv(t4)[p]``.
    """
    r = len(t)
    t4 = tuple(range(4 - r)) + tuple(a + 4 - r for a in t)
    inv = [0] * 4
    for j, a in enumerate(t4):
        inv[a] = j
    return tuple(inv[p] for p in perm)  # type: ignore[return-value]


def squeeze_like(in_shape: tuple[int, ...], perm: Perm, out_shape: tuple[int, ...]) -> Perm | None:
    """The layout of a reshape that only adds or drops size-1 axes, keeping the data in place; else None.

    The non-1 axes of input and output pair up in order; each output non-1
    axis takes the graph position of its input partner, and the output's
    size-1 axes fill the remaining positions, so the graph shape is unchanged.
    """
    i4, o4 = onnx4(in_shape), onnx4(out_shape)
    big_in = [a for a in range(4) if i4[a] != 1]
    big_out = [a for a in range(4) if o4[a] != 1]
    if [i4[a] for a in big_in] != [o4[a] for a in big_out]:
        return None
    out: list[int | None] = [None] * 4
    for a_in, a_out in zip(big_in, big_out):
        out[perm.index(a_in)] = a_out
    rest = iter(a for a in range(4) if a not in big_out)
    return tuple(next(rest) if v is None else v for v in out)  # type: ignore[return-value]


def size_problem(name: str, shape: tuple[int, ...]) -> str | None:
    """Why a static shape cannot be a graph tensor (None when it can): rank, empty, too large."""
    if len(shape) > 4:
        return f"{name} has rank {len(shape)} > 4"
    if 0 in shape or any(d < 0 for d in shape):
        return f"{name} is empty (shape {list(shape)})"
    if int(np.prod(shape, dtype=np.float64)) > MAX_ELEMENTS:
        return f"{name} of shape {list(shape)} is too large"
    return None
