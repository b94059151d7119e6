"""TFLite builtins converters emit that had no handler: ELU, EXP, LOG, ABS, SQUARE, FLOOR, CEIL, ROUND, SIGN, SIN,
COS (tflite/handlers/unary.py), LOG_SOFTMAX, RELU_0_TO_1 (activation.py), ADD_N (elementwise.py), BROADCAST_TO
(shape.py), GATHER_ND (movement.py), each against LiteRT on the same model and inputs.

Quantized: within 1 LSB everywhere (they measure 98-100% exact); float without calibration: SQNR >= 30 dB. The
float FLOOR / CEIL / ROUND / SIGN are fed values away from their jumps (an 8-bit input step there flips the
result by 1: uniform inputs measure 23-31 dB, the input quantization's doing, not the op's).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.tflite_checks import unsupported_listing
from hexnn_import.testing.tflite_compare import Agreement, assert_agrees

SHAPE = (1, 4, 4, 8)
Feed = Callable[[np.random.Generator], dict[str, np.ndarray]]


def q(dt: type, scale: float, zp: int) -> dict:
    """Quantization kwargs (int8 zero point; +128 for uint8); none for float."""
    if dt is np.float32:
        return {}
    return {"scale": scale, "zero_point": zp if dt is np.int8 else zp + 128}


def unary_model(op: str, dt: type, in_q: tuple[float, int] = (0.05, 3), out_q: tuple[float, int] = (0.04, -10),
                shape: tuple[int, ...] = SHAPE) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", shape, dt, **q(dt, *in_q))
    y = b.add_tensor("y", shape, dt, **q(dt, *out_q))
    b.add_operator(op, [x], [y])
    b.set_io([x], [y])
    return b.build()


def uniform(lo: float, hi: float) -> Feed:
    return lambda rng: {"x": rng.uniform(lo, hi, SHAPE).astype(np.float32)}


def one(res: dict[str, Agreement]) -> Agreement:
    (a,) = res.values()
    return a


def exact_share(a: Agreement) -> float:
    return float(np.mean(np.concatenate(a.diffs) == 0))


#: int8 (input, output) parameters that make each output span its range
INT8_CASES = {"ELU": ((0.05, 3), (0.04, -60)), "EXP": ((0.02, 0), (0.03, -128)), "LOG": ((0.05, -128), (0.05, 60)),
              "ABS": ((0.05, 3), (0.03, -128))}


@pytest.mark.parametrize("op", sorted(INT8_CASES))
def test_int8_table_ops_match_litert(op: str) -> None:
    """LiteRT's int8 kernels (ELU / EXP / LOG: a table; ABS: a rescale) against one Gather_8 table lookup."""
    in_q, out_q = INT8_CASES[op]
    a = one(assert_agrees(unary_model(op, np.int8, in_q, out_q), n=3, min_within1=1.0, max_worst=1))
    assert exact_share(a) >= 0.98, a


#: float inputs per op: the range that exercises it (LOG: positive; SIN / COS: several turns; the step functions:
#: away from their jumps)
FLOAT_FEEDS: dict[str, Feed] = {
    "ELU": uniform(-4, 3), "EXP": uniform(-3, 3), "LOG": uniform(0.05, 5), "ABS": uniform(-3, 3),
    "SQUARE": uniform(-3, 3), "SIN": uniform(-10, 10), "COS": uniform(-10, 10),
    "FLOOR": lambda rng: {"x": (rng.integers(-3, 3, SHAPE) + rng.uniform(0.2, 0.8, SHAPE)).astype(np.float32)},
    "CEIL": lambda rng: {"x": (rng.integers(-3, 3, SHAPE) + rng.uniform(0.2, 0.8, SHAPE)).astype(np.float32)},
    "ROUND": lambda rng: {"x": (rng.integers(-3, 4, SHAPE) + rng.uniform(-0.3, 0.3, SHAPE)).astype(np.float32)},
    "SIGN": lambda rng: {"x": (rng.choice([-1.0, 1.0], SHAPE) * rng.uniform(0.1, 3, SHAPE)).astype(np.float32)},
}


