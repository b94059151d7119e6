"""TFLite_Detection_PostProcess (custom op, flexbuffer options) against LiteRT.

LiteRT leaves output slots past ``num_detections`` unwritten, so the
comparison is of the count and of the valid rows: classes equal, boxes and
scores equal to float32 rounding (the decode runs in float64 from float32
corner anchors here, in float32 there). Fast NMS (TFLite's default, with 1
or 2 classes per detection) and regular NMS; uint8, int8 and float models.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from flatbuffers import flexbuffers

import hexnn_import as hx
from hexnn_import.importers.tflite.handlers.detect import parse_options
from hexnn_import.testing import TFLiteBuilder, run_litert
from hexnn_import.testing.tflite_checks import unsupported_listing

RNG = np.random.default_rng(11)
N, C = 24, 3


@pytest.fixture(autouse=True)
def _fresh_rng() -> None:
    """Each test's inputs from the same seed, whatever ran before it in the process (xdist spreads the tests
    over workers in a load-dependent order; a shared generator made a case's inputs depend on it)."""
    global RNG
    RNG = np.random.default_rng(11)


def options(**kw) -> bytes:
    """A flexbuffer map as TFLite's converter writes the op's custom options."""
    fbb = flexbuffers.Builder()
    with fbb.Map():
        for k, v in kw.items():
            if isinstance(v, bool):
                fbb.Bool(k, v)
            elif isinstance(v, int):
                fbb.Int(k, v)
            else:
                fbb.Float(k, v)
    return bytes(fbb.Finish())


def _anchors() -> np.ndarray:
    """Anchors (yc, xc, h, w) in a few clusters, so boxes overlap and NMS has work (the same every call)."""
    rng = np.random.default_rng(5)
    centres = rng.uniform(0.25, 0.75, size=(4, 2))
    yx = centres[rng.integers(0, 4, N)] + rng.normal(0, 0.03, size=(N, 2))
    hw = rng.uniform(0.15, 0.4, size=(N, 2))
    return np.concatenate([yx, hw], axis=1).astype(np.float32)


def model(dtype, regular: bool = False, k: int = 1, max_det: int = 5, background: bool = True,
          thr: float = 0.3, unshaped: bool = False) -> bytes:
    """``unshaped``: the four outputs have shape ``[]``, as both SSD export recipes of the TensorFlow Object
    Detection API write them (LiteRT sizes them from the options at run time)."""
    b = TFLiteBuilder()
    cols = C + (1 if background else 0)
    if dtype is np.float32:
        enc = b.add_tensor("enc", (1, N, 4), np.float32)
        cls = b.add_tensor("cls", (1, N, cols), np.float32)
        anc = b.add_const("anchors", _anchors())
    else:
        zp = 0 if dtype is np.uint8 else -128
        enc = b.add_tensor("enc", (1, N, 4), dtype, scale=0.04, zero_point=128 + zp - 3)
        cls = b.add_tensor("cls", (1, N, cols), dtype, scale=1 / 256, zero_point=zp)
        a = _anchors()
        anc = b.add_const("anchors", np.round(a / 0.004).astype(np.uint8), scale=0.004, zero_point=0)
    slots = max_det * (1 if regular else k)
    shapes = [(), (), (), ()] if unshaped else [(1, slots, 4), (1, slots), (1, slots), (1,)]
    outs = [b.add_tensor(n, s, np.float32) for n, s in zip(("boxes", "classes", "scores", "num"), shapes)]
    o = options(max_detections=max_det, max_classes_per_detection=k, detections_per_class=100,
                nms_score_threshold=thr, nms_iou_threshold=0.45, num_classes=C, y_scale=10.0, x_scale=10.0,
                h_scale=5.0, w_scale=5.0, use_regular_nms=regular)
    b.add_custom_operator("TFLite_Detection_PostProcess", [enc, cls, anc], outs, o)
    b.set_io([enc, cls], outs)
    return b.build()


