"""Reading small int32 parameter inputs (block sizes, paddings, crops, axes, flags).

Parameter inputs arrive as small int32 tensors (a scalar ``[1,1,1,1]`` or a
short list such as ``[1,1,1,2]``). These helpers read their *values*,
flattened in row-major order, and raise the project's
:class:`~hexnn_import.errors.OpError` through ``ctx.fail`` when they are not
integers of the expected count or range.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import i32_codes
from hexnn_import.ops.registry import KernelContext


def int_values(ctx: KernelContext, arr: np.ndarray, what: str, counts: tuple[int, ...] | None = None) -> list[int]:
    """The values of an int32 parameter input, flattened; ``counts`` lists the allowed element counts."""
    vals = [int(v) for v in i32_codes(ctx, np.asarray(arr), what).reshape(-1)]
    if counts is not None and len(vals) not in counts:
        allowed = " or ".join(str(c) for c in counts)
        raise ctx.fail(f"{what} has {len(vals)} values {vals}, expected {allowed}")
    return vals


def int_param(ctx: KernelContext, arr: np.ndarray, what: str) -> int:
    """A single integer parameter (any shape holding one element)."""
    return int_values(ctx, arr, what, (1,))[0]


def flag_param(ctx: KernelContext, arr: np.ndarray, what: str) -> bool:
    """A 0 / non-zero flag given as an int32 or float scalar (e.g. align_corners); NaN is an error."""
    value = ctx.scalar(arr, what)
    if value != value:
        raise ctx.fail(f"{what} is NaN, expected a 0 / non-zero flag")
    return value != 0.0


def non_negative(ctx: KernelContext, vals: list[int], what: str) -> list[int]:
    """Require every value >= 0 (paddings and crops)."""
    if any(v < 0 for v in vals):
        raise ctx.fail(f"{what} {vals} must all be >= 0")
    return vals
