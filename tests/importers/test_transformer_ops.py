"""TFLite transformer builtins against LiteRT: BATCH_MATMUL, GELU, and the attention block's other ops.

Quantized: the issue's bar (>= 99% of codes within 1 LSB, none off by more than 2), checked tighter where
the arithmetic is one rounding of an exact value (BATCH_MATMUL, GELU's table: every code within 1);
float without calibration: SQNR >= 30 dB. Inputs are random codes over the whole type range, so the
outputs vary (asserted on LiteRT's own output).
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.litert import run_litert
from hexnn_import.testing.tflite_compare import assert_agrees, random_feed

DTYPES = [np.int8, np.uint8, np.float32]
#: LiteRT's BATCH_MATMUL takes float32, int8 and int16 (batch_matmul.cc), not uint8
BMM_DTYPES = [np.int8, np.float32]


def q(dt: type, scale: float, zp: int) -> dict:
    """Quantization kwargs (zero point given for int8, +128 for uint8); none for float."""
    if dt is np.float32:
        return {}
    return {"scale": scale, "zero_point": zp if dt is np.int8 else zp + 128}


def check(model: bytes, dt: type, within1: float = 0.99, worst: int = 2) -> None:
    """LiteRT's output varies, and ours agrees with it (module doc's bars)."""
    import hexnn_import as hx

    feed = random_feed(_graph(model), np.random.default_rng(7))
    ref = run_litert(model, feed, as_dict=True)
    for v in ref.values():
        assert np.std(np.asarray(v, dtype=np.float64)) > 0, "LiteRT's output is constant: a test that cannot fail"
    res = assert_agrees(model, n=3, min_within1=within1, max_worst=worst)
    if dt is np.float32:
        for a in res.values():
            assert a.sqnr >= 30.0, a
    del hx


def _graph(model: bytes):  # type: ignore[no-untyped-def]
    import tempfile
    from pathlib import Path

    import hexnn_import as hx

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.tflite"
        p.write_bytes(model)
        return hx.import_model(p)


def bmm_model(dt: type, a_shape: tuple, c_shape: tuple, out_shape: tuple, adj_x: bool = False, adj_y: bool = False,
              const_c: bool = False, out_scale: float = 0.25) -> bytes:
    b = TFLiteBuilder()
    a = b.add_tensor("a", a_shape, dt, **q(dt, 0.05, 3))
    if const_c:
        rng = np.random.default_rng(3)
        if dt is np.float32:
            data = rng.uniform(-1, 1, c_shape).astype(np.float32)
            c = b.add_const("c", data)
        else:
            codes = rng.integers(-127, 128, c_shape) if dt is np.int8 else rng.integers(0, 256, c_shape)
            c = b.add_const("c", codes.astype(dt), **q(dt, 0.01, 0))
        inputs = [a]
    else:
        c = b.add_tensor("c", c_shape, dt, **q(dt, 0.04, -5))
        inputs = [a, c]
    y = b.add_tensor("y", out_shape, dt, **q(dt, out_scale, 2))
    b.add_operator("BATCH_MATMUL", [a, c], [y], {"adj_x": adj_x, "adj_y": adj_y})
    b.set_io(inputs, [y])
    return b.build()


@pytest.mark.parametrize("dt", BMM_DTYPES)
@pytest.mark.parametrize("a_shape,c_shape,out_shape,adj_x,adj_y", [
    ((2, 4, 8), (2, 8, 5), (2, 4, 5), False, False),
    ((1, 2, 4, 8), (1, 2, 8, 6), (1, 2, 4, 6), False, False),
    ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 4, 6), False, True),      # Q @ K^T of a batch of 2, 3 heads
    ((2, 8, 4), (2, 8, 5), (2, 4, 5), True, False),
    ((2, 4, 8), (1, 8, 5), (2, 4, 5), False, False),               # one right matrix for the batch
    ((4, 8), (8, 5), (4, 5), False, False),
])
def test_batch_matmul(dt, a_shape, c_shape, out_shape, adj_x, adj_y) -> None:
    check(bmm_model(dt, a_shape, c_shape, out_shape, adj_x, adj_y), dt, within1=1.0)


@pytest.mark.parametrize("dt", BMM_DTYPES)
def test_batch_matmul_constant_rhs(dt) -> None:
    check(bmm_model(dt, (2, 4, 8), (8, 5), (2, 4, 5), const_c=True, out_scale=0.02), dt, within1=1.0)


def test_batch_matmul_rank5_refused() -> None:
    with pytest.raises(UnsupportedOpsError, match="BATCH_MATMUL.*rank 5"):
        _graph(bmm_model(np.int8, (1, 2, 2, 4, 8), (1, 2, 2, 8, 5), (1, 2, 2, 4, 5)))


def gelu_model(dt: type, approximate: bool, shape: tuple = (1, 6, 16), in_q: tuple = (0.03, 10)) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", shape, dt, **q(dt, *in_q))
    y = b.add_tensor("y", shape, dt, **q(dt, 0.02, -100))
    b.add_operator("GELU", [x], [y], {"approximate": approximate}, options_type="GeluOptions")
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(dt, approximate) -> None:
    """Fixed ranges: the same table LiteRT builds (every code equal or within 1 at a tie)."""
    check(gelu_model(dt, approximate), dt, within1=1.0, worst=1)


def test_gelu_float_calibrated() -> None:
    """A calibrated float model takes the table path; against LiteRT's float GELU."""
    from hexnn_import.testing.tflite_compare import compare_tflite

    model = gelu_model(np.float32, False)
    cal = {"x": np.random.default_rng(1).uniform(-1, 1, (8, 1, 6, 16)).astype(np.float32)}
    for a in compare_tflite(model, n=2, calibration=cal).values():
        assert a.sqnr >= 30.0, a


