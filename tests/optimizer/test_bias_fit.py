"""A fused Supernode whose bias does not fit int32 (hexagon_nn fill_bias_buf: "Final too big") is never built:
fuse_conv keeps the canonical chain there (optimizer/bias_fit.py), for the importers and prepare alike.

- the squeeze-excite reproducer (int8 TFLite; float TFLite calibrated): fused, it converts and then refuses
  at run time; now it runs and agrees with LiteRT (within 1 LSB; float: SQNR) on varied inputs;
- the decision on cases worked by hand from fill_bias_buf's formula
  ``v = (b * b_level / prod - out_min / prod) / k - gemsumb * in_zero``;
- the summary names the layer kept unfused and why.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import hexnn_import as hx
from hexnn_import.cli import cli
from hexnn_import.compare.metrics import sqnr_db
from hexnn_import.errors import OpError
from hexnn_import.graph import NNPad, Ref
from hexnn_import.ops import run_op
from hexnn_import.optimizer import supernodes
from hexnn_import.optimizer.bias_fit import FusedOperands, chain_fit, supernode_fit
from hexnn_import.optimizer.cleanup import RemoveDeadNodes
from hexnn_import.optimizer import run_pipeline
from hexnn_import.testing import TFLiteBuilder, quantize_bias, quantize_per_channel
from hexnn_import.testing.litert import run_litert
from hexnn_import.testing.prepare_graphs import QBuilder, q3, real_outputs, run_outputs

C, R = 16, 8
CHAIN = ("QuantizedConv2d_8x8to32", "QuantizedChannelScale_32xf", "QuantizedBiasAdd_32p32to32", "Requantize_32to8")


def se_int8() -> bytes:
    """x -> MEAN -> 1x1 conv + RELU onto [0, 0.05] (a nearly dead ReLU) -> 1x1 conv, per-channel weights whose
    channel 0 has scale 3e-6 against 6e-3 (k = 1/2000), output [-2, 2] -> LOGISTIC -> MUL x. The fused
    node would need ``2 / (0.05/255 * 3e-6) = 3.4e9`` accumulator units for the output minimum alone."""
    rng = np.random.default_rng(0)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 6, 6, C), np.int8, scale=0.05, zero_point=-3)
    p = b.add_tensor("pool", (1, 1, 1, C), np.int8, scale=0.03, zero_point=-10)
    b.add_operator("MEAN", [x, b.add_const("axes", np.array([1, 2], np.int32))], [p], {"keep_dims": True},
                   version=2)
    q1, s1 = quantize_per_channel(rng.normal(0, 0.05, size=(R, 1, 1, C)), axis=0)
    qb1, bs1 = quantize_bias(rng.normal(-0.05, 0.02, size=R), 0.03, s1)
    s_h = 0.05 / 255
    h = b.add_tensor("h", (1, 1, 1, R), np.int8, scale=s_h, zero_point=-128)
    b.add_operator("CONV_2D", [p, b.add_const("w1", q1, scale=s1, zero_point=np.zeros(R, np.int64)),
                               b.add_const("b1", qb1, scale=bs1, zero_point=np.zeros(R, np.int64))], [h],
                   {"padding": "VALID"}, fused_activation="RELU", version=3)
    scales = np.full(C, 0.006, np.float32)
    scales[0], scales[1] = 3e-6, 6e-5
    bias = rng.normal(0, 0.5, size=C)
    bias[0] = 0.05   # LiteRT's own int32 accumulator must hold it: 0.05 / (s_h * 3e-6) = 8.5e7 codes
    qb2, bs2 = quantize_bias(bias, s_h, scales)
    e = b.add_tensor("e", (1, 1, 1, C), np.int8, scale=4.0 / 255, zero_point=0)
    b.add_operator("CONV_2D", [h, b.add_const("w2", rng.integers(-127, 128, size=(C, 1, 1, R)).astype(np.int8),
                                              scale=scales, zero_point=np.zeros(C, np.int64)),
                               b.add_const("b2", qb2, scale=bs2, zero_point=np.zeros(C, np.int64))], [e],
                   {"padding": "VALID"}, version=3)
    g = b.add_tensor("g", (1, 1, 1, C), np.int8, scale=1 / 256, zero_point=-128)
    b.add_operator("LOGISTIC", [e], [g])
    y = b.add_tensor("y", (1, 6, 6, C), np.int8, scale=0.04, zero_point=-5)
    b.add_operator("MUL", [x, g], [y])
    b.set_io([x], [y])
    return b.build()


def se_float() -> bytes:
    """The same block in float32: conv1's weights 1e-4 times smaller (its ReLU output tiny), conv2's channel 0
    3e-6 times smaller than the others."""
    rng = np.random.default_rng(0)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 6, 6, C), np.float32)
    p = b.add_tensor("pool", (1, 1, 1, C), np.float32)
    b.add_operator("MEAN", [x, b.add_const("axes", np.array([1, 2], np.int32))], [p], {"keep_dims": True})
    h = b.add_tensor("h", (1, 1, 1, R), np.float32)
    w1 = (rng.normal(0, 0.5, size=(R, 1, 1, C)) * 1e-4).astype(np.float32)
    b.add_operator("CONV_2D", [p, b.add_const("w1", w1), b.add_const("b1", np.zeros(R, np.float32))], [h],
                   {"padding": "VALID"}, fused_activation="RELU")
    w2 = rng.normal(0, 0.5, size=(C, 1, 1, R)).astype(np.float32)
    w2[0] *= 3e-6
    e = b.add_tensor("e", (1, 1, 1, C), np.float32)
    b.add_operator("CONV_2D", [h, b.add_const("w2", w2),
                               b.add_const("b2", rng.normal(0, 0.5, size=C).astype(np.float32))], [e],
                   {"padding": "VALID"})
    g = b.add_tensor("g", (1, 1, 1, C), np.float32)
    b.add_operator("LOGISTIC", [e], [g])
    y = b.add_tensor("y", (1, 6, 6, C), np.float32)
    b.add_operator("MUL", [x, g], [y])
    b.set_io([x], [y])
    return b.build()


FLOAT_CALIB = {"x": np.random.default_rng(5).uniform(-1, 1, (16, 1, 6, 6, C)).astype(np.float32)}


def _import(model: bytes, tmp_path: Path, calibration=None) -> hx.Graph:
    path = tmp_path / "se.tflite"
    path.write_bytes(model)
    return hx.prepare(hx.import_model(path, calibration=calibration))


def _ops(graph) -> list[str]:
    return [n.op for n in graph.nodes if not n.is_const]


@pytest.mark.parametrize("model,calib", [(se_int8, None), (se_float, FLOAT_CALIB)], ids=["int8", "float-calibrated"])
def test_fused_form_refuses_at_run_time(model, calib, tmp_path, monkeypatch) -> None:
    """The reproducer: with the fusion forced (prepare.c's rule), the model converts and the run refuses."""
    monkeypatch.setattr(supernodes, "unfused_reason", lambda *a: None)
    graph = _import(model(), tmp_path, calib)
    assert "QuantizedChannelScale_32xf" not in _ops(graph)
    feed = np.zeros((1, 6, 6, C), np.int8 if calib is None else np.float32)
    with pytest.raises(OpError, match=r"node e \(Supernode_8x8p32to8(_d32)?\): bias does not fit int32.*Final too big"):
        hx.Runner(graph).run({"x": feed})


def _in_order(ops: list[str], want: tuple[str, ...]) -> bool:
    at = 0
    for op in ops:
        if at < len(want) and op == want[at]:
            at += 1
    return at == len(want)


def test_int8_reproducer_runs_and_agrees_with_litert(tmp_path) -> None:
    model = se_int8()
    graph = _import(model, tmp_path)
    assert _in_order(_ops(graph), CHAIN), _ops(graph)
    assert _ops(graph).count("Supernode_8x8p32to8_d32") == 1   # conv1 still fuses
    runner, rng = hx.Runner(graph), np.random.default_rng(1)
    refs = []
    for _ in range(16):
        x = rng.integers(-128, 128, size=(1, 6, 6, C), dtype=np.int8)
        ref = run_litert(model, {"x": x})[0]
        ours = runner.run({"x": x})["y"]
        assert np.abs(ours.astype(np.int64) - ref).max() <= 1
        refs.append(ref.tobytes())
    assert len(set(refs)) == 16


def test_float_calibrated_reproducer_runs(tmp_path) -> None:
    """Calibrated float: the chain stays and the output is within 8-bit error of LiteRT's float run."""
    model = se_float()
    graph = _import(model, tmp_path, FLOAT_CALIB)
    assert _in_order(_ops(graph), CHAIN), _ops(graph)
    runner, rng = hx.Runner(graph), np.random.default_rng(2)
    outs = []
    for _ in range(6):
        x = rng.uniform(-1, 1, (1, 6, 6, C)).astype(np.float32)
        ours, ref = runner.run({"x": x})["y"], run_litert(model, {"x": x})[0]
        assert sqnr_db(ref, ours) >= 30.0
        outs.append(ours)
    assert np.ptp(np.stack(outs), axis=0).max() > 0.1


def test_summary_names_the_unfused_layer(tmp_path) -> None:
    path = tmp_path / "se.tflite"
    path.write_bytes(se_int8())
    res = CliRunner().invoke(cli, [str(path), "-o", str(tmp_path / "g.json"), "--json"])
    assert res.exit_code == 0, res.output
    notes = json.loads(res.stdout)["notes"]
    kept = [n for n in notes if "instead of Supernode_8x8p32to8" in n]
    assert len(kept) == 1, notes
    assert kept[0].startswith("e: kept as " + " -> ".join(CHAIN))
    assert "fill_bias_buf: channel 0" in kept[0] and "channel scale 0.0005" in kept[0]


def test_kept_chain_is_not_fused_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept chain's requantize reads the bias add's minimum through Minimum_f(min, 0): prepare.c's
    try_make_supernode_flavored, run again over the emitted graph on the device, takes the requantize only when
    each input it has is the bias add's or a Const (graphops.c find_unique_consumer), so it leaves the chain.
    Shown here with make_supernodes fusing unconditionally, as prepare.c does; the guard changes no value."""
    kept = _chain_graph(0.5)
    run_pipeline(kept.g, [supernodes.MakeSupernodes(), RemoveDeadNodes()])
    rq = next(n for n in kept.g.nodes if n.name == "layer")
    mn = kept.g.node(rq.inputs[1].src_id)
    bias = kept.g.node(rq.inputs[0].src_id)
    assert mn.op == "Minimum_f" and mn.inputs[0] == Ref(bias.node_id, 1) and rq.inputs[2] == Ref(bias.node_id, 2)
    assert kept.g.node(mn.inputs[1].src_id).data.reshape(-1).tolist() == [0.0]
    x = np.random.default_rng(4).integers(0, 256, (1, 3, 3, 2)).astype(np.uint8)
    outs = run_outputs(kept.g, [x])
    monkeypatch.setattr(supernodes, "unfused_reason", lambda *a: None)
    run_pipeline(kept.g, [supernodes.MakeSupernodes(), RemoveDeadNodes()])
    assert "Supernode_8x8p32to8" not in _ops(kept.g) and "QuantizedChannelScale_32xf" in _ops(kept.g)
    unguarded = _chain_graph(0.5)   # the same chain, not fused, reading the min itself
    assert all(np.array_equal(a, b) for a, b in zip(run_outputs(unguarded.g, [x]), outs))


# ---- the decision, worked by hand -----------------------------------------------------------------------
def operands(in_range, out_min, bias=0, k=None, in_zero_weights=False, out_max=0.0) -> FusedOperands:
    """A 1x1 conv, one input and one output channel: weights on [-1.28, 1.27] (level 0.01, zero 128),
    qint32 bias on ``+-2**31 * prod`` (one bias code = one accumulator unit), output range
    ``[out_min, 0]`` (0 on a code: setup_initial_output_range keeps it)."""
    lvl = (in_range[1] - in_range[0]) / 255.0
    prod = lvl * 0.01
    w = np.full((1, 1, 1, 1), 128 if in_zero_weights else 200, np.uint8)
    return FusedOperands(in_range, w, (-1.28, 1.27), np.array([bias], np.int32),
                         (-2.0 ** 31 * prod, 2.0 ** 31 * prod), True, False,
                         None if k is None else np.array([k], np.float32), (out_min, out_max))


def test_bias_and_output_min_in_accumulator_units() -> None:
    """in [0, 2.55] (level 0.01, zero 0), prod 1e-4: v = b + (-out_min) * 1e4. With b = 2**31 - 2**17:
    out_min -8 gives 2147432576 (fits), -20 gives 2147552576 (past 2**31 - 1)."""
    b = 2 ** 31 - 2 ** 17
    assert supernode_fit(operands((0.0, 2.55), -8.0, b)) is None
    why = supernode_fit(operands((0.0, 2.55), -20.0, b))
    assert why is not None and "needs 2.15e+09" in why and "output min -20" in why


def test_channel_scale_divides() -> None:
    """in [0, 2.55e-5] (level 1e-7), prod 1e-9, out_min -1: v = 1e9 / k: k 1/2 gives 2e9 (fits), k 1/4 4e9."""
    assert supernode_fit(operands((0.0, 2.55e-5), -1.0, k=0.5)) is None
    why = supernode_fit(operands((0.0, 2.55e-5), -1.0, k=0.25))
    assert why is not None and "needs 4e+09" in why and "channel scale 0.25" in why


def test_input_zero_correction() -> None:
    """in [-1.28, 1.27] (zero 128), weights all at their zero 128: gemsumb = 128 * 32 (depth padded to 32 with
    the weight zero), gx = 4096 * 128 = 524288; b = -(2**31 - 2**17), out_min 0: v = b - gx = -2147876864,
    below -2**31. With the input on [0, 2.55] (zero 0) v = b fits."""
    b = -(2 ** 31 - 2 ** 17)
    assert supernode_fit(operands((0.0, 2.55), 0.0, b, in_zero_weights=True, out_max=1.0)) is None
    why = supernode_fit(operands((-1.28, 1.27), 0.0, b, in_zero_weights=True, out_max=1.0))
    assert why is not None and "needs -2.15e+09" in why


def test_chain_holds_what_the_supernode_cannot() -> None:
    """The chain adds the bias in product steps (2**31 - 2**17 of them fit) before the channel scale's effect
    on the bias could enter; a bias past the product range (a p32 bias range wider than the product's)
    saturates there."""
    assert chain_fit(operands((0.0, 2.55e-5), -1.0, k=0.25)) is None
    wide = operands((0.0, 2.55), -20.0, 2 ** 31 - 2 ** 17)
    wide = FusedOperands(**{**wide.__dict__, "b_range": (-2.0 ** 31 * 1e-3, 2.0 ** 31 * 1e-3)})
    assert chain_fit(wide) is not None and "product steps" in chain_fit(wide)


def _run_fused(op: FusedOperands, code: int) -> None:
    """The fused node on an input of one code everywhere, run twice (an auto range widens, then persists)."""
    x = np.full((1, 2, 2, op.w.shape[2]), code, np.uint8)
    ins = [x, op.w, np.float32(op.in_range[0]), np.float32(op.in_range[1]), np.float32(op.w_range[0]),
           np.float32(op.w_range[1]), np.zeros((1, 1, 1, 1), np.int32), op.bias.reshape(1, 1, 1, -1),
           np.float32(op.b_range[0]), np.float32(op.b_range[1]), np.float32(op.out_spec[0]),
           np.float32(op.out_spec[1])]
    state: dict = {}
    for _ in range(2):
        run_op("Supernode_8x8p32to8", ins, padding=int(NNPad.VALID), state=state)


@pytest.mark.parametrize("bias", [0, 2 ** 24, -(2 ** 24), 2 ** 29])
def test_auto_range_decision_covers_the_retries(bias) -> None:
    """An auto output range (QuantizeDownAndShrinkRange tail): where the decision says the node fits, the
    fused node runs on the extreme inputs (every code 0, every code 255), whose outputs move the range
    furthest; the decision and the kernel agree on a fixed range that does not fit."""
    op = operands((-1.28, 1.27), -math.inf, bias, out_max=math.inf)
    assert supernode_fit(op) is None
    for code in (0, 255):
        _run_fused(op, code)
    with pytest.raises(OpError, match="Final too big"):
        _run_fused(operands((0.0, 2.55), -20.0, 2 ** 31 - 2 ** 17), 0)


# ---- fuse_conv in prepare (make_supernodes) ---------------------------------------------------------------
BIAS_REAL = np.array([0.5, -0.5, 0.25, 0.0])


def _chain_graph(k: float, in_hi: float = 2.55e-5) -> QBuilder:
    """INPUT [0, 2.55e-5] -> 1x1 conv (weights [-1.28, 1.27]) -> ChannelScale k -> BiasAdd (BIAS_REAL) ->
    Requantize [-1, 1] -> OUTPUT, four channels; prod 1e-9, so channel 0 needs ``(0.5 + 1) / 1e-9 / k``
    accumulator units: 1.5e9 at k = 1 (fits), 3e9 at k = 1/2 (does not)."""
    b = QBuilder()
    x = b.input((1, 3, 3, 2), lo=0.0, hi=in_hi)
    w = np.random.default_rng(3).integers(0, 256, (1, 1, 2, 4)).astype(np.uint8)
    conv = b.conv(x, w, (-1.28, 1.27))
    sc = b.op("QuantizedChannelScale_32xf", [Ref(conv.node_id, 0), b.c(np.full((1, 1, 1, 4), k, np.float32)),
                                             Ref(conv.node_id, 1), Ref(conv.node_id, 2)], (1, 3, 3, 4), "qint32")
    b_step = 1e-9   # the bias on its own qint32 range (the product step of in_hi = 2.55e-5)
    codes = np.round(BIAS_REAL / b_step).reshape(1, 1, 1, 4)
    bias = b.op("QuantizedBiasAdd_32p32to32", [Ref(sc.node_id, 0), b.c(codes, np.int32),
                                               Ref(sc.node_id, 1), Ref(sc.node_id, 2), b.c(-2.0 ** 31 * b_step),
                                               b.c(2.0 ** 31 * b_step)], (1, 3, 3, 4), "qint32")
    rq = b.op("Requantize_32to8", [*q3(bias), b.c(-1.0), b.c(1.0)], (1, 3, 3, 4), name="layer")
    b.output(q3(rq))
    return b


def test_make_supernodes_keeps_the_chain_and_notes_it() -> None:
    fits, kept = _chain_graph(1.0), _chain_graph(0.5)
    for b in (fits, kept):
        run_pipeline(b.g, [supernodes.MakeSupernodes(), RemoveDeadNodes()])
    assert "Supernode_8x8p32to8" in _ops(fits.g) and not fits.g.meta.get("notes")
    assert "Supernode_8x8p32to8" not in _ops(kept.g) and "QuantizedChannelScale_32xf" in _ops(kept.g)
    assert any(n.startswith("layer: kept as") for n in kept.g.meta["notes"])
    x = np.random.default_rng(4).integers(0, 256, (1, 3, 3, 2)).astype(np.uint8)
    got, step = real_outputs(run_outputs(kept.g, [x]))
    # independent: bias + k * sum(x_real * w_real), within one step of the [-1, 1] range
    w = kept.g.nodes[[n.op for n in kept.g.nodes].index("QuantizedConv2d_8x8to32")]
    wc = kept.g.node(w.inputs[1].src_id).data.astype(np.float64)
    want = BIAS_REAL + 0.5 * np.einsum("bhwi,io->bhwo", x * (2.55e-5 / 255), (wc[0, 0] - 128) * 0.01)
    assert np.abs(got - want).max() <= step


def dwise_int8() -> bytes:
    """A per-channel 3x3 depthwise conv on an input of scale 5e-5 whose channel 0 has weight scale 2e-5
    against 0.02 (k = 1/1000), output [-4, 4]: the DepthwiseSupernode prepare makes of it would need
    ``4 / (5e-5 * 2e-5) = 4e9`` units for the output minimum."""
    rng = np.random.default_rng(6)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 6, 6, 8), np.int8, scale=5e-5, zero_point=0)
    scales = np.full(8, 0.02, np.float32)
    scales[0] = 2e-5
    w = b.add_const("w", rng.integers(-127, 128, size=(1, 3, 3, 8)).astype(np.int8), scale=scales,
                    zero_point=np.zeros(8, np.int64), quantized_dimension=3)
    qb, bs = quantize_bias(rng.normal(0, 0.5, size=8) * (np.arange(8) > 0), 5e-5, scales)
    y = b.add_tensor("y", (1, 6, 6, 8), np.int8, scale=8.0 / 255, zero_point=0)
    b.add_operator("DEPTHWISE_CONV_2D", [x, w, b.add_const("b", qb, scale=bs, zero_point=np.zeros(8, np.int64))],
                   [y], {"padding": "SAME", "depth_multiplier": 1}, version=3)
    b.set_io([x], [y])
    return b.build()


def test_depthwise_chain_stays_and_agrees_with_litert(tmp_path) -> None:
    model = dwise_int8()
    graph = _import(model, tmp_path)
    assert not any("DepthwiseSupernode" in op for op in _ops(graph)), _ops(graph)
    assert any("instead of DepthwiseSupernode_8x8p32to8" in n for n in graph.meta["notes"])
    runner, rng, refs = hx.Runner(graph), np.random.default_rng(7), []
    for _ in range(4):
        x = rng.integers(-128, 128, size=(1, 6, 6, 8), dtype=np.int8)
        ref = run_litert(model, {"x": x})[0]
        assert np.abs(runner.run({"x": x})["y"].astype(np.int64) - ref).max() <= 1
        refs.append(ref.tobytes())
    assert len(set(refs)) == 4


def test_depthwise_fused_form_refuses_at_run_time(tmp_path, monkeypatch) -> None:
    """The same model with prepare.c's unconditional fusion: DepthwiseSupernode_8x8p32to8_d32 refuses."""
    monkeypatch.setattr(supernodes, "unfused_reason", lambda *a: None)
    graph = _import(dwise_int8(), tmp_path)
    with pytest.raises(OpError, match=r"\(DepthwiseSupernode_8x8p32to8_d32\): bias does not fit int32"):
        hx.Runner(graph).run({"x": np.zeros((1, 6, 6, 8), np.int8)})


def test_a_bias_past_the_product_range_widens_the_input() -> None:
    """Input on [0, 2.55e-12]: prod 1e-16, the bias 0.5 is 5e15 product steps, past even the chain's qint32
    (QuantizedBiasAdd_32p32to32 would saturate it to 2**31 steps, 2e-7). The conv reads its input through
    Requantize_8to8 onto 2**22 times the range (prod 4.2e-10: 1.2e9 steps fit); the fused node still would
    not fit (1.5 / 4.2e-10 / 0.5 = 7e9), so the chain stays. The outputs are the biases within a step (the
    data part, at most 2 * 2.55e-12 * 1.27, is far below it), for a dead input (all zero codes) too."""
    b = _chain_graph(0.5, in_hi=2.55e-12)
    run_pipeline(b.g, [supernodes.MakeSupernodes(), RemoveDeadNodes()])
    ops = _ops(b.g)
    assert _in_order(ops, ("Requantize_8to8", *CHAIN)), ops
    notes = b.g.meta["notes"]
    assert any("input read on a 4.1943e+06 times wider range" in n for n in notes), notes
    assert any(n.startswith("layer: kept as") and "cannot hold" not in n for n in notes), notes
    for x in (np.zeros((1, 3, 3, 2), np.uint8), np.random.default_rng(4).integers(0, 256, (1, 3, 3, 2)).astype(np.uint8)):
        got, step = real_outputs(run_outputs(b.g, [x]))
        assert np.abs(got - BIAS_REAL).max() <= step


def test_input_range_through_a_mean(tmp_path) -> None:
    """The SE block's first conv reads QuantizedMean_8, whose output range (inputs 4, 5) the decision reads:
    the TFLite tensor ``pool`` (scale 0.03, zero point -10) is ``[(-128 + 10) * 0.03, (127 + 10) * 0.03]``."""
    from hexnn_import.optimizer.bias_fit import input_range
    from hexnn_import.optimizer.editor import GraphEditor

    path = tmp_path / "se.tflite"
    path.write_bytes(se_int8())
    graph = hx.import_model(path)
    ed = GraphEditor(graph)
    (sn,) = [n for n in graph.nodes if n.op == "Supernode_8x8p32to8"]
    assert graph.node(sn.inputs[2].src_id).op == "QuantizedMean_8"
    lo, hi = input_range(ed, sn.inputs[2], sn.inputs[3])
    assert lo == pytest.approx(-118 * 0.03, rel=1e-6) and hi == pytest.approx(137 * 0.03, rel=1e-6)


# ---- run-time input ranges ----------------------------------------------------------------------------------
def small_k_float() -> bytes:
    """A float 1x1 conv whose output channel 0 has weights 1000 times smaller than the others (channel scale
    ~1/1000 once quantized), bias 1.0 everywhere; imported without calibration its input range is the
    data's (AutoQuantize, at least 1e-18 wide on the device)."""
    rng = np.random.default_rng(0)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 8), np.float32)
    y = b.add_tensor("y", (1, 4, 4, 8), np.float32)
    w = rng.normal(0, 0.5, (8, 1, 1, 8)) * np.array([1e-3] + [1.0] * 7)[:, None, None, None]
    b.add_operator("CONV_2D", [x, b.add_const("w", w.astype(np.float32)), b.add_const("b", np.ones(8, np.float32))],
                   [y], {"padding": "VALID"})
    b.set_io([x], [y])
    return b.build()


