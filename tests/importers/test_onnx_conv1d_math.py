"""1-D nets and elementwise math (issue 33, item 9) against onnxruntime: Conv / ConvTranspose / MaxPool /
AveragePool / BatchNormalization / GlobalAveragePool on ``[N, C, L]`` (done as 2-D with H = 1), Exp, Log,
Pow (x^2, x^0.5), Clip with computed bounds; float models (run-time and calibrated ranges) and QDQ models;
and the torch log-mel Conv1d family model on its digits data.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import onnx
from onnx import helper, numpy_helper

import hexnn_import as hx
from hexnn_import.importers.nodes.float_math import LOG_H, log_reference
from hexnn_import.testing.onnx_compare import build_model, compare_onnx, quantize_ort, random_feeds, run_ort

RNG = np.random.default_rng(9)
FAMILIES = Path(__file__).resolve().parents[2] / "models" / "real" / "families"


def _w(*shape: int, s: float = 0.3) -> np.ndarray:
    return RNG.normal(0, s, shape).astype(np.float32)


def _cal(model: bytes, n: int = 64) -> dict[str, np.ndarray]:
    return {"x": np.stack([f["x"] for f in random_feeds(model, n, np.random.default_rng(5))])}


def net_1d() -> bytes:
    """Conv1d+BN+Relu, MaxPool1d, dilated grouped Conv1d, AveragePool1d (pads not counted), ConvTranspose1d,
    a residual Add, GlobalAveragePool."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1]),
             helper.make_node("BatchNormalization", ["c1", "g", "b", "m", "v"], ["n1"]),
             helper.make_node("Relu", ["n1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2], strides=[2]),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[4, 4], dilations=[2], group=2),
             helper.make_node("AveragePool", ["c2"], ["a2"], kernel_shape=[3], pads=[2, 0], count_include_pad=0),
             helper.make_node("ConvTranspose", ["a2", "wt"], ["t"], strides=[2], pads=[1, 2], output_padding=[1]),
             helper.make_node("Add", ["t", "r1"], ["s"]),
             helper.make_node("GlobalAveragePool", ["s"], ["y"])]
    inits = {"w1": _w(8, 4, 3), "b1": _w(8, s=0.1), "g": RNG.uniform(0.5, 1.5, 8).astype(np.float32),
             "b": _w(8, s=0.1), "m": _w(8, s=0.1), "v": RNG.uniform(0.5, 1.5, 8).astype(np.float32),
             "w2": _w(8, 4, 5), "wt": _w(8, 8, 4, s=0.2)}
    return build_model(nodes, {"x": (1, 4, 32)}, {"y": (1, 8, 1)}, inits)


def _on_input_grid(model: bytes, x: np.ndarray) -> np.ndarray:
    """``x`` moved onto the grid of the model's first QuantizeLinear (its scale and zero point)."""
    m = onnx.load_from_string(model)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    ql = next(n for n in m.graph.node if n.op_type == "QuantizeLinear")
    s, z = float(inits[ql.input[1]]), float(inits[ql.input[2]])
    codes = np.clip(np.round(x / s) + z, 0, 255) if inits[ql.input[2]].dtype == np.uint8 else \
        np.clip(np.round(x / s) + z, -128, 127)
    return ((codes - z) * s).astype(np.float32)


NET = net_1d()
FEEDS = random_feeds(NET, 4, np.random.default_rng(1))


def _no_bn_one_transpose(g) -> None:  # type: ignore[no-untyped-def]
    counts = g.op_counts()
    assert "BatchNormalization" not in counts and counts.get("Transpose_8", 0) == 1  # the NCL input only


def test_1d_net_run_time_ranges() -> None:
    assert compare_onnx(NET, FEEDS, check_graph=_no_bn_one_transpose)["y"].sqnr >= 30.0


def test_1d_net_calibrated() -> None:
    assert compare_onnx(NET, FEEDS, calibration=_cal(NET))["y"].sqnr >= 30.0


#: The net's pools compute as the device does (issue 36): QuantizedMean_8's fixed-point multiplier rounds twice
#: (op_reducing_mean.c) and a QuantizedAvgPool_8_d32 whose output is 1x1 re-ranges it to its sums (op_avgpool_d32.c):
#: a logit can land one code further from onnxruntime's.
DEVICE_POOL_WORST = 2


def test_1d_net_qdq_within_one_code() -> None:
    q = quantize_ort(NET, random_feeds(NET, 16, np.random.default_rng(2)))
    res = compare_onnx(q, FEEDS, check_graph=_no_bn_one_transpose)["y"]
    assert res.worst <= DEVICE_POOL_WORST, res


@pytest.mark.parametrize("per_channel", [False, True])
def test_1d_net_qoperator_within_one_code(per_channel) -> None:
    """QOperator (QLinearConv, com.microsoft QLinearAveragePool / QLinearGlobalAveragePool on [N, C, L]). The
    inputs lie on the input QuantizeLinear's grid: hexagon_nn's device Quantize (quantize_execute_opt, which the
    engine follows) rounds a value within its fixed point's precision of a half code down where QuantizeLinear
    rounds to even, and one input code apart can become two output codes after the convs; that rounding has its
    own rows (tests/ops/test_hvx_golden.py). Here the layers are what is checked."""
    q = quantize_ort(NET, random_feeds(NET, 16, np.random.default_rng(2)), fmt="QOperator", per_channel=per_channel)
    res = compare_onnx(q, [{"x": _on_input_grid(q, f["x"])} for f in FEEDS])["y"]
    assert res.worst <= DEVICE_POOL_WORST, res


def _unary(op: str, **attrs) -> bytes:  # type: ignore[no-untyped-def]
    """Conv -> op, with a positive input for Log and Pow(0.5) (Clip to a floor)."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"])]
    src = "c"
    if op in ("Log", "Sqrt_pow"):
        nodes.append(helper.make_node("Clip", ["c", "floor"], ["cl"]))
        src = "cl"
    if op == "Sqrt_pow":
        nodes.append(helper.make_node("Pow", [src, "half"], ["y"]))
    elif op == "Square_pow":
        nodes.append(helper.make_node("Pow", [src, "two"], ["y"]))
    else:
        nodes.append(helper.make_node(op, [src], ["y"], **attrs))
    inits = {"w": _w(4, 3, 1, 1), "b": _w(4, s=0.1), "floor": np.array(0.2, np.float32),
             "half": np.array(0.5, np.float32), "two": np.array(2.0, np.float32)}
    return build_model(nodes, {"x": (1, 3, 6, 6)}, {"y": None}, inits)


MATH = ("Exp", "Log", "Sqrt_pow", "Square_pow")


@pytest.mark.parametrize("op", MATH)
def test_math_float_run_time_and_calibrated(op) -> None:
    model = _unary(op)
    feeds = random_feeds(model, 3, np.random.default_rng(3))
    assert compare_onnx(model, feeds)["y"].sqnr >= 30.0
    assert compare_onnx(model, feeds, calibration=_cal(model))["y"].sqnr >= 30.0


def _qdq(x: str, y: str, scale: str, zp: str) -> list:  # type: ignore[type-arg]
    return [helper.make_node("QuantizeLinear", [x, scale, zp], [y + "_q"]),
            helper.make_node("DequantizeLinear", [y + "_q", scale, zp], [y])]


QDQ_MATH = {"Exp": ("Exp", None, 0.02, 0.0, 0.05, 0.0), "Log": ("Log", None, 0.02, 0.0, 0.03, -4.0),
            "Sqrt_pow": ("Pow", 0.5, 0.02, 0.0, 0.008, 0.0), "Square_pow": ("Pow", 2.0, 0.02, 0.0, 0.05, 0.0)}


def qdq_math(case: str) -> bytes:
    """x -> QuantizeLinear -> DequantizeLinear -> op -> QuantizeLinear -> DequantizeLinear (uint8), built by
    hand so that the op's input codes are exactly onnxruntime's (no layer before it to differ by a code)."""
    op, exponent, s_in, lo_in, s_out, lo_out = QDQ_MATH[case]
    inits = {"si": np.array(s_in, np.float32), "zi": np.array(round(-lo_in / s_in), np.uint8),
             "so": np.array(s_out, np.float32), "zo": np.array(round(-lo_out / s_out), np.uint8),
             "e": np.array(exponent or 1.0, np.float32)}
    nodes = _qdq("x", "xd", "si", "zi") + [helper.make_node(op, ["xd", "e"] if op == "Pow" else ["xd"], ["f"])]
    return build_model(nodes + _qdq("f", "y", "so", "zo"), {"x": (1, 4, 6, 6)}, {"y": (1, 4, 6, 6)}, inits)


@pytest.mark.parametrize("case", sorted(QDQ_MATH))
def test_math_qdq_within_one_code(case) -> None:
    """A QDQ Exp / Log / Pow is one table onto the output scale: what onnxruntime's DequantizeLinear ->
    op -> QuantizeLinear computes, up to a tie (inputs spread over the whole code range)."""
    model = qdq_math(case)
    feeds = [{"x": (f["x"] * 1.5 + 2.0).astype(np.float32)} for f in random_feeds(model, 3, np.random.default_rng(3))]

    def table(g) -> None:  # type: ignore[no-untyped-def]
        assert g.op_counts().get("Gather_8", 0) == 1

    res = compare_onnx(model, feeds, check_graph=table)["y"]
    assert res.worst <= 1 and res.within1 >= 0.99, res


def test_log_float_formula_error_bound() -> None:
    """The run-time Log's formula (sinh(h ln x) / h, one series step of asinh) against float64 log: within
    the next series term, ``3/40 z**5 / h`` (z = sinh(h ln x)), on 1e-12 .. 1e12 (and not much better, or the
    bound would be loose)."""
    v = np.logspace(-12, 12, 2001)
    got, want = log_reference(v), np.log(v)
    bound = 3 / 40 * np.sinh(LOG_H * np.abs(want)) ** 5 / LOG_H  # the term in z = sinh(h ln x)
    assert np.all(np.abs(got - want) <= bound + 1e-12)
    assert float(np.abs(got - want).max()) >= 0.5 * float(bound.max())


def clip_computed() -> bytes:
    """Clip(p, lo, hi) with lo = 0.2 * ReduceMax(p), hi = 0.8 * ReduceMax(p) (scalars computed by the
    graph), then Log: the log-mel floor."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Mul", ["c", "c"], ["p"]),
             helper.make_node("ReduceMax", ["p"], ["mx1"], axes=[1, 2, 3], keepdims=0),  # per sample
             helper.make_node("Reshape", ["mx1", "scalar"], ["mx"]),
             helper.make_node("Mul", ["mx", "k_lo"], ["lo"]), helper.make_node("Mul", ["mx", "k_hi"], ["hi"]),
             helper.make_node("Clip", ["p", "lo", "hi"], ["cl"]), helper.make_node("Log", ["cl"], ["y"])]
    inits = {"w": _w(4, 3, 1, 1), "k_lo": np.array(0.2, np.float32), "k_hi": np.array(0.8, np.float32),
             "scalar": np.zeros(0, np.int64)}
    return build_model(nodes, {"x": (1, 3, 6, 6)}, {"y": None}, inits)


