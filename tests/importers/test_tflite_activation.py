"""TFLite activation / normalization builtins against LiteRT.

SOFTMAX, LOGISTIC, TANH (TFLite's fixed output parameters), RELU, RELU6,
RELU_N1_TO_1, LEAKY_RELU, PRELU, HARD_SWISH, SQRT, L2_NORMALIZATION,
LOCAL_RESPONSE_NORMALIZATION (float only in TFLite). Quantized: the issue's
bar (>= 99% within 1 LSB, none off by more than 2); float without
calibration: SQNR >= 30 dB (they measure 41-52 dB).
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.tflite_checks import unsupported_listing
from hexnn_import.testing.tflite_compare import assert_agrees

DTYPES = [np.int8, np.uint8, np.float32]
SHAPE = (1, 4, 4, 8)
#: TFLite's fixed output (scale, int8 zero point, uint8 zero point)
FIXED = {"SOFTMAX": (1 / 256, -128, 0), "LOGISTIC": (1 / 256, -128, 0), "TANH": (1 / 128, 0, 128),
         "L2_NORMALIZATION": (1 / 128, 0, 128)}


def q(dt: type, scale: float, zp: int) -> dict:
    """Quantization kwargs (zero point given for int8, +128 for uint8); none for float."""
    if dt is np.float32:
        return {}
    return {"scale": scale, "zero_point": zp if dt is np.int8 else zp + 128}


def unary_model(op: str, dt: type, opts: dict | None = None, in_q: tuple[float, int] = (0.05, 3),
                out_q: tuple[float, int] | None = None, shape: tuple[int, ...] = SHAPE, version: int | None = None,
                act: str | None = None) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", shape, dt, **q(dt, *in_q))
    if out_q is None and op in FIXED:
        s, zi, zu = FIXED[op]
        yq = {} if dt is np.float32 else {"scale": s, "zero_point": zi if dt is np.int8 else zu}
    else:
        yq = q(dt, *(out_q or (0.04, -10)))
    y = b.add_tensor("y", shape, dt, **yq)
    b.add_operator(op, [x], [y], opts or {}, fused_activation=act,
                   version=version or (2 if dt is np.int8 else 1))
    b.set_io([x], [y])
    return b.build()


def check(model: bytes, dt: type, **kw) -> None:  # type: ignore[no-untyped-def]
    res = assert_agrees(model, n=3, **kw)
    if dt is np.float32:
        for a in res.values():
            assert a.sqnr >= 30.0, a


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("beta,in_q", [(1.0, (0.05, 3)), (0.4, (0.1, -20))])
def test_softmax(dt, beta, in_q) -> None:
    check(unary_model("SOFTMAX", dt, {"beta": beta}, in_q), dt)


def test_softmax_rank2() -> None:
    check(unary_model("SOFTMAX", np.int8, {"beta": 1.0}, shape=(3, 10)), np.int8)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("in_q", [(0.05, 3), (0.02, -100)])
def test_logistic_tanh(op, dt, in_q) -> None:
    check(unary_model(op, dt, in_q=in_q), dt)


def test_tanh_other_output_params() -> None:
    """LiteRT accepts any TANH output parameters: the fixed [-1, 127/128] result is requantized."""
    for dt in (np.int8, np.uint8):
        check(unary_model("TANH", dt, out_q=(0.01, 5)), dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", ["RELU", "RELU6", "RELU_N1_TO_1"])
@pytest.mark.parametrize("out_q", [(0.05, 3), (0.03, -128)])
def test_clip_activations(op, dt, out_q) -> None:
    version = 1 if op == "RELU_N1_TO_1" else None
    check(unary_model(op, dt, out_q=out_q, version=version), dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("alpha", [0.2, -0.5, 1.7])
def test_leaky_relu(dt, alpha) -> None:
    check(unary_model("LEAKY_RELU", dt, {"alpha": alpha}, out_q=(0.05, -20)), dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("alpha_shape", [(1, 1, 8), (8,), (1,), (4, 1, 8)])
def test_prelu(dt, alpha_shape) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, dt, **q(dt, 0.05, 3))
    al = np.random.default_rng(2).uniform(-0.5, 1.0, alpha_shape)
    if dt is np.float32:
        a = b.add_const("a", al.astype(np.float32))
    else:
        aq = q(dt, 0.01, -20)
        a = b.add_const("a", (np.round(al / 0.01) + aq["zero_point"]).astype(dt), **aq)
    y = b.add_tensor("y", SHAPE, dt, **q(dt, 0.04, -30))
    b.add_operator("PRELU", [x, a], [y], {}, version=1)
    b.set_io([x], [y])
    check(b.build(), dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("in_q,out_q", [((0.05, 3), (0.04, -100)), ((0.1, -50), (0.08, -90)), ((0.02, 0), (0.02, -20))])
def test_hard_swish(dt, in_q, out_q) -> None:
    check(unary_model("HARD_SWISH", dt, in_q=in_q, out_q=out_q, version=1), dt)


def _nonneg_feed(dt: type):  # type: ignore[no-untyped-def]
    def feed(rng: np.random.Generator) -> dict[str, np.ndarray]:
        if dt is np.float32:
            return {"x": rng.uniform(0, 4, SHAPE).astype(dt)}
        return {"x": rng.integers(-128, 128, SHAPE).astype(dt)}  # zero point -128: all codes are >= 0.0
    return feed


@pytest.mark.parametrize("dt,in_q,out_q", [(np.int8, (0.02, -128), (0.01, -128)), (np.int8, (0.05, -128), (0.02, -100)),
                                           (np.float32, (0, 0), None)])
def test_sqrt(dt, in_q, out_q) -> None:
    """SQRT: int8 and float (LiteRT has no uint8 SQRT and fails on negative int8 inputs)."""
    check(unary_model("SQRT", dt, in_q=in_q, out_q=out_q, version=1), dt, feed_fn=_nonneg_feed(dt))


def test_sqrt_negative_input_range() -> None:
    """An input range holding negatives: the data fed is >= 0 (LiteRT fails otherwise)."""
    def feed(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": rng.integers(3, 128, SHAPE).astype(np.int8)}
    check(unary_model("SQRT", np.int8, in_q=(0.03, 3), out_q=(0.015, -128), version=1), np.int8, feed_fn=feed)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [SHAPE, (2, 5)])
def test_l2_normalization(dt, shape) -> None:
    check(unary_model("L2_NORMALIZATION", dt, shape=shape, version=1), dt)


@pytest.mark.parametrize("radius,bias,alpha,beta", [(2, 1.0, 0.3, 0.75), (1, 2.0, 1e-1, 0.5), (5, 1.0, 1.0, 1.0)])
def test_local_response_normalization(radius, bias, alpha, beta) -> None:
    model = unary_model("LOCAL_RESPONSE_NORMALIZATION", np.float32,
                        {"radius": radius, "bias": bias, "alpha": alpha, "beta": beta}, version=1)
    check(model, np.float32)


def test_softmax_logistic_calibrated_float() -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, np.float32)
    h = b.add_tensor("h", SHAPE, np.float32)
    s = b.add_tensor("s", SHAPE, np.float32)
    y = b.add_tensor("y", SHAPE, np.float32)
    b.add_operator("HARD_SWISH", [x], [h])
    b.add_operator("LOGISTIC", [h], [s])
    b.add_operator("SOFTMAX", [s], [y], {"beta": 2.0})
    b.set_io([x], [y])
    calib = {"x": np.random.default_rng(4).uniform(-1, 1, (8,) + SHAPE).astype(np.float32)}
    check(b.build(), np.float32, calibration=calib)


def test_unsupported_activation_instances(tmp_path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, np.int8, scale=0.05, zero_point=0)
    y = b.add_tensor("y", SHAPE, np.int8, scale=1 / 128, zero_point=0)
    i = b.add_tensor("i", SHAPE, np.int16, scale=0.001, zero_point=3)  # int16x8 has zero point 0
    r = b.add_tensor("r", SHAPE, np.int16, scale=0.001, zero_point=3)
    b.add_operator("L2_NORMALIZATION", [x], [y], {}, fused_activation="TANH")
    b.add_operator("RELU", [i], [r], {})
    b.set_io([x], [y, r])
    msg = unsupported_listing(b, tmp_path)
    assert "L2_NORMALIZATION (fused activation" in msg and "(y)" in msg
    assert "RELU (input i of type int16" in msg and "(r)" in msg
