"""A whole-image AVERAGE_POOL_2D (and ONNX AveragePool) over a depth that is not a multiple of 32 (importers/nodes/whole_pool.py).

QuantizedAvgPool_8_d32's reduce-to-1x1 path reads its d32 depth-padding lanes into the output range
(op_avgpool_d32.c), so the importer pools copies of the channels up to a multiple of 32 and keeps the first
ones. The prepared graph must pool no padding lane, and the result must still be TFLite's average (LiteRT on
the same model and input: within one code, as the other pools of tests/importers/test_tflite_slice.py).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import hexnn_import as hx
from hexnn_import.importers.nodes.whole_pool import needs_wide_depth, wide_depth
from hexnn_import.serialize import atomic_write_bytes
from hexnn_import.testing import TFLiteBuilder, run_litert
from hexnn_import.testing.onnx_compare import run_ort


def test_wide_depth_is_a_multiple_of_32_made_of_copies() -> None:
    # lcm(d, 32) for up to 4 whole copies, else d rounded up to 32 (copies plus a slice of the first channels)
    assert [wide_depth(d) for d in (16, 24, 8, 40, 3, 33, 100)] == [32, 96, 32, 160, 32, 64, 128]
    assert needs_wide_depth((1, 1, 1, 16)) and not needs_wide_depth((1, 1, 1, 64))
    assert not needs_wide_depth((1, 2, 1, 16))


def _model(depth: int, hw: int) -> bytes:
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, hw, hw, depth), np.int8, scale=0.05, zero_point=-10)
    y = b.add_tensor("y", (1, 1, 1, depth), np.int8, scale=0.05, zero_point=-10)
    b.add_operator("AVERAGE_POOL_2D", [x], [y], {"padding": "VALID", "stride_w": hw, "stride_h": hw,
                                                 "filter_width": hw, "filter_height": hw}, version=2)
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("depth", [16, 24, 3, 32])
def test_whole_image_pool_has_no_padding_lanes_and_matches_litert(depth: int, tmp_path) -> None:
    model = _model(depth, 6)
    path = tmp_path / "m.tflite"
    atomic_write_bytes(path, model)
    g = hx.prepare(hx.import_model(path))
    pools = [n for n in g.nodes if n.op.startswith("QuantizedAvgPool_8")]
    assert len(pools) == 1 and pools[0].op == "QuantizedAvgPool_8_d32"
    assert pools[0].output_defs[0].shape[3] == (depth if depth % 32 == 0 else wide_depth(depth))
    noted = any("whole-image average pool" in n for n in g.meta.get("notes", []))  # type: ignore[union-attr]
    assert noted == (depth % 32 != 0)
    runner = hx.Runner(g)
    rng = np.random.default_rng(depth)
    for _ in range(3):
        x = rng.integers(-128, 128, size=(1, 6, 6, depth), dtype=np.int8)
        x[..., depth // 2:] //= 4  # channels of unlike means: the range is not one channel's
        ours = runner.run({g.inputs[0].name: x})[g.outputs[0].name]
        ref = run_litert(model, [x])[0]
        assert ours.shape == ref.shape
        assert np.abs(ours.astype(np.int32) - ref.astype(np.int32)).max() <= 1


def test_onnx_whole_image_average_pool_has_no_padding_lanes(tmp_path) -> None:
    """An ONNX AveragePool whose window is the whole image (float, run-time ranges) takes the same form; its
    values against onnxruntime on the same input within two steps of the input's range."""
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[5, 5])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 1, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    path = tmp_path / "m.onnx"
    atomic_write_bytes(path, model)
    x = np.random.default_rng(3).standard_normal((8, 1, 16, 5, 5)).astype(np.float32)
    g = hx.prepare(hx.import_model(path))  # run-time ranges: a pool (fixed ones give a DepthwiseSupernode)
    pool = next(n for n in g.nodes if n.op.startswith("QuantizedAvgPool_8"))
    assert pool.op == "QuantizedAvgPool_8_d32" and pool.output_defs[0].shape[3] == 32
    runner = hx.Runner(g)
    for feed in x:
        ours = runner.run({"x": feed})["y"]
        ref = run_ort(model, {"x": feed})["y"]
        assert ours.shape == ref.shape
        assert np.abs(ours - ref).max() <= 2 * (feed.max() - feed.min()) / 255