def test_clip_with_computed_bounds_float() -> None:
    model = clip_computed()
    feeds = random_feeds(model, 3, np.random.default_rng(6))

    def minmax(g) -> None:  # type: ignore[no-untyped-def]
        counts = g.op_counts()
        assert counts["QuantizedMaximum"] == 1 and counts["QuantizedMinimum"] == 1

    assert compare_onnx(model, feeds, check_graph=minmax)["y"].sqnr >= 30.0
    assert compare_onnx(model, feeds, calibration=_cal(model))["y"].sqnr >= 25.0


def test_clip_with_computed_bounds_qdq_within_one_code() -> None:
    """QDQ Clip whose bounds are tensors (graph inputs here, each through its own QuantizeLinear /
    DequantizeLinear): both steps write onto the Clip's output scale (rounding commutes with max / min),
    one rounding as onnxruntime's. (No bound is near a tie: hexagon_nn's device Quantize rounds a half code,
    and values within its fixed point's precision above it, down; QuantizeLinear rounds to even. 0.31 / 0.02
    was such a value, so its bound is 0.305.)"""
    inits = {"s": np.array(0.02, np.float32), "z": np.array(128, np.uint8), "so": np.array(0.01, np.float32),
             "zo": np.array(100, np.uint8)}
    nodes = _qdq("x", "xd", "s", "z") + _qdq("lo", "lod", "s", "z") + _qdq("hi", "hid", "s", "z") + \
        [helper.make_node("Clip", ["xd", "lod", "hid"], ["c"])] + _qdq("c", "y", "so", "zo")
    model = build_model(nodes, {"x": (1, 4, 6, 6), "lo": (), "hi": ()}, {"y": (1, 4, 6, 6)}, inits)
    rng = np.random.default_rng(8)
    feeds = [{"x": rng.normal(0, 1, (1, 4, 6, 6)).astype(np.float32), "lo": np.array(lo, np.float32),
              "hi": np.array(hi, np.float32)} for lo, hi in ((-0.5, 0.7), (-1.2, 0.055), (0.305, 1.6))]

    def minmax(g) -> None:  # type: ignore[no-untyped-def]
        counts = g.op_counts()
        assert counts["QuantizedMaximum"] == 1 and counts["QuantizedMinimum"] == 1

    res = compare_onnx(model, feeds, check_graph=minmax)["y"]
    assert res.worst <= 1 and res.within1 >= 0.99, res


