"""Engine results before and after the whole pipeline.

- The quantized TFLite models import as Supernodes already; prepare only
  moves them to d32 and tidies up, so outputs are bit-identical.
- Float-style chains (what a float model imports as: AutoQuantize, products,
  BiasAdd, requantize, Relu, Dequantize) become Supernodes with the range the
  tail gives, and no Dequantize -> Quantize pair survives. One fused layer
  (a supernode rounds once where the chain rounds at each stage) agrees
  within one step of the coarser output range; the chain through
  RequantizationRange and an 8-bit bias also drops its intermediate quint8
  tensor (half its step added).
- small_float.tflite stacks three fused layers: each layer's difference feeds
  the next, so its float outputs agree within 3 output steps, with the same
  arg max.
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.engine import Engine
from hexnn_import.graph import NNPad, Ref
from hexnn_import.ops.d32_io import D32Twin
from hexnn_import.ops.kernels.d32_spatial import QuantizedAvgPool8D32
from hexnn_import.ops.quant import step_zero
from hexnn_import.testing.prepare_graphs import QBuilder, q3

MODELS = Path(__file__).resolve().parents[2] / "models"
RNG = np.random.default_rng(2024)
W = (128 + RNG.integers(-20, 21, (3, 3, 3, 4))).astype(np.uint8)
#: Filter range with 0 on a code (zero 128, step 1/64), as a converter makes it. On [-2, 2] (zero 127.5)
#: hexagon_nn's fused and unfused graphs differ on the device too: the supernode's weight zero is
#: get_qu8_level_size_zero's 127, QuantizedConv2d_8x8to32's quantize_int(0) is 128.
W_RANGE = (-2.0, 2.0 * 127 / 128)
ONE = 2.0 ** 31 * (4.0 / 255.0) * (1.0 / 255.0)


def pairs(graph) -> list[tuple[str, str]]:
    """(producer op, consumer op) for every Dequantize output read by a Quantize-like op."""
    out = []
    for n in graph.nodes:
        for r in n.inputs[:1]:
            src = graph.node(r.src_id)
            if src.op == "Dequantize" and n.op in ("Quantize", "AutoQuantize"):
                out.append((src.op, n.op))
    return out


@pytest.mark.parametrize("name", ["small_int8.tflite", "small_uint8.tflite"])
def test_quantized_models_are_bit_identical(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prepare changes no output bit while every d32 op computes its flat twin's arithmetic. The one d32 op
    whose device code computes otherwise here, the 1x1 QuantizedAvgPool_8_d32 (op_avgpool_d32.c's reduce to 1x1
    makes its own output range from the sums, which the engine follows since issue 36), then moves the logits by
    at most two codes (measured on these inputs: 0-2), as it does on the DSP."""
    before = hx.import_model(MODELS / name)
    after = hx.prepare(hx.import_model(MODELS / name))
    assert not any(op.startswith("Supernode") and not op.endswith("d32") for op in after.op_counts())
    assert after.op_counts().get("QuantizedAvgPool_8_d32") == 1
    io = before.inputs[0]
    lo, hi = (-128, 128) if io.dtype == "int8" else (0, 256)
    xs = [RNG.integers(lo, hi, io.shape).astype(io.dtype) for _ in range(3)]
    device = [hx.Runner(after).run({io.name: x}) for x in xs]
    with monkeypatch.context() as m:
        m.setattr(QuantizedAvgPool8D32, "compute", D32Twin.compute)
        r0, r1 = hx.Runner(before), hx.Runner(hx.prepare(hx.import_model(MODELS / name)))
        for x, dev in zip(xs, device):
            flat = r0.run({io.name: x})
            for k, v in flat.items():
                np.testing.assert_array_equal(v, r1.run({io.name: x})[k])
                step = np.abs(dev[k].astype(np.int32) - v.astype(np.int32))
                assert step.max() <= 2, (k, step.max())