def test_run_time_range_checked_at_its_producers_floor(tmp_path, monkeypatch) -> None:
    """prepare.c's fused node refuses a blank input even when fresh (AutoQuantize's range 1e-18 wide, as
    op_quantize.c's find_scaling_for_hvx_quant keeps it: 1 / prod passes 2**31); the chain stays, and since
    even the chain would saturate its bias at that product step, the AutoQuantize becomes Quantize over
    ``[min(0, Min_f), max(Max_f, W)]`` (the note says so); the model runs on any input: the bias alone on a
    blank one, LiteRT within 8-bit error (SQNR >= 30 dB) on others."""
    model, blank = small_k_float(), np.zeros((1, 4, 4, 8), np.float32)
    with monkeypatch.context() as m:
        m.setattr(supernodes, "unfused_reason", lambda *a: None)
        with pytest.raises(OpError, match="Final too big"):
            hx.Runner(_import(model, tmp_path)).run({"x": blank})
    graph = _import(model, tmp_path)
    ops = _ops(graph)
    assert "QuantizedChannelScale_32xf" in ops and {"Min_f", "Max_f", "Quantize"} <= set(ops)
    assert "AutoQuantize" not in ops
    assert any(": kept as " in n and "where the chain holds its bias exactly" in n
               for n in graph.meta["notes"]), graph.meta["notes"]
    runner, rng = hx.Runner(graph), np.random.default_rng(9)
    np.testing.assert_allclose(runner.run({"x": blank})["y"], 1.0, atol=2 / 255)
    for _ in range(4):
        x = rng.uniform(-1, 1, (1, 4, 4, 8)).astype(np.float32)
        assert sqnr_db(run_litert(model, {"x": x})[0], runner.run({"x": x})["y"]) >= 30.0


