"""TFLite reductions against LiteRT: MEAN, SUM, REDUCE_MAX, REDUCE_MIN (axes, negative axes,
keep_dims, ranks 2-4), ARG_MAX, ARG_MIN (int32 / int64 outputs).

Quantized: the issue's bar (REDUCE_MAX / MIN and ARG_* are exact);
float without calibration: SQNR >= 30 dB (they measure 35-54 dB).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.testing import TFLiteBuilder, run_litert
from hexnn_import.testing.tflite_checks import unsupported_listing
from hexnn_import.testing.tflite_compare import assert_agrees, random_feed

DTYPES = [np.int8, np.uint8, np.float32]


def q(dt: type, scale: float, zp: int) -> dict:
    """Quantization kwargs (zero point given for int8, +128 for uint8); none for float."""
    if dt is np.float32:
        return {}
    return {"scale": scale, "zero_point": zp if dt is np.int8 else zp + 128}


def reduced_shape(shape: tuple[int, ...], axes: list[int], keep: bool) -> tuple[int, ...]:
    red = {a % len(shape) for a in axes}
    if keep:
        return tuple(1 if i in red else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in red)


def reduce_model(op: str, dt: type, shape: tuple[int, ...], axes: list[int], keep: bool) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", shape, dt, **q(dt, 0.05, 3))
    ax = b.add_const("axes", np.array(axes, np.int32))
    same = op in ("REDUCE_MAX", "REDUCE_MIN")  # LiteRT requires equal input / output parameters there
    y = b.add_tensor("y", reduced_shape(shape, axes, keep), dt, **(q(dt, 0.05, 3) if same else q(dt, 0.03, -5)))
    b.add_operator(op, [x, ax], [y], {"keep_dims": keep}, version=2 if dt is np.int8 else 1)
    b.set_io([x], [y])
    return b.build()


CASES = [((2, 4, 5, 3), [1, 2], True), ((2, 4, 5, 3), [1, 2], False), ((2, 4, 5, 3), [-1], False),
         ((2, 4, 5, 3), [0, 2], True), ((6, 7), [0], False), ((3, 4, 5), [-2, 2], False)]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", ["MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("shape,axes,keep", CASES)
def test_reductions(op, dt, shape, axes, keep) -> None:
    res = assert_agrees(reduce_model(op, dt, shape, axes, keep), n=3,
                        max_worst=0 if op in ("REDUCE_MAX", "REDUCE_MIN") else 2)
    if dt is np.float32:
        assert res["y"].sqnr >= 30.0, res


def arg_model(op: str, dt: type, shape: tuple[int, ...], axis: int, out_dtype: type) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", shape, dt, **q(dt, 0.05, 3))
    ax = b.add_const("axis", np.array([axis], np.int32))
    y = b.add_tensor("y", reduced_shape(shape, [axis], False), out_dtype)
    b.add_operator(op, [x, ax], [y], {"output_type": 4 if out_dtype is np.int64 else 2}, version=2)
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("shape,axis,out_dtype", [((2, 4, 5, 3), 1, np.int32), ((2, 4, 5, 3), -1, np.int64),
                                                  ((6, 7), 0, np.int32)])
def test_arg_max_min(op, dt, shape, axis, out_dtype) -> None:
    """Indices equal LiteRT's; an int64 output is computed as int32 (no int64 in hexagon_nn), returned as int64."""
    model = arg_model(op, dt, shape, axis, out_dtype)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.tflite"
        path.write_bytes(model)
        g = hx.import_model(path)
    runner = hx.Runner(hx.prepare(g))
    rng = np.random.default_rng(0)
    for _ in range(3):
        feed = random_feed(g, rng)
        if dt is np.float32:  # distinct values a code step apart: no ties after quantization
            feed["x"] = rng.permutation(np.linspace(-1, 1, int(np.prod(shape)))).reshape(shape).astype(np.float32)
        ours, ref = runner.run(feed)["y"], run_litert(model, feed)[0]
        assert ours.dtype == ref.dtype and ours.shape == ref.shape
        np.testing.assert_array_equal(ours, ref)


def test_unsupported_reduce_instances(tmp_path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 3), np.int8, scale=0.05, zero_point=0)
    axes = b.add_tensor("axes", (1,), np.int32)
    y = b.add_tensor("y", (1, 4, 3), np.int8, scale=0.05, zero_point=0)
    ax2 = b.add_const("ax2", np.array([0, 1], np.int32))
    i = b.add_tensor("i", (1, 4, 3), np.int32)
    b.add_operator("MEAN", [x, axes], [y], {"keep_dims": False}, version=2)
    b.add_operator("ARG_MAX", [x, ax2], [i], {"output_type": 2}, version=2)
    b.set_io([x, axes], [y, i])
    msg = unsupported_listing(b, tmp_path)
    assert "MEAN (axes not a constant tensor" in msg and "(y)" in msg
    assert "ARG_MAX (axis not one constant axis)" in msg and "(i)" in msg
