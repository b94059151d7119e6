"""onnxruntime-quantized twins of the pretrained RapidOCR models (the 8-bit baseline of each).

    python models/real/make_ort_ocr.py

``onnxruntime.quantization.quantize_static`` (QDQ, per-channel int8 weights, int8
activations, MinMax) calibrated on 64 crops of the photographs
(``hexnn_import/testing/photos.py``, split "calib") at the manifest's input size,
normalized as the manifest says, after ``quant_pre_process``. Writes
``rapidocr_*_qdq.onnx`` and ``manifest_ocr_qdq.json`` with each file's
onnxruntime int8-vs-float SQNR on 16 test crops. Needs onnxruntime (the test
extra) and the rapidocr float files already in models/real/.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

from hexnn_import.testing.real_models import REAL, float_inputs, load_manifest

NAMES = ("rapidocr_ppocr_mobile_v2_cls.onnx", "rapidocr_ppocrv3_det.onnx")


def sqnr(a: np.ndarray, b: np.ndarray) -> float:
    return float(10 * np.log10(np.sum(a.astype(np.float64) ** 2) / max(np.sum((a - b).astype(np.float64) ** 2), 1e-30)))


def make(entry: dict) -> dict:
    src = REAL / entry["file"]
    dst = REAL / entry["file"].replace(".onnx", "_qdq.onnx")
    cal = float_inputs(entry, 64, "calib")

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(cal[k:k + 1] for k in range(len(cal)))

        def get_next(self) -> dict | None:
            x = next(self.it, None)
            return None if x is None else {"x": x}

    with tempfile.TemporaryDirectory() as d:
        pre = Path(d) / "pre.onnx"
        quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        quantize_static(str(pre), str(dst), Reader(), quant_format=QuantFormat.QDQ, per_channel=False,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    f = ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    q = ort.InferenceSession(str(dst), so, providers=["CPUExecutionProvider"])
    x = float_inputs(entry, 16)
    a = np.stack([f.run(None, {"x": x[k:k + 1]})[0] for k in range(16)])
    b = np.stack([q.run(None, {"x": x[k:k + 1]})[0] for k in range(16)])
    out = dict(entry, file=dst.name, quant="qdq", float_reference=entry["file"], int8_vs_float_db=round(sqnr(a, b), 2),
               source=f"{entry['file']} (pretrained, see its entry) -> onnxruntime {ort.__version__} "
                      "quant_pre_process + quantize_static QDQ per-tensor int8 (per-channel writes an axis attribute this opset-10 model cannot hold), MinMax on 64 photo crops",
               made_by="models/real/make_ort_ocr.py")
    out.pop("manifest", None)
    print(dst.name, dst.stat().st_size, "int8 vs float", out["int8_vs_float_db"], "dB")
    return out


def main() -> None:
    entries = {e["file"]: e for e in load_manifest()}
    made = [make(entries[n]) for n in NAMES]
    (REAL / "manifest_ocr_qdq.json").write_text(json.dumps(made, indent=1) + "\n")


if __name__ == "__main__":
    main()
