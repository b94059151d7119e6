"""QuantizedReshape and QuantizedFlatten: data keeps its order, shape changes (SEMANTICS.md §6)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.registry import Kernel, KernelContext, register

_CODE_DTYPES = (np.dtype(np.uint8), np.dtype(np.int32))


def target_shape(ctx: KernelContext, shape_arr: np.ndarray, n_elements: int) -> tuple[int, int, int, int]:
    """Resolve a reshape target: 1..4 integers, left-padded with 1s to 4, at most one -1.

    The -1 dimension is ``n_elements`` divided by the product of the others;
    the element count must be unchanged (op text of Reshape / QuantizedReshape).
    """
    raw = np.asarray(shape_arr).reshape(-1)
    if raw.dtype.kind not in "biuf" or not 1 <= raw.size <= 4:
        raise ctx.fail(f"target shape {raw.tolist()} must be 1 to 4 integers")
    if raw.dtype.kind == "f" and not (np.all(np.isfinite(raw)) and np.all(raw == np.trunc(raw))):
        raise ctx.fail(f"target shape {raw.tolist()} holds non-integer values")
    dims = [1] * (4 - raw.size) + [int(v) for v in raw]
    unknown = [i for i, v in enumerate(dims) if v == -1]
    if len(unknown) > 1 or any(v < -1 for v in dims):
        raise ctx.fail(f"target shape {dims} may hold at most one -1 and otherwise sizes >= 0")
    known = int(np.prod([v for v in dims if v != -1], dtype=np.int64))
    if unknown:
        if known == 0 or n_elements % known:
            raise ctx.fail(f"target shape {dims} cannot hold {n_elements} elements")
        dims[unknown[0]] = n_elements // known
    elif known != n_elements:
        raise ctx.fail(f"target shape {dims} holds {known} elements, the input has {n_elements}")
    return tuple(dims)  # type: ignore[return-value]


def code_data(ctx: KernelContext, data: np.ndarray, allowed: tuple[np.dtype, ...]) -> np.ndarray:
    """The input data, which must already be quantized codes of an allowed dtype (no conversion)."""
    a = np.asarray(data)
    if a.dtype not in allowed:
        names = "|".join(d.name for d in allowed)
        raise ctx.fail(f"input data has dtype {a.dtype}, expected {names} codes")
    return a


@register("QuantizedReshape")
class QuantizedReshape(Kernel):
    """Copy quint8 or qint32 data into a new 4-D shape; the range passes through (SEMANTICS §6).

    Inputs: data, target shape (int32 data: 1..4 values, left-padded with 1s,
    at most one -1), min, max. Choices where the documents are silent: the
    data must already be uint8 or int32 (its dtype decides the output's, so
    no conversion is guessed); a 0 in the target shape is allowed only when
    the element count matches exactly (-1 then cannot be resolved and is an
    error); the range must be sane, as for every quantized tensor (§1).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, shape_arr, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = code_data(ctx, data, _CODE_DTYPES)
        dims = target_shape(ctx, shape_arr, x.size)
        return (np.array(x.reshape(dims), copy=True), *range_out(mn, mx))


@register("QuantizedFlatten")
class QuantizedFlatten(Kernel):
    """Flatten quint8 data to ``[1, 1, 1, n]`` in row-major order; the range passes through.

    The op text says "flattens into a 1D tensor"; in the 4-D flat layout that
    is the depth axis (as a reshape to ``[-1]`` left-padded with 1s). The
    range must be sane; integral data of another dtype is accepted when its
    values are quint8 codes (0..255).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_codes(ctx, data, "input data")
        return (np.array(x.reshape((1, 1, 1, x.size)), copy=True), *range_out(mn, mx))