@pytest.mark.parametrize("op", sorted(FLOAT_FEEDS))
def test_float_ops_match_litert(op: str) -> None:
    """Run-time ranges: Dequantize, float32 ops, AutoQuantize."""
    a = one(assert_agrees(unary_model(op, np.float32), n=3, feed_fn=FLOAT_FEEDS[op]))
    assert a.sqnr >= 30.0, a


def test_calibrated_float_exp_is_one_table(tmp_path) -> None:
    """A calibrated float model has fixed ranges: EXP is one Gather_8 table (no float ops)."""
    import hexnn_import as hx
    from hexnn_import.testing.tflite_compare import compare_tflite

    model = unary_model("EXP", np.float32)
    calib = {"x": np.random.default_rng(3).uniform(-3, 3, (8,) + SHAPE).astype(np.float32)}
    (tmp_path / "exp.tflite").write_bytes(model)
    ops = {n.op for n in hx.import_model(tmp_path / "exp.tflite", calibration=calib).nodes}
    assert "Gather_8" in ops and "Mul_f" not in ops, ops
    a = one(compare_tflite(model, n=3, calibration=calib, feed_fn=uniform(-3, 3)))
    assert a.sqnr >= 30.0, a


def device_round_down_band(feeds: list[np.ndarray], dt: type) -> np.ndarray:
    """Where the device's Quantize may give one code less than rounding to nearest: the exact output code's
    fraction in [0.5, 0.5 + 1/16] (op_quantize.c quantize_execute_opt: a half code rounds down, and
    ``scaling = 0xFFFFFFFF // rangemant`` with a 20-bit ``rangemant`` falls short by under 2**-12 of 256 codes),
    worked here in float64 from the input codes (input scale 0.05, output scale 16/256, zero points as
    :func:`q`); margins 1e-4 / 1e-3 code for the float32 arithmetic."""
    zin, zout = (3, 127) if dt is np.int8 else (131, 255)
    x = (np.stack(feeds).astype(np.float64) - zin) * 0.05
    y = x - x.max(axis=-1, keepdims=True)
    code = (y - np.log(np.exp(y).sum(axis=-1, keepdims=True))) / (16 / 256) + zout
    frac = code - np.floor(code)
    return ((frac >= 0.5 - 1e-4) & (frac <= 0.5 + 1 / 16 + 1e-3)).reshape(-1)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.float32])
def test_log_softmax(dt: type) -> None:
    """TFLite's fixed int8 output (scale 16/256, zero point 127): float32 ops, then Quantize onto it.

    Quantized: every code LiteRT's; the device's Quantize rounds a half code, and values within 1/16 code above
    it, down, so there a code may be one less (13 of 384 measured, all in that band; 98% exact before)."""
    feeds: list[np.ndarray] = []

    def feed(rng: np.random.Generator) -> dict[str, np.ndarray]:
        info = np.iinfo(dt) if dt is not np.float32 else None
        x = (rng.integers(info.min, info.max + 1, SHAPE, dtype=dt) if info is not None
             else rng.uniform(-1.0, 1.0, SHAPE).astype(np.float32))
        feeds.append(x)
        return {"x": x}

    a = one(assert_agrees(unary_model("LOG_SOFTMAX", dt, (0.05, 3), (16 / 256, 127)), n=3, min_within1=1.0,
                          max_worst=1, feed_fn=feed))
    if dt is np.float32:
        assert a.sqnr >= 30.0, a
        return
    differs = np.concatenate(a.diffs) != 0
    band = device_round_down_band(feeds, dt)
    assert not (differs & ~band).any(), (a, int((differs & ~band).sum()))
    assert exact_share(a) >= 0.95, a  # the band holds 37 of 384 codes here; 13 differ


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.float32])
@pytest.mark.parametrize("out_q", [(1 / 255, -128), (0.02, -50)])
def test_relu_0_to_1(dt: type, out_q: tuple[float, int]) -> None:
    """An output range inside [0, 1] clips by saturation alone; a wider one needs QuantizedClamp_8."""
    a = one(assert_agrees(unary_model("RELU_0_TO_1", dt, (0.01, 3), out_q), n=3, min_within1=1.0, max_worst=1,
                          feed_fn=None if dt is not np.float32 else uniform(-1, 2)))
    assert dt is not np.float32 or a.sqnr >= 30.0, a


