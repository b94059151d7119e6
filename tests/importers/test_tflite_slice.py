"""The TFLite importer slice: one-op quantized models built with the tflite builder, against LiteRT.

Each case builds a tiny int8 or uint8 model, runs it through import +
engine and LiteRT on the same random input, and requires >= 99% of outputs
within 1 LSB and none off by more than 2 (the [Foundation] bar).
"""
from __future__ import annotations

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.serialize import atomic_write_bytes
from hexnn_import.testing import TFLiteBuilder, quantize_bias, quantize_per_channel, run_litert

RNG = np.random.default_rng(1234)


def _compare(model: bytes, tmp_path, n: int = 4) -> tuple[float, int]:
    path = tmp_path / "m.tflite"
    atomic_write_bytes(path, model)
    g = hx.prepare(hx.import_model(path))
    runner = hx.Runner(g)
    io = g.inputs[0]
    dt = np.dtype(io.dtype)
    info = np.iinfo(dt)
    diffs = []
    for _ in range(n):
        x = RNG.integers(info.min, info.max + 1, size=io.shape, dtype=dt)
        ours = runner.run({io.name: x})[g.outputs[0].name]
        ref = run_litert(model, [x])[0]
        assert ours.dtype == ref.dtype and ours.shape == ref.shape
        diffs.append(np.abs(ours.astype(np.int32) - ref.astype(np.int32)).reshape(-1))
    d = np.concatenate(diffs)
    return float(np.mean(d <= 1)), int(d.max())


def _conv_model(dtype: type, per_channel: bool, stride: int, padding: str, act: str, cin: int = 3,
                cout: int = 6, k: int = 3, hw: int = 9) -> bytes:
    b = TFLiteBuilder()
    s_in, zp_in = (0.02, -3) if dtype is np.int8 else (0.02, 125)
    s_out, zp_out = (0.05, 10) if dtype is np.int8 else (0.05, 138)
    x = b.add_tensor("x", (1, hw, hw, cin), dtype, scale=s_in, zero_point=zp_in)
    w = RNG.normal(0, 0.3, size=(cout, k, k, cin))
    if per_channel:
        w[0] *= 0.05  # a channel with a much smaller scale
        q, scales = quantize_per_channel(w, axis=0)
        wt = b.add_const("w", q, scale=scales, zero_point=np.zeros(cout, np.int64), quantized_dimension=0)
    else:
        scale = float(np.abs(w).max() / 127)
        if dtype is np.int8:
            wt = b.add_const("w", np.clip(np.round(w / scale), -127, 127).astype(np.int8), scale=scale, zero_point=0)
        else:
            wt = b.add_const("w", np.clip(np.round(w / scale) + 128, 0, 255).astype(np.uint8), scale=scale,
                             zero_point=128)
        scales = np.full(cout, scale)
    qb, bscales = quantize_bias(RNG.normal(0, 0.5, size=cout), s_in, scales)
    bt = b.add_const("b", qb, scale=bscales, zero_point=np.zeros(cout, np.int64))
    out_hw = -(-hw // stride) if padding == "SAME" else (hw - k) // stride + 1
    y = b.add_tensor("y", (1, out_hw, out_hw, cout), dtype, scale=s_out, zero_point=zp_out)
    b.add_operator("CONV_2D", [x, wt, bt], [y], {"padding": padding, "stride_w": stride, "stride_h": stride},
                   fused_activation=act, version=3 if dtype is np.int8 else 1)
    b.set_io([x], [y])
    return b.build()


# per-channel weights exist for int8 only in TFLite
CONV_CASES = [(np.int8, True, 1, "SAME", "NONE"), (np.int8, True, 2, "SAME", "RELU"),
              (np.int8, True, 2, "VALID", "RELU6")] + [
    (dt, False, s, p, a) for dt in (np.int8, np.uint8) for s, p, a in ((1, "VALID", "RELU"), (2, "SAME", "NONE"))]


@pytest.mark.parametrize("dtype,per_channel,stride,padding,act", CONV_CASES)
def test_conv_2d(dtype, per_channel, stride, padding, act, tmp_path) -> None:
    frac, worst = _compare(_conv_model(dtype, per_channel, stride, padding, act), tmp_path)
    assert frac >= 0.99 and worst <= 2, (frac, worst)


@pytest.mark.parametrize("keep_num_dims,in_shape", [(False, (2, 12)), (False, (1, 2, 2, 3)), (True, (1, 2, 2, 12))])
def test_fully_connected(keep_num_dims, in_shape, tmp_path) -> None:
    b = TFLiteBuilder()
    n_in = 12
    x = b.add_tensor("x", in_shape, np.int8, scale=0.03, zero_point=5)
    w = RNG.normal(0, 0.3, size=(5, n_in))
    scale = float(np.abs(w).max() / 127)
    wt = b.add_const("w", np.round(w / scale).astype(np.int8), scale=scale, zero_point=0)
    qb, bs = quantize_bias(RNG.normal(0, 0.3, size=5), 0.03, np.full(5, scale))
    bt = b.add_const("b", qb, scale=float(bs[0]), zero_point=0)
    rows = int(np.prod(in_shape)) // n_in
    out_shape = tuple(in_shape[:-1]) + (5,) if keep_num_dims else (rows, 5)
    y = b.add_tensor("y", out_shape, np.int8, scale=0.04, zero_point=-20)
    b.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], {"keep_num_dims": keep_num_dims},
                   fused_activation="RELU", version=4)
    b.set_io([x], [y])
    frac, worst = _compare(b.build(), tmp_path)
    assert frac >= 0.99 and worst <= 2, (frac, worst)