def feeds(dtype, cols: int, distinct: bool, boundary: int | None = None) -> list[np.ndarray]:
    """Box encodings and class scores; ``distinct``: no two scores alike (TFLite sorts some unstably);
    ``boundary``: the best class score of the first 8 anchors is exactly this uint8 code."""
    if dtype is np.float32:
        enc = RNG.normal(0, 1.5, size=(1, N, 4)).astype(np.float32)
        # distinct scores on the 8-bit grid k / 255, 1.0 among them: the graph's AutoQuantize then takes the range
        # [0, 1] and gives each score its own code. Off the grid (k / 96 before) a score within 1/16 code above a
        # half code rounds DOWN on the device (autoquantize_execute_opt's truncated 16-bit scaling), half a step
        # plus up to 0.06 of one away from LiteRT's float score (0.904208 for 0.90625, measured)
        codes = RNG.permutation(256)[:N * cols]
        codes[np.argmax(codes)] = 255
        return [enc, (codes.reshape(1, N, cols) / np.float32(255)).astype(np.float32)]
    info = np.iinfo(dtype)
    enc = RNG.integers(info.min, info.max + 1, size=(1, N, 4)).astype(dtype)
    if distinct:
        codes = RNG.choice(256, size=N * cols, replace=False).reshape(1, N, cols)
    else:
        codes = RNG.integers(0, 256, size=(1, N, cols))
    if boundary is not None:
        codes[0, :8, 1:] = np.minimum(codes[0, :8, 1:], boundary)
        codes[0, :8, 1] = boundary
    return [enc, (codes + info.min).astype(dtype)]