LOGMEL = ("torch_conv1d_logmel_digits_float.onnx", "torch_conv1d_logmel_digits_qdq.onnx")


@pytest.mark.parametrize("name", LOGMEL)
def test_torch_logmel_conv1d_family_model(name) -> None:
    """The converter-made log-mel front end (torch Conv1d, Pow 2, Clip with a computed min, Log; float and
    QDQ) on 60 of its held-out digits: at most 3 top-1 disagreements with onnxruntime and the same accuracy
    within two samples (all 450: 84.67% vs onnxruntime's 84.22% float, 83.33% vs 83.11% QDQ; top-1 agreement
    97.3% float, 98.9% QDQ)."""
    entry = {e["file"]: e for e in json.loads((FAMILIES / "manifest_torch.json").read_text())}[name]
    data = np.load(FAMILIES / entry["data"])
    x, labels = data["input"][:60], data["labels"][:60]
    runner = hx.Runner(hx.prepare(hx.import_model(FAMILIES / name)))
    model = (FAMILIES / name).read_bytes()
    ours = np.stack([runner.run({"input": s[None]})["logits"][0] for s in x])
    ref = np.stack([run_ort(model, {"input": s[None]})["logits"][0] for s in x])
    agree = float(np.mean(ours.argmax(1) == ref.argmax(1)))
    acc_ours, acc_ref = float(np.mean(ours.argmax(1) == labels)), float(np.mean(ref.argmax(1) == labels))
    assert agree >= 0.95 and abs(acc_ours - acc_ref) <= 0.034, (agree, acc_ours, acc_ref)


def test_1d_qdq_layers_lower_to_xs3_and_agree_with_onnxruntime() -> None:
    """The log-mel QDQ model's 1-D layers (imported as [N, C, 1, L], each still read through a
    DequantizeLinear) lower to XS3 kernels; each lowered layer, run on onnxruntime's own input codes for it
    (the [N, C, L] tensor given the H axis), within one code of onnxruntime's output."""
    from hexnn_import.xs3.layer_agreement import layer_agreement, random_inputs
    from hexnn_import.xs3.lower import lower_model
    from hexnn_import.api import import_model
    from hexnn_import.model_source import ModelSource

    path = FAMILIES / "torch_conv1d_logmel_digits_qdq.onnx"
    plan = lower_model(import_model(path))
    assert {r.layer.opname for r in plan.lowered} >= {"CONV_2D", "MAX_POOL_2D"}
    agree = layer_agreement(plan, ModelSource.open(path), random_inputs(plan, 2, seed=1))
    assert agree and max(a.max_abs_diff for a in agree.values()) <= 1, agree