def fc3_model(dt: type, keep: bool) -> bytes:
    """FULLY_CONNECTED of a [1, 6, 16] token sequence (per-channel int8 weights for the int8 model)."""
    b = TFLiteBuilder()
    rng = np.random.default_rng(5)
    x = b.add_tensor("x", (1, 6, 16), dt, **q(dt, 0.05, 0))
    if dt is np.float32:
        w = b.add_const("w", rng.uniform(-0.5, 0.5, (12, 16)).astype(np.float32))
        bias = b.add_const("bias", rng.uniform(-0.5, 0.5, 12).astype(np.float32))
    else:
        wq = {"scale": list(rng.uniform(0.002, 0.006, 12)), "zero_point": [0] * 12} if dt is np.int8 \
            else {"scale": 0.004, "zero_point": 128}
        codes = rng.integers(-127, 128, (12, 16)) + (0 if dt is np.int8 else 128)
        w = b.add_const("w", codes.astype(dt), **wq)
        bias = -1
    y = b.add_tensor("y", (1, 6, 12) if keep else (6, 12), dt, **q(dt, 0.03, 0))
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y], {"keep_num_dims": keep})
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("keep", [True, False])
def test_fully_connected_rank3(dt, keep) -> None:
    check(fc3_model(dt, keep), dt)


def _unary3(op: str, dt: type, opts: dict, out_shape: tuple, out_q: tuple, extra=None) -> bytes:  # type: ignore[no-untyped-def]
    b = TFLiteBuilder()
    x = b.add_tensor("x", (2, 6, 10), dt, **q(dt, 0.05, 3))
    ins = [x] + ([b.add_const("axes", np.asarray(extra, np.int32))] if extra is not None else [])
    y = b.add_tensor("y", out_shape, dt, **q(dt, *out_q))
    b.add_operator(op, ins, [y], opts)
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("dt", DTYPES)
def test_softmax_rank3(dt) -> None:
    check(_unary3("SOFTMAX", dt, {"beta": 1.0}, (2, 6, 10), (1 / 256, -128)), dt)


@pytest.mark.parametrize("dt", DTYPES)
def test_mean_over_tokens(dt) -> None:
    check(_unary3("MEAN", dt, {"keep_dims": False}, (2, 10), (0.01, 0), extra=[1]), dt)


@pytest.mark.parametrize("dt", DTYPES)
def test_attention_transpose_rank4(dt) -> None:
    """[batch, tokens, heads, dim] -> [batch, heads, tokens, dim], codes unchanged."""
    b = TFLiteBuilder()
    x = b.add_tensor("x", (2, 5, 3, 4), dt, **q(dt, 0.05, 3))
    p = b.add_const("perm", np.asarray([0, 2, 1, 3], np.int32))
    y = b.add_tensor("y", (2, 3, 5, 4), dt, **q(dt, 0.05, 3))
    b.add_operator("TRANSPOSE", [x, p], [y])
    b.set_io([x], [y])
    check(b.build(), dt, within1=1.0, worst=0)
