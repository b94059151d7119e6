"""A small SSD-style digit detector ending in ``TFLite_Detection_PostProcess`` (development venv only).

Run through ``/work/venv-tf/bin/python models/real/make_families_keras.py ssd``; writes
``families/keras_ssd_digits_{float,int8}.tflite`` and ``families/digits_canvas32_test.npz``.

Data: each held-out (or training) digit, upsampled bilinear to a random side of 10..16 pixels, pasted at a random
place on a black 32x32x1 canvas (pixels in [0, 1]); its box (ymin, xmin, ymax, xmax, normalized) and class are known.
Training canvases: 4 per training digit, redrawn with other seeds than the test canvases.

Network: Conv 16 3x3 s2, Conv 32 3x3, Conv 32 3x3 s2, Conv 64 3x3 (ReLU, SAME) -> an 8x8 grid; two 3x3 heads give
per cell and per anchor (2 anchors: 12 and 16 pixels squares at the cell centre) 4 box encodings (the OD API's
faster_rcnn box coder, scales 10, 10, 5, 5) and 11 class logits (background first); SOFTMAX score conversion.
Matching: each box's best anchor and every anchor of IoU >= 0.5; loss = softmax cross-entropy over all anchors
(positives weighted 3x) + smooth-L1 of the positives' encodings.

Export follows the TensorFlow Object Detection API's TF2 TFLite export (``export_tflite_graph_lib_tf2.py``,
``SSDModule``): a ``tf.Module`` whose ``inference_fn`` runs the network, applies the score conversion, and hands
box encodings [1, A, 4], class scores [1, A, 11] and the constant centre-size anchors [A, 4] to an empty
``tf.function`` with ``experimental_implements`` = the ``TFLite_Detection_PostProcess`` signature (max_detections,
max_classes_per_detection, use_regular_nms, nms thresholds, y/x/h/w scales, num_classes), which the MLIR converter
legalizes to the custom op; the module is saved as a SavedModel and converted with ``from_saved_model``.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

SCALES = (10.0, 10.0, 5.0, 5.0)  # y, x, h, w of the faster_rcnn box coder
GRID, SIZES, CANVAS = 8, (12.0, 16.0), 32
NMS = {"max_detections": 10, "max_classes_per_detection": 1, "use_regular_nms": False,
       "nms_score_threshold": 0.1, "nms_iou_threshold": 0.5}


def anchors() -> np.ndarray:
    """Centre-size anchors [A, 4] (ycenter, xcenter, h, w), normalized; cell-major, then anchor size."""
    c = (np.arange(GRID) + 0.5) / GRID
    yy, xx = np.meshgrid(c, c, indexing="ij")
    a = [np.stack([yy, xx, np.full_like(yy, s / CANVAS), np.full_like(xx, s / CANVAS)], -1) for s in SIZES]
    return np.stack(a, 2).reshape(-1, 4).astype(np.float32)


def canvases(digits: np.ndarray, labels: np.ndarray, seed: int, copies: int = 1):
    """Canvases [N, 32, 32, 1], boxes [N, 4] (ymin, xmin, ymax, xmax normalized) and labels [N]."""
    import tensorflow as tf
    rng = np.random.default_rng(seed)
    digits, labels = np.repeat(digits, copies, 0), np.repeat(labels, copies, 0)
    n = len(digits)
    side = rng.integers(10, 17, n)
    out = np.zeros((n, CANVAS, CANVAS, 1), np.float32)
    boxes = np.zeros((n, 4), np.float32)
    for s in np.unique(side):  # one resize per side length
        idx = np.nonzero(side == s)[0]
        up = np.clip(tf.image.resize(digits[idx, :, :, None], (int(s), int(s)), method="bilinear").numpy(), 0, 1)
        y0, x0 = rng.integers(0, CANVAS - s + 1, len(idx)), rng.integers(0, CANVAS - s + 1, len(idx))
        rows = y0[:, None] + np.arange(s)[None, :]
        cols = x0[:, None] + np.arange(s)[None, :]
        out[idx[:, None, None], rows[:, :, None], cols[:, None, :]] = up
        boxes[idx] = np.stack([y0, x0, y0 + s, x0 + s], -1) / CANVAS
    return out, boxes, labels


def iou(boxes: np.ndarray, anc: np.ndarray) -> np.ndarray:
    """IoU [N, A] of corner boxes [N, 4] with centre-size anchors [A, 4]."""
    a = np.concatenate([anc[:, :2] - anc[:, 2:] / 2, anc[:, :2] + anc[:, 2:] / 2], -1)
    lo = np.maximum(boxes[:, None, :2], a[None, :, :2])
    hi = np.minimum(boxes[:, None, 2:], a[None, :, 2:])
    inter = np.prod(np.clip(hi - lo, 0, None), -1)
    area = lambda b: (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])  # noqa: E731
    return inter / (area(boxes)[:, None] + area(a)[None, :] - inter)


def targets(boxes: np.ndarray, labels: np.ndarray, anc: np.ndarray) -> np.ndarray:
    """[N, A, 5]: faster_rcnn encodings of each anchor's box, then its class (0 = background, 1 + digit)."""
    m = iou(boxes, anc)
    pos = m >= 0.5
    pos[np.arange(len(boxes)), m.argmax(1)] = True
    yc, xc = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    h, w = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    enc = np.stack([(yc[:, None] - anc[None, :, 0]) / anc[None, :, 2] * SCALES[0],
                    (xc[:, None] - anc[None, :, 1]) / anc[None, :, 3] * SCALES[1],
                    np.log(h[:, None] / anc[None, :, 2]) * SCALES[2],
                    np.log(w[:, None] / anc[None, :, 3]) * SCALES[3]], -1)
    cls = np.where(pos, labels[:, None] + 1, 0)
    return np.concatenate([enc, cls[..., None]], -1).astype(np.float32)


