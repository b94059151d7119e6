"""Older ONNX files (issue 33, item 7): the constructs of the model-zoo classics onnx ships as "light" models
(opset 9 Unsqueeze with an ``axes`` attribute on constants, AveragePool with explicit pads and
count_include_pad=0, weights made by ConstantOfShape), each in a small onnx.helper model against
onnxruntime; one light model whole (SqueezeNet 1.0, the fastest). The others are in
bench/onnx_light_models.py.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from hexnn_import import memory
from hexnn_import.errors import DeviceDefectWarning, UnsupportedOpsError
from hexnn_import.importers.onnx.pool_bands import axis_bands
from hexnn_import.testing.onnx_compare import (build_model, compare_layers, compare_onnx, quantize_ort, random_feeds,
                                               run_ort)

RNG = np.random.default_rng(33)


def _w(*shape: int, s: float = 0.3) -> np.ndarray:
    return RNG.normal(0, s, shape).astype(np.float32)


def _cal(model: bytes, n: int = 96) -> dict[str, np.ndarray]:
    return {"x": np.stack([f["x"] for f in random_feeds(model, n, np.random.default_rng(5))])}


def _filled(name: str, shape: list[int], value: float) -> list[onnx.NodeProto]:
    """``ConstantOfShape(shape) * 1`` as the light models write their weights (a constant chain to fold)."""
    return [helper.make_node("ConstantOfShape", [f"{name}_shape"], [name],
                             value=helper.make_tensor("v", TensorProto.FLOAT, [1], [value]))]


def densenet_like() -> bytes:
    """Opset 9, as light_densenet121 / light_inception_v2: a BatchNormalization-style scale made by
    ConstantOfShape -> Unsqueeze(axes attribute) on constants, a Mul / Add on activations, Squeeze(axes)."""
    nodes = [*_filled("s", [4], 0.75),
             helper.make_node("Unsqueeze", ["s"], ["s3"], axes=[1, 2]),
             helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Mul", ["c", "s3"], ["m"]),
             helper.make_node("Add", ["m", "b3"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("ReduceMean", ["r"], ["g"], axes=[2, 3], keepdims=1),
             helper.make_node("Squeeze", ["g"], ["y"], axes=[2, 3])]
    inits = {"s_shape": np.array([4], np.int64), "w": _w(4, 3, 3, 3), "b3": _w(4, 1, 1, s=0.1)}
    return build_model(nodes, {"x": (1, 3, 8, 8)}, {"y": (1, 4)}, inits, opset=9)


def test_opset9_unsqueeze_axes_attribute_folds_and_matches_onnxruntime() -> None:
    model = densenet_like()
    res = compare_onnx(model, random_feeds(model, 3, np.random.default_rng(1)), calibration=_cal(model))
    assert res["y"].sqnr >= 30.0, res


def gemm_with_constant_of_shape_weights(n_out: int, n_in: int) -> bytes:
    """As light_vgg19 / light_zfnet512: the fully-connected weights are ``ConstantOfShape([n_out, n_in])``."""
    nodes = [*_filled("fw", [n_out, n_in], 0.01),
             helper.make_node("Flatten", ["x"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)]
    inits = {"fw_shape": np.array([n_out, n_in], np.int64), "fb": _w(n_out, s=0.1)}
    return build_model(nodes, {"x": (1, n_in // 16, 4, 4)}, {"y": (1, n_out)}, inits, opset=9)


def test_constant_of_shape_weights_fold_up_to_the_memory_budget(tmp_path) -> None:
    """A 256 KiB weight folds under a 4 MiB budget (and matches onnxruntime); under a 128 KiB budget it
    stays in the graph and the Gemm is refused with its reason (not a fixed element limit)."""
    model = gemm_with_constant_of_shape_weights(64, 1024)
    res = compare_onnx(model, random_feeds(model, 2, np.random.default_rng(2)))
    assert res["y"].sqnr >= 30.0, res
    path = tmp_path / "m.onnx"
    path.write_bytes(model)
    import hexnn_import as hx

    try:
        memory.set_budget(128 << 10)
        with pytest.raises(UnsupportedOpsError, match="weights fw are not constant"):
            hx.import_model(path)
        memory.set_budget(4 << 20)
        assert hx.import_model(path).op_counts().get("QuantizedConv2d_8x8to32") == 1  # the Gemm, weights folded
    finally:
        memory.set_budget(None)


@pytest.mark.parametrize("length,kernel,stride,pad,outputs", [(7, 7, 1, 0, 2), (56, 3, 2, 1, 28), (5, 3, 1, 2, 5),
                                                              (4, 7, 1, 3, 4), (9, 2, 3, 1, 4)])
def test_bands_cover_exactly_the_in_bounds_taps(length, kernel, stride, pad, outputs) -> None:
    """Each output's band reads the in-bounds taps of its window, worked by brute force per output."""
    bands = axis_bands(length, kernel, stride, pad, outputs)
    assert bands is not None
    seen = []
    for b in bands:
        for j in range(b.count):
            first = b.start + j * (stride if b.count > 1 else 0)
            seen.append((first, first + b.kernel))
    want = [(max(0, o * stride - pad), min(length, o * stride - pad + kernel)) for o in range(outputs)]
    assert seen == want


