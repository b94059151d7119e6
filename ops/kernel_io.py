"""Reading kernel inputs and building kernel outputs, checked once here.

Kernels may be handed any numeric numpy array (the engine feeds Const data
as stored, tests pass what is handy). These helpers turn an input into the
dtype the arithmetic of SEMANTICS.md expects - quint8 codes, qint32 codes,
float data, a "shape" input's 4-D shape - and raise the project's
:class:`~hexnn_import.errors.OpError` (through ``ctx.fail``) with the node
and op named when the values cannot be read that way, instead of letting a
silent cast wrap or truncate them.
"""
from __future__ import annotations

import struct

import numpy as np

from hexnn_import.ops.registry import KernelContext


def scalar_out(value: float) -> np.ndarray:
    """A float scalar output: float32 of shape ``[1,1,1,1]``."""
    return np.array(value, dtype=np.float32).reshape(1, 1, 1, 1)


def range_out(mn: float, mx: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``(min, max)`` output pair as float32 ``[1,1,1,1]`` scalars."""
    return scalar_out(mn), scalar_out(mx)


#: ``ctx.state`` key of :func:`kept_range_out`'s last pair (a cache key: node_cache.PREFIX)
_KEPT_RANGE = "_cache.range_out"
_TWO_DOUBLES = struct.Struct("<dd")


def kept_range_out(state: dict, mn: float, mx: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`range_out` of a node whose range is found at run time, as the very arrays of its last call when
    ``mn`` and ``mx`` are the same bit for bit (read-only, as every range a replay hands out again; the
    engine copies read-only arrays before handing them to users). A node after it then finds the same
    objects on every run once the range has settled, and its replay matches them by identity
    (:class:`hexnn_import.ops.node_cache.Replay`) instead of by value (speed, issue 37)."""
    key = _TWO_DOUBLES.pack(mn, mx)
    kept = state.get(_KEPT_RANGE)
    if kept is not None and kept[0] == key:
        return kept[1], kept[2]
    lo, hi = scalar_out(mn), scalar_out(mx)
    lo.flags.writeable = hi.flags.writeable = False
    state[_KEPT_RANGE] = (key, lo, hi)
    return lo, hi


def _integer_codes(ctx: KernelContext, arr: np.ndarray, what: str, lo: int, hi: int,
                   dtype: type[np.integer]) -> np.ndarray:
    a = np.asarray(arr)
    if a.dtype == np.dtype(dtype):
        return a
    if a.dtype.kind not in "biuf":
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected {np.dtype(dtype).name} codes")
    if a.size:
        if a.dtype.kind == "f" and not (np.all(np.isfinite(a)) and np.all(a == np.trunc(a))):
            raise ctx.fail(f"{what} holds non-integer values, expected {np.dtype(dtype).name} codes")
        a_min, a_max = a.min(), a.max()
        if a_min < lo or a_max > hi:
            raise ctx.fail(f"{what} holds values in [{a_min}, {a_max}], outside the code range [{lo}, {hi}]")
    return a.astype(dtype)


def u8_codes(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """quint8 codes as uint8; other integral arrays are accepted when every value is in 0..255."""
    return _integer_codes(ctx, arr, what, 0, 255, np.uint8)


def i32_codes(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """qint32 codes as int32; other integral arrays are accepted when every value fits int32."""
    return _integer_codes(ctx, arr, what, -2 ** 31, 2 ** 31 - 1, np.int32)


def float_data(ctx: KernelContext, arr: np.ndarray, what: str, allow_inf: bool = False) -> np.ndarray:
    """Float input data as float64 (exact for float32 inputs); NaN is always an error, Inf unless allowed."""
    a = np.asarray(arr)
    if a.dtype.kind not in "biuf":
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected float data")
    a = a.astype(np.float64)
    if np.isnan(a).any():
        raise ctx.fail(f"{what} contains NaN")
    if not allow_inf and np.isinf(a).any():
        raise ctx.fail(f"{what} contains Inf")
    return a


def shape4(ctx: KernelContext, arr: np.ndarray, what: str) -> tuple[int, int, int, int]:
    """The shape of a "shape" input (its data is not read), left-padded with 1s to 4-D."""
    shape = tuple(int(s) for s in np.shape(arr))
    if len(shape) > 4:
        raise ctx.fail(f"{what} has shape {list(shape)}, more than 4 dimensions")
    padded = (1,) * (4 - len(shape)) + shape
    return padded  # type: ignore[return-value]


def require_4d(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """Require a 4-D ``[b, h, w, d]`` tensor."""
    if np.ndim(arr) != 4:
        raise ctx.fail(f"{what} has shape {list(np.shape(arr))}, expected 4-D [b,h,w,d]")
    return arr
