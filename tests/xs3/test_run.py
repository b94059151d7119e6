"""The XS3 execution path: lowered layers on the simulated kernels, the rest on the Hexagon engine.

A whole model runs either way; a layer that cannot be lowered is reported
with its reason and keeps running on the Hexagon engine.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import hexnn_import as hx
from hexnn_import.graph import Ref
from hexnn_import.testing import TFLiteBuilder, quantize_bias, quantize_per_channel, run_litert
from hexnn_import.xs3.layer_agreement import smooth_inputs
from hexnn_import.xs3.run import XS3Runner
from hexnn_import.api import import_model

MODELS = Path(__file__).resolve().parents[2] / "models"


def _conv(b: TFLiteBuilder, x: int, name: str, c_in: int, c_out: int, s_in: float, s_out: float, zp_out: int,
          shape: tuple[int, ...], rng: np.random.Generator, dilation: int = 1) -> int:
    q, scales = quantize_per_channel(rng.normal(0, 0.3, size=(c_out, 3, 3, c_in)), axis=0)
    w = b.add_const(f"{name}/w", q, scale=scales, zero_point=np.zeros(c_out, np.int64))
    qb, bs = quantize_bias(rng.normal(0, 0.2, size=c_out), s_in, scales)
    bias = b.add_const(f"{name}/b", qb, scale=bs, zero_point=np.zeros(c_out, np.int64))
    y = b.add_tensor(name, shape, np.int8, scale=s_out, zero_point=zp_out)
    b.add_operator("CONV_2D", [x, w, bias], [y], {"padding": "SAME", "dilation_w_factor": dilation,
                                                  "dilation_h_factor": dilation}, version=3)
    return y


def two_convs() -> bytes:
    """conv ``a`` (8 -> 5 channels, dilation 2: no lib_nn window dilates) then conv ``b`` (5 -> 8, padded to 8
    inputs)."""
    rng = np.random.default_rng(4)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 8, 8, 8), np.int8, scale=0.02, zero_point=-3)
    a = _conv(b, x, "a", 8, 5, 0.02, 0.06, 4, (1, 8, 8, 5), rng, dilation=2)
    y = _conv(b, a, "b", 5, 8, 0.06, 0.15, -2, (1, 8, 8, 8), rng)
    b.set_io([x], [y])
    return b.build()


def test_small_model_runs_on_xs3_and_matches_litert() -> None:
    path = MODELS / "small_int8.tflite"
    runner = XS3Runner(import_model(path))
    assert runner.xs3_layers == ["conv1/relu", "pool1", "conv2/relu6", "pool2", "logits"]
    assert {p.op for p in runner.placements if p.target == "hexagon"} == {"RESHAPE"}
    ops = {n.op for n in runner.graph.nodes}
    assert {"XS3_conv2d_shallowin", "XS3_maxpool2d", "XS3_conv2d_depthwise", "XS3_fully_connected_8"} <= ops
    assert not ops & {"Supernode_8x8p32to8", "QuantizedMaxPool_8", "QuantizedAvgPool_8"}  # the replaced chains went
    rng = np.random.default_rng(0)
    worst = 0
    for _ in range(5):
        x = rng.integers(-128, 128, (1, 24, 24, 3)).astype(np.int8)
        y = runner.run({"input": x})["logits"]
        ref = run_litert(path.read_bytes(), [x])[0]
        assert y.dtype == np.int8 and y.shape == ref.shape
        worst = max(worst, int(np.abs(y.astype(int) - ref).max()))
    assert worst <= 2


def test_unlowerable_layer_stays_on_hexagon(tmp_path: Path) -> None:
    path = tmp_path / "two.tflite"
    path.write_bytes(two_convs())
    runner = XS3Runner(import_model(path))
    place = {p.name: p for p in runner.placements}
    assert place["a"].target == "hexagon" and "dilation 2x2" in (place["a"].reason or "")
    assert place["b"].target == "xs3" and place["b"].kernel == "conv2d_shallowin"
    x = np.random.default_rng(1).integers(-128, 128, (1, 8, 8, 8)).astype(np.int8)
    out, every = runner.run_all({"x": x})
    hexagon = hx.Runner(hx.import_model(path))
    _, every_h = hexagon.run_all({"x": x})
    ref_a = runner.graph.tensor_map["a"]
    assert np.array_equal(every[ref_a], every_h[ref_a])  # the same Hexagon kernel computed "a"
    a_int8 = (every[ref_a] ^ np.uint8(0x80)).view(np.int8)
    b_layer = runner.plan.by_name("b").lowered
    assert np.array_equal((out["b"]), b_layer.run(a_int8))  # and "b" read it on the XS3 side
    lite = run_litert(path.read_bytes(), [x])[0]
    assert np.abs(out["b"].astype(int) - lite).max() <= 2


def test_mobilenet_runs_whole_on_the_xs3_path() -> None:
    path = MODELS / "mobilenet_v2_int8.tflite"
    runner = XS3Runner(import_model(path))
    assert len(runner.xs3_layers) == 64
    hexagon_ops = {p.op for p in runner.placements if p.target == "hexagon"}
    assert hexagon_ops == {"RESHAPE"}
    # one graph, one engine: every op node left is an XS3 node but the graph's own I/O
    assert {n.op for n in runner.graph.nodes if not n.is_const and not n.op.startswith("XS3_")} <= {"INPUT", "OUTPUT"}
    feed = smooth_inputs(runner.plan, 1, seed=3)[0]
    out, every = runner.run_all(feed)
    lite = run_litert(path.read_bytes(), feed)[0]
    assert out["logits"].shape == lite.shape and out["logits"].argmax() == lite.argmax()
    assert np.abs(out["logits"].astype(int) - lite).max() <= 8  # 17 blocks of 1-LSB differences compound
    # each lowered layer's graph output is its kernel applied to the graph value of its input
    for name in ("block2_1/project", "block5_2/depthwise", "head"):
        r = runner.plan.by_name(name)
        x_ref, y_ref = runner.graph.tensor_map[r.layer.x.name], runner.graph.tensor_map[r.layer.y.name]
        x = (every[x_ref] ^ np.uint8(0x80)).view(np.int8).reshape(r.layer.x.shape)
        y = (every[Ref(y_ref.src_id, y_ref.output_idx)] ^ np.uint8(0x80)).view(np.int8)
        assert np.array_equal(y.reshape(r.layer.y.shape), r.lowered.run(x)), name