def test_a_window_wholly_in_the_padding_is_refused(tmp_path) -> None:
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], pads=[0, 0, 3, 3])
    model = build_model([node], {"x": (1, 2, 4, 4)}, {"y": None}, {}, opset=11)
    path = tmp_path / "m.onnx"
    path.write_bytes(model)
    import hexnn_import as hx

    with pytest.raises(UnsupportedOpsError, match="wholly inside the padding"):
        hx.import_model(path)


POOLS = {"inception_v1_head": ([0, 0, 1, 1], 7, 1, (1, 4, 7, 7)),
         "stride2_pad_top_left": ([1, 1, 0, 0], 3, 2, (1, 4, 9, 9)),
         "asymmetric": ([2, 1, 0, 2], 3, 1, (1, 3, 6, 5)), "pad_past_half": ([2, 2, 2, 2], 3, 1, (1, 3, 5, 5))}


def _avgpool(pads: list[int], k: int, s: int, shape: tuple[int, ...], conv: bool) -> bytes:
    pool = helper.make_node("AveragePool", ["c" if conv else "x"], ["y"], kernel_shape=[k, k], strides=[s, s],
                            pads=pads, count_include_pad=0)
    nodes = ([helper.make_node("Conv", ["x", "w", "b"], ["c"])] if conv else []) + [pool]
    inits = {"w": _w(shape[1], shape[1], 1, 1), "b": _w(shape[1], s=0.1)} if conv else {}
    return build_model(nodes, {"x": shape}, {"y": None}, inits, opset=11)


def _run(model: bytes, feed: dict[str, np.ndarray], tmp_path) -> np.ndarray:
    import hexnn_import as hx

    path = tmp_path / "m.onnx"
    path.write_bytes(model)
    return hx.Runner(hx.prepare(hx.import_model(path))).run(feed)["y"]


@pytest.mark.parametrize("case", sorted(POOLS))
def test_average_pool_excluding_pads_float(case, tmp_path) -> None:
    """Neither SAME nor SAME_CAFFE: bands of VALID pools. Run-time ranges: QuantizedAvgPool_8 keeps the
    input's range, so each output is the exact in-bounds average of inputs rounded to that range's step,
    rounded once more: within one step of onnxruntime's float average everywhere. Calibrated: SQNR."""
    model = _avgpool(*POOLS[case], conv=False)
    feeds = random_feeds(model, 3, np.random.default_rng(1))
    for feed in feeds:
        x = feed["x"]
        step = (max(float(x.max()), 0.0) - min(float(x.min()), 0.0)) / 255.0
        ours, ref = _run(model, feed, tmp_path), run_ort(model, feed)["y"]
        assert ours.shape == ref.shape and float(np.abs(ours - ref).max()) <= step * 1.01
    assert compare_onnx(model, feeds, calibration=_cal(model))["y"].sqnr >= 30.0  # 96 samples: fewer clip


@pytest.mark.parametrize("case", sorted(POOLS))
def test_no_band_pool_reduces_to_one_output(case, tmp_path) -> None:
    """A corner band (one output) reads one more window and keeps its output by a slice: no pool piece has a 1x1
    output, which the device would compute through op_avgpool_d32.c's reduce-to-1x1 path (a range of its own)."""
    import hexnn_import as hx

    path = tmp_path / "m.onnx"
    path.write_bytes(_avgpool(*POOLS[case], conv=False))
    pools = [n for n in hx.import_model(path).nodes if n.op == "QuantizedAvgPool_8"]
    assert len(pools) >= 2 and all(n.output_defs[0].shape[1:3] != (1, 1) for n in pools)


