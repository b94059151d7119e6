"""Per-layer matching: dequantization through the import mapping, layouts, and a perturbed layer found first."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.compare.comparator import run_comparison
from hexnn_import.compare.matching import align, dequantize_tensor, engine_tensors, to_source_layout
from hexnn_import.compare.runners import HexagonRunner, LiteRTRunner
from hexnn_import.datasets.samples import load_dataset
from hexnn_import.graph import Graph, Ref

MODELS = Path(__file__).resolve().parents[2] / "models"


def _graph_with(q: np.ndarray, mn: float, mx: float, layout: tuple[int, ...] | None = None) -> Graph:
    g = Graph()
    data = g.add_const(q, name="t")
    g.tensor_map["t"] = Ref(data.node_id, 0)
    g.tensor_ranges["t"] = (g.const_ref(mn), g.const_ref(mx))
    if layout is not None:
        g.meta["layouts"] = {"t": list(layout)}
    return g


def test_quint8_tensor_dequantized_with_its_range() -> None:
    # range [-1, 1]: step 2/255, zero round(1 / step) = round(127.5) = 128
    g = _graph_with(np.array([0, 128, 255], np.uint8), -1.0, 1.0)
    t = dequantize_tensor(g, "t", {})
    assert t is not None and t.step == pytest.approx(2 / 255)
    np.testing.assert_allclose(t.value.reshape(-1), [-128 * 2 / 255, 0.0, 127 * 2 / 255])
    assert dequantize_tensor(g, "missing", {}) is None


def test_layouts_are_transposed_back_to_the_source() -> None:
    nhwc = np.arange(2 * 3 * 4 * 5, dtype=np.uint8).reshape(2, 3, 4, 5)
    # the ONNX importer's convention: graph axis i is source axis perm[i]; NCHW stored NHWC is (0, 2, 3, 1)
    g = _graph_with(nhwc, 0.0, 255.0, layout=(0, 2, 3, 1))
    t = engine_tensors(g, {})["t"]
    np.testing.assert_array_equal(t.value, np.transpose(nhwc, (0, 3, 1, 2)).astype(np.float64))
    nchw = np.arange(24.0).reshape(1, 2, 3, 4)
    np.testing.assert_array_equal(to_source_layout(nchw.transpose(0, 2, 3, 1), [0, 2, 3, 1]), nchw)
    assert to_source_layout(np.zeros((3, 4, 5)), (0, 2, 3, 1)).shape == (1, 5, 3, 4)
    assert align(np.arange(4.0).reshape(1, 1, 1, 4), np.zeros((1, 4))).shape == (1, 4)
    assert align(np.zeros(3), np.zeros(4)) is None


def _first_flagged(perturb: bool) -> tuple[str | None, dict[str, float]]:
    graph = hx.prepare(hx.import_model(MODELS / "digits_int8.tflite"))
    if perturb:  # conv2 gets its output channels shuffled: the layer computes something else
        node = next(n for n in graph.nodes if n.is_const and n.name == "conv2/weights")
        node.data = np.ascontiguousarray(node.data[..., np.random.default_rng(0).permutation(node.data.shape[-1])])
    hexagon = HexagonRunner(graph, per_layer=True)
    source = LiteRTRunner(MODELS / "digits_int8.tflite", per_layer=True, name="source")
    data = load_dataset(MODELS / "digits_test.npz", hexagon.inputs)
    data.samples = data.samples[:20]
    comp = run_comparison(hexagon, [source], data).comparisons[0]
    flags = comp.flags()
    return next((n for n, f in flags.items() if f), None), {n: s.sqnr_db for n, s in comp.layers.items()}


def test_a_perturbed_layer_is_the_first_flagged() -> None:
    first, sqnr = _first_flagged(perturb=True)
    assert first == "conv2", sqnr
    assert sqnr["conv1"] > 50 and sqnr["conv2"] < 10
    assert list(sqnr)[:4] == ["input", "conv1", "pool1", "conv2"]  # graph order


def test_unperturbed_model_flags_nothing() -> None:
    first, sqnr = _first_flagged(perturb=False)
    assert first is None, sqnr
    assert min(sqnr.values()) > 45
