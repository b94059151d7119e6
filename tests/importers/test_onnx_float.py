"""Float ONNX models against onnxruntime's float output: calibrated (``--calibration``) and with
run-time ranges (issue [ONNX import], "Done when": a float conv net with BatchNorm, pooling, a
residual Add and Gemm reaches SQNR >= 30 dB after calibration), and op cases (SQNR bars in dB).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from hexnn_import.testing.onnx_compare import build_model, compare_onnx, random_feeds

RNG = np.random.default_rng(7)


def _w(*shape: int, s: float = 0.3) -> np.ndarray:
    return RNG.normal(0, s, shape).astype(np.float32)


def bn_params(prefix: str, c: int) -> dict[str, np.ndarray]:
    return {f"{prefix}_g": RNG.uniform(0.5, 1.5, c).astype(np.float32), f"{prefix}_b": _w(c, s=0.1),
            f"{prefix}_m": _w(c, s=0.1), f"{prefix}_v": RNG.uniform(0.5, 1.5, c).astype(np.float32)}


def bn(x: str, y: str, prefix: str) -> object:
    return helper.make_node("BatchNormalization", [x, f"{prefix}_g", f"{prefix}_b", f"{prefix}_m", f"{prefix}_v"], [y])


def resnet_like() -> bytes:
    """Conv-BN-Relu stem, max pool, a residual block (two conv-BN, Add, Relu), average pool, Gemm."""
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1], strides=[2, 2]), bn("c0", "n0", "bn0"),
             helper.make_node("Relu", ["n0"], ["r0"]),
             helper.make_node("MaxPool", ["r0"], ["p0"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p0", "w1"], ["c1"], pads=[1, 1, 1, 1]), bn("c1", "n1", "bn1"),
             helper.make_node("Relu", ["n1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]), bn("c2", "n2", "bn2"),
             helper.make_node("Add", ["n2", "p0"], ["s"]), helper.make_node("Relu", ["s"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["g"]), helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    inits = {"w0": _w(16, 3, 3, 3), "w1": _w(16, 16, 3, 3, s=0.1), "w2": _w(16, 16, 3, 3, s=0.1),
             "wf": _w(10, 16), "bf": _w(10, s=0.1), **bn_params("bn0", 16), **bn_params("bn1", 16),
             **bn_params("bn2", 16)}
    return build_model(nodes, {"x": (1, 3, 32, 32)}, {"y": (1, 10)}, inits)


RESNET = resnet_like()
CAL = np.stack([f["x"] for f in random_feeds(RESNET, 24, np.random.default_rng(3))])
FEEDS = random_feeds(RESNET, 6, np.random.default_rng(4))


def test_float_conv_net_calibrated_reaches_30db() -> None:
    def check(g) -> None:  # type: ignore[no-untyped-def]
        counts = g.op_counts()
        assert "BatchNormalization" not in counts and counts["Supernode_8x8p32to8"] == 4  # BN folded, Gemm too
        assert counts.get("Transpose_8", 0) == 1  # the NCHW input only

    res = compare_onnx(RESNET, FEEDS, calibration={"x": CAL}, check_graph=check)
    assert res["y"].sqnr >= 30.0, res


def test_float_conv_net_with_run_time_ranges() -> None:
    res = compare_onnx(RESNET, FEEDS)
    assert res["y"].sqnr >= 25.0, res


def _single(node, inputs, inits=None, out=None, opset=13):  # type: ignore[no-untyped-def]
    return build_model([node], inputs, {node.output[0]: out}, inits or {}, opset=opset)


X4 = {"x": (1, 4, 8, 8)}
CASES = {
    "conv_group2_dilated": _single(helper.make_node("Conv", ["x", "w"], ["y"], group=2, dilations=[2, 2],
                                                    pads=[2, 2, 2, 2]), X4, {"w": _w(6, 2, 3, 3)}),
    "conv_asymmetric_pads": _single(helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[0, 1, 2, 1],
                                                     strides=[2, 1]), X4, {"w": _w(5, 4, 3, 3), "b": _w(5)}),
    "conv_auto_pad_same_lower": _single(helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER",
                                                         strides=[2, 2]), X4, {"w": _w(3, 4, 2, 2)}),
    "conv_transpose": _single(helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2],
                                               pads=[1, 1, 1, 1], output_padding=[1, 1]), X4,
                              {"w": _w(4, 3, 3, 3), "b": _w(3)}),
    "avgpool_count_pad_ceil": _single(helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                                       strides=[2, 2], ceil_mode=1), X4),
    "avgpool_include_pad": _single(helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                                    pads=[1, 1, 1, 1], count_include_pad=1), X4),
    "lrn": _single(helper.make_node("LRN", ["x"], ["y"], size=3, alpha=0.5, beta=0.75, bias=1.0), X4),
    "prelu": _single(helper.make_node("PRelu", ["x", "s"], ["y"]), X4,
                     {"s": np.abs(_w(4, 1, 1))}),
    "hard_swish": _single(helper.make_node("HardSwish", ["x"], ["y"], ), X4, opset=14),
    "softmax_axis1": _single(helper.make_node("Softmax", ["x"], ["y"], axis=1), X4),
    "depth_to_space_crd": _single(helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD"), X4),
    "resize_linear_half_pixel": _single(helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear"), X4,
                                        {"s": np.array([1, 1, 2, 2], np.float32)}),
    "reduce_mean_keepdims0": _single(helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0), X4),
    "pad_reflect": _single(helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect"), X4,
                           {"p": np.array([0, 0, 1, 2, 0, 0, 2, 1])}),
    "gather_channels": _single(helper.make_node("Gather", ["x", "i"], ["y"], axis=1), X4,
                               {"i": np.array([3, 0, 2])}),
    "split_unequal": build_model([helper.make_node("Split", ["x", "sp"], ["a", "b"], axis=1),
                                  helper.make_node("Mul", ["a", "a"], ["y1"]),
                                  helper.make_node("Sub", ["b", "a"], ["y2"])], X4,
                                 {"y1": None, "y2": None}, {"sp": np.array([1, 3])}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_float_op_cases_calibrated(case) -> None:
    model = CASES[case]
    cal = {k: np.stack([f[k] for f in random_feeds(model, 8, np.random.default_rng(5))]) for k in X4}
    res = compare_onnx(model, random_feeds(model, 2, np.random.default_rng(6)), calibration=cal)
    for a in res.values():
        assert a.sqnr >= 28.0, (case, a)


def test_opset7_model_with_attribute_forms() -> None:
    """Opset 7: Upsample (scales attribute), Clip / Pad / Slice / Squeeze by attributes, old Softmax, Sum."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "bn0_g", "bn0_b", "bn0_m", "bn0_v"], ["n"]),
             helper.make_node("Clip", ["n"], ["r"], min=0.0, max=6.0),
             helper.make_node("Upsample", ["r"], ["u"], scales=[1.0, 1.0, 2.0, 2.0], mode="nearest"),
             helper.make_node("Pad", ["u"], ["p"], pads=[0, 0, 1, 0, 0, 0, 0, 1], value=0.5),
             helper.make_node("Slice", ["p"], ["s"], starts=[1, 1], ends=[9, 9], axes=[2, 3]),
             helper.make_node("Sum", ["s", "u", "u"], ["t"]),
             helper.make_node("ReduceMean", ["t"], ["m"], axes=[2, 3], keepdims=1),
             helper.make_node("Squeeze", ["m"], ["q"], axes=[2, 3]),
             helper.make_node("Softmax", ["q"], ["y"])]
    inits = {"w": _w(4, 3, 3, 3), **bn_params("bn0", 4)}
    model = build_model(nodes, {"x": (1, 3, 4, 4)}, {"y": (1, 4)}, inits, opset=7)
    cal = np.stack([f["x"] for f in random_feeds(model, 8, np.random.default_rng(8))])
    res = compare_onnx(model, random_feeds(model, 3, np.random.default_rng(9)), calibration={"x": cal})
    assert res["y"].sqnr >= 30.0, res
