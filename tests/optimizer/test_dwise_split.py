"""optimizer/dwise_split.py: per-channel depthwise chains that would reach hexagon_nn's dwconv2dbbb 5xN stride-2 /
7xN stride-1 slice defect are split into groups of <= 32 channels at import (issue 36).

The reference is the unsplit chain prepared as prepare.c prepares it (one DepthwiseSupernode_8x8p32to8_d32) and run
with the defect switched off (``scales_slice_defect`` False: every channel requantized with its own scale, the
per-channel answer): the split graph must give the same codes bit for bit with the defect-following engine, and
the unsplit graph with the defect on must not (so the split is what makes it right).
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from hexnn_import.ops.kernels import dwise_scaled
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.device_defects import device_defect_notes
from hexnn_import.optimizer.dwise_split import group_bounds, split_defect_dwise

from hexnn_import.graph import Graph, NNPad, Ref
from hexnn_import.testing.prepare_graphs import QBuilder, q3, run_outputs


def chain_graph(depth: int, fw: int = 5, stride: int = 2, relu: bool = False, scales: np.ndarray | None = None,
                auto: bool = False) -> Graph:
    """INPUT [1, 12, 12, depth] -> depthwise [3|5|7 high, fw wide] -> ChannelScale -> BiasAdd 32p32 ->
    Requantize onto [-4, 4] (QuantizeDownAndShrinkRange with ``auto``) [-> Relu] -> OUTPUT."""
    rng = np.random.default_rng(depth * 10 + fw)
    b = QBuilder()
    x = b.input((1, 12, 12, depth), lo=-2.0, hi=2.0)
    w = rng.integers(0, 256, (fw, fw, depth, 1)).astype(np.uint8)
    conv = b.conv(x, w, (-0.7, 0.6), stride, NNPad.SAME, "QuantizedDepthwiseConv2d_8x8to32")
    shape = conv.output_defs[0].shape
    k = rng.uniform(0.05, 1.0, depth) if scales is None else scales
    cs = b.op("QuantizedChannelScale_32xf", [Ref(conv.node_id, 0), b.c(k, np.float32, (1, 1, 1, depth)),
                                             Ref(conv.node_id, 1), Ref(conv.node_id, 2)], shape, "qint32")
    bias = b.c(rng.integers(-3000, 3000, depth), np.int32, (1, 1, 1, depth))
    ba = b.op("QuantizedBiasAdd_32p32to32", [Ref(cs.node_id, 0), bias,
                                             Ref(cs.node_id, 1), Ref(cs.node_id, 2), b.c(-50.0), b.c(50.0)],
              shape, "qint32")
    if auto:
        rq = b.op("QuantizeDownAndShrinkRange_32to8", q3(ba), shape)
    else:
        rq = b.op("Requantize_32to8", [*q3(ba), b.c(-4.0), b.c(4.0)], shape)
    last = b.op("QuantizedRelu_8", q3(rq), shape) if relu else rq
    b.output(q3(last))
    return b.g


def prepared_outputs(graph: Graph, feed: np.ndarray, defect: bool, monkeypatch: pytest.MonkeyPatch) -> list:
    """The prepared graph's outputs on ``feed``, the engine following the slice defect or not."""
    g = copy.deepcopy(graph)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_pipeline(g)
    with monkeypatch.context() as m:
        if not defect:
            m.setattr(dwise_scaled, "scales_slice_defect", lambda *a: False)
        return run_outputs(g, [feed])


@pytest.mark.parametrize("depth, fw, stride, relu, split_op", [
    (64, 5, 2, False, "QuantizedSplit_8"),     # 2 x 32
    (72, 7, 1, True, "QuantizedSplit_8"),      # 3 x 24, with its Relu
    (41, 5, 2, False, "QuantizedSlice_8"),     # 32 + 9: no equal groups of 8..32
])
def test_split_chain_computes_the_per_channel_answer(depth: int, fw: int, stride: int, relu: bool, split_op: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    graph = chain_graph(depth, fw, stride, relu)
    split = copy.deepcopy(graph)
    assert split_defect_dwise(split) == 1
    bounds, _ = group_bounds(depth)
    assert split.op_counts()[split_op] == (1 if split_op == "QuantizedSplit_8" else len(bounds))
    assert split.op_counts()["QuantizedDepthwiseConv2d_8x8to32"] == len(bounds)
    assert split.op_counts()["QuantizedConcat_8"] == 1 and "split into" in split.meta["notes"][-1]
    feed = np.random.default_rng(depth).integers(0, 256, (1, 12, 12, depth)).astype(np.uint8)
    want = prepared_outputs(graph, feed, False, monkeypatch)
    got = prepared_outputs(split, feed, True, monkeypatch)
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(want, got))
    device = prepared_outputs(graph, feed, True, monkeypatch)
    assert not np.array_equal(device[0], want[0])   # the unsplit chain on the device is off past channel 31
    assert np.array_equal(device[0][..., :32], want[0][..., :32])


def test_prepared_split_graph_reaches_no_defect() -> None:
    """prepare.c fuses each group into a DepthwiseSupernode_8x8p32to8_d32 of <= 32 channels; the split goes d32."""
    split = chain_graph(64)
    split_defect_dwise(split)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_pipeline(split)
        assert device_defect_notes(split) == []
    ops = split.op_counts()
    assert ops["DepthwiseSupernode_8x8p32to8_d32"] == 2 and ops["QuantizedSplit_8_d32"] == 1
    assert ops["QuantizedConcat_8_d32"] == 1


@pytest.mark.parametrize("kwargs", [
    {"fw": 3},                                                    # dwconv2dbbb 3xN: right on the device
    {"fw": 7, "stride": 2},                                       # 7 wide at stride 2: not affected
    {"scales": np.tile(np.linspace(0.1, 1.0, 32), 2)},            # scales repeat every 32 channels
])
def test_chains_the_device_computes_right_or_that_cannot_split_stay(kwargs: dict) -> None:
    graph = chain_graph(64, **{"fw": 5, "stride": 2, **kwargs})
    ops = graph.op_counts()
    assert split_defect_dwise(graph) == 0 and graph.op_counts() == ops


def test_run_time_range_chain_splits_with_a_shrink_per_group() -> None:
    """A float model's chain (QuantizeDownAndShrinkRange_32to8: prepare.c fuses it too) splits into two groups,
    each ending in its own QuantizeDownAndShrinkRange_32to8, joined by one QuantizedConcat_8."""
    graph = chain_graph(64, fw=5, stride=2, auto=True)
    assert split_defect_dwise(graph) == 1
    ops = graph.op_counts()
    assert ops["QuantizeDownAndShrinkRange_32to8"] == 2 and ops["QuantizedDepthwiseConv2d_8x8to32"] == 2
    assert ops["QuantizedConcat_8"] == 1 and ops["QuantizedSplit_8"] == 1


@pytest.mark.parametrize("depth, want", [
    (64, [(0, 32), (32, 64)]), (72, [(0, 24), (24, 48), (48, 72)]), (144, [(i * 24, i * 24 + 24) for i in range(6)]),
    (33, [(0, 11), (11, 22), (22, 33)]), (41, [(0, 32), (32, 41)]),
])
def test_group_bounds(depth: int, want: list[tuple[int, int]]) -> None:
    """Equal groups of 8..32 channels, the fewest; else 32-channel slices and the rest (worked by hand)."""
    assert list(group_bounds(depth)[0]) == want
