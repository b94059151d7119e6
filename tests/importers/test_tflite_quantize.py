"""TFLite QUANTIZE / DEQUANTIZE against LiteRT: float -> int8/uint8 at a float input, q -> q
requantization (int8 <-> uint8, other scales), dequantize to a float output, and float16 /
int8 constant weights behind DEQUANTIZE (folded into the conv's constant weights)."""
from __future__ import annotations

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.tflite_compare import assert_agrees

SHAPE = (1, 4, 4, 3)


@pytest.mark.parametrize("qdt,zp", [(np.int8, 5), (np.uint8, 133)])
def test_float_quantize_relu_dequantize(qdt, zp) -> None:
    """float x -> QUANTIZE -> RELU -> DEQUANTIZE -> float; the quantized tensor is an output too.

    QUANTIZE re-quantizes the float input itself (one rounding, as LiteRT):
    its codes agree exactly, the float output to float32 precision.
    """
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, np.float32)
    qx = b.add_tensor("q", SHAPE, qdt, scale=0.01, zero_point=zp)
    r = b.add_tensor("r", SHAPE, qdt, scale=0.02, zero_point=zp - 12)
    f = b.add_tensor("f", SHAPE, np.float32)
    b.add_operator("QUANTIZE", [x], [qx])
    b.add_operator("RELU", [qx], [r], version=2 if qdt is np.int8 else 1)
    b.add_operator("DEQUANTIZE", [r], [f], version=2 if qdt is np.int8 else 1)
    b.set_io([x], [f, qx])
    res = assert_agrees(b.build(), n=3, min_within1=1.0, max_worst=0)
    assert res["f"].sqnr >= 100.0, res


@pytest.mark.parametrize("in_dt", [np.int8, np.uint8])
@pytest.mark.parametrize("out_dt,scale,zp", [(np.uint8, 0.05, 131), (np.int8, 0.05, 3), (np.int8, 0.03, -9),
                                             (np.uint8, 0.07, 100)])
def test_requantize(in_dt, out_dt, scale, zp) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, in_dt, scale=0.05, zero_point=3 if in_dt is np.int8 else 131)
    y = b.add_tensor("y", SHAPE, out_dt, scale=scale, zero_point=zp)
    b.add_operator("QUANTIZE", [x], [y], version=2)
    b.set_io([x], [y])
    assert_agrees(b.build(), n=3)


@pytest.mark.parametrize("wdt", [np.float16, np.int8])
def test_dequantized_constant_weights(wdt) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 5, 5, 3), np.float32)
    w = np.random.default_rng(1).normal(0, 0.3, (4, 3, 3, 3))
    if wdt is np.float16:
        wc = b.add_const("wc", w.astype(np.float16))
    else:
        wc = b.add_const("wc", np.round(w / 0.01).astype(np.int8), scale=0.01, zero_point=0)
    wf = b.add_tensor("w", (4, 3, 3, 3), np.float32)
    bias = b.add_const("b", np.zeros(4, np.float32))
    y = b.add_tensor("y", (1, 3, 3, 4), np.float32)
    b.add_operator("DEQUANTIZE", [wc], [wf], version=3 if wdt is np.float16 else 2)
    b.add_operator("CONV_2D", [x, wf, bias], [y], {"padding": "VALID"})
    b.set_io([x], [y])
    res = assert_agrees(b.build(), n=3)
    assert res["y"].sqnr >= 30.0, res


def test_unsupported_quantize_instances(tmp_path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", SHAPE, np.float32)
    y = b.add_tensor("y", SHAPE, np.int16, scale=0.001, zero_point=3)  # int16x8 has zero point 0
    b.add_operator("QUANTIZE", [x], [y])
    b.set_io([x], [y])
    path = tmp_path / "bad.tflite"
    path.write_bytes(b.build())
    with pytest.raises(UnsupportedOpsError) as err:
        hx.import_model(path)
    assert "QUANTIZE (output y of type int16" in err.value.listing()