def compare(m: bytes, dtype, cols: int, per_detection: int = 1, distinct: bool = False, runs: int = 3,
            boundary: int | None = None) -> list[int]:
    """Run ours and LiteRT; assert equal counts and equal valid rows; return the counts seen."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.tflite"
        path.write_bytes(m)
        g = hx.prepare(hx.import_model(path))
    runner = hx.Runner(g)
    counts = []
    for _ in range(runs):
        enc, cls = feeds(dtype, cols, distinct, boundary)
        ours = runner.run({"enc": enc, "cls": cls})
        ref = run_litert(m, {"enc": enc, "cls": cls}, as_dict=True)
        n = int(ref["num"][0])
        assert int(ours["num"][0]) == n
        counts.append(n)
        rows = slice(0, n * per_detection)
        np.testing.assert_array_equal(ours["classes"][:, rows], ref["classes"][:, rows])
        # a float model's inputs are 8-bit values in the graph: scores within half a step of [0, 1]; the boxes'
        # sizes come from nnlib's fast_exp as the device computes it (op_box_decoder.c l. 88-89,
        # include/float_mathops.h: within 8.34e-5 of exp), a corner within 1e-4 of LiteRT's exp on these unit boxes
        s_tol, b_tol = (0.5 / 255, 3e-3) if dtype is np.float32 else (0.0, 1e-4)
        np.testing.assert_allclose(ours["scores"][:, rows], ref["scores"][:, rows], rtol=1e-6, atol=s_tol)
        np.testing.assert_allclose(ours["boxes"][:, rows], ref["boxes"][:, rows], rtol=1e-5, atol=b_tol)
        assert not ours["scores"][:, rows.stop:].any()  # unused slots are zeros here
    return counts


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_fast_nms(dtype) -> None:
    compare(model(dtype), dtype, C + 1)


def test_fast_nms_suppresses() -> None:
    # 20 of 24 anchors allowed: the count stays below 20 because NMS suppressed overlapping boxes
    counts = compare(model(np.uint8, max_det=20, thr=0.5), np.uint8, C + 1, runs=4)
    assert min(counts) < 20, counts


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_fast_nms_two_classes_per_detection(dtype) -> None:
    compare(model(dtype, k=2), dtype, C + 1, per_detection=2, distinct=True)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_regular_nms(dtype) -> None:
    compare(model(dtype, regular=True, max_det=6), dtype, C + 1, distinct=True)


@pytest.mark.parametrize("regular", [False, True])
def test_int8_matches_uint8(regular) -> None:
    # LiteRT runs the op on uint8 / float inputs only; an int8 model holding the same real values
    # (codes - 128, zero points - 128) must give exactly the uint8 model's outputs here
    outs = []
    enc8, cls8 = feeds(np.uint8, C + 1, True)
    for dtype in (np.uint8, np.int8):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "m.tflite"
            path.write_bytes(model(dtype, regular=regular))
            runner = hx.Runner(hx.prepare(hx.import_model(path)))
        enc, cls = enc8, cls8
        if dtype is np.int8:
            enc, cls = (enc.astype(np.int16) - 128).astype(np.int8), (cls.astype(np.int16) - 128).astype(np.int8)
        outs.append(runner.run({"enc": enc, "cls": cls}))
    for k in ("boxes", "classes", "scores", "num"):
        np.testing.assert_array_equal(outs[0][k], outs[1][k])


@pytest.mark.parametrize("dtype,regular,k", [(np.uint8, False, 1), (np.float32, False, 2), (np.uint8, True, 1)])
def test_unshaped_outputs_take_litert_shapes(dtype, regular, k) -> None:
    # the Object Detection API's SSD exports leave the outputs unshaped: the importer gives them LiteRT's run-time
    # shapes ([1, max_detections * max_classes_per_detection, 4], ...) and the outputs match LiteRT's
    m = model(dtype, regular=regular, k=k, max_det=6, unshaped=True)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.tflite"
        path.write_bytes(m)
        g = hx.import_model(path)
    enc, cls = feeds(dtype, C + 1, True)
    ref = run_litert(m, {"enc": enc, "cls": cls}, as_dict=True)
    ours = hx.Runner(hx.prepare(g)).run({"enc": enc, "cls": cls})
    assert {k: v.shape for k, v in ours.items()} == {k: v.shape for k, v in ref.items()}
    assert ref["boxes"].shape == (1, 6 * k, 4)
    assert any("unshaped in the file" in n for n in g.meta["notes"])
    counts = compare(m, dtype, C + 1, per_detection=k, distinct=True)
    assert max(counts) > 0


def test_unshaped_regular_nms_with_two_classes_is_refused_at_convert(tmp_path) -> None:
    # LiteRT sizes the outputs max_detections * max_classes_per_detection; regular NMS fills max_detections rows
    b = TFLiteBuilder()
    enc = b.add_tensor("enc", (1, N, 4), np.float32)
    cls = b.add_tensor("cls", (1, N, C + 1), np.float32)
    outs = [b.add_tensor(n, (), np.float32) for n in ("boxes", "classes", "scores", "num")]
    b.add_custom_operator("TFLite_Detection_PostProcess", [enc, cls, b.add_const("anchors", _anchors())], outs,
                          options(max_detections=5, max_classes_per_detection=2, nms_score_threshold=0.3,
                                  nms_iou_threshold=0.5, num_classes=C, use_regular_nms=True))
    b.set_io([enc, cls], outs)
    assert "output boxes is float32[1, 10, 4], expected float32[1, 5, 4]" in unsupported_listing(b, tmp_path)


def test_no_background_column_and_few_detections() -> None:
    # scores without a background column; a high threshold leaves fewer boxes than max_detections
    compare(model(np.uint8, background=False, thr=0.8, max_det=8), np.uint8, C)


@pytest.mark.parametrize("code", [128, 127])
def test_threshold_on_a_code_boundary(code) -> None:
    # 0.5 is exactly code 128 of the 1/256 score scale: TFLite keeps scores >= 0.5, drops code 127
    counts = compare(model(np.uint8, thr=0.5, max_det=20), np.uint8, C + 1, boundary=code)
    assert max(counts) > 0


def test_parse_options() -> None:
    p = parse_options(options(max_detections=3, num_classes=2, nms_score_threshold=0.1, nms_iou_threshold=0.6,
                              max_classes_per_detection=1, y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0))
    assert not isinstance(p, str)
    assert (p.max_detections, p.detections_per_class, p.use_regular_nms) == (3, 100, False)
    assert parse_options(b"") == "custom options are not a flexbuffer map"
    assert "lack num_classes" in str(parse_options(options(max_detections=3, nms_score_threshold=0.1,
                                                                nms_iou_threshold=0.5)))


def test_unsupported_detection_instances(tmp_path) -> None:
    b = TFLiteBuilder()
    enc = b.add_tensor("enc", (1, N, 4), np.float32)
    cls = b.add_tensor("cls", (1, N, C + 1), np.float32)
    anc = b.add_tensor("anchors", (N, 4), np.float32)  # anchors not constant
    outs = [b.add_tensor("boxes", (1, 5, 4), np.float32), b.add_tensor("classes", (1, 5), np.float32),
            b.add_tensor("scores", (1, 5), np.float32), b.add_tensor("num", (1,), np.float32)]
    b.add_custom_operator("TFLite_Detection_PostProcess", [enc, cls, anc], outs,
                          options(max_detections=5, max_classes_per_detection=1, nms_score_threshold=0.3,
                                  nms_iou_threshold=0.5, num_classes=C, y_scale=10.0, x_scale=10.0, h_scale=5.0,
                                  w_scale=5.0))
    outs2 = [b.add_tensor(f"o{i}", s, np.float32) for i, s in enumerate(((1, 5, 4), (1, 5), (1, 5), (1,)))]
    b.add_custom_operator("TFLite_Detection_PostProcess", [enc, cls, b.add_const("a2", _anchors())], outs2,
                          options(max_detections=5, max_classes_per_detection=1, detections_per_class=2,
                                  nms_score_threshold=0.3, nms_iou_threshold=0.5, num_classes=C, y_scale=10.0,
                                  x_scale=10.0, h_scale=5.0, w_scale=5.0, use_regular_nms=True))
    b.set_io([enc, cls, anc], outs + outs2)
    msg = unsupported_listing(b, tmp_path)
    assert "anchors are not a constant float or quantized tensor" in msg
    assert "regular NMS with detections_per_class < max_detections" in msg
