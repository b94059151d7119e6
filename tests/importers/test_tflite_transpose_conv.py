"""TFLite TRANSPOSE_CONV against LiteRT: int8 per-channel / per-tensor, uint8, float (run-time and
calibrated ranges); SAME / VALID, strides, optional bias, an output beyond the full output, fused
activation, and per-channel scales below the op's 1/32 bound (channel groups)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.importers.nodes.transpose_conv import (
    channel_groups,
    transpose_conv_pads,
)
from hexnn_import.testing import TFLiteBuilder, quantize_bias, quantize_per_channel
from hexnn_import.testing.tflite_compare import assert_agrees, compare_tflite

RNG = np.random.default_rng(7)


def _out_size(n: int, f: int, s: int, padding: str) -> int:
    return n * s if padding == "SAME" else (n - 1) * s + f


def _model(dtype, per_channel: bool, stride: int, padding: str, bias: bool = True, act: str = "NONE",
           hw: int = 4, k: int = 3, cin: int = 3, cout: int = 4, extra: int = 0, small: float = 1.0) -> bytes:
    b = TFLiteBuilder()
    out_hw = _out_size(hw, k, stride, padding) + extra
    w = RNG.normal(0, 0.3, size=(cout, k, k, cin))
    w[0] *= small  # one channel with a much smaller scale
    bias_real = RNG.normal(0, 0.3, size=cout)
    oshape = b.add_const("output_shape", np.array([1, out_hw, out_hw, cout], np.int32))
    if dtype is np.float32:
        x = b.add_tensor("x", (1, hw, hw, cin), np.float32)
        wt = b.add_const("w", w.astype(np.float32))
        bt = b.add_const("b", bias_real.astype(np.float32)) if bias else -1
        y = b.add_tensor("y", (1, out_hw, out_hw, cout), np.float32)
    else:
        s_in, zp_in = (0.02, -3) if dtype is np.int8 else (0.02, 125)
        s_out, zp_out = (0.06, 5) if dtype is np.int8 else (0.06, 130)
        x = b.add_tensor("x", (1, hw, hw, cin), dtype, scale=s_in, zero_point=zp_in)
        if per_channel:
            qw, scales = quantize_per_channel(w, axis=0)
            wt = b.add_const("w", qw, scale=scales, zero_point=np.zeros(cout, np.int64), quantized_dimension=0)
        else:
            scale = float(np.abs(w).max() / 127)
            codes = np.clip(np.round(w / scale), -127, 127)
            if dtype is np.uint8:
                wt = b.add_const("w", (codes + 128).astype(np.uint8), scale=scale, zero_point=128)
            else:
                wt = b.add_const("w", codes.astype(np.int8), scale=scale, zero_point=0)
            scales = np.full(cout, scale)
        if bias:
            qb, bs = quantize_bias(bias_real, s_in, scales)
            bt = b.add_const("b", qb, scale=bs if per_channel else float(bs[0]),
                             zero_point=np.zeros(cout if per_channel else 1, np.int64))
        else:
            bt = -1
        y = b.add_tensor("y", (1, out_hw, out_hw, cout), dtype, scale=s_out, zero_point=zp_out)
    ins = [oshape, wt, x] + ([bt] if bias else [])
    b.add_operator("TRANSPOSE_CONV", ins, [y], {"padding": padding, "stride_h": stride, "stride_w": stride},
                   fused_activation=act, version=4 if act != "NONE" else 3)
    b.set_io([x], [y])
    return b.build()


CASES = [(np.int8, True, 2, "SAME"), (np.int8, True, 1, "VALID"), (np.int8, False, 2, "VALID"),
         (np.uint8, False, 2, "SAME"), (np.uint8, False, 1, "SAME")]


@pytest.mark.parametrize("dtype,per_channel,stride,padding", CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_transpose_conv_quantized(dtype, per_channel, stride, padding, bias) -> None:
    assert_agrees(_model(dtype, per_channel, stride, padding, bias), n=3)


@pytest.mark.parametrize("act", ["RELU", "RELU6"])
def test_transpose_conv_fused_activation(act) -> None:
    assert_agrees(_model(np.int8, True, 2, "SAME", act=act), n=3)


def test_transpose_conv_output_beyond_full_output() -> None:
    # VALID with output_shape one row/column past (in-1)*s+f: the extra row is bias only
    assert_agrees(_model(np.int8, True, 2, "VALID", extra=1), n=3)


def test_transpose_conv_tiny_channel_scale_is_split_into_groups() -> None:
    assert_agrees(_model(np.int8, True, 2, "SAME", small=0.01), n=3)


@pytest.mark.parametrize("calibrated", [False, True])
def test_transpose_conv_float(calibrated) -> None:
    model = _model(np.float32, False, 2, "SAME")
    calib = {"x": RNG.uniform(-1, 1, size=(8, 1, 4, 4, 3)).astype(np.float32)} if calibrated else None
    res = compare_tflite(model, n=3, calibration=calib)
    assert res["y"].sqnr >= 30, res


def test_pads_follow_tflite() -> None:
    # SAME, in 4, f 3, s 2, out 8: forward o = 4, total = 3*2+3-8 = 1 -> top 0; full 9 -> bottom 1
    assert transpose_conv_pads((4, 4), (3, 3), (2, 2), (8, 8), True) == (0, 1, 0, 1)
    # VALID with one extra row: o = (10+2-3)//2 = 4, total = 6+3-10 < 0 -> 0; bottom 9-0-10 = -1
    assert transpose_conv_pads((4, 4), (3, 3), (2, 2), (10, 9), False) == (0, -1, 0, 0)


def test_channel_groups() -> None:
    k = np.array([1.0, 0.01, 0.5, 0.02, 0.0002])
    groups = channel_groups(k, 5)
    assert [g.tolist() for g in groups] == [[0, 2], [1, 3], [4]]
    assert channel_groups(np.array([1.0, 0.04]), 2)[0].tolist() == [0, 1]


def test_unsupported_transpose_conv(tmp_path) -> None:
    import hexnn_import as hx
    from hexnn_import.errors import UnsupportedOpsError

    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 3), np.int8, scale=0.02, zero_point=0)
    shape = b.add_tensor("shape", (4,), np.int32)  # output_shape computed at run time
    w = b.add_const("w", np.ones((2, 3, 3, 3), np.int8), scale=0.01, zero_point=0)
    y = b.add_tensor("y", (1, 8, 8, 2), np.int8, scale=0.05, zero_point=0)
    b.add_operator("TRANSPOSE_CONV", [shape, w, x], [y], {"padding": "SAME", "stride_h": 2, "stride_w": 2})
    b.set_io([x, shape], [y])
    path = tmp_path / "bad.tflite"
    path.write_bytes(b.build())
    with pytest.raises(UnsupportedOpsError) as err:
        hx.import_model(path)
    assert "TRANSPOSE_CONV (output_shape is not constant" in err.value.listing()