def build(batch):
    """The detector's trunk and heads: image [B, 32, 32, 1] -> [B, A, 4 + 11] (encodings, class logits)."""
    import keras
    L = keras.layers
    inp = keras.Input((CANVAS, CANVAS, 1), batch_size=batch, name="image")
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = L.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = L.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = L.Conv2D(64, 3, padding="same", activation="relu")(x)
    na = len(SIZES)
    box = L.Reshape((GRID * GRID * na, 4))(L.Conv2D(4 * na, 3, padding="same", name="box_head")(x))
    cls = L.Reshape((GRID * GRID * na, 11))(L.Conv2D(11 * na, 3, padding="same", name="class_head")(x))
    return keras.Model(inp, L.Concatenate(-1)([box, cls]))


def loss_fn(y_true, y_pred):
    import tensorflow as tf
    cls = tf.cast(y_true[..., 4], tf.int32)
    pos = tf.cast(cls > 0, tf.float32)
    ce = tf.keras.losses.sparse_categorical_crossentropy(cls, y_pred[..., 4:], from_logits=True)
    d = tf.abs(y_true[..., :4] - y_pred[..., :4])
    sl1 = tf.reduce_sum(tf.where(d < 1.0, 0.5 * d * d, d - 0.5), -1)
    npos = tf.maximum(tf.reduce_sum(pos), 1.0)
    return (tf.reduce_sum(ce * (1.0 + 2.0 * pos)) + tf.reduce_sum(sl1 * pos)) / npos


def signature() -> str:
    """The ``experimental_implements`` string of the OD API's ``postprocess_implements_signature``."""
    a = [f'name: "TFLite_Detection_PostProcess"',
         f'attr {{ key: "max_detections" value {{ i: {NMS["max_detections"]} }} }}',
         f'attr {{ key: "max_classes_per_detection" value {{ i: {NMS["max_classes_per_detection"]} }} }}',
         f'attr {{ key: "use_regular_nms" value {{ b: {str(NMS["use_regular_nms"]).lower()} }} }}',
         f'attr {{ key: "nms_score_threshold" value {{ f: {NMS["nms_score_threshold"]:f} }} }}',
         f'attr {{ key: "nms_iou_threshold" value {{ f: {NMS["nms_iou_threshold"]:f} }} }}']
    a += [f'attr {{ key: "{k}_scale" value {{ f: {v:f} }} }}' for k, v in zip("yxhw", SCALES)]
    a.append('attr { key: "num_classes" value { i: 10 } }')
    return " ".join(a)


