"""QuantizedReshape and QuantizedFlatten: data keeps its order, shape changes (op_reshape.c, op_flatten.c).

:func:`reshape_target_c` also serves the plain Reshape (``float_movement_shape``), which op_reshape.c runs through
the same ``reshape_execute``."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import u8_codes
from hexnn_import.ops.movement_io import copied_range, int32_words, param_depth
from hexnn_import.ops.registry import Kernel, KernelContext, register

_CODE_DTYPES = (np.dtype(np.uint8), np.dtype(np.int32))


def reshape_target_c(ctx: KernelContext, shape_arr: np.ndarray, n_elements: int) -> tuple[int, int, int, int]:
    """op_reshape.c ``reshape_execute``: the new shape from a ``[.., k]`` int32 tensor, k = its depth, 1..4.

    The k values fill the last k dims (others 1); any negative value is the one unknown dim (two are an
    error) = elements / product of the others; a product of 0 (or past 32 bits) is an error, as is any
    element count mismatch.
    """
    arr = np.asarray(shape_arr)
    k = param_depth(arr)
    vals = int32_words(ctx, arr, "target shape")
    if not 1 <= k <= 4 or vals.size < k:
        raise ctx.fail(f"bad shape input for reshape: shape tensor {list(arr.shape)} (depth must be 1..4)")
    dims = [1] * 4
    neg = -1
    prod = 1
    for i in range(4 - k, 4):
        v = int(vals[i - (4 - k)])
        if v < 0:
            if neg >= 0:
                raise ctx.fail(f"too many unknown dimensions in {vals[:k].tolist()}")
            neg = i
        else:
            dims[i] = v
            prod = min(prod * v, 0xFFFFFFFF)
    if prod == 0 or prod == 0xFFFFFFFF:
        raise ctx.fail(f"bad shape input for reshape: {vals[:k].tolist()}")
    if neg >= 0:
        dims[neg] = n_elements // prod
        prod *= dims[neg]
    if prod != n_elements:
        raise ctx.fail(f"reshape: target shape {vals[:k].tolist()} holds {prod} elements, the input has {n_elements}")
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
    """Copy quint8 or qint32 data into a new 4-D shape: op_reshape.c ``reshape_execute``.

    Inputs: data, target shape (:func:`reshape_target_c`), min, max. The C copies the bytes whatever
    their type: the data must be uint8 or int32 codes here (its dtype is kept). The range is copied
    unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, shape_arr, mn_arr, mx_arr = inputs
        x = code_data(ctx, data, _CODE_DTYPES)
        dims = reshape_target_c(ctx, shape_arr, x.size)
        return (np.array(x.reshape(dims), copy=True), *copied_range(ctx, mn_arr, mx_arr))


@register("QuantizedFlatten")
class QuantizedFlatten(Kernel):
    """Flatten quint8 data to ``[1, 1, 1, n]`` in row-major order: op_flatten.c ``qflatten_execute``.

    The range is copied unchecked; integral data of another dtype is accepted when its values are
    quint8 codes (0..255).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        x = u8_codes(ctx, data, "input data")
        return (np.array(x.reshape((1, 1, 1, x.size)), copy=True), *copied_range(ctx, mn_arr, mx_arr))
