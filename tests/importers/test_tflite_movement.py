"""TFLite data-movement builtins against LiteRT: pads, slices, gather, space/depth/batch moves, resizes.

One-op models from the tflite builder in int8, uint8 and float (run-time
ranges). Pure data movement is exact; bilinear resizes differ from
TFLite's integer weights by at most one code on a few outputs; float
outputs must reach SQNR >= 30 dB.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.importers.nodes.resize import half_pixel_plan
from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.tflite_checks import check_bar, unsupported_listing

DTYPES = [np.int8, np.uint8, np.float32]
PARAMS = {np.int8: (0.02, -3), np.uint8: (0.02, 125)}


def q(dtype) -> dict:
    """Quantization keywords of add_tensor (none for float)."""
    return {} if dtype is np.float32 else dict(zip(("scale", "zero_point"), PARAMS[dtype]))


def unary(op: str, in_shape, out_shape, dtype, options=None, consts=()) -> bytes:
    """x -> op(x, *consts) -> y, one parameter set."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", in_shape, dtype, **q(dtype))
    ins = [x] + [b.add_const(f"c{i}", np.asarray(c)) for i, c in enumerate(consts)]
    y = b.add_tensor("y", out_shape, dtype, **q(dtype))
    b.add_operator(op, ins, [y], options)
    b.set_io([x], [y])
    return b.build()