def float_front(b: QBuilder, scale=None) -> list[Ref]:
    """INPUT float [1,6,6,3] -> AutoQuantize -> conv 3x3 -> [channel scale] -> BiasAdd_32p32to32."""
    x = b.input((1, 6, 6, 3), "float")
    aq = b.op("AutoQuantize", x, (1, 6, 6, 3), name="aq")
    conv = b.conv(q3(aq), W, W_RANGE)
    src = conv
    if scale is not None:
        src = b.op("QuantizedChannelScale_32xf", [Ref(conv.node_id, 0), b.c(np.float32(scale).reshape(1, 1, 1, 4)),
                                                  Ref(conv.node_id, 1), Ref(conv.node_id, 2)], (1, 6, 6, 4), "qint32")
    bias = b.op("QuantizedBiasAdd_32p32to32", [Ref(src.node_id, 0), b.c(np.int32([[[[900, -700, 50, 0]]]]), np.int32),
                                               Ref(src.node_id, 1), Ref(src.node_id, 2), b.c(-ONE), b.c(ONE)],
                (1, 6, 6, 4), "qint32")
    return q3(bias)


def dequantized(b: QBuilder, triple: list[Ref]) -> None:
    d = b.op("Dequantize", triple, (1, 6, 6, 4), "float", n_out=1, name="deq")
    b.output([Ref(d.node_id, 0)])


def prepared(b: QBuilder):
    g = copy.deepcopy(b.g)
    return hx.prepare(g)


def compare(b: QBuilder, g, ref: Ref, extra: float = 0.0) -> None:
    """Final float outputs within one step of the coarser range of ``ref``'s triple (+ extra)."""
    x = RNG.uniform(-1.5, 1.0, (1, 6, 6, 3)).astype(np.float32)
    (o0,), every0 = Engine(b.g).run([x], mark_all=True)
    (o1,), every1 = Engine(g).run([x], mark_all=True)
    steps = [step_zero(e[Ref(ref.src_id, 1)].item(), e[Ref(ref.src_id, 2)].item())[0] for e in (every0, every1)]
    f32_slack = 4 * np.finfo(np.float32).eps * float(max(np.abs(o0).max(), np.abs(o1).max()))  # float outputs
    assert np.max(np.abs(o0 - o1)) <= max(steps) * (1 + 1e-6) + f32_slack + extra


def sn_ranges(g) -> list[tuple[str, float, float]]:
    out = []
    for n in g.nodes:
        if "Supernode" in n.op:
            lo, hi = (g.node(n.inputs[i].src_id).data.item() for i in (10, 11))
            out.append((n.op, lo, hi))
    return out


def test_conv_bias_requantize_relu_dequantize_quantize_chain() -> None:
    """Requantize [-3, 5] -> Relu -> Dequantize -> Quantize [0, 5] -> MaxPool -> Dequantize:
    the fused Supernode has [0, 5], which is the Quantize's range, so the pair is bypassed exactly."""
    b = QBuilder()
    rq = b.op("Requantize_32to8", [*float_front(b), b.c(-3.0), b.c(5.0)], (1, 6, 6, 4))
    relu = b.op("QuantizedRelu_8", q3(rq), (1, 6, 6, 4), name="relu")
    d = b.op("Dequantize", q3(relu), (1, 6, 6, 4), "float", n_out=1)
    q = b.op("Quantize", [Ref(d.node_id, 0), b.c(0.0), b.c(5.0)], (1, 6, 6, 4))
    pool = b.op("QuantizedMaxPool_8", [*q3(q), b.g.shape_ref((1, 2, 2, 1)), b.g.shape_ref((1, 2, 2, 1))],
                (1, 3, 3, 4), padding=NNPad.VALID, name="pool")
    d2 = b.op("Dequantize", q3(pool), (1, 3, 3, 4), "float", n_out=1)
    b.output([Ref(d2.node_id, 0)])
    g = prepared(b)
    assert sn_ranges(g) == [("InputSupernode_8x8p32to8_outd32", 0.0, 5.0)]  # input depth 3
    # the one Quantize left is the floored input AutoQuantize (optimizer/bias_fit_floor.py), reading no Dequantize
    assert pairs(b.g) and not pairs(g) and g.op_counts().get("Quantize", 0) == g.op_counts().get("Min_f", 0) == 1
    # The chain rounds twice (to the Requantize's [-3, 5] grid, step 8/255, then to the Quantize's [0, 5]
    # grid, step 5/255), the Supernode once onto [0, 5]: both end on the [0, 5] grid and lie within
    # 0.5 * 8/255 + 0.5 * 5/255 and 0.5 * 5/255 of the exact value, less than 2 codes apart - one code.
    compare(b, g, Ref(pool.node_id, 0))


