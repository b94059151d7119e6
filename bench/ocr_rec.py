"""PP-OCRv3 text recognizer (SVTR, Paddle2ONNX) against onnxruntime on rendered text lines (issue 33).

The model is ``rapidocr_onnxruntime/models/ch_PP-OCRv3_rec_infer.onnx`` from the PyPI wheel
rapidocr_onnxruntime 1.2.3 (10.7 MB, not in the repository): give its path, or let the script fetch the
wheel with ``pip download --no-deps`` into a temporary folder and extract it. Each line is rendered with
Pillow (default font, black on white, 48 x 320), fed as RapidOCR does (BGR, ``(x / 255 - 0.5) / 0.5``,
NCHW). The output is the CTC head's softmax ``[1, T, 6625]``; printed per mode: per-time-step argmax
agreement with onnxruntime, SQNR of the output, and the greedy CTC decodes (class ids) that agree.

Modes: float with run-time ranges; float calibrated on other lines; the SVTR neck and CTC head alone
(fed onnxruntime's backbone output, run-time and calibrated ranges: the attention without the backbone's
error); and with ``--qdq`` a QDQ twin made
by onnxruntime's ``quantize_static`` on the calibration lines, per-tensor and per-channel weights (each
compared against that twin in onnxruntime), and of the neck and head alone.

    python bench/ocr_rec.py [MODEL] [--qdq]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

DEFAULT = Path("/tmp/ocr/rapidocr_onnxruntime/models/ch_PP-OCRv3_rec_infer.onnx")
BACKBONE = "pool2d_5.tmp_0"
MEMBER = "rapidocr_onnxruntime/models/ch_PP-OCRv3_rec_infer.onnx"
TEST = ["Hello World 2024", "The quick brown fox", "hexagon nn import", "OCR line 42: ok", "Paddle SVTR test"]
CAL = ["calibration text one", "ABCDEFGHIJKLMNOP", "0123456789 +-*/", "lorem ipsum dolor sit", "Another line, x=7",
       "qwerty uiop asdf", "Zebra 99 Yak", "mixed CASE words"]


def fetch_model(folder: Path) -> Path:
    """The recognizer from the rapidocr_onnxruntime 1.2.3 wheel (``pip download --no-deps``)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "rapidocr_onnxruntime==1.2.3",
                    "-d", str(folder)], check=True)
    wheel = next(folder.glob("rapidocr_onnxruntime-1.2.3-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        z.extract(MEMBER, folder)
    return folder / MEMBER


def render(text: str) -> np.ndarray:
    """One line in Pillow's default font (26 px; the 11 px bitmap one where Pillow has no FreeType), black on
    white, 48 x 320, as RapidOCR feeds it: [1, 3, 48, 320] float32."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (320, 48), "white")
    try:
        font = ImageFont.load_default(size=26)
    except (TypeError, ImportError, OSError):  # Pillow < 10.1 or no FreeType
        font = ImageFont.load_default()
    ImageDraw.Draw(img).text((4, 8), text, fill="black", font=font)
    bgr = np.asarray(img, np.float32)[:, :, ::-1]
    return ((bgr / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)[None].astype(np.float32)


def charset(model: Path) -> list[str]:
    """RapidOCR's classes: blank, the model's ``character`` metadata (one a line), space."""
    import onnx

    meta = {p.key: p.value for p in onnx.load(str(model), load_external_data=False).metadata_props}
    return ["<blank>", *meta.get("character", "").splitlines(), " "]


def ctc_greedy(ids: np.ndarray) -> list[int]:
    """Greedy CTC: collapse repeats, drop the blank (class 0)."""
    keep = np.concatenate([[True], ids[1:] != ids[:-1]]) & (ids != 0)
    return ids[keep].tolist()


def neck_head(model: Path, folder: Path) -> Path:
    """The SVTR neck and CTC head alone (from the backbone's output ``pool2d_5.tmp_0``), as a model file."""
    import onnx.utils

    out = folder / "rec_neck_head.onnx"
    onnx.utils.extract_model(str(model), str(out), [BACKBONE], ["softmax_5.tmp_0"])
    return out


def with_initializers(model: bytes) -> bytes:
    """``model`` with its tensor-valued Constant nodes as initializers (Paddle2ONNX keeps the weights in
    Constant nodes, which onnxruntime's ``quantize_static`` does not quantize as weights)."""
    import onnx
    import onnx.version_converter

    m = onnx.load_from_string(model)
    keep = []
    for n in m.graph.node:
        if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
            t = onnx.TensorProto()
            t.CopyFrom(n.attribute[0].t)
            t.name = n.output[0]
            m.graph.initializer.append(t)
        else:
            keep.append(n)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    if m.opset_import[0].version < 13:  # per-channel DequantizeLinear (axis) needs opset 13
        m = onnx.version_converter.convert_version(m, 13)
    return m.SerializeToString()


def backbone_out(model: Path, x: np.ndarray) -> np.ndarray:
    """onnxruntime's backbone output for image ``x`` (the neck's input)."""
    import onnx

    from hexnn_import.testing.onnx_compare import run_ort

    m = onnx.load(str(model))
    m.graph.output.append(onnx.helper.make_value_info(BACKBONE, onnx.TypeProto()))
    return run_ort(m.SerializeToString(), {"x": x})[BACKBONE]


def run_mode(name: str, model: Path, calibration: dict | None, feeds: dict[str, dict] | None = None,
             chars: list[str] | None = None) -> None:
    """Import ``model`` (calibrated or not), run the TEST lines on the engine and onnxruntime, print figures."""
    import hexnn_import as hx
    from hexnn_import.testing.onnx_compare import run_ort

    feeds = feeds or {t: {"x": render(t)} for t in TEST}
    first = next(iter(feeds.values()))
    g = hx.import_model(model, calibration=calibration, input_shapes={k: v.shape for k, v in first.items()})
    runner = hx.Runner(hx.prepare(g))
    out = g.outputs[0].name
    agree, noise, power, decodes = [], 0.0, 0.0, 0
    for text, feed in feeds.items():
        ours = np.asarray(runner.run(feed)[out], np.float64)[0]
        ref = np.asarray(run_ort(model.read_bytes(), feed)[out], np.float64)[0]
        a, b = ours.argmax(-1), ref.argmax(-1)
        agree.append(float(np.mean(a == b)))
        noise += float(np.sum((ours - ref) ** 2))
        power += float(np.sum(ref ** 2))
        decodes += ctc_greedy(a) == ctc_greedy(b)
        said = "".join(chars[i] for i in ctc_greedy(a) if i < len(chars)) if chars else ""
        ref_said = "".join(chars[i] for i in ctc_greedy(b) if i < len(chars)) if chars else ""
        print(f"  {name:>22} | {text!r:21} argmax agreement {agree[-1]:7.2%} ({len(a)} steps) "
              f"engine {said!r} onnxruntime {ref_said!r}")
    sqnr = 10 * np.log10(power / noise) if noise else float("inf")
    print(f"{name}: argmax agreement {np.mean(agree):.2%} over {len(TEST)} lines, SQNR {sqnr:.1f} dB, "
          f"greedy CTC decodes identical {decodes}/{len(TEST)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", type=Path, default=None)
    ap.add_argument("--qdq", action="store_true", help="also a QDQ twin (onnxruntime quantize_static)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or (DEFAULT if DEFAULT.exists() else fetch_model(Path(tmp)))
        cal = {"x": np.concatenate([render(t) for t in CAL])}
        chars = charset(model)
        run_mode("float, run-time ranges", model, None, chars=chars)
        run_mode("float, calibrated", model, cal, chars=chars)
        nh = neck_head(model, Path(tmp))
        nh_cal = {BACKBONE: np.concatenate([backbone_out(model, c[None]) for c in cal["x"]])}
        nh_feeds = {t: {BACKBONE: backbone_out(model, render(t))} for t in TEST}
        run_mode("neck+head, run-time", nh, None, nh_feeds, chars)
        run_mode("neck+head, calibrated", nh, nh_cal, nh_feeds, chars)
        if args.qdq:
            from hexnn_import.testing.onnx_compare import quantize_ort

            for per_channel in (False, True):
                q = Path(tmp) / f"rec_qdq_{per_channel}.onnx"
                q.write_bytes(quantize_ort(with_initializers(model.read_bytes()), [{"x": c[None]} for c in cal["x"]],
                                           per_channel=per_channel))
                run_mode(f"QDQ per-{'channel' if per_channel else 'tensor'}", q, None, chars=chars)
            q = Path(tmp) / "rec_neck_head_qdq.onnx"
            q.write_bytes(quantize_ort(with_initializers(nh.read_bytes()), [{BACKBONE: c[None]} for c in nh_cal[BACKBONE]]))
            run_mode("neck+head QDQ", q, None, nh_feeds, chars)


if __name__ == "__main__":
    main()
