"""Debug printing: PPrint_8, PPrint_32, PPrint_f (op text "PPrint_8 ... PPrint_f").

"Pretty-prints a tensor". The text goes to the Python logger of this module
(``hexnn_import.ops.kernels.graph_pprint``) at INFO level, one record per
execution: a header naming the node, op, dtype, shape and the displayed
slice, then the values (``numpy.array2string``, all of them - this is a
debugging op; limit the display with the optional inputs instead).

Optional int scalar inputs limit the display to a range on one axis:
1: the dimension (0..3 for B,H,W,D; -1, the default, no limiting), 2: the
start index (default 0), 3: the first index *not* displayed (default: start
+ 1). As for PPrintWithPadding_8_d32, whose text says an implied range is
"truncated according to the actual dims", start and stop are clipped to
``0..size``; a selection left empty is an error, as is a dimension outside
-1..3. Input types: PPrint_8 quint8 codes, PPrint_32 int32/qint32, PPrint_f
float (NaN and Inf are printed, not refused). No outputs.
"""
from __future__ import annotations

import logging
import sys

import numpy as np

from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import i32_codes, u8_codes
from hexnn_import.ops.registry import Kernel, KernelContext, register

logger = logging.getLogger(__name__)


def display_slice(ctx: KernelContext, shape: tuple[int, ...], extra: tuple[np.ndarray, ...]
                  ) -> tuple[tuple[slice, ...], str]:
    """The index of the displayed part and its description, from optional inputs 1..3 (module doc)."""
    dim = int_param(ctx, extra[0], "dimension (input 1)") if extra else -1
    if dim == -1:
        return (slice(None),) * len(shape), "all"
    if not 0 <= dim <= 3:
        raise ctx.fail(f"dimension (input 1) is {dim}, expected -1 (no limit) or 0..3 (B,H,W,D)")
    start = int_param(ctx, extra[1], "start index (input 2)") if len(extra) > 1 else 0
    stop = int_param(ctx, extra[2], "stop index (input 3)") if len(extra) > 2 else start + 1
    size = shape[dim]
    lo, hi = min(max(start, 0), size), min(max(stop, 0), size)
    if lo >= hi:
        raise ctx.fail(f"display range {start}..{stop} on dimension {dim} ({'BHWD'[dim]}) selects nothing "
                       f"of its size {size}")
    index = tuple(slice(lo, hi) if axis == dim else slice(None) for axis in range(len(shape)))
    return index, f"{'BHWD'[dim]} {lo}..{hi - 1}"


def pprint(ctx: KernelContext, x: np.ndarray, extra: tuple[np.ndarray, ...]) -> None:
    """Log the (limited) tensor at INFO level (module doc)."""
    x = x.reshape((1,) * max(0, 4 - x.ndim) + x.shape)
    index, what = display_slice(ctx, x.shape, extra)
    text = np.array2string(x[index], threshold=sys.maxsize, max_line_width=120)
    logger.info("node %s (%s): %s tensor of shape %s, showing %s:\n%s", ctx.node, ctx.op, x.dtype,
                list(x.shape), what, text)


@register("PPrint_8")
class PPrint8(Kernel):
    """Pretty-print quint8 codes to the log (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()``; logs the tensor."""
        pprint(ctx, u8_codes(ctx, inputs[0], "input data"), inputs[1:])
        return ()


@register("PPrint_32")
class PPrint32(Kernel):
    """Pretty-print int32 / qint32 values to the log (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()``; logs the tensor."""
        pprint(ctx, i32_codes(ctx, inputs[0], "input data"), inputs[1:])
        return ()


@register("PPrint_f")
class PPrintF(Kernel):
    """Pretty-print float values to the log (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()``; logs the tensor."""
        x = np.asarray(inputs[0])
        if x.dtype.kind not in "biuf":
            raise ctx.fail(f"input data has dtype {x.dtype}, expected float data")
        pprint(ctx, x.astype(np.float32, copy=False), inputs[1:])
        return ()