def test_input_floor_of_producers() -> None:
    """AutoQuantize: 1e-18 (op_quantize.c find_scaling_for_hvx_quant), each run's own, and once floored the
    floor (a Quantize of the same id, raised by a second consumer); an auto-range conv supernode with a Relu
    (min 0, max auto): its default [0, 0.5], less two steps of the zero fix, kept from run to run; a
    shrink-range op: none."""
    from hexnn_import.optimizer.bias_fit_floor import floor_range
    from hexnn_import.optimizer.bias_fit_inputs import input_floor
    from hexnn_import.optimizer.editor import GraphEditor

    b = QBuilder()
    x = b.input((1, 3, 3, 2), dtype="float")
    aq = b.op("AutoQuantize", x, (1, 3, 3, 2))
    sn = b.supernode(q3(aq), np.full((1, 1, 2, 4), 130, np.uint8), 0.0, math.inf)
    acc = b.op("QuantizedConv2d_8x8to32", [Ref(sn.node_id, 0), b.c(np.full((1, 1, 4, 4), 130, np.uint8), np.uint8),
                                          Ref(sn.node_id, 1), Ref(sn.node_id, 2), b.c(-0.5), b.c(0.5),
                                          b.g.shape_ref((1, 1, 1, 1))], (1, 3, 3, 4), "qint32")
    shrink = b.op("QuantizeDownAndShrinkRange_32to8", q3(acc), (1, 3, 3, 4))
    ed = GraphEditor(b.g)
    assert input_floor(ed, Ref(aq.node_id, 1), Ref(aq.node_id, 2)) == (float(np.float32(1e-18)), False)
    width, persists = input_floor(ed, Ref(sn.node_id, 1), Ref(sn.node_id, 2))
    assert width == pytest.approx(0.5 * 253 / 255) and persists
    assert input_floor(ed, Ref(shrink.node_id, 1), Ref(shrink.node_id, 2)) is None
    q = floor_range(ed, aq, 2.0 ** -10)
    assert q.node_id == aq.node_id and q.op == "Quantize"
    assert input_floor(ed, Ref(q.node_id, 1), Ref(q.node_id, 2)) == (2.0 ** -10, False)
    floor_range(ed, q, 2.0 ** -8)
    assert input_floor(ed, Ref(q.node_id, 1), Ref(q.node_id, 2)) == (2.0 ** -8, False)


