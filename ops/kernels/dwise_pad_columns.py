"""The output padding columns that DepthwiseSupernode_*_d32 computes with its 3x3 kernels (issue 36).

op_dwise_snode_8bit.c ``dwise_supernode_recalculate_strategy``: with a 3x3 filter and no channel scales
(``opt_3x3``: ``dwconv2dbbb_s1_3x3_asm`` / ``dwconv2dbbb_s2_3x3_asm``) the kernel starts at the input's column
``-in_left_pad`` and the output's column ``-out_left_pad`` and runs ``out_width_processed = out_width_total``
columns (the output's left pad, its width and its right pad), so the padding columns' values enter the node's
min / max (``dwise_supernode_execute_conv_work``: one ``minmax`` over every column) and so its auto output range.

What those columns read, from the kernels' C models (asm_src/dwconv2dbbb_s{1,2}_3x3_h.S): output column ``j``
(counted from the output's left pad) of output row ``y`` and channel ``c`` sums
``(x - in_zero) * (w - w_zero)`` over the taps ``(fy, t)`` at input row ``y * sh + fy - pad_top`` and input
byte column ``j * sw + skip + t`` (counted from the input's left pad; ``skip = in_left_skip & 1``, the
stride-2 kernel's shifted weights, 0 at stride 1; the fourth tap of each filter row has weight 0 and no zero-point term). Input rows
are ``in_next_row`` bytes, depth slices ``in_next_d32``: a column past the row's total width continues in the
next depth slice of the same row, after the last slice in the next row's first slice. The bytes reached are:

- the input's data (rows ``0..h-1``, columns ``left..left+w-1``, channels below the depth): defined;
- the left / right pad columns of the data rows, every column of the ``pad_top`` rows above and the
  ``pad_bottom (+ extra_bottom_row)`` rows below: ``supernode_add_batch_startup``'s padding zap writes the
  input's zero code there, which adds nothing (:func:`pad_column_sums` counts 0);
- anything else - the bottom padding rows past those zapped (reached when the last zapped row's columns run
  past its width into the next row), a channel of the depth padding (a wrap into the next slice): bytes no
  op sets (the previous node's padding). Those sums are unknown: :func:`pad_column_sums` marks them and the
  engine leaves them out of the range (the intended answer there), which the caller says.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.conv_core import ConvGeometry
from hexnn_import.ops.depthwise_core import DepthwisePlan
from hexnn_import.ops.node_cache import node_cached
from hexnn_import.ops.output_stage.nnlib_execute import (BiasOnlyPlan, ExactPlan, channel_sum_extremes, initial_state,
                                                         run_exact)
from hexnn_import.ops.registry import PAD_VALID, KernelContext

#: x -> (sums, known) of a node's padding columns (:func:`pad_column_sums`)
PadSums = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
_TOLD = "dwise_pad_columns_told"


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncation towards zero)."""
    q = abs(a) // b
    return q if a >= 0 else -q


@dataclass(frozen=True)
class PadColumns:
    """Where the 3x3 kernels' padding columns lie: output columns ``cols`` (counted from the output's left pad)
    of ``out_width_total`` and the input's d32 geometry they read through."""

    cols: np.ndarray       # int: the padding columns, from the output's left pad
    out_left: int          # out_left_pad
    skip: int              # in_left_skip & 1
    zap_bottom: int        # rows zapped below the data: pad_bottom + extra_bottom_row


def pad_columns(g: ConvGeometry, h: int, left: int, right: int, padding: int) -> PadColumns:
    """``dwise_supernode_recalculate_strategy``'s output padding and skip, and its ``extra_bottom_row``, for an
    input of height ``h`` with ``left`` / ``right`` pad columns (C integer arithmetic)."""
    sw = g.stride_w
    out_left = left // sw if padding == PAD_VALID else _c_div(left - g.pad_left, sw)
    out_right = (-(g.out_w + out_left)) & 3
    total = g.out_w + out_left + out_right
    skip = (left - (out_left * sw + g.pad_left)) & 1 if sw == 2 else 0   # only the stride-2 kernel reads it
    extra = 0
    if g.pad_right > right:
        extra = 1
        if g.stride_h > 1 and g.pad_bottom == 0 and 3 + (g.out_h - 1) * g.stride_h < g.pad_top + h:
            extra = 0
    j = np.arange(total)
    cols = j[(j < out_left) | (j >= out_left + g.out_w)]
    return PadColumns(cols, out_left, skip, g.pad_bottom + extra)