def saved_model(net, where: Path) -> Path:
    """Save the OD-API-style inference module (network, softmax score conversion, anchors, custom op)."""
    import tensorflow as tf
    anc = tf.constant(anchors())

    @tf.function(experimental_implements=signature())
    def dummy_post_processing(box_encodings, class_predictions, anchors_):  # noqa: ARG001 - legalized away
        boxes = tf.constant(0.0, dtype=tf.float32, name="boxes")
        scores = tf.constant(0.0, dtype=tf.float32, name="scores")
        classes = tf.constant(0.0, dtype=tf.float32, name="classes")
        num_detections = tf.constant(0.0, dtype=tf.float32, name="num_detections")
        return boxes, classes, scores, num_detections

    class SSDModule(tf.Module):
        def __init__(self):
            super().__init__()
            self.net = net
            # the keras 3 variables' own tf.Variables, tracked directly: otherwise the converter keeps them as
            # resource variables (VAR_HANDLE / READ_VARIABLE) instead of freezing them into constants
            self.tf_variables = [v.value for v in net.variables]

        @tf.function
        def inference_fn(self, image):
            out = self.net(image, training=False)
            box_encodings = tf.identity(out[..., :4], name="box_encodings")
            class_predictions = tf.identity(tf.nn.softmax(out[..., 4:]), name="class_predictions")
            return dummy_post_processing(box_encodings, class_predictions, anc)[::-1]

    module = SSDModule()
    fn = module.inference_fn.get_concrete_function(tf.TensorSpec([1, CANVAS, CANVAS, 1], tf.float32, name="input"))
    tf.saved_model.save(module, str(where), signatures=fn)
    return where


def train(net, x: np.ndarray, t: np.ndarray, seconds: float, lr: float = 3e-3, batch: int = 64) -> str:
    import keras
    keras.utils.set_random_seed(20260315)
    net.compile(optimizer=keras.optimizers.Adam(lr), loss=loss_fn)
    t0, epochs = time.time(), 60

    class Clock(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            frac = min(1.0, max((time.time() - t0) / seconds, epoch / epochs))
            self.model.optimizer.learning_rate.assign(lr * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * frac))))

        def on_epoch_end(self, epoch, logs=None):
            print(f"  epoch {epoch + 1} t {time.time() - t0:.0f}s loss {logs['loss']:.3f}", flush=True)
            if time.time() - t0 > seconds:
                self.model.stop_training = True
    h = net.fit(x, t, batch_size=batch, epochs=epochs, verbose=0, shuffle=True, callbacks=[Clock()])
    return (f"trained {len(h.history['loss'])} epochs (batch {batch}, Adam lr {lr} cosine over the time budget) in "
            f"{time.time() - t0:.0f} s on {len(x)} training canvases")


def score(dets: dict, boxes: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """Accuracy (top detection of the right class with IoU >= 0.5) and the top detections' classes."""
    top_box, top_cls = dets["boxes"][:, 0], dets["classes"][:, 0].astype(np.int64)
    lo, hi = np.maximum(top_box[:, :2], boxes[:, :2]), np.minimum(top_box[:, 2:], boxes[:, 2:])
    inter = np.prod(np.clip(hi - lo, 0, None), -1)
    area = lambda b: (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])  # noqa: E731
    ok = (top_cls == labels) & (inter / (area(top_box) + area(boxes) - inter) >= 0.5) & (dets["num"] > 0)
    return float(np.mean(ok)), top_cls


def detect(data: bytes, x: np.ndarray) -> dict:
    """Run a detector file in LiteRT on float canvases (quantized on the way in if its input is); the custom op's
    four outputs, in its own order (boxes, classes, scores, number of detections)."""
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=data, num_threads=2)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    post = [op for op in it._get_ops_details() if op["op_name"] == "TFLite_Detection_PostProcess"][0]
    if d["dtype"] != np.float32:
        s, z = d["quantization"]
        info = np.iinfo(d["dtype"])
        x = np.clip(np.round(x / s) + z, info.min, info.max).astype(d["dtype"])
    res = {k: [] for k in ("boxes", "classes", "scores", "num")}
    for i in range(len(x)):
        it.set_tensor(d["index"], x[i:i + 1])
        it.invoke()
        for k, idx in zip(res, post["outputs"]):
            res[k].append(it.get_tensor(int(idx)).copy()[0])
    return {k: np.array(v) for k, v in res.items()}


NOTE = ("output_std: of the valid detection scores; only the first num_detections entries of each output are "
        "meaningful (the first measurement over all 10 slots read a non-finite std): compare only those")


def measure(data: bytes, x: np.ndarray, boxes: np.ndarray, labels: np.ndarray) -> tuple[float, int, float]:
    """(accuracy, distinct top-detection classes, std of the valid scores) of a detector file. Only the first
    ``num_detections`` entries of each output are meaningful."""
    dets = detect(data, x)
    acc, top = score(dets, boxes, labels)
    valid = np.arange(dets["scores"].shape[1])[None, :] < dets["num"].reshape(-1, 1)
    return acc, int(len(np.unique(top))), float(dets["scores"][valid].std())
