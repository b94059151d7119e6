"""Train an ultralytics YOLOv8n detector on digits pasted on noisy 96x96 canvases; export it to ONNX (float and QDQ).

Runs only in a development venv with ``ultralytics``, ``torch`` (CPU), ``onnx``, ``onnxslim``, ``onnxruntime``
and ``scikit-learn`` (``YOLO_OFFLINE=1``; no weights are downloaded: the network is built from ``yolov8n.yaml``
and trained from scratch). From the repository root::

    YOLO_OFFLINE=1 python models/real/make_families_yolo.py all     # data, train, export, check, manifest

writes into ``models/real/families/``

* ``torch_yolov8n_digits_float.onnx``: ultralytics' own export (``simplify=True``, static 1x3x96x96), one output
  ``[1, 4 + 10, 189]`` (boxes cx, cy, w, h in pixels, then the ten class scores after sigmoid; no NMS);
* ``torch_yolov8n_digits_qdq.onnx``: onnxruntime's ``quantize_static`` of it (QDQ, uint8 activations, int8
  weights per tensor, 64 training canvases);
* ``digits_yolo96_test.npz``: ``images`` float32 [N, 3, 96, 96] (RGB / 255, NCHW: the model's input),
  ``boxes`` float32 [N, 3, 4] (x1, y1, x2, y2 in pixels, -1 where absent), ``classes`` int64 [N, 3] (-1 absent);
* ``manifest_yolo.json``: the family-manifest entries (task "yolo", family "detector").

The canvases: grey noise (level 0-40 of 255, noise sigma 12), 1-3 digits from scikit-learn's digits (the split of
``models/make_digits.py``: seed 20260315, test_size 0.25, stratified; training canvases from the training digits,
test canvases from the held-out ones), each upscaled 2-4x (nearest), scaled to 150-255 and pasted (max) at random
places without overlap; the box is the digit's inked pixels; the class is the digit.

Training is bounded by wall time (ultralytics' ``time``, 0.12 h; it fits the epoch count to the machine's speed:
9 epochs on 2 shared cores), so a rerun on another machine gives other weights; the canvases are seeded.
ultralytics' validator imports torchvision, whose C ops do not load against torch 2.13 in this venv; see
:func:`stub_torchvision`.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

SEED = 20260315
SIZE = 96
MAX_OBJ = 3
ROOT = Path(__file__).resolve().parent
OUT = ROOT / "families"
WORK = Path(os.environ.get("YOLO_WORK", "/tmp/yolo_digits_work"))
FLOAT = OUT / "torch_yolov8n_digits_float.onnx"
QDQ = OUT / "torch_yolov8n_digits_qdq.onnx"
DATA = OUT / "digits_yolo96_test.npz"
MANIFEST = OUT / "manifest_yolo.json"
N_TRAIN, N_TEST, N_CAL = 3000, 100, 64
TRAIN_HOURS = float(os.environ.get("YOLO_TRAIN_HOURS", "0.12"))  # ultralytics' ``time``: 7.2 min of training


def load_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The digits split of ``models/make_digits.py`` (images / 16 as float32 [n, 8, 8])."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)
    return tuple(train_test_split(x, d.target.astype(np.int64), test_size=0.25, random_state=SEED,
                                  stratify=d.target))  # type: ignore[return-value]


def canvas(rng: np.random.Generator, digits: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, list, list]:
    """One grey uint8 canvas [96, 96] with 1-3 digits; their boxes (x1, y1, x2, y2 pixels) and classes."""
    img = rng.uniform(0, 40) + rng.normal(0, 12, (SIZE, SIZE))
    boxes: list[list[float]] = []
    classes: list[int] = []
    for _ in range(int(rng.integers(1, MAX_OBJ + 1))):
        k, s = int(rng.integers(len(digits))), int(rng.integers(2, 5))
        patch = np.kron(digits[k], np.ones((s, s), np.float32)) * rng.uniform(150, 255)
        ys, xs = np.nonzero(patch > 0)
        for _try in range(30):
            oy, ox = rng.integers(0, SIZE - patch.shape[0] + 1, 2)
            b = [ox + xs.min(), oy + ys.min(), ox + xs.max() + 1, oy + ys.max() + 1]
            if all(b[2] <= c[0] or c[2] <= b[0] or b[3] <= c[1] or c[3] <= b[1] for c in boxes):
                img[oy:oy + patch.shape[0], ox:ox + patch.shape[1]] = np.maximum(
                    img[oy:oy + patch.shape[0], ox:ox + patch.shape[1]], patch)
                boxes.append([float(v) for v in b])
                classes.append(int(labels[k]))
                break
    return np.clip(img, 0, 255).astype(np.uint8), boxes, classes


def make_data() -> Path:
    """Write the YOLO-format data set under WORK and the test npz; return the data yaml."""
    from PIL import Image

    xtr, xte, ytr, yte = load_split()
    rng = np.random.default_rng(SEED)
    shutil.rmtree(WORK / "data", ignore_errors=True)
    test = {"images": [], "boxes": [], "classes": []}
    for split, n, xs, ys in (("train", N_TRAIN, xtr, ytr), ("test", N_TEST, xte, yte)):
        (WORK / "data" / "images" / split).mkdir(parents=True)
        (WORK / "data" / "labels" / split).mkdir(parents=True)
        for i in range(n):
            img, boxes, classes = canvas(rng, xs, ys)
            Image.fromarray(img).convert("RGB").save(WORK / "data" / "images" / split / f"{i:05d}.png")
            b = np.array(boxes, np.float64) / SIZE
            lines = [f"{c} {(x1 + x2) / 2:.6f} {(y1 + y2) / 2:.6f} {x2 - x1:.6f} {y2 - y1:.6f}"
                     for c, (x1, y1, x2, y2) in zip(classes, b)]
            (WORK / "data" / "labels" / split / f"{i:05d}.txt").write_text("\n".join(lines) + "\n")
            if split == "test":
                pb, pc = -np.ones((MAX_OBJ, 4), np.float32), -np.ones(MAX_OBJ, np.int64)
                pb[:len(boxes)], pc[:len(classes)] = boxes, classes
                test["images"].append(np.repeat(img[None].astype(np.float32) / 255.0, 3, 0))
                test["boxes"].append(pb)
                test["classes"].append(pc)
    OUT.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **{k: np.stack(v) for k, v in test.items()})
    yaml = WORK / "digits.yaml"
    yaml.write_text(f"path: {WORK / 'data'}\ntrain: images/train\nval: images/test\n"
                    f"names: {json.dumps({i: str(i) for i in range(10)})}\n")
    return yaml


def stub_torchvision() -> None:
    """torchvision 0.28's C ops do not load against torch 2.13 ("operator torchvision::nms does not exist") and
    ultralytics' validator imports it; a stand-in module whose ``ops.nms`` is ultralytics' own TorchNMS."""
    import types

    tv, ops = types.ModuleType("torchvision"), types.ModuleType("torchvision.ops")
    tv.__version__, tv.ops = "0.28.0", ops

    def nms(boxes, scores, iou_threshold):  # type: ignore[no-untyped-def]
        from ultralytics.utils.nms import TorchNMS

        return TorchNMS.nms(boxes, scores, iou_threshold)

    ops.nms = nms
    sys.modules.update({"torchvision": tv, "torchvision.ops": ops})


def train(yaml: Path) -> Path:
    """Train from ``yolov8n.yaml`` (random init) for ``TRAIN_HOURS``; return the last weights."""
    from ultralytics import YOLO

    model = YOLO("yolov8n.yaml")
    t0 = time.time()
    model.train(data=str(yaml), imgsz=SIZE, epochs=200, time=TRAIN_HOURS, batch=32, workers=0, device="cpu",
                pretrained=False, amp=False, plots=False, val=False, seed=0, deterministic=True,
                project=str(WORK / "runs"), name="train", exist_ok=True, fliplr=0.0, mosaic=0.5, scale=0.2,
                translate=0.1, hsv_h=0.0, hsv_s=0.0, close_mosaic=2, verbose=False, patience=1000)
    (WORK / "train_seconds.txt").write_text(f"{time.time() - t0:.0f}\n")
    return WORK / "runs" / "train" / "weights" / "last.pt"


def export(weights: Path) -> None:
    """ultralytics' ONNX export of the trained weights, then the QDQ twin."""
    from ultralytics import YOLO

    model = YOLO(str(weights))
    f = model.export(format="onnx", imgsz=SIZE, simplify=True, dynamic=False)
    shutil.copy(f, FLOAT)
    from ultralytics.utils.torch_utils import get_flops

    params = sum(p.numel() for p in model.model.parameters())
    gflops = get_flops(model.model, imgsz=SIZE)  # ultralytics' summary (thop MACs x 2), at 96x96
    (WORK / "info.json").write_text(json.dumps({"params": int(params), "gflops": float(gflops)}))
    quantize()