@dataclass(frozen=True)
class PadReads:
    """What the padding columns read, worked once per node from the geometry (:func:`pad_reads`): for every
    weighted tap the 32-byte slice read (input row, column slot in ``used``, depth slice; the zero row ``h`` /
    slot ``len(used)`` for a zapped or unset byte) and the tap's weights per slice, and which sums are known."""

    rows: np.ndarray       # int [taps, out_h, cols, nch]
    slots: np.ndarray      # int [taps, out_h, cols, nch]
    slices: np.ndarray     # int [taps, out_h, cols, nch]
    weights: np.ndarray    # float64 [taps, 1, 1, nch, 32]
    used: np.ndarray       # the input columns read
    known: np.ndarray      # bool [out_h, cols, din]


def pad_reads(x_shape: tuple[int, ...], wc: np.ndarray, g: ConvGeometry, pc: PadColumns, left: int,
              w_total: int) -> PadReads:
    """The bytes the padding columns ``pc.cols`` read (module doc) for a logical input of ``x_shape``
    ``[b, h, w, din]``, ``wc`` the filter minus its zero code ``[3, 3, din]``, ``left`` and ``w_total`` the d32
    input's left pad and total width. Addresses are worked per 32-byte slice of a row, column and depth slice."""
    _, h, w, din = (int(v) for v in x_shape)
    nch = -(-din // 32)
    row_len, top = nch * w_total, g.pad_top
    y, d = np.arange(g.out_h)[:, None, None], np.arange(nch)[None, None, :]
    wp = np.zeros((3, 3, nch * 32))
    wp[..., :din] = wc
    wp = wp.reshape(3, 3, nch, 32)
    lane_ok = (np.arange(nch * 32) < din).reshape(nch, 32)
    known = np.ones((g.out_h, pc.cols.size, nch, 32), bool)
    rows, cols, slices, weights = [], [], [], []
    for fy, t in ((fy, t) for fy in range(3) for t in range(3)):
        pos = ((y * g.stride_h + fy) * nch + d) * w_total + (pc.cols * g.stride_w + pc.skip + t)[None, :, None]
        row, rem = pos // row_len - top, pos % row_len                 # [out_h, cols, nch]
        d_in, x_col = rem // w_total, rem % w_total - left
        dat = (row >= 0) & (row < h) & (x_col >= 0) & (x_col < w)
        unset = ~dat & ((row < -top) | (row >= h + pc.zap_bottom))      # neither data nor zapped
        known &= ~(unset[..., None] & (wp[fy, t] != 0))
        known &= ~(dat[..., None] & ~lane_ok[d_in] & (wp[fy, t] != 0))  # a data column's depth padding lane
        rows.append(np.where(dat, row, h))
        cols.append(np.where(dat, x_col, w))
        slices.append(d_in)
        weights.append(wp[fy, t])
    col_all = np.stack(cols)
    used = np.unique(col_all[col_all < w])
    slot = np.full(w + 1, used.size)
    slot[used] = np.arange(used.size)
    return PadReads(np.stack(rows), slot[col_all], np.stack(slices), np.stack(weights)[:, None, None], used,
                    known.reshape(g.out_h, pc.cols.size, nch * 32)[..., :din])


def read_pad_sums(x: np.ndarray, x_zero: int, r: PadReads) -> tuple[np.ndarray, np.ndarray]:
    """``(sums, known)`` of the padding columns: ``[b, out_h, cols, din]`` exact sums (float64, 0 where not
    known) of the quint8 logical input ``x`` with zero code ``x_zero``, and whether each is known."""
    b, h, _, din = x.shape
    nch = r.weights.shape[3]
    xs = np.zeros((b, h + 1, r.used.size + 1, nch * 32))       # the columns read, a zero row and column
    xs[:, :h, :r.used.size, :din] = x[:, :, r.used, :]
    xs[:, :h, :r.used.size, :din] -= x_zero
    taps = xs.reshape(b, h + 1, r.used.size + 1, nch, 32)[:, r.rows, r.slots, r.slices]   # [b, t, y, x, c, l]
    sums = (taps * r.weights).sum(axis=1)
    sums = sums.reshape(*sums.shape[:3], nch * 32)[..., :din]
    known = np.broadcast_to(r.known, sums.shape)
    return np.where(known, sums, 0.0), known


def pad_column_sums(x: np.ndarray, x_zero: int, wc: np.ndarray, g: ConvGeometry, pc: PadColumns, left: int,
                    w_total: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`read_pad_sums` of :func:`pad_reads` (``wc``, ``left``, ``w_total`` as there)."""
    return read_pad_sums(x, x_zero, pad_reads(x.shape, wc, g, pc, left, w_total))


def pad_columns_plan(ctx: KernelContext, plan: DepthwisePlan, g: ConvGeometry, x_shape: tuple[int, ...],
                     d32_pad: tuple[int, int, int]) -> PadSums | None:
    """The padding-column sums of a node without channel scales on ``dwconv2dbbb_s{1,2}_3x3_asm`` (filter 3x3,
    stride width 1-2, depth multiplier 1: a multiplier of 2 is not deterministic on the device anyway), or
    None. ``d32_pad``: the d32 input's left pad, right pad and total width. The reads are worked once per node
    and geometry (node_cache)."""
    fh, fw, _, dmul = plan.w.shape
    if (fh, fw, dmul) != (3, 3, 1) or g.stride_w not in (1, 2):
        return None
    left, right, w_total = d32_pad
    pc = pad_columns(g, int(x_shape[1]), left, right, ctx.padding)
    if not pc.cols.size:
        return None
    key = (tuple(x_shape), g, left, right, w_total, ctx.padding)

    def sums(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:   # worked out on the first auto-range run only
        reads = node_cached(ctx.state, "dwise_pad_reads", (plan.w,), key, lambda: pad_reads(
            x_shape, np.asarray(plan.wc[:, :, 0, :], np.float64), g, pc, left, w_total))
        return read_pad_sums(x, plan.x_zero, reads)
    return sums


def run_with_pad_columns(ctx: KernelContext, x: np.ndarray, sums: np.ndarray, plan: ExactPlan | BiasOnlyPlan,
                         spec_min: float, spec_max: float, pad: PadSums | None) -> tuple[np.ndarray, ...]:
    """:func:`~hexnn_import.ops.output_stage.nnlib_execute.run_exact` on ``sums`` with the padding columns' sums
    in the range search where the device has them there (an auto range; ``pad`` not None). Columns reading a
    byte nothing sets stay out (the intended answer). Where the columns widen the range, the codes are the
    device's on that range and a :class:`DeviceDefectWarning` says so once per node."""
    if pad is None or not sums.size or not initial_state(ctx, spec_min, spec_max, True).auto:
        return run_exact(ctx, sums, plan, spec_min, spec_max)
    extra, known = pad(x)
    extra = np.where(known, extra, np.broadcast_to(sums[:, :, :1], extra.shape))   # unknown: a valid column's
    e_lo, e_hi = channel_sum_extremes(extra)
    for part in (np.concatenate([sums[:, :, :2], sums[:, :, -2:]], axis=2), sums):   # the edge columns first
        lo, hi = channel_sum_extremes(part)
        if (e_lo >= lo).all() and (e_hi <= hi).all():  # inside every channel's extremes: the range cannot move
            return run_exact(ctx, sums, plan, spec_min, spec_max)
    intended = run_exact(replace(ctx, state=dict(ctx.state)), sums, plan, spec_min, spec_max)
    dev = run_exact(ctx, np.concatenate([sums, extra.astype(sums.dtype)], axis=2), plan, spec_min, spec_max)
    if (float(intended[1].reshape(-1)[0]), float(intended[2].reshape(-1)[0])) != \
            (float(dev[1].reshape(-1)[0]), float(dev[2].reshape(-1)[0])) and not ctx.state.get(_TOLD):
        ctx.state[_TOLD] = True
        unknown = "" if known.all() else (" (columns that read bytes no op sets - the input's bottom padding "
                                          "past the zapped rows - left out)")
        warnings.warn(f"{ctx.node} ({ctx.op}): hexagon_nn's 3x3 depthwise kernel computes the output's padding "
                      f"columns too (op_dwise_snode_8bit.c out_width_processed = out_width_total) and their values "
                      f"widen the output range to [{float(dev[1].reshape(-1)[0]):.6g}, "
                      f"{float(dev[2].reshape(-1)[0]):.6g}] on the DSP, as here{unknown}", DeviceDefectWarning,
                      stacklevel=2)
    return (np.ascontiguousarray(dev[0][:, :, :sums.shape[2]]), dev[1], dev[2])