@pytest.mark.parametrize("op,padding,k,s", [("MAX_POOL_2D", "SAME", 3, 2), ("MAX_POOL_2D", "VALID", 2, 2),
                                            ("AVERAGE_POOL_2D", "SAME", 3, 2), ("AVERAGE_POOL_2D", "VALID", 3, 1)])
@pytest.mark.parametrize("act", ["NONE", "RELU6"])
def test_pools(op, padding, k, s, act, tmp_path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 7, 7, 4), np.int8, scale=0.05, zero_point=-10)
    o = -(-7 // s) if padding == "SAME" else (7 - k) // s + 1
    y = b.add_tensor("y", (1, o, o, 4), np.int8, scale=0.05, zero_point=-10)
    b.add_operator(op, [x], [y], {"padding": padding, "stride_w": s, "stride_h": s, "filter_width": k,
                                  "filter_height": k}, fused_activation=act, version=2)
    b.set_io([x], [y])
    frac, worst = _compare(b.build(), tmp_path)
    # max pool is exact; average pool differs from TFLite only at rounding ties (SEMANTICS §6)
    assert frac >= (1.0 if op == "MAX_POOL_2D" else 0.99) and worst <= 1, (frac, worst)


def test_unsupported_ops_are_all_listed(tmp_path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4), np.int16)
    y1 = b.add_tensor("y1", (1, 4), np.float32)
    y2 = b.add_tensor("y2", (1, 4), np.float32)
    y3 = b.add_tensor("y3", (1, 4), np.float32)
    b.add_operator("MATRIX_DIAG", [x], [y1])
    b.add_custom_operator("MyCustomOp", [y1], [y2])
    b.add_operator("MATRIX_DIAG", [y2], [y3])
    b.set_io([x], [y3])
    path = tmp_path / "bad.tflite"
    atomic_write_bytes(path, b.build())
    with pytest.raises(UnsupportedOpsError) as err:
        hx.import_model(path)
    msg = err.value.listing()
    assert "MATRIX_DIAG x2 (y1, y3)" in msg and "CUSTOM:MyCustomOp x1 (y2)" in msg
    assert "graph input of type int16" in msg