def test_channel_scale_shrink_relu6_chain() -> None:
    b = QBuilder()
    sh = b.op("QuantizeDownAndShrinkRange_32to8", float_front(b, scale=[1.0, 0.5, 0.8, 0.3]), (1, 6, 6, 4))
    relu = b.op("QuantizedReluX_8", [*q3(sh), b.c(6.0)], (1, 6, 6, 4), name="relu6")
    dequantized(b, q3(relu))
    g = prepared(b)
    assert sn_ranges(g) == [("Supernode_8x8p32to8_d32", 0.0, 6.0)]
    compare(b, g, Ref(relu.node_id, 0))


def test_requantization_range_and_bias8_chain() -> None:
    """Conv -> (RequantizationRange + Requantize) -> BiasAdd_8p8to32 -> (RequantizationRange + Requantize)
    -> Relu: make_autorequantize makes both shrink-range, then one Supernode_8x8p8to8 with [0, +inf]."""
    b = QBuilder()
    x = b.input((1, 6, 6, 3), "float")
    aq = b.op("AutoQuantize", x, (1, 6, 6, 3))
    conv = b.conv(q3(aq), W, W_RANGE)

    def autorequant(src) -> list[Ref]:
        rr = b.op("RequantizationRange_32", q3(src), (1, 1, 1, 1), "float", n_out=2)
        rq = b.op("Requantize_32to8", [*q3(src), Ref(rr.node_id, 0), Ref(rr.node_id, 1)], (1, 6, 6, 4), name="q0")
        return q3(rq)

    q0 = autorequant(conv)
    ba = b.op("QuantizedBiasAdd_8p8to32", [q0[0], b.c(np.uint8([[[[10, 240, 128, 90]]]]), np.uint8), q0[1], q0[2],
                                           b.c(-0.5), b.c(0.5)], (1, 6, 6, 4), "qint32")
    relu = b.op("QuantizedRelu_8", autorequant(ba), (1, 6, 6, 4), name="relu")
    dequantized(b, q3(relu))
    g = prepared(b)
    assert [(op, lo) for op, lo, _ in sn_ranges(g)] == [("InputSupernode_8x8p8to8_outd32", 0.0)]
    assert sn_ranges(g)[0][2] == np.inf
    xq = RNG.uniform(-1.5, 1.0, (1, 6, 6, 3)).astype(np.float32)
    _, every = Engine(b.g).run([xq], mark_all=True)
    s_q0 = step_zero(every[q0[1]].item(), every[q0[2]].item())[0]
    compare(b, g, Ref(relu.node_id, 0), extra=0.5 * s_q0 + 1e-12)


def test_small_float_model() -> None:
    before = hx.import_model(MODELS / "small_float.tflite")
    after = hx.prepare(hx.import_model(MODELS / "small_float.tflite"))
    counts = after.op_counts()
    assert counts["Supernode_8x8p32to8_d32"] == 3 and "QuantizedConv2d_8x8to32" not in counts
    assert [(lo, hi) for _, lo, hi in sn_ranges(after)][:2] == [(0.0, np.inf), (0.0, 6.0)]
    deq = [n for n in before.nodes if n.op == "Dequantize"][0]
    deq1 = [n for n in after.nodes if n.op == "Dequantize"][0]
    e0, e1 = Engine(before), Engine(after)
    for _ in range(3):
        x = RNG.uniform(-1, 1, (1, 24, 24, 3)).astype(np.float32)
        (o0,), a0 = e0.run([x], mark_all=True)
        (o1,), a1 = e1.run([x], mark_all=True)
        step = max(step_zero(a[d.inputs[1]].item(), a[d.inputs[2]].item())[0] for a, d in ((a0, deq), (a1, deq1)))
        assert np.max(np.abs(o0 - o1)) <= 3 * step and o0.argmax() == o1.argmax()
