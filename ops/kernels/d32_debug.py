"""Test-bench ops of the d32 family: PPrint_8_d32, PPrintWithPadding_8_d32, Close_d32 (op texts).

None has outputs. Their text goes to the ``logging`` logger of this module
(a library must not write to stdout, which the CLI uses for results) and is
also kept on the node as ``ctx.state["text"]`` (Close_d32: the statistics as
``ctx.state["stats"]``) for callers and tests.
"""
from __future__ import annotations

import io
import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hexnn_import.ops.d32 import D32Tensor
from hexnn_import.ops.d32_io import d32_input, flat_input
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import float_data
from hexnn_import.ops.registry import Kernel, KernelContext, register

LOG = logging.getLogger(__name__)
#: Close_d32 defaults (op text): largest excess error, largest fraction of points with one.
DEFAULT_MAX_EXCESS = 0.2
DEFAULT_MAX_FRAC = 0.05
AXIS_NAMES = ("b", "h", "w", "d")


def padded_view(t: D32Tensor, with_padding: bool) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """``([b, h', w', d'] array, index of its first element per axis)``: the logical data, or the
    whole stored array (padding included, 'before' padding at negative indices)."""
    if not with_padding:
        return t.logical(), (0, 0, 0, 0)
    b = t.shape[0]
    full = t.data.transpose(0, 1, 3, 2, 4).reshape(b, t.h_total, t.w_total, t.d_total)
    return full, (0, -t.top, -t.left, -t.before)


def pprint_d32(t: D32Tensor, with_padding: bool = False, dim: int = -1, start: int = 0,
               stop: int | None = None) -> str:
    """The text of PPrint_8_d32 / PPrintWithPadding_8_d32: one block per (b, h), one line per w.

    ``dim`` 0..3 limits axis B/H/W/D to indices ``start .. stop-1`` (``stop``
    defaults to ``start + 1``), truncated to the indices that exist; -1 shows all.
    """
    arr, first = padded_view(t, with_padding)
    index = [np.arange(n) + f for n, f in zip(arr.shape, first)]
    if dim >= 0:
        stop = start + 1 if stop is None else stop
        index[dim] = index[dim][(index[dim] >= start) & (index[dim] < stop)]
    sel = arr[np.ix_(*[i - f for i, f in zip(index, first)])]
    top, bottom, left, right, before, after = t.padding
    depths = f"{index[3][0]}..{index[3][-1]}" if index[3].size else "none"
    header = (f"d32 tensor {list(t.shape)} {t.dtype}; padding top/bottom {top}/{bottom}, left/right "
              f"{left}/{right}, depth before/after {before}/{after}; columns d = {depths}")
    lines = [header]
    for bi, b in enumerate(index[0]):
        for yi, y in enumerate(index[1]):
            lines.append(f"[b={b}, h={y}]")
            rows = np.column_stack([index[2], sel[bi, yi].astype(np.int64)])
            buf = io.StringIO()
            np.savetxt(buf, rows, fmt=["  w=%3d:"] + [" %3d"] * sel.shape[3], delimiter="")
            lines.append(buf.getvalue().rstrip("\n"))
    return "\n".join(line for line in lines if line)


class _PPrint(Kernel):
    """Pretty-print a d32 tensor; optional inputs 1..3: dimension (-1 = all), start, stop (op text)."""

    WITH_PADDING = False

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        t = d32_input(ctx, inputs[0], "input data")
        dim = int_param(ctx, inputs[1], "dimension") if len(inputs) > 1 else -1
        start = int_param(ctx, inputs[2], "start index") if len(inputs) > 2 else 0
        stop = int_param(ctx, inputs[3], "stop index") if len(inputs) > 3 else None
        if not -1 <= dim <= 3:
            raise ctx.fail(f"dimension (input 1) is {dim}, expected -1 (all) or 0..3 (B,H,W,D)")
        text = pprint_d32(t, self.WITH_PADDING, dim, start, stop)
        ctx.state["text"] = text
        LOG.info("%s (%s):\n%s", ctx.node, ctx.op, text)
        return ()


@register("PPrint_8_d32")
class PPrint8D32(_PPrint):
    """The logical data of a d32 tensor, one line of depth values per width index."""

    WITH_PADDING = False


@register("PPrintWithPadding_8_d32")
class PPrintWithPadding8D32(_PPrint):
    """As PPrint_8_d32 with the padding bytes too; 'before' padding at negative indices (op text).

    E.g. inputs 1..3 = {2, -100, 0} show only the width-left padding (the
    range -100..-1 truncated to the columns that exist).
    """

    WITH_PADDING = True