def calibration() -> np.ndarray:
    """The first N_CAL training canvases as the model takes them (RGB / 255, NCHW)."""
    from PIL import Image

    files = sorted((WORK / "data" / "images" / "train").glob("*.png"))[:N_CAL]
    return np.stack([np.asarray(Image.open(f).convert("RGB"), np.float32).transpose(2, 0, 1) / 255.0
                     for f in files])


def quantize() -> None:
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Reader(CalibrationDataReader):
        def __init__(self, x: np.ndarray) -> None:
            self.x, self.i = x, 0

        def get_next(self) -> dict | None:
            if self.i >= len(self.x):
                return None
            self.i += 1
            return {"images": self.x[self.i - 1:self.i]}

        def rewind(self) -> None:
            self.i = 0

    # the last Concat joins boxes (0-96 pixels) and scores (0-1): one uint8 scale for both leaves every score at
    # 0 or >= 0.38 (onnxruntime then finds 0 of the 198 boxes), so it stays float (its inputs are DequantizeLinear)
    m = onnx.load(str(FLOAT))
    last = [n.name for n in m.graph.node if m.graph.output[0].name in n.output]
    quantize_static(str(FLOAT), str(QDQ), Reader(calibration()), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, nodes_to_exclude=last)
    onnx.checker.check_model(onnx.load(str(QDQ)))


