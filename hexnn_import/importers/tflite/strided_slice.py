"""TFLite STRIDED_SLICE parameters resolved into literal per-dimension samples (no handlers here).

QuantizedStridedSlice_8 follows its op text literally: no negative-index
wrap, masks only for dims it is given. So the importer resolves TFLite's
rules completely and hands the op plain ``begin, step, size`` per
dimension:

1. the sparse spec (``begin/end/strides`` with ellipsis and new-axis bits)
   becomes one entry per input dimension as TensorFlow's ``BuildDenseSpec``
   does: an ellipsis (the first one; an implicit one at the end when none is
   given) stands for as many full dimensions as needed, a new-axis entry
   consumes no input dimension;
2. per dimension, TFLite's ``StartForAxis`` / ``StopForAxis``
   (strided_slice_logic.h): a begin / end mask selects the far end, a
   negative index has the size added, then the index is clamped to
   ``[0, n]`` (step > 0) or ``[-1, n - 1]`` (step < 0); a shrunk dimension
   takes the one element at its start;
3. ``size = ceil((stop - start) / step)`` (0 if negative).

The output shape is the kept sizes with a 1 at every new axis.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ResolvedSlice:
    """Literal samples per input dimension and the TFLite output shape."""

    begin: list[int]
    step: list[int]
    size: list[int]
    out_shape: list[int]


def _dense(rank: int, n_sparse: int, ellipsis: int, new_axis: int) -> list[int | None] | str:
    """For each dense (input) dim the sparse index it takes its values from, None for a full dim."""
    if ellipsis & (ellipsis - 1):
        return "more than one ellipsis"
    if not ellipsis:  # TF: an implicit ellipsis after the given entries
        ellipsis, n_sparse = 1 << n_sparse, n_sparse + 1
    pos = ellipsis.bit_length() - 1
    after = sum(1 for i in range(pos + 1, n_sparse) if new_axis >> i & 1)
    out: list[int | None] = []
    for i in range(n_sparse):
        if i == pos:
            out += [None] * (min(rank - (n_sparse - i) + 1 + after, rank) - len(out))
        elif not new_axis >> i & 1:
            out.append(i)
    if len(out) != rank:
        return f"the slice names {len(out)} dimensions of a rank-{rank} tensor"
    return out


def resolve_strided_slice(shape: tuple[int, ...], begin: list[int], end: list[int], strides: list[int],
                          begin_mask: int, end_mask: int, ellipsis_mask: int, new_axis_mask: int,
                          shrink_mask: int) -> ResolvedSlice | str:
    """Resolve TFLite's STRIDED_SLICE (module doc); a reason string when it cannot be imported."""
    if not len(begin) == len(end) == len(strides):
        return f"begin, end, strides hold {len(begin)}, {len(end)}, {len(strides)} values"
    dense = _dense(len(shape), len(begin), ellipsis_mask, new_axis_mask)
    if isinstance(dense, str):
        return dense
    res = ResolvedSlice([], [], [], [])
    kept: dict[int, int] = {}  # dense dim -> output size (shrunk dims absent)
    for d, (n, si) in enumerate(zip(shape, dense)):
        if si is None:
            b, e, s, bm, em, shrink = 0, n, 1, True, True, False
        else:
            b, e, s = begin[si], end[si], strides[si]
            bm, em, shrink = bool(begin_mask >> si & 1), bool(end_mask >> si & 1), bool(shrink_mask >> si & 1)
        if s == 0:
            return "stride 0"
        start = (-(2 ** 31) if s > 0 else 2 ** 31 - 1) if bm else b
        start = start + n if start < 0 else start
        start = min(max(start, 0), n) if s > 0 else min(max(start, -1), n - 1)
        if shrink:
            if not 0 <= start < n:
                return f"shrunk index {b} outside dimension {d} of size {n}"
            res.begin.append(start), res.step.append(1), res.size.append(1)
            continue
        stop = (2 ** 31 - 1 if s > 0 else -(2 ** 31)) if em else e
        stop = stop + n if stop < 0 else stop
        stop = min(max(stop, 0), n) if s > 0 else min(max(stop, -1), n - 1)
        size = max(0, -(-(stop - start) // s))
        if size == 0:
            return f"empty slice on dimension {d}"
        res.begin.append(start), res.step.append(s), res.size.append(size)
        kept[d] = size
    # output shape: walk the sparse spec again, inserting 1 for new axes
    out: list[int] = []
    used = 0
    n_sparse = len(begin)
    for i in range(max(n_sparse, 1)):
        if i < n_sparse and ellipsis_mask >> i & 1:
            while used < len(dense) and dense[used] is None:
                out += [kept[used]] if used in kept else []
                used += 1
        elif i < n_sparse and new_axis_mask >> i & 1:
            out.append(1)
        elif used < len(dense):
            out += [kept[used]] if used in kept else []
            used += 1
    out += [kept[d] for d in range(used, len(dense)) if d in kept]
    res.out_shape = out
    return res
