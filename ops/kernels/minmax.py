"""Elementwise max/min of quint8 tensors: QuantizedMaximum, QuantizedMinimum, QuantizedMax_8,
QuantizedMin_8 (SEMANTICS.md §1, §6)."""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from hexnn_import.ops.exact_q8 import requant_table
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.kernels.add8 import requested_ends
from hexnn_import.ops.kernels.binary import Range, read_operands
from hexnn_import.ops.quant import adjust_range, sat_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register


def default_range(a_range: Range, b_range: Range, take_max: bool) -> Range:
    """The exact range of ``max(a, b)`` (``[max of mins, max of maxes]``) or of ``min(a, b)``."""
    pick = max if take_max else min
    return pick(a_range[0], b_range[0]), pick(a_range[1], b_range[1])


class _MinMax(Kernel):
    """Shared body: ``q = pick(requant(a), requant(b))`` on the output range."""

    take_max = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a, b, a_range, b_range = read_operands(ctx, inputs)
        lo, hi = requested_ends(ctx, inputs)
        d_lo, d_hi = default_range(a_range, b_range, self.take_max)
        lo = d_lo if lo == -math.inf else lo
        hi = d_hi if hi == math.inf else hi
        lo, hi = adjust_range(lo, hi)  # zero-width is legal: requant_table quantizes over 1e-18
        pick: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.maximum if self.take_max else np.minimum
        qa = requant_table(*a_range, lo, hi)[a]
        qb = requant_table(*b_range, lo, hi)[b]
        return (sat_u8(pick(qa, qb)), *range_out(lo, hi))


_DOC = """

    Numpy broadcasting of A and B (the op text: shapes match on each axis or
    one of them is 1). Result: ``sat_u8(round_away((r - out_min) / out_step))``
    with ``r = {f}(a_real, b_real)`` from exact rationals; since quantization
    is monotonic this is ``{f}`` of the two inputs each moved exactly onto the
    output range, so equal ranges pass codes through unchanged. Choices where
    the documents are silent: the output range is inputs 6/7 when given (an
    absent or infinite end takes the default), zero-fixed with adjust_range;
    the default is the exact range of the result, ``[{f}(a_min, b_min),
    {f}(a_max, b_max)]``, so nothing saturates.
    """


@register("QuantizedMaximum", "QuantizedMax_8")
class QuantizedMaximum(_MinMax):
    __doc__ = "Elementwise ``max(a, b)`` of quint8 tensors (SEMANTICS §6)." + _DOC.format(f="max")
    take_max = True


@register("QuantizedMinimum", "QuantizedMin_8")
class QuantizedMinimum(_MinMax):
    __doc__ = "Elementwise ``min(a, b)`` of quint8 tensors (SEMANTICS §6)." + _DOC.format(f="min")
    take_max = False