def nms(out: np.ndarray, conf: float = 0.25, iou_thr: float = 0.5) -> tuple[np.ndarray, ...]:
    """Class-aware greedy NMS of one output ``[4 + nc, anchors]`` -> boxes xyxy [k, 4], classes [k], scores [k]."""
    cls, score = out[4:].argmax(0), out[4:].max(0)
    keep = np.nonzero(score >= conf)[0]
    keep = keep[np.argsort(-score[keep], kind="stable")]
    cx, cy, w, h = out[:4, keep]
    b = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1)
    alive, picked = np.ones(len(keep), bool), []
    for i in range(len(keep)):  # over candidate boxes (a few dozen), not tensor elements
        if alive[i]:
            picked.append(i)
            alive &= ~((iou(b[i:i + 1], b)[0] > iou_thr) & (cls[keep] == cls[keep[i]]))
    p = np.array(picked, np.int64)
    return b[p], cls[keep[p]], score[keep[p]]


def iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of xyxy boxes ``a [n, 4]`` against ``b [m, 4]`` -> ``[n, m]``."""
    a, b = a[:, None], b[None]
    inter = (np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
             * np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None))
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])
    return inter / np.maximum(area(a) + area(b) - inter, 1e-9)


def measure(path: Path) -> dict:
    """onnxruntime on the test canvases: the share of true boxes found (same class, IoU >= 0.5, conf >= 0.25)."""
    import onnxruntime as ort

    d = np.load(DATA)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    outs = np.concatenate([sess.run(None, {"images": d["images"][k:k + 1]})[0] for k in range(len(d["images"]))])
    found = total = 0
    seen: set[int] = set()
    for o, gb, gc in zip(outs, d["boxes"], d["classes"]):
        b, c, _ = nms(o)
        seen.update(int(v) for v in c)
        gb, gc = gb[gc >= 0], gc[gc >= 0]
        total += len(gc)
        if len(c):
            found += int(((iou(gb, b) >= 0.5) & (gc[:, None] == c[None])).any(1).sum())
    return {"box_recall": round(found / total, 4), "true_boxes": total, "distinct": len(seen),
            "output_std": round(float(outs.std()), 4), "across_images_std": round(float(outs.std(0).mean()), 4)}


def write_manifest() -> list[dict]:
    """The two manifest entries (family-manifest schema, task "yolo")."""
    import onnx
    import onnxruntime as ort
    import torch
    import ultralytics

    info = json.loads((WORK / "info.json").read_text())
    secs = (WORK / "train_seconds.txt").read_text().strip()
    epochs = len((WORK / "runs" / "train" / "results.csv").read_text().strip().splitlines()) - 1
    figs = {p: measure(p) for p in (FLOAT, QDQ)}
    entries = []
    for p, quant in ((FLOAT, "float"), (QDQ, "qdq")):
        m = onnx.load(str(p))
        ops = sorted({n.op_type for n in m.graph.node})
        src = (f"ultralytics {ultralytics.__version__}, torch {torch.__version__}, onnx {onnx.__version__}, "
               f"onnxruntime {ort.__version__}; YOLOv8n (yolov8n.yaml, nc 10, random init) trained on {N_TRAIN} "
               f"96x96 canvases of 1-3 training digits (optimizer auto: AdamW lr 0.000714, batch 32, time {TRAIN_HOURS} h: {epochs} epochs in "
               f"{secs} s, "
               f"fliplr 0, mosaic 0.5, seed 0); YOLO.export(format='onnx', imgsz=96, simplify=True, dynamic=False)"
               + ("; quantize_static QDQ uint8 activations / int8 weights per tensor on 64 training canvases, the last "
                  "Concat (boxes with scores) excluded: it stays float"
                  if quant == "qdq" else ""))
        f = figs[p]
        entries.append({
            "file": p.name, "family": "detector", "source": src, "quant": quant,
            "float_reference": FLOAT.name if quant == "qdq" else None,
            "inputs": [{"name": "images", "shape": [1, 3, SIZE, SIZE], "dtype": "float32"}],
            "data": DATA.name, "task": "yolo", "params": info["params"], "macs": round(info["gflops"] * 5e8),
            "flops": round(info["gflops"] * 1e9), "ops": ops,
            "opset": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
            "size_bytes": p.stat().st_size, "runtime_accuracy": f["box_recall"],
            "float_accuracy": figs[FLOAT]["box_recall"], "distinct_top1": f["distinct"],
            "output_std": f["output_std"],
            "notes": (f"output [1, 14, 189] (cx, cy, w, h pixels, 10 class scores), no NMS; 'runtime_accuracy' is the "
                      f"share of the {f['true_boxes']} true boxes of the test canvases found by onnxruntime after "
                      f"numpy NMS (same class, IoU >= 0.5, score >= 0.25, NMS IoU 0.5); 'distinct_top1' the "
                      f"distinct classes detected; per-anchor std across images {f['across_images_std']}"),
            "made_by": f"models/real/make_families_yolo.py {quant}"})
    MANIFEST.write_text(json.dumps(entries, indent=1) + "\n")
    print(json.dumps({p.name: f for p, f in figs.items()}, indent=1))
    return entries


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else "all"
    stub_torchvision()
    if step in ("data", "all"):
        make_data()
    if step in ("train", "all"):
        train(WORK / "digits.yaml")
    if step in ("export", "all"):
        export(WORK / "runs" / "train" / "weights" / "last.pt")
    if step in ("check", "all"):
        write_manifest()