@dataclass(frozen=True)
class CloseStats:
    """Close_d32's statistics, in quantized units (one step of the DUT's range)."""

    count: int
    mean_error: float  # mean of (dut - ref_q)
    rms_error: float  # sqrt(mean((dut - ref_q)**2))
    max_excess: float  # largest excess error
    n_excess: int  # points whose excess error is non-zero
    worst_index: int  # flat [b,h,w,d] index of the largest excess error
    correlation: float | None  # Pearson correlation of dut and ref_q (None when undefined)

    def text(self) -> str:
        """One line of the numbers."""
        corr = "n/a" if self.correlation is None else f"{self.correlation:.6f}"
        return (f"out of {self.count} points: mean err {self.mean_error:.4f}, rms err {self.rms_error:.4f}, "
                f"largest excess err {self.max_excess:.4f} at {self.worst_index} ({self.n_excess} non-zero), "
                f"correlation {corr}")


def close_stats(q: np.ndarray, mn: float, mx: float, ref: np.ndarray) -> CloseStats:
    """Excess-error statistics of quantized ``q`` (range ``[mn, mx]``) against float ``ref``.

    ``ref_q = (ref - mn) * 255 / (mx - mn)`` (the reference in quantized units,
    not rounded); ``excess = |q - ref_q| - |round(ref_q) - ref_q|`` with round
    half away from zero: 0 for the best code, e.g. ref 13.4 and q 14 gives 0.2.
    """
    ref_q = (ref.astype(np.float64) - mn) * (255.0 / (mx - mn))
    dut = q.astype(np.float64)
    err = (dut - ref_q).reshape(-1)
    nearest = np.trunc(ref_q + np.copysign(0.5, ref_q))
    excess = (np.abs(dut - ref_q) - np.abs(nearest - ref_q)).reshape(-1)
    corr = None
    if err.size > 1 and dut.std() > 0 and ref_q.std() > 0:
        corr = float(np.corrcoef(dut.reshape(-1), ref_q.reshape(-1))[0, 1])
    worst = int(np.argmax(excess)) if excess.size else 0
    return CloseStats(count=int(err.size), mean_error=float(err.mean()) if err.size else 0.0,
                      rms_error=math.sqrt(float((err * err).mean())) if err.size else 0.0,
                      max_excess=float(excess.max()) if excess.size else 0.0,
                      n_excess=int((excess > 0).sum()), worst_index=worst, correlation=corr)


@register("Close_d32")
class CloseD32(Kernel):
    """Check d32 quint8 data against a float reference by excess error (op text); no outputs.

    Inputs: d32 data, min, max (sane), reference float tensor of the logical
    shape, optional largest excess error (default 0.2; a negative value means
    its absolute value and forces the statistics to be logged at WARNING),
    optional largest fraction of points with non-zero excess error (default
    0.05). Passes when ``max_excess <= limit`` and ``n_excess <= frac * count``;
    otherwise an error naming the node with the statistics and the worst
    point. The statistics (:class:`CloseStats`) are kept in
    ``ctx.state["stats"]``. The device's extra check that the DUT range is
    not >4x too large is not in the op text and is not made.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        t = d32_input(ctx, inputs[0], "input data")
        mn, mx = ctx.sane_range(inputs[1], inputs[2], "input")
        ref = float_data(ctx, flat_input(ctx, inputs[3], "reference"), "reference")
        if tuple(ref.shape) != t.shape:
            raise ctx.fail(f"reference has shape {list(ref.shape)}, the data {list(t.shape)}")
        limit = ctx.scalar(inputs[4], "max excess error") if len(inputs) > 4 else DEFAULT_MAX_EXCESS
        frac = ctx.scalar(inputs[5], "max excess fraction") if len(inputs) > 5 else DEFAULT_MAX_FRAC
        if not (math.isfinite(limit) and math.isfinite(frac) and frac >= 0):
            raise ctx.fail(f"max excess error {limit} and fraction {frac} must be finite, fraction >= 0")
        force, limit = limit < 0, abs(limit)
        q = t.logical()
        stats = close_stats(q, mn, mx, ref)
        ctx.state["stats"] = stats
        ok = stats.max_excess <= limit and stats.n_excess <= frac * stats.count
        LOG.log(logging.WARNING if force or not ok else logging.INFO, "%s (%s): %s", ctx.node, ctx.op, stats.text())
        if not ok:
            pos = np.unravel_index(stats.worst_index, q.shape)
            raise ctx.fail(f"not close: {stats.text()}; limits: excess err <= {limit}, at most {frac:g} of "
                           f"points with non-zero excess; worst at [b,h,w,d] {[int(i) for i in pos]}: "
                           f"dut {int(q[pos])}, reference {float(ref[pos]):g}")
        return ()
