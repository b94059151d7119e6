"""The index arithmetic of hexagon_nn's op_slice.c and op_stridedslice.c, as the C does it.

Kept apart from :mod:`slice` so the kernels stay short; shared with nothing else (the float / int32
variants in ``move_core`` keep their own documented rules).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.registry import KernelContext


def slice_c(ctx: KernelContext, x: np.ndarray, starts: list[int], sizes: list[int]) -> np.ndarray:
    """op_slice.c ``slice_prepare`` + ``slice_thread_work``: the block ``[start, start+size)`` as the C writes it.

    ``starts`` / ``sizes`` apply to the last k dims (others: start 0, size -1); -1 means "to the end";
    a size <= 0 or a block past the end is an error ("bad b_size", "in b too small"). A negative start is
    refused here: the C reads before its input buffer then.

    The copy is planned as the C plans it: dims whose input strides chain are merged, then one 2-D copy
    of ``W`` rows of ``D`` bytes per ``(b, h)`` with output strides ``D``, ``D*W`` and - as in the C -
    ``D*W*W`` for batches (``b_out_stride = h_out_stride * w_size``), which is wrong when ``B > 1`` and
    ``H != W`` after merging: later batches then land on the wrong offsets (overlaps: the later write
    wins, as the jobs run in order; bytes past the output are lost; bytes never written are left 0 here,
    stale memory on the device).
    """
    full_b = [0] * (4 - len(starts)) + starts
    full_s = [-1] * (4 - len(sizes)) + sizes
    n = list(x.shape)
    size = [n[i] - full_b[i] if full_s[i] == -1 else full_s[i] for i in range(4)]
    for i, name in enumerate("bhwd"):
        if size[i] <= 0:
            raise ctx.fail(f"bad {name}_size {size[i]} (start {full_b[i]}, input {n[i]})")
    for i, name in enumerate("bhwd"):
        if full_b[i] + size[i] > n[i]:
            raise ctx.fail(f"in {name} too small: size {size[i]} from start {full_b[i]} does not fit the input's {n[i]}")
    if min(full_b) < 0:
        raise ctx.fail(f"start {full_b} is negative: nnlib would read before its input")
    b_in, h_in, w_in, d_in = n
    layout = [[size[3], 1], [size[2], d_in], [size[1], w_in * d_in], [size[0], h_in * w_in * d_in]]
    ndims, i = 4, 0
    while i < ndims - 1:                       # merge dims whose input strides chain (as the C does)
        if layout[i + 1][1] == layout[i][0] * layout[i][1]:
            layout[i][0] *= layout[i + 1][0]
            for j in range(i + 1, ndims - 1):
                layout[j] = list(layout[j + 1])
            ndims -= 1
            layout[ndims][0] = 1
        else:
            i += 1
    (D, _), (W, wis), (H, his), (B, bis) = layout
    offset = full_b[3] + d_in * (full_b[2] + w_in * (full_b[1] + h_in * full_b[0]))
    total = int(np.prod(size))
    flat = x.reshape(-1)
    row = (np.arange(W)[:, None] * wis + np.arange(D)[None, :]).reshape(-1)    # one 2-D copy, source offsets
    hs = np.arange(H)[:, None] * his + row[None, :]                              # [H, W*D]
    if B == 1 or D * W * W == D * W * H:                                         # the C's strides are right
        src = offset + np.arange(B)[:, None, None] * bis + hs[None]
        return flat[src.reshape(-1)].reshape(size)
    out = np.zeros(total, np.uint8)
    dst_h = (np.arange(H)[:, None] * (D * W) + np.arange(W * D)[None, :])
    for b in range(B):                                                           # in job order: later wins
        dst = (b * D * W * W + dst_h).reshape(-1)
        keep = dst < total
        out[dst[keep]] = flat[(offset + b * bis + hs).reshape(-1)[keep]]
    return out.reshape(size)


def _out_size(start: int, stop: int, step: int) -> int:
    """op_stridedslice.c ``get_out_size``: 0 when the range is empty or runs against the step."""
    rng = stop - start
    if step < 0:
        rng, step = -rng, -step
    return 0 if rng <= 0 else (rng + step - 1) // step


def strided_slice_c(ctx: KernelContext, x: np.ndarray, begins: list[int], ends: list[int], steps: list[int],
                    masks: tuple[int, int, int]) -> np.ndarray:
    """op_stridedslice.c ``strided_slice_impl`` (masks given, as for QuantizedStridedSlice_8).

    Per dim (values for the last k dims; others start 0, stop = size, step 1): negative start becomes
    ``max(0, start+n)``, negative stop ``max(-1, stop+n)`` (HANDLE_NEGATIVE_INDEX); then the masks
    (MASK_UPDATE_RANGE; bits 0..3 = b,h,w,d, other bits ignored): shrink gives stop = start+1, step 1;
    begin_mask start = 0 (n-1 when step < 0); end_mask stop = n (-1 when step < 0). Step 0, an empty
    output and samples outside the input are errors. Shrunk dims are dropped and the kept ones
    right-aligned in a 4-D shape.
    """
    k = len(begins)
    n = list(x.shape)
    start = [0] * (4 - k) + begins
    stop = n[:4 - k] + ends
    step = [1] * (4 - k) + steps
    begin_mask, end_mask, shrink_mask = masks
    for i in range(4):
        if start[i] < 0:
            start[i] = max(0, start[i] + n[i])
        if stop[i] < 0:
            stop[i] = max(-1, stop[i] + n[i])
        bit = 1 << i
        if shrink_mask & bit:
            stop[i], step[i] = start[i] + 1, 1
        else:
            if begin_mask & bit:
                start[i] = n[i] - 1 if step[i] < 0 else 0
            if end_mask & bit:
                stop[i] = -1 if step[i] < 0 else n[i]
    for i, name in enumerate("bhwd"):
        if step[i] == 0:
            raise ctx.fail(f"invalid {name}_step 0")
    size = [_out_size(start[i], stop[i], step[i]) for i in range(4)]
    if 0 in size:
        raise ctx.fail(f"no output: start {start}, stop {stop}, step {step} on input {n}")
    for i in range(4):
        lo, hi = start[i], start[i] + step[i] * (size[i] - 1)
        if min(lo, hi) < 0 or max(lo, hi) >= n[i]:
            raise ctx.fail(f"indices beyond input range: start {start}, stop {stop}, step {step} on input {n}")
    out = x[np.ix_(*[start[i] + step[i] * np.arange(size[i]) for i in range(4)])]
    kept = [size[i] for i in range(4) if not shrink_mask & (1 << i)]
    return out.reshape(tuple([1] * (4 - len(kept)) + kept))