def test_a_relu_minimum_stays_at_zero() -> None:
    """A Relu tail on an auto range (output [0, +inf)): the minimum is specified, every retry keeps it at 0,
    so only ``v = b`` decides: b = 2**31 - 2**17 fits, and the fused node runs on the extreme inputs."""
    op = operands((0.0, 2.55), 0.0, 2 ** 31 - 2 ** 17, out_max=math.inf)
    assert supernode_fit(op) is None
    for code in (0, 255):
        _run_fused(op, code)


def plain_float() -> bytes:
    """A float 1x1 conv, 8 -> 8 channels, weights N(0, 0.5), bias 1.0: nothing small about it."""
    rng = np.random.default_rng(1)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 8), np.float32)
    y = b.add_tensor("y", (1, 4, 4, 8), np.float32)
    b.add_operator("CONV_2D", [x, b.add_const("w", rng.normal(0, 0.5, (8, 1, 1, 8)).astype(np.float32)),
                               b.add_const("b", np.ones(8, np.float32))], [y], {"padding": "VALID"})
    b.set_io([x], [y])
    return b.build()


def test_an_output_range_kept_from_a_wide_input_meets_a_blank_one(tmp_path, monkeypatch) -> None:
    """prepare.c's fused node refuses a blank input even when fresh (AutoQuantize's range 1e-18 wide on the
    device), runs a faint one (+-1e-3: prod about 1e-7, the bias fits), but the output range it keeps from an
    input of +-100 (minimum about -230) then needs ``230 / prod`` units on the faint one and refuses. The chain
    stays; the model runs in every order, within 8-bit error of LiteRT."""
    model, blank = plain_float(), np.zeros((1, 4, 4, 8), np.float32)
    rng = np.random.default_rng(3)
    wide = rng.uniform(-100, 100, (1, 4, 4, 8)).astype(np.float32)
    faint = rng.uniform(-1e-3, 1e-3, (1, 4, 4, 8)).astype(np.float32)
    with monkeypatch.context() as m:
        m.setattr(supernodes, "unfused_reason", lambda *a: None)
        with pytest.raises(OpError, match="Final too big"):
            hx.Runner(_import(model, tmp_path)).run({"x": blank})
        fused = hx.Runner(_import(model, tmp_path))
        fused.run({"x": faint})
        fused.run({"x": wide})
        with pytest.raises(OpError, match="Final too big"):
            fused.run({"x": faint})
    graph = _import(model, tmp_path)
    assert any("persists from earlier runs" in n for n in graph.meta["notes"]), graph.meta["notes"]
    runner = hx.Runner(graph)
    for x in (blank, wide, blank, faint):
        ref, ours = run_litert(model, {"x": x})[0], runner.run({"x": x})["y"]
        assert sqnr_db(ref, ours) >= 30.0
