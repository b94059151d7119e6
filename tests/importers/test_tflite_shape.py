"""TFLite shape builtins against LiteRT: SQUEEZE, EXPAND_DIMS, CONCATENATION, PACK, SPLIT, SPLIT_V, TILE, TRANSPOSE.

Each case is a one-op model from the tflite builder in int8, uint8 and float
(run-time ranges) variants. Pure data movement on one quantization is
exact; CONCATENATION / PACK of inputs with other parameters requantize
(Requantize_8to8 vs TFLite's float rescale: within 1 LSB); float outputs
must reach SQNR >= 30 dB (8-bit AutoQuantize: about 45 dB here).
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.importers.nodes.movement import fold_permutation
from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.tflite_checks import check_bar, unsupported_listing

DTYPES = [np.int8, np.uint8, np.float32]
#: (scale, zero point) per dtype; the second pair differs to force requantization
PARAMS = {np.int8: [(0.02, -3), (0.035, 10), (0.01, -100)], np.uint8: [(0.02, 125), (0.035, 138), (0.01, 28)]}


def q(dtype, k: int = 0) -> dict:
    """Quantization keywords of add_tensor for parameter set ``k`` (none for float)."""
    if dtype is np.float32:
        return {}
    s, z = PARAMS[dtype][k]
    return {"scale": s, "zero_point": z}


def unary(op: str, in_shape, out_shape, dtype, options=None, consts=(), k_out: int = 0, **kw) -> bytes:
    """x -> op(x, *consts) -> y."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", in_shape, dtype, **q(dtype))
    ins = [x] + [b.add_const(f"c{i}", np.asarray(c)) for i, c in enumerate(consts)]
    y = b.add_tensor("y", out_shape, dtype, **q(dtype, k_out))
    b.add_operator(op, ins, [y], options, **kw)
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("dtype", DTYPES)
def test_squeeze_expand_dims(dtype) -> None:
    check_bar(unary("SQUEEZE", (1, 3, 1, 4), (3, 4), dtype, {"squeeze_dims": [0, 2]}), dtype)
    check_bar(unary("EXPAND_DIMS", (3, 4), (3, 1, 4), dtype, consts=[np.int32(1)]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis,shapes", [(-1, [(1, 3, 4, 2), (1, 3, 4, 5)]), (1, [(2, 3, 2, 2), (2, 1, 2, 2)]),
                                         (0, [(2, 3), (1, 3), (3, 3)]), (2, [(2, 3, 1), (2, 3, 4)]),
                                         (-3, [(1, 2, 3), (2, 2, 3)])])
def test_concatenation_axes(dtype, axis, shapes) -> None:
    # LiteRT's int8 kernel demands one parameter set; uint8 inputs may differ (requantized)
    mixed = dtype is np.uint8
    b = TFLiteBuilder()
    ins = [b.add_tensor(f"x{i}", s, dtype, **q(dtype, i % 2 if mixed else 0)) for i, s in enumerate(shapes)]
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    y = b.add_tensor("y", out, dtype, **q(dtype, 2 if mixed else 0))
    b.add_operator("CONCATENATION", ins, [y], {"axis": axis})
    b.set_io(ins, [y])
    check_bar(b.build(), dtype, exact=not mixed)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_concatenation_same_params_is_exact(dtype) -> None:
    b = TFLiteBuilder()
    ins = [b.add_tensor(f"x{i}", (1, 2, 2, 3), dtype, **q(dtype)) for i in range(3)]
    y = b.add_tensor("y", (1, 2, 2, 9), dtype, **q(dtype))
    b.add_operator("CONCATENATION", ins, [y], {"axis": 3})
    b.set_io(ins, [y])
    check_bar(b.build(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pack(dtype, axis) -> None:
    b = TFLiteBuilder()
    ins = [b.add_tensor(f"x{i}", (2, 3), dtype, **q(dtype)) for i in range(3)]
    out = [2, 3]
    out.insert(axis + 3 if axis < 0 else axis, 3)
    y = b.add_tensor("y", out, dtype, **q(dtype))
    b.add_operator("PACK", ins, [y], {"axis": axis, "values_count": 3})
    b.set_io(ins, [y])
    check_bar(b.build(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [1, -1])
def test_split(dtype, axis) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (2, 4, 6), dtype, **q(dtype))
    ax = b.add_const("axis", np.int32(axis))
    part = [2, 4, 6]
    part[axis] //= 2
    ys = [b.add_tensor(f"y{i}", part, dtype, **q(dtype)) for i in range(2)]
    b.add_operator("SPLIT", [ax, x], ys, {"num_splits": 2})
    b.set_io([x], ys)
    check_bar(b.build(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_v(dtype) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 3, 7), dtype, **q(dtype))
    sizes = b.add_const("sizes", np.array([2, -1, 1], np.int32))
    ax = b.add_const("axis", np.int32(-1))
    ys = [b.add_tensor(f"y{i}", (1, 3, n), dtype, **q(dtype)) for i, n in enumerate((2, 4, 1))]
    b.add_operator("SPLIT_V", [x, sizes, ax], ys, {"num_splits": 3})
    b.set_io([x], ys)
    check_bar(b.build(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tile(dtype) -> None:
    check_bar(unary("TILE", (2, 3), (4, 9), dtype, consts=[np.array([2, 3], np.int32)]), dtype)
    check_bar(unary("TILE", (1, 2, 1, 3), (2, 2, 3, 3), dtype, consts=[np.array([2, 1, 3, 1], np.int64)]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,perm", [((2, 3, 4, 5), (0, 3, 1, 2)), ((2, 3, 4), (2, 0, 1)), ((3, 5), (1, 0)),
                                        ((1, 3, 1, 4), (0, 2, 3, 1))])
def test_transpose(dtype, shape, perm) -> None:
    check_bar(unary("TRANSPOSE", shape, tuple(shape[p] for p in perm), dtype, consts=[np.array(perm, np.int32)]), dtype)


def test_fold_permutation() -> None:
    # [N,H,W,g,c] with g, c swapped: N,H,W merge -> 3 axes
    assert fold_permutation((1, 4, 4, 2, 3), (0, 1, 2, 4, 3)) == ((16, 2, 3), (0, 2, 1))
    assert fold_permutation((2, 1, 3), (2, 1, 0)) == ((2, 3), (1, 0))
    assert fold_permutation((1, 1), (1, 0)) == ((), ())


def test_unsupported_instances_are_listed(tmp_path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (2, 3), np.int8, scale=0.1, zero_point=0)
    m = b.add_tensor("m", (2,), np.int32)  # non-constant multiples
    y1 = b.add_tensor("y1", (4, 9), np.int8, scale=0.1, zero_point=0)
    b.add_operator("TILE", [x, m], [y1])
    xi = b.add_tensor("xi", (2, 3), np.int32)  # int32 data is not handled
    y2 = b.add_tensor("y2", (3, 2), np.int32)
    b.add_operator("TRANSPOSE", [xi, b.add_const("p", np.array([1, 0], np.int32))], [y2])
    b.set_io([x, m, xi], [y1, y2])
    msg = unsupported_listing(b, tmp_path)
    assert "TILE (input 1 is not a constant integer tensor)" in msg and "TRANSPOSE (input xi of type int32" in msg