def test_add_n_float() -> None:
    b = TFLiteBuilder()
    xs = [b.add_tensor(f"x{i}", SHAPE, np.float32) for i in range(3)]
    y = b.add_tensor("y", SHAPE, np.float32)
    b.add_operator("ADD_N", xs, [y])
    b.set_io(xs, [y])
    assert one(assert_agrees(b.build(), n=3)).sqnr >= 30.0


@pytest.mark.parametrize("dt", [np.int8, np.float32])
def test_broadcast_to(dt: type) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 1, 8), dt, **q(dt, 0.05, 3))
    s = b.add_const("s", np.array([2, 4, 8], np.int32))
    y = b.add_tensor("y", (2, 4, 8), dt, **q(dt, 0.05, 3))
    b.add_operator("BROADCAST_TO", [x, s], [y], version=2)  # LiteRT registers versions 2-3
    b.set_io([x], [y])
    a = one(assert_agrees(b.build(), n=2, min_within1=1.0, max_worst=0))
    assert dt is not np.float32 or a.sqnr >= 30.0, a


@pytest.mark.parametrize("dt", [np.int8, np.float32])
@pytest.mark.parametrize("data,indices", [((4, 5, 6), [[1, 2], [3, 0], [0, 4]]), ((4, 5, 6), [[1], [3]]),
                                          ((2, 3, 4, 5), [[[1, 2, 3], [0, 0, 1]]]), ((4, 5, 6), [[1, 2, 3]])])
def test_gather_nd(dt: type, data: tuple[int, ...], indices: list) -> None:
    idx = np.array(indices, np.int32)
    b = TFLiteBuilder()
    x = b.add_tensor("x", data, dt, **q(dt, 0.05, 3))
    i = b.add_const("i", idx)
    y = b.add_tensor("y", idx.shape[:-1] + data[idx.shape[-1]:], dt, **q(dt, 0.05, 3))
    b.add_operator("GATHER_ND", [x, i], [y])
    b.set_io([x], [y])
    a = one(assert_agrees(b.build(), n=2, min_within1=1.0, max_worst=0))
    assert dt is not np.float32 or a.sqnr >= 30.0, a


def test_refused_at_convert_with_reasons(tmp_path) -> None:
    """What TFLite itself does not define (LiteRT has no kernel), and GATHER_ND's run-time indices."""
    b = TFLiteBuilder()
    u = b.add_tensor("u", SHAPE, np.uint8, scale=0.05, zero_point=128)
    ue = b.add_tensor("ue", SHAPE, np.uint8, scale=0.05, zero_point=128)
    s = b.add_tensor("s", SHAPE, np.int8, scale=0.05, zero_point=0)
    sq = b.add_tensor("sq", SHAPE, np.int8, scale=0.05, zero_point=0)
    an = b.add_tensor("an", SHAPE, np.int8, scale=0.05, zero_point=0)
    f = b.add_tensor("f", (4, 5), np.float32)
    ix = b.add_tensor("ix", (2, 1), np.int32)
    g = b.add_tensor("g", (2, 5), np.float32)
    b.add_operator("ELU", [u], [ue])
    b.add_operator("SQUARE", [s], [sq])
    b.add_operator("ADD_N", [s, s], [an])
    b.add_operator("GATHER_ND", [f, ix], [g])
    b.set_io([u, s, f, ix], [ue, sq, an, g])
    msg = unsupported_listing(b, tmp_path)
    assert "ELU (uint8 ELU (TFLite defines it for float32 and int8 only" in msg and "(ue)" in msg
    assert "SQUARE (int8 SQUARE (TFLite defines it for float32 only" in msg and "(sq)" in msg
    assert "ADD_N (quantized ADD_N" in msg and "(an)" in msg
    assert "GATHER_ND (indices computed at run time" in msg and "(g)" in msg