@pytest.mark.parametrize("case", sorted(POOLS))
def test_average_pool_excluding_pads_qdq_within_one_code(case) -> None:
    """QDQ (onnxruntime's quantizer; a Conv first so that the pool is quantized): each band pool rounds
    once onto the pool's output scale, as onnxruntime's QDQ AveragePool does."""
    model = _avgpool(*POOLS[case], conv=True)
    q = quantize_ort(model, random_feeds(model, 12, np.random.default_rng(2)))
    assert "AveragePool" in {n.op_type for n in onnx.load_from_string(q).graph.node}

    def banded(g) -> None:  # type: ignore[no-untyped-def]
        assert g.op_counts().get("QuantizedConcat_8", 0) >= 1

    res = compare_onnx(q, random_feeds(model, 3, np.random.default_rng(3)), check_graph=banded)["y"]
    assert res.worst <= 1 and res.within1 == 1.0, res


LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def test_light_squeezenet_converts_runs_and_matches_onnxruntime() -> None:
    """The whole light SqueezeNet 1.0 (opset 9, ConstantOfShape weights) with run-time ranges, on the input
    onnx's backend runner makes for it (``arange(n) / n``, random=False; onnxruntime then gives the shipped
    ``_output_0.pb``). Its weights are constants, so its logits are all equal and huge: the softmax's run-time
    input range, [0, 1.7e10], is past what hexagon_nn's device QuantizedSoftmax_8 takes (op_softmax_d32.c
    ``set_scaling_parms``: ``range * beta / (255 ln 2)`` must be below 256, else "beta too large"). The model
    converted (the range is only known at run time), so the engine still runs it: it gives the portable C's
    answer there and warns, naming the node, that the DSP refuses that run. The softmax is 1/1000 everywhere:
    below half a step of the [0, 1] output, so it reads 0 here, within one output step. The logits themselves
    (GlobalAveragePool r65) are compared by SQNR."""
    path = os.path.join(LIGHT, "light_squeezenet.onnx")
    model = open(path, "rb").read()
    shape = (1, 3, 224, 224)
    x = (np.arange(np.prod(shape)).reshape(shape) / np.prod(shape)).astype(np.float32)
    shipped = onnx.numpy_helper.to_array(onnx.load_tensor(path.replace(".onnx", "_output_0.pb")))
    ref = run_ort(model, {"data_0": x})["softmaxout_1"]
    assert np.allclose(ref, shipped, atol=1e-6)
    import hexnn_import as hx

    graph = hx.import_model(path)
    with pytest.warns(DeviceDefectWarning, match=r"QuantizedSoftmax_8.*beta too large.*portable C"):
        ours = hx.Runner(hx.prepare(graph)).run({"data_0": x})["softmaxout_1"]
    assert float(np.abs(ours - ref).max()) <= 1.0 / 255
    assert compare_layers(model, {"data_0": x}, graph)["r65"] >= 40.0


@pytest.mark.parametrize("opset", [9, 13])
def test_unsqueeze_then_squeeze_of_the_same_axes_is_the_identity(opset) -> None:
    """``x.unsqueeze(1).squeeze(1)`` on a rank-4 tensor (rank 5 in between), as torch exports it at opset 9
    (attribute axes) and 13 (axes inputs): the pair goes, the model matches onnxruntime."""
    if opset < 13:
        pair = [helper.make_node("Unsqueeze", ["c"], ["u"], axes=[1]),
                helper.make_node("Squeeze", ["u"], ["s"], axes=[1])]
    else:
        pair = [helper.make_node("Unsqueeze", ["c", "ax"], ["u"]), helper.make_node("Squeeze", ["u", "ax"], ["s"])]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), *pair,
             helper.make_node("Relu", ["s"], ["y"])]
    model = build_model(nodes, {"x": (1, 3, 6, 6)}, {"y": (1, 4, 6, 6)}, {"w": _w(4, 3, 3, 3),
                                                                         "ax": np.array([1], np.int64)}, opset=opset)
    res = compare_onnx(model, random_feeds(model, 3, np.random.default_rng(1)), calibration=_cal(model))
    assert res["y"].sqnr >= 30.0, res
