"""TFLite builtins converters emit that had no handler: ELU (tflite/handlers/unary.py), against LiteRT on the same
model and inputs.

Quantized: within 1 LSB everywhere (they measure 98-100% exact); float without calibration: SQNR >= 30 dB. The
float FLOOR / CEIL / ROUND / SIGN are fed values away from their jumps (an 8-bit input step there flips the
result by 1: uniform inputs measure 23-31 dB, the input quantization's doing, not the op's).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder
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
INT8_CASES = {"ELU": ((0.05, 3), (0.04, -60))}


@pytest.mark.parametrize("op", sorted(INT8_CASES))
def test_int8_table_ops_match_litert(op: str) -> None:
    """LiteRT's int8 ELU (a table) against one Gather_8 table lookup."""
    in_q, out_q = INT8_CASES[op]
    a = one(assert_agrees(unary_model(op, np.int8, in_q, out_q), n=3, min_within1=1.0, max_worst=1))
    assert exact_share(a) >= 0.98, a


def test_float_elu_matches_litert() -> None:
    """Run-time ranges: Dequantize, float32 ops, AutoQuantize."""
    a = one(assert_agrees(unary_model("ELU", np.float32), n=3, feed_fn=uniform(-4, 3)))
    assert a.sqnr >= 30.0, a
