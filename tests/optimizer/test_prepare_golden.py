"""The project's prepared graphs against hexagon_nn's own prepare.c (golden node lists, issue 19).

``tools/golden_prepare.py`` ran hexagon_nn 2.14.1's real graph construction and ``prepare.c`` pass
sequence (``optimize()``, built for x86 by the prepare oracle) on each model's unprepared graph and kept
the resulting node list in ``tests/data/golden/prepare/<model>.json``: per node, in list order, the op,
the padding, the input refs as ``[position of the producer, output index]`` and the output definitions'
shapes. Node ids do not enter (prepare.c numbers the nodes it creates downwards from 0xFFFFFFFF, the
project upwards), so the lists must be equal as they are: same ops in the same order, same wiring,
paddings and shapes. Where the oracle's dump had Const bytes, the golden file also keeps the bytes of the
Consts prepare.c made (``consts``: position -> hex), and the project's Consts there must hold the same bytes.

Every bundled model and every model of ``models/real/`` and ``models/real/families/`` has a file (issue 36),
and every list equals prepare.c's (the 16-bit d32 family closed the last three).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.graph import Graph, NNPad

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = sorted((ROOT / "tests" / "data" / "golden" / "prepare").glob("*.json"))
#: models whose prepared graph leaves prepare.c's on purpose (optimizer/bias_fit.py): prepare.c's fused node
#: would refuse its bias on some input - here the first conv of a run-time-range float model on a blank frame
#: (AutoQuantize's range 1e-18 wide, as the device keeps it), and in keras_mobilenet_v3_small_float the convs
#: reading a hard-swish's or a squeeze-excite's shrink-range product (optimizer/bias_fit_floor.py: floored, or
#: kept) - so the chain stays, named by its note; the list is compared with prepare.c's unconditional fusion
BIAS_FIT_KEPT = {"mediapipe_selfie_segmentation": "conv2d/shrink: kept as",
                 "keras_mobilenet_v3_small_float": "MobileNetV3Small_1/logits_1/BiasAdd;",
                 "keras_ds_cnn_float": "ds_cnn_s_1/re_lu_1/Relu;",
                 "rapidocr_ppocr_mobile_v2_cls": "batch_norm_3.tmp_2/shrink: kept as",
                 "rapidocr_ppocrv3_det": "batch_norm_0.tmp_3/shrink: kept as",
                 "mediapipe_face_landmark": "conv2d_1/shrink: kept as",
                 "torch_efficientnet_b0_float": "/features/features.1/features.1.0/block/block.0/block.0.0/Conv_output",
                 "torch_yolo_tiny_float": "/b0/b0.0/Conv_output_0/shrink: kept as",
                 "torch_mobilenet_v3_small_float": "/features/features.0/features.0.0/Conv_output_0/shrink",
                 "keras_gru_unrolled_digits_float": "functional_3_1/gru_1_1/gru_cell_1/MatMul;",
                 "keras_lstm_digits_float": "tfl.unidirectional_sequence_lstm/d0/x_i/shrink: kept as",
                 "keras_lstm_keras3_digits_float": "functional_1_1/lstm_1_1/while2/d0/x_i/shrink: kept as",
                 "keras_mobilenet_v3_small_digits_float": "MobileNetV3Small_1/conv_bn_1/batchnorm/add_1;",
                 "silero_vad_v6": "/encoder/feature_extractor/Conv_output_0__h1/shrink: kept as",
                 "torch_conv1d_logmel_digits_float": "/filt/Conv_output_0__h1/shrink: kept as",
                 "torch_lstm_digits_float": "/rnn/LSTM_output_0/d0/x_i/shrink: kept as",
                 "torch_lstm_digits_qdq": "/rnn/LSTM_output_0/d0/x_i/shrink: kept as",
                 "keras_gru_digits_float": "functional_1_1/gru_1_1/while2/d0/x_z/shrink: kept as",
                 "torch_gru_digits_float": "/rnn/GRU_output_0/d0/x_z/shrink: kept as",
                 "torch_gru_digits_qdq": "/rnn/GRU_output_0/d0/x_z/shrink: kept as",
                 "keras_vit_digits_float": "functional_1_1/dense_6_1/Tensordot/MatMul1/shrink: kept as",
                 "torch_encoder_digits_float": "/embed/MatMul_output_0/shrink: kept as",
                 "torch_encoder_digits_op13_float": "/embed/MatMul_output_0/shrink: kept as",
                 "torch_yolov8n_digits_float": "/model.0/conv/Conv_output_0/shrink: kept as",
#: ... and the float models whose first conv reads AutoQuantize: its range is floored (bias_fit_floor: Min_f /
#: Max_f -> Minimum_f / Maximum_f -> Quantize) where prepare.c's fused node would refuse a blank input
                 "digits_float": "conv1/relu: its input range (",
                 "keras_blaze_digits_float": "functional_1_1/stem_1/Relu;functional_1_1/stem_1/BiasAdd",
                 "keras_cnn_digits_float": "functional_5_1/conv2d_2_1/Relu;functional_5_1/conv2d_2_1",
                 "mediapipe_face_detection_short_range": "activation/relu: its input range (",
                 "keras_cnn_float": "flatten_cnn_1/conv2d_1/Relu;flatten_cnn_1/conv2d_1/BiasA",
                 "keras_cnn_uint8_float": "small_cnn_1/conv2d_5_1/Relu;small_cnn_1/conv2d_5_1/BiasA",
                 "keras_conv1d_digits_float": "functional_3_1/conv1d_2_1/Relu;functional_3_1/conv1d_2_1",
                 "mobilenet_v2_float": "stem/relu6: its input range (",
                 "keras_mobilenet_float": "mobilenet_0.25_96_1/conv1_relu_1/Relu6;mobilenet_0.25_96",
                 "keras_mobilenet_v2_aeq_dynamic_wi8": "mobilenetv2_0.35_96_1/Conv1_relu_1/Relu6;mobilenetv2_0.3",
                 "keras_mobilenet_v2_float": "mobilenetv2_0.35_96_1/Conv1_relu_1/Relu6;mobilenetv2_0.3",
                 "small_float": "conv1/relu/relu: its input range (",
                 "torch_cnn_digits_dynamo_float": "relu/relu: its input range (",
                 "torch_cnn_digits_float": "/Relu_output_0/relu: its input range (",
                 "torch_cnn_digits_opset9_float": "/Relu_output_0/relu: its input range (",
                 "keras_person_detect_float": "mobilenet_0.25_96_1/conv1_relu_1/Relu6;mobilenet_0.25_96",
                 "keras_sparse_float": "functional_1/conv1_1/Relu;functional_1/conv1_1/convoluti",
                 "keras_ssd_digits_float": "functional_1_1/conv2d_4_1/Relu;functional_1_1/conv2d_4_1",
                 "keras_dwmult_digits_float": "functional_1_1/conv2d_2_1/Relu;functional_1_1/conv2d_2_1",
                 "torch_dwmult_digits_float": "/Relu_output_0/relu: its input range (",
                 "torch_resnet18_float": "/relu/Relu_output_0/relu: its input range (",
                 "torch_shufflenet_v2_float": "/conv1/conv1.2/Relu_output_0/relu: its input range (",
                 "torch_squeezenet_float": "/features/features.1/Relu_output_0/relu: its input range"}
def _case(path: Path) -> object:
    return pytest.param(path, id=path.stem)  # the costly ones: tests/conftest.py SLOW


def node_rows(graph: Graph) -> list[list]:
    """``[op, padding, [[producer position, output], ...], [shape, ...]]`` per node, in list order."""
    pos = {n.node_id: i for i, n in enumerate(graph.nodes)}
    return [[n.op, f"NN_PAD_{NNPad(n.padding).name}", [[pos[r.src_id], r.output_idx] for r in n.inputs],
             [list(o.shape) for o in n.output_defs]] for n in graph.nodes]


def test_golden_files_cover_every_bundled_and_real_model() -> None:
    names = {p.stem for p in GOLDEN}
    assert {p.stem for p in (ROOT / "models").glob("*.tflite")} <= names
    real = ROOT / "models" / "real"
    missing = {p.stem for d in (real, real / "families") for p in d.glob("*") if p.suffix in (".tflite", ".onnx")}
    assert not missing - names, (f"no prepare.c node list for {sorted(missing - names)}: run tools/golden_prepare.py "
                                 "--oracle ORACLE --bundled --real NAME ... --families NAME ... --write")
    assert set(BIAS_FIT_KEPT) <= names


@pytest.mark.parametrize("path", [_case(p) for p in GOLDEN])
def test_prepared_graph_is_prepare_c_s(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_prepare_c_s(path, monkeypatch)


def assert_prepare_c_s(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's prepared list of the golden file's model is the file's, Const bytes included."""
    golden = json.loads(path.read_text())
    model = ROOT / golden["model"]
    assert model.is_file(), f"{golden['model']} is committed with the repository"
    shapes = {k: tuple(v) for k, v in golden.get("input_shapes", {}).items()} or None
    if path.stem in BIAS_FIT_KEPT:
        from hexnn_import.optimizer import supernodes

        notes = hx.prepare(hx.import_model(model, input_shapes=shapes)).meta["notes"]
        assert any(n.startswith(BIAS_FIT_KEPT[path.stem]) for n in notes), notes  # type: ignore[union-attr]
        monkeypatch.setattr(supernodes, "unfused_reason", lambda *a: None)
    graph = hx.prepare(hx.import_model(model, input_shapes=shapes))
    got, want = node_rows(graph), golden["nodes"]
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    assert got == want, (f"{len(got)} nodes vs prepare.c's {len(want)}; first difference at position {first}: "
                         f"project {got[first] if first < len(got) else None} / "
                         f"prepare.c {want[first] if first < len(want) else None}")
    # the bytes of the Consts prepare.c made (weights / biases / crops of an expanded transposed conv, scalars)
    for pos, hexdata in golden.get("consts", {}).items():
        node = graph.nodes[int(pos)]
        assert node.is_const and np.ascontiguousarray(node.data).astype(node.data.dtype.newbyteorder("<")).tobytes() \
            == bytes.fromhex(hexdata), f"Const at position {pos} ({node.output_defs[0].shape}) differs from prepare.c's"
