"""A max pool after a SAME depthwise layer (issue 36): on the device the depthwise output's d32 left padding is 3
after a 3x3 layer, 2 after a 5x5 (op_dwise_snode_8bit.c l. 410) and QuantizedMaxPool_8_d32's asm slices read the wrong columns, so the importer
splits the pool into a rows pool and a columns pool (optimizer/maxpool_left.py), which the device computes right
(whole network on the emulated DSP: the report of issue 36's maxpool row, docs/verification.md). Judged here: the
split graph's codes equal the unsplit graph's bit for bit (the max is separable) and stay near onnxruntime; the
unsplit pool gets the convert-time note, the split ones do not."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hexnn_import.optimizer import maxpool_left
from hexnn_import.optimizer.device_defects import device_defect_notes
from onnx import helper

import hexnn_import as hx
from hexnn_import.errors import DeviceDefectWarning, HexnnError
from hexnn_import.testing.onnx_compare import build_model, random_feeds, run_ort

C = 8
POOLS = {"2x2_s2_valid": {"kernel_shape": [2, 2], "strides": [2, 2]},
         "3x3_s1_same": {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}}


def _model(pool: str | dict, k: int = 3, stride: int = 1, width: int = 10) -> bytes:
    """Depthwise conv ``k x k`` / ``stride`` SAME (auto_pad SAME_UPPER) on 8 channels, relu, the max pool."""
    rng = np.random.default_rng(3)
    w = rng.normal(0, 0.4, (C, 1, k, k)).astype(np.float32)
    b = rng.normal(0, 0.1, C).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["d"], group=C, kernel_shape=[k, k], strides=[stride] * 2,
                              auto_pad="SAME_UPPER"),
             helper.make_node("Relu", ["d"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], **(POOLS[pool] if isinstance(pool, str) else pool))]
    return build_model(nodes, {"x": (1, C, 9, width)}, {"y": None}, {"w": w, "b": b}, opset=11)


def _windows(graph: hx.Graph) -> list[tuple[int, ...]]:
    return [graph.node(n.inputs[3].src_id).output_defs[0].shape for n in graph.nodes if n.op == "QuantizedMaxPool_8"]


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_pool_after_depthwise_is_split_and_computes_the_same(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                             pool: str) -> None:
    path = tmp_path / "dwpool.onnx"
    model = _model(pool, k=5 if pool == "2x2_s2_valid" else 3)
    path.write_bytes(model)
    k = POOLS[pool]["kernel_shape"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeviceDefectWarning)
        split = hx.import_model(path)
        with monkeypatch.context() as m:
            m.setattr(maxpool_left, "split_left_pools", lambda graph, trial=None: 0)
            plain = hx.import_model(path)
    assert _windows(split) == [(1, k, 1, 1), (1, 1, k, 1)] and _windows(plain) == [(1, k, k, 1)]
    assert any("split into a rows pool and a columns pool" in n for n in split.meta["notes"])
    feed = random_feeds(model, 1, np.random.default_rng(1))[0]
    prepared_split = hx.prepare(split)
    left = 2 if pool == "2x2_s2_valid" else 3  # (4 - 2) // 1 after the 5x5 layer, (4 - 1) // 1 after the 3x3
    with pytest.warns(DeviceDefectWarning, match=f"QuantizedMaxPool_8_d32 on an input left padding of {left}"):
        prepared_plain = hx.prepare(plain)
    got = hx.Runner(prepared_split).run(feed)["y"]
    np.testing.assert_array_equal(got, hx.Runner(prepared_plain).run(feed)["y"])
    ref = run_ort(model, feed)["y"]
    step = (max(float(ref.max()), 0.0) - min(float(ref.min()), 0.0)) / 255.0
    # measured 1.88 (2x2 VALID) and 2.62 (3x3 SAME) steps, the unsplit graph's the same (bit-equal above)
    assert np.abs(got - ref).max() <= 3.5 * step
    with pytest.warns(DeviceDefectWarning, match=f"left padding of {left}"):
        notes = device_defect_notes(prepared_plain)
    assert len(notes) == 1 and "QuantizedMaxPool_8_d32" in notes[0]
    assert device_defect_notes(prepared_split) == []


def test_pool_the_split_cannot_help_keeps_a_note_or_is_refused(tmp_path) -> None:
    """After a 7x7 stride-2 SAME layer on width 9 the left padding is (4 - 3) // 2 = 0: the device's zap then
    clears data columns 0-3 (a 2x2 / 2 SAME pool: not split, a note; 166 of 480 codes differ on the emulated
    DSP) and a 3x3 SAME pool needs a left column it does not have (the device fails: refused at convert time)."""
    note_path, refused_path = tmp_path / "note.onnx", tmp_path / "refused.onnx"
    note_path.write_bytes(_model({"kernel_shape": [2, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"}, 7, 2, 9))
    refused_path.write_bytes(_model("3x3_s1_same", 7, 2, 9))
    with pytest.warns(DeviceDefectWarning, match="left padding of 0"):
        graph = hx.prepare(hx.import_model(note_path))
    assert graph.op_counts()["QuantizedMaxPool_8_d32"] == 1
    with pytest.raises(HexnnError, match="insufficient width padding"):
        hx.prepare(hx.import_model(refused_path))


def test_pool_after_a_chain_prepare_does_not_fuse_is_left_alone() -> None:
    """keras_dwmult_digits_int8 (models/real/families): its depth-multiplier-2 per-channel depthwise chain, then a
    2x2 / 2 VALID pool. prepare.c does not fuse that chain (dwconv_extrachecks), so the pool reads a Convert_to_d32
    (left padding 4) and the device computes it right (the emulated DSP: bit-exact, tests/ops/test_hvx_network.py):
    the candidate is checked on a prepared copy and kept whole."""
    from pathlib import Path

    model = Path(__file__).resolve().parents[2] / "models" / "real" / "families" / "keras_dwmult_digits_int8.tflite"
    graph = hx.import_model(model)
    assert not any("split into a rows pool" in n for n in graph.meta["notes"])
    assert [w for w in _windows(graph)] == [(1, 2, 2, 1)]
    assert maxpool_left._split_helps(graph, next(n for n in graph.nodes if n.op == "QuantizedMaxPool_8"))