# ---- pads -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_pad(dtype) -> None:
    check_bar(unary("PAD", (1, 3, 4, 2), (1, 6, 5, 2), dtype, consts=[np.array([[0, 0], [1, 2], [0, 1], [0, 0]],
                                                                           np.int32)]), dtype)
    check_bar(unary("PAD", (3, 4), (4, 7), dtype, consts=[np.array([[1, 0], [2, 1]], np.int64)]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_padv2(dtype) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (2, 3, 2), dtype, **q(dtype))
    pads = b.add_const("pads", np.array([[0, 1], [1, 1], [0, 0]], np.int32))
    if dtype is np.float32:
        c = b.add_const("c", np.array([0.5], np.float32))
    else:
        c = b.add_const("c", np.array([40], dtype), **q(dtype))  # a code of the output's parameters
    y = b.add_tensor("y", (3, 5, 2), dtype, **q(dtype))
    b.add_operator("PADV2", [x, pads, c], [y])
    b.set_io([x], [y])
    # a float pad value on a run-time range lands on the nearest code of that range
    check_bar(b.build(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,p", [("REFLECT", 2), ("SYMMETRIC", 3)])
def test_mirror_pad(dtype, mode, p) -> None:
    pads = np.array([[0, 0], [p, 1], [1, p], [0, 0]], np.int32)
    check_bar(unary("MIRROR_PAD", (1, 3, 4, 2), (1, 3 + p + 1, 4 + p + 1, 2), dtype, {"mode": mode}, consts=[pads]),
          dtype)


# ---- slices ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_slice(dtype) -> None:
    check_bar(unary("SLICE", (2, 5, 6), (1, 3, 6), dtype, consts=[np.array([1, 1, 0], np.int32),
                                                              np.array([1, 3, -1], np.int32)]), dtype)


STRIDED = [  # (in shape, begin, end, strides, options, out shape) - numpy equivalents in comments
    ((2, 5, 6), [0, 1, -1], [2, -1, 0], [1, 2, -2], {}, (2, 2, 3)),                       # x[:, 1:-1:2, -1:0:-2]
    ((2, 5, 6), [0, 0, 0], [0, 0, 0], [1, -1, 1], {"begin_mask": 7, "end_mask": 7}, (2, 5, 6)),   # x[:, ::-1]
    ((2, 5, 6), [1, -2, 0], [2, 0, 3], [1, 1, 1], {"shrink_axis_mask": 3}, (3,)),         # x[1, -2, 0:3]
    ((1, 4, 4, 3), [0, 1, 0, 1], [1, 4, 4, 3], [1, 2, 3, 1], {}, (1, 2, 2, 2)),
    ((3, 4, 5), [-3, 0], [-1, 0], [1, 1], {"end_mask": 2}, (2, 4, 5)),                    # implicit trailing dims
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,begin,end,strides,opts,out", STRIDED)
def test_strided_slice(dtype, shape, begin, end, strides, opts, out) -> None:
    consts = [np.array(v, np.int32) for v in (begin, end, strides)]
    check_bar(unary("STRIDED_SLICE", shape, out, dtype, opts, consts=consts), dtype)


@pytest.mark.parametrize("opts,out", [({"ellipsis_mask": 1}, (2, 5, 3)),                   # x[..., 1:4]
                                      ({"new_axis_mask": 2, "ellipsis_mask": 1}, (2, 5, 6, 1))])  # x[..., None]
def test_strided_slice_ellipsis_new_axis(opts, out) -> None:
    begin, end = ([0, 1], [0, 4]) if "new_axis_mask" not in opts else ([0, 0], [0, 0])
    consts = [np.array(v, np.int32) for v in (begin, end, [1, 1])]
    check_bar(unary("STRIDED_SLICE", (2, 5, 6), out, np.int8, opts, consts=consts), np.int8)


# ---- gather -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,idx", [((5, 3), 0, [[4, 0], [2, 2]]), ((2, 5, 3), -2, [3, 1, 1, 0]),
                                            ((2, 3, 4), 2, 3), ((1, 2, 3, 4), 3, [0, 3])])
def test_gather_constant_indices(dtype, shape, axis, idx) -> None:
    idx = np.asarray(idx, np.int32)
    ax = axis + len(shape) if axis < 0 else axis
    out = shape[:ax] + idx.shape + shape[ax + 1:]
    check_bar(unary("GATHER", shape, out, dtype, {"axis": axis}, consts=[idx]), dtype)


def test_gather_int64_indices() -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (6, 4), np.uint8, scale=0.1, zero_point=7)
    idx = b.add_const("idx", np.array([5, 0, 5], np.int64))
    y = b.add_tensor("y", (3, 4), np.uint8, scale=0.1, zero_point=7)
    b.add_operator("GATHER", [x, idx], [y], {"axis": 0})
    b.set_io([x], [y])
    check_bar(b.build(), np.uint8)


# ---- space / depth / batch ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_space_depth(dtype) -> None:
    check_bar(unary("SPACE_TO_DEPTH", (1, 4, 6, 3), (1, 2, 3, 12), dtype, {"block_size": 2}), dtype)
    check_bar(unary("DEPTH_TO_SPACE", (2, 2, 3, 8), (2, 4, 6, 2), dtype, {"block_size": 2}), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_space_batch(dtype) -> None:
    block = np.array([2, 3], np.int32)
    pads = np.array([[1, 1], [2, 1]], np.int32)
    check_bar(unary("SPACE_TO_BATCH_ND", (1, 4, 6, 2), (6, 3, 3, 2), dtype, consts=[block, pads]), dtype)
    crops = np.array([[0, 1], [1, 0]], np.int32)
    check_bar(unary("BATCH_TO_SPACE_ND", (6, 2, 2, 3), (1, 3, 5, 3), dtype, consts=[block, crops]), dtype)
    check_bar(unary("SPACE_TO_BATCH_ND", (2, 5, 3), (4, 3, 3), dtype,
                consts=[np.array([2], np.int32), np.array([[0, 1]], np.int32)]), dtype)


# ---- resizes --------------------------------------------------------------------------------------------
RESIZES = [((4, 4), (8, 8), {}), ((4, 5), (7, 3), {}), ((3, 4), (6, 7), {"align_corners": True}),
           ((4, 4), (8, 8), {"half_pixel_centers": True}), ((6, 4), (3, 2), {"half_pixel_centers": True}),
           ((5, 3), (7, 4), {"half_pixel_centers": True})]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hw,out,opts", RESIZES)
def test_resize_bilinear(dtype, hw, out, opts) -> None:
    size = np.array(out, np.int32)
    model = unary("RESIZE_BILINEAR", (1, *hw, 3), (1, *out, 3), dtype, opts, consts=[size])
    check_bar(model, dtype, exact=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hw,out,opts", RESIZES)
def test_resize_nearest(dtype, hw, out, opts) -> None:
    size = np.array(out, np.int32)
    check_bar(unary("RESIZE_NEAREST_NEIGHBOR", (2, *hw, 3), (2, *out, 3), dtype, opts, consts=[size]), dtype)


def test_half_pixel_plan_hits_every_sample() -> None:
    # after one row of edge padding, row c + m*y of the out'-row legacy grid sits at (y + 1/2) in/out + 1/2
    for n_in, n_out in ((4, 8), (8, 4), (5, 7), (3, 9), (6, 6)):
        m, fine, c = half_pixel_plan(n_in, n_out)
        if n_in == n_out:
            continue
        y = np.arange(n_out)
        assert np.array_equal((c + m * y) * (n_in + 2) * 2 * n_out, ((2 * y + 1) * n_in + n_out) * fine)


def test_unsupported_movement_instances(tmp_path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 2), np.int8, scale=0.1, zero_point=0)
    p = b.add_tensor("p", (4, 2), np.int32)  # run-time paddings
    y1 = b.add_tensor("y1", (1, 6, 6, 2), np.int8, scale=0.1, zero_point=0)
    b.add_operator("PAD", [x, p], [y1])
    idx = b.add_const("idx", np.array([7], np.int32))  # index out of range
    y2 = b.add_tensor("y2", (1, 4, 4, 1), np.int8, scale=0.1, zero_point=0)
    b.add_operator("GATHER", [x, idx], [y2], {"axis": 3})
    y3 = b.add_tensor("y3", (1, 0, 4, 2), np.int8, scale=0.1, zero_point=0)
    b.add_operator("STRIDED_SLICE", [x] + [b.add_const(f"s{i}", np.array(v, np.int32)) for i, v in
                                            enumerate(([0, 2, 0, 0], [1, 2, 4, 2], [1, 1, 1, 1]))], [y3])
    b.set_io([x, p], [y1, y2, y3])
    msg = unsupported_listing(b, tmp_path)
    assert "PAD (input 1 is not a constant integer tensor)" in msg
    assert "GATHER (constant indices outside 0..1)" in msg
    assert "STRIDED_SLICE (tensor y3 has an empty or dynamic dimension" in msg


def test_gather_with_run_time_indices() -> None:
    # indices computed in the graph: ARG_MAX over the rows of x picks a column of the table t
    b = TFLiteBuilder()
    x = b.add_tensor("x", (2, 3), np.int8, scale=0.05, zero_point=0)
    ax = b.add_const("axis", np.int32(1))
    idx = b.add_tensor("idx", (2,), np.int32)
    b.add_operator("ARG_MAX", [x, ax], [idx], {"output_type": 2})  # TensorType INT32
    t = b.add_tensor("t", (4, 3), np.int8, scale=0.02, zero_point=-7)
    y = b.add_tensor("y", (4, 2), np.int8, scale=0.02, zero_point=-7)
    b.add_operator("GATHER", [t, idx], [y], {"axis": 1})
    b.set_io([x, t], [y])
    check_bar(b.build(), np.int8)
