"""Make REAL converter-made TFLite models for the acceptance tests (development venv only).

Run from the repository root, in a venv with tensorflow (never a project dependency):

    /work/venv-tf/bin/python models/real/make_keras.py [names...]      # keras models
    /work/venv-tf2/bin/python models/real/make_keras.py aeq mediapipe  # ai-edge-quantizer, mediapipe files
    /work/venv-tf2/bin/python models/real/make_keras.py check          # run every file in LiteRT

Names: cnn mobilenet mobilenet_v2 mobilenet_v2_full mobilenet_v3 efficientnet dscnn person uint8 uint8_v1 aeq mediapipe
measure check.
Every keras model but ``mobilenet_v2_full`` is trained (time-capped, TRAIN_SECONDS overrides the cap) on the
inputs the tests use: augmented random crops of the two photographs, drawn like ``photo_batch`` (``CropSampler``),
labelled by where the crop centre lies (photo x 5 strips = 10 classes; photo x 6 strips for DS-CNN; which photo
for person_detect).
It is then written by ``tf.lite.TFLiteConverter.from_keras_model`` as it emits them (no edits):
``*_float.tflite`` (float32), ``*_int8.tflite`` (full-integer, int8 I/O) and ``*_int8_floatio.tflite``
(full-integer inside, float I/O with QUANTIZE/DEQUANTIZE at the edges). The representative dataset is 128
photo crops (``photo_batch(split="calib")``) mapped to the model's input range. Every quantized file is measured
against its float twin on 24 ``photo_batch(split="test")`` crops (``int8_vs_float_db``, ``top1_vs_float`` in
the manifest; ``measure`` redoes this with ai-edge-litert).
Each made file gets an entry in ``manifest_keras.json`` (merged by file name).
``mobilenet_v2_full`` is the stock full-size ``MobileNetV2`` (alpha 1.0, 224x224x3, 1000 classes, softmax), not
trained (too slow on 2 cores): ImageNet weights cannot be fetched here, so it has ``weights=None`` (or the keras
weights file named by ``MNV2_WEIGHTS``), BN beta 2 before each ReLU6 and the "precise BN" step; int8 I/O only,
written as ``keras_mobilenet_v2_1.0_224_int8.tflite``, its float twin left in /tmp for ``measure``.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFEST = HERE / "manifest_keras.json"
SEED = 20260315
TRAIN_SECONDS = 80.0

_spec = importlib.util.spec_from_file_location("photos", ROOT / "hexnn_import" / "testing" / "photos.py")
photos = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(photos)


# ----------------------------------------------------------------------------- helpers

def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    try:
        tf.config.threading.set_intra_op_parallelism_threads(2)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:  # already initialized
        pass
    return tf


def versions() -> str:
    tf = _tf()
    import keras
    return f"tensorflow {tf.__version__}, keras {keras.__version__}"


def manifest_update(entries: list[dict]) -> None:
    old = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else []
    names = {e["file"] for e in entries}
    merged = [e for e in old if e["file"] not in names] + entries
    merged.sort(key=lambda e: e["file"])
    MANIFEST.write_text(json.dumps(merged, indent=1) + "\n")


class CropSampler:
    """Crops of the two photographs drawn exactly as ``photo_batch`` draws them (same random sequence for a
    given integer seed, so seed 1234 reproduces ``split="test"`` and 5678 ``split="calib"``), from
    precomputed integral images, with the crop's photo and centre so that a label can be derived.

    Task (10 classes): ``photo_id * 5 + band``, band = which of 5 equal vertical strips (left to right,
    over the range of possible crop centres) holds the crop centre. 12 classes: photo x 6 strips;
    2 classes: which photo (china / flower: an easy task with decisive outputs)."""

    TEST, CALIB = 1234, 5678

    def __init__(self, h, w, c, classes):
        src = photos.load_photos().astype(np.float64)
        if c == 1:
            src = src @ np.array([0.299, 0.587, 0.114])[:, None]
        self.h, self.w, self.c, self.classes = h, w, c, classes
        self.src = src
        self.cs = []
        for img in src:
            cs = np.zeros((img.shape[0] + 1, img.shape[1] + 1, img.shape[2]), np.float64)
            cs[1:, 1:] = img.cumsum(0).cumsum(1)
            self.cs.append(cs)
        H, W = src.shape[1:3]
        side_min = int(min(H, W) * 0.35)
        cw_min = min(W, int(round(side_min * w / max(h, 1))))
        self.lo, self.hi = cw_min / 2.0, W - cw_min / 2.0

    def _box(self, k, y, x, ch, cw):
        h, w = self.h, self.w
        ys = np.linspace(0, ch, h + 1).astype(int)
        xs = np.linspace(0, cw, w + 1).astype(int)
        ys[1:] = np.maximum(ys[1:], ys[:-1] + 1)
        xs[1:] = np.maximum(xs[1:], xs[:-1] + 1)
        ys, xs = np.minimum(ys, ch), np.minimum(xs, cw)
        y0, y1 = y + ys[:-1], y + np.maximum(ys[1:], ys[:-1] + 1)
        x0, x1 = x + xs[:-1], x + np.maximum(xs[1:], xs[:-1] + 1)
        cs = self.cs[k]
        tot = cs[y1][:, x1] - cs[y0][:, x1] - cs[y1][:, x0] + cs[y0][:, x0]
        return tot / ((y1 - y0)[:, None] * (x1 - x0)[None, :])[..., None]

    def label(self, k, cx):
        u = (cx - self.lo) / (self.hi - self.lo)
        if self.classes == 2:
            return k
        nb = self.classes // 2
        return k * nb + int(np.clip(np.floor(u * nb), 0, nb - 1))

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        x = np.empty((n, self.h, self.w, self.c), np.float32)
        y = np.empty(n, np.int64)
        H, W = self.src.shape[1:3]
        for i in range(n):
            k = i % len(self.src)
            side = int(min(H, W) * rng.uniform(0.35, 1.0))
            ch, cw = side, min(W, int(round(side * self.w / max(self.h, 1))))
            yy = int(rng.integers(0, H - ch + 1))
            xx = int(rng.integers(0, W - cw + 1))
            x[i] = self._box(k, yy, xx, ch, cw)
            y[i] = self.label(k, xx + cw / 2.0)
        return x, y

    def augment(self, x, y, rng):
        """Horizontal flip (label strip mirrored), contrast x0.8-1.2, brightness +-20, clipped to 0..255."""
        x = x.copy()
        y = y.copy()
        flip = rng.random(len(x)) < 0.5
        x[flip] = x[flip, :, ::-1]
        nb = self.classes // 2 if self.classes > 2 else 2
        if self.classes > 2:
            y[flip] = (y[flip] // nb) * nb + (nb - 1 - y[flip] % nb)
        m = x.mean(axis=(1, 2, 3), keepdims=True)
        a = rng.uniform(0.8, 1.2, (len(x), 1, 1, 1))
        b = rng.uniform(-20, 20, (len(x), 1, 1, 1))
        return np.clip((x - m) * a + m + b, 0, 255).astype(np.float32), y


def count_macs(model) -> int:
    """Multiply-accumulates per image of the Conv2D / DepthwiseConv2D / Dense layers (others ignored)."""
    import keras
    macs = 0
    for layer in _all_layers(model):
        if isinstance(layer, keras.layers.DepthwiseConv2D):
            out = layer.output.shape
            kh, kw = layer.kernel_size
            macs += int(np.prod(out[1:])) * kh * kw
        elif isinstance(layer, keras.layers.Conv2D):
            out = layer.output.shape
            kh, kw = layer.kernel_size
            cin = layer.input.shape[-1] // layer.groups
            macs += int(np.prod(out[1:])) * kh * kw * cin
        elif isinstance(layer, keras.layers.Dense):
            out = layer.output.shape
            macs += int(np.prod(out[1:])) * layer.input.shape[-1]
    return int(macs)


def _all_layers(model):
    import keras
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            yield from _all_layers(layer)
        else:
            yield layer


def train(model, sampler: CropSampler, scale: float, offset: float, seconds: float, from_logits: bool = True,
          lr: float = 2e-3, batch: int = 64, chunk: int = 1024, noise: float = 0.0) -> str:
    """AdamW (weight decay 1e-4), label smoothing 0.1, cosine learning-rate decay over the time cap,
    fresh augmented photo crops every chunk (integer seeds 1000+, never the test / calib seeds).
    ``noise`` > 0 adds a stability term: mean squared logit change under input + N(0, noise) (input units).
    At the end the BatchNorm moving statistics are recomputed on 48 fresh batches (momentum 0.9)."""
    import keras
    tf = _tf()
    keras.utils.set_random_seed(SEED)
    t0 = time.time()
    opt = keras.optimizers.AdamW(learning_rate=lr, weight_decay=1e-4)
    ce = keras.losses.CategoricalCrossentropy(from_logits=from_logits, label_smoothing=0.1)
    k = sampler.classes
    rng = np.random.default_rng(SEED)

    @tf.function(reduce_retracing=True)
    def step(x, y, lr_now):
        opt.learning_rate.assign(lr_now)
        with tf.GradientTape() as tape:
            out = model(x, training=True)
            loss = ce(y, out)
            if noise > 0:
                out2 = model(x + tf.random.normal(tf.shape(x), stddev=noise), training=True)
                loss += tf.reduce_mean(tf.square(out - out2))
            loss += sum(model.losses) if model.losses else 0.0
        g = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(g, model.trainable_variables))
        acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(out, -1), tf.argmax(y, -1)), tf.float32))
        return loss, acc

    steps = n_chunk = 0
    while time.time() - t0 < seconds:
        x, y = sampler.sample(chunk, 1000 + n_chunk)
        x, y = sampler.augment(x, y, rng)
        x = (x * scale + offset).astype(np.float32)
        yy = np.eye(k, dtype=np.float32)[y]
        perm = rng.permutation(chunk)
        losses, accs = [], []
        for i in range(0, chunk - batch + 1, batch):
            frac = min(1.0, (time.time() - t0) / seconds)
            lr_now = np.float32(lr * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * frac))))
            l, a_ = step(tf.constant(x[perm[i:i + batch]]), tf.constant(yy[perm[i:i + batch]]), lr_now)
            losses.append(float(l))
            accs.append(float(a_))
            steps += 1
            if time.time() - t0 > seconds:
                break
        n_chunk += 1
        print(f"  chunk {n_chunk} step {steps} t {time.time() - t0:.0f}s loss {np.mean(losses):.3f} "
              f"acc {np.mean(accs):.3f}", flush=True)
    took = time.time() - t0
    bns = precise_bn(model, sampler, scale, offset)
    xt, yt = sampler.sample(480, CropSampler.TEST)
    pred = np.argmax(model.predict((xt * scale + offset).astype(np.float32), verbose=0, batch_size=64), -1)
    task = {2: "which of the two photos", 10: "photo x 5 strips of the crop centre",
            12: "photo x 6 strips of the crop centre"}[k]
    msg = (f"trained {steps} steps (batch {batch}) in {took:.0f} s on augmented random crops of the two photos, "
           f"{k}-class task ({task}); AdamW lr {lr} cosine, weight decay 1e-4, label smoothing 0.1"
           + (f", noise-stability term (sigma {noise:g})" if noise > 0 else "")
           + ("; BN moving statistics then set to the exact inference-mode statistics of 384 fresh crops, layer by layer" if bns else "") + f"; accuracy on 480 held-out test-split crops "
           f"{np.mean(pred == yt) * 100:.1f}%")
    print(msg, flush=True)
    model._task_accuracy = float(np.mean(pred == yt))
    return msg


def precise_bn(model, sampler: CropSampler, scale: float, offset: float, n: int = 384, seed: int = 900,
               batch: int = 128) -> int:
    """"Precise BN": in topological order, set each BatchNormalization's moving mean / variance to the exact
    statistics of its input in inference mode (upstream BNs already set), over ``n`` fresh crops (integer seed
    ``seed``, never the test / calib seeds). The per-channel mean and (population) variance are accumulated in
    float64 batch by batch (sums of the input less the first batch's channel mean, so no float64 copy of a
    batch is made), equal to those of all ``n`` crops at once to float32 precision.
    Returns the number of BN layers set."""
    import keras
    bns = [ly for ly in _all_layers(model) if isinstance(ly, keras.layers.BatchNormalization)]
    if not bns:
        return 0
    xb, _ = sampler.sample(n, seed)
    xb = (xb * scale + offset).astype(np.float32)
    t0 = time.time()
    for k, ly in enumerate(bns):
        sub = keras.Model(model.inputs, ly.input)
        cnt, s1, s2, shift = 0, 0.0, 0.0, None
        for i in range(0, len(xb), batch):
            a = np.asarray(sub(xb[i:i + batch], training=False))
            a = a.reshape(-1, a.shape[-1])
            if shift is None:
                shift = a.mean(0, dtype=np.float64).astype(a.dtype)
            d = a - shift
            s1 = s1 + d.sum(0, dtype=np.float64)
            s2 = s2 + np.square(d).sum(0, dtype=np.float64)
            cnt += len(d)
        m = s1 / cnt
        ly.moving_mean.assign((shift + m).astype(np.float32))
        ly.moving_variance.assign(np.maximum(s2 / cnt - m * m, 0.0).astype(np.float32))
        if (k + 1) % 10 == 0:
            print(f"  precise BN {k + 1}/{len(bns)} layers, {time.time() - t0:.0f} s", flush=True)
    return len(bns)


def shift_relu_bn(model, beta: float) -> int:
    """Set ``beta`` on every BatchNormalization of a keras MobileNetV2 that feeds a ReLU6 (all but the linear
    ``*_project_BN``), before ``precise_bn``: each ReLU6 then sees about N(beta, 1) instead of N(0, 1). With
    random weights and beta 0 the ReLU halves every perturbation's power but only a third of the signal's power
    is left after the next BN removes the mean (each layer multiplies the int8-vs-float noise power by about 1.5,
    1.7 dB: 0 dB after the 35 ReLU layers); at beta 2 the factor is about 1.02. Returns the number of layers set."""
    import keras
    bns = [ly for ly in _all_layers(model) if isinstance(ly, keras.layers.BatchNormalization)
           and "project" not in ly.name]
    for ly in bns:
        ly.beta.assign(np.full(ly.beta.shape, beta, np.float32))
    return len(bns)


def rep_data(h, w, c, scale, offset, n=128):
    data = (photos.photo_batch(n, h, w, c, split="calib") * scale + offset).astype(np.float32)

    def gen():
        for i in range(len(data)):
            yield [data[i:i + 1]]
    return gen


def _interpreter(path=None, content=None):
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        Interpreter = _tf().lite.Interpreter
    return Interpreter(model_path=str(path) if path else None, model_content=content, num_threads=2)


def run_tflite(model, xf: np.ndarray) -> np.ndarray:
    """Outputs (dequantized to float) of a .tflite file (path) or bytes on a float batch, one sample at a time."""
    it = _interpreter(content=bytes(model)) if isinstance(model, (bytes, bytearray)) else _interpreter(path=model)
    it.allocate_tensors()
    d, od = it.get_input_details()[0], it.get_output_details()[0]
    outs = []
    for i in range(len(xf)):
        xi = xf[i:i + 1]
        if d["dtype"] != np.float32:
            s, z = d["quantization"]
            info = np.iinfo(d["dtype"])
            xi = np.clip(np.round(xi / s) + z, info.min, info.max).astype(d["dtype"])
        it.set_tensor(d["index"], xi.astype(d["dtype"]))
        it.invoke()
        o = it.get_tensor(od["index"]).astype(np.float64)
        if od["dtype"] != np.float32:
            s, z = od["quantization"]
            o = (o - z) * s
        outs.append(o.ravel())
    return np.array(outs)


def vs_float(qmodel, fmodel, inp: dict, n: int = 24) -> dict:
    """SQNR (dB) of the quantized model's (dequantized) output against its float twin, and top-1 agreement,
    on ``n`` test-split photo crops."""
    x = photos.photo_batch(n, inp["height"], inp["width"], inp["channels"], split="test")
    xf = (x * inp["scale"] + inp["offset"]).astype(np.float32)
    f, q = run_tflite(fmodel, xf), run_tflite(qmodel, xf)
    db = 10 * np.log10(np.sum(f * f) / max(np.sum((q - f) ** 2), 1e-30))
    top1 = float(np.mean(np.argmax(f, -1) == np.argmax(q, -1)))
    srt = np.sort(f, -1)
    gap = float(np.min(srt[:, -1] - srt[:, -2]) / np.sqrt(np.mean(f * f)))
    return {"int8_vs_float_db": round(float(db), 1), "top1_vs_float": round(top1, 4), "min_top2_gap_rel": gap}


def convert_all(model, stem: str, rep, desc: str, kind: str, inp: dict, trained: str, which=("float", "int8", "floatio"),
                extra_manifest: dict | None = None, file_names: dict | None = None) -> list[dict]:
    """Convert ``model`` to each variant of ``which`` (``keras_{stem}_{variant}.tflite`` unless ``file_names``
    maps the variant to another file name) and merge their manifest entries."""
    tf = _tf()
    file_names = file_names or {}
    entries = []
    params = int(model.count_params())
    macs = count_macs(model)
    ver = versions()
    made_by = f"models/real/make_keras.py {stem}"
    float_name = file_names.get("float", f"keras_{stem}_float.tflite") if "float" in which else None
    fconv = tf.lite.TFLiteConverter.from_keras_model(model)
    float_bytes = fconv.convert()
    if "float" not in which:  # kept outside the repository, only to measure the int8 file against
        Path(f"/tmp/keras_{stem}_float.tflite").write_bytes(float_bytes)
    for variant in which:
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        if variant == "float":
            fname, quant, how = f"keras_{stem}_float.tflite", "float", "TFLiteConverter float32 (no optimizations)"
        else:
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
            conv.representative_dataset = rep
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            if variant == "int8":
                conv.inference_input_type = tf.int8
                conv.inference_output_type = tf.int8
                fname, quant, how = (f"keras_{stem}_int8.tflite", "int8-io",
                                     "TFLiteConverter full-integer int8, int8 I/O")
            elif variant == "uint8io":
                conv.inference_input_type = tf.uint8
                conv.inference_output_type = tf.uint8
                fname, quant, how = (f"keras_{stem}_uint8io.tflite", "uint8",
                                     "TFLiteConverter full-integer int8 inside, uint8 I/O (inference_input/output_type=tf.uint8)")
            else:
                fname, quant, how = (f"keras_{stem}_int8_floatio.tflite", "float-io",
                                     "TFLiteConverter full-integer int8, float I/O (default)")
        fname = file_names.get(variant, fname)
        data = float_bytes if variant == "float" else conv.convert()
        (HERE / fname).write_bytes(data)
        print(f"wrote {fname} {len(data)} bytes", flush=True)
        e = {"file": fname, "source": f"{desc}, {trained} -> {how} ({ver})", "kind": kind, "quant": quant,
             "float_reference": None if variant == "float" else float_name, "input": inp, "params": params,
             "macs": macs, "made_by": made_by}
        if variant != "float":
            m = vs_float(data, float_bytes, inp)
            print(f"  {fname}: {m}", flush=True)
            e["int8_vs_float_db"], e["top1_vs_float"] = m["int8_vs_float_db"], m["top1_vs_float"]
        if extra_manifest:
            e.update(extra_manifest)
        entries.append(e)
        manifest_update([e])
    return entries


def _inp(h, w, c, scale, offset):
    return {"layout": "NHWC", "height": h, "width": w, "channels": c, "scale": scale, "offset": offset}


def _keras_app(name, h, w, c, classes, scale, offset, desc, kind="classifier", which=("float", "int8", "floatio"),
               build=None, seconds=120.0, from_logits=True, lr=2e-3, noise=0.0, batch=64):
    import keras
    keras.utils.set_random_seed(SEED)
    seconds = float(os.environ.get("TRAIN_SECONDS", seconds))
    noise = float(os.environ.get("NOISE", noise))
    sampler = CropSampler(h, w, c, classes)
    model = build()
    trained = train(model, sampler, scale, offset, seconds, from_logits=from_logits, lr=lr, noise=noise, batch=batch)
    rep = rep_data(h, w, c, scale, offset)
    return convert_all(model, name, rep, desc, kind, _inp(h, w, c, scale, offset), trained, which=which)


# ----------------------------------------------------------------------------- models

def cnn():
    import keras
    from keras import layers

    def build():
        return keras.Sequential([
            keras.Input((32, 32, 3)),
            layers.Conv2D(16, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dropout(0.25),
            layers.Dense(64, activation="relu"),
            layers.Dropout(0.25),
            layers.Dense(10),
        ], name="flatten_cnn")
    return _keras_app("cnn", 32, 32, 3, 10, 1 / 255.0, 0.0,
                      "keras 3 Sequential Flatten CNN (3x [Conv2D 3x3 relu, MaxPool 2], Flatten, Dropout, Dense 64 relu, "
                      "Dropout, Dense 10 logits), 32x32x3 input in [0,1]", build=build, seconds=60)


def mobilenet():
    import keras
    return _keras_app("mobilenet", 96, 96, 3, 10, 1 / 127.5, -1.0,
                      "keras.applications.MobileNet(alpha=0.25, input 96x96x3 in [-1,1], classes=10, weights=None, "
                      "classifier_activation=None)",
                      build=lambda: keras.applications.MobileNet(input_shape=(96, 96, 3), alpha=0.25, weights=None,
                                                                 classes=10, classifier_activation=None),
                      seconds=150)


def mobilenet_v2():
    import keras
    return _keras_app("mobilenet_v2", 96, 96, 3, 10, 1 / 127.5, -1.0,
                      "keras.applications.MobileNetV2(alpha=0.35, input 96x96x3 in [-1,1], classes=10, weights=None, "
                      "classifier_activation=None)",
                      build=lambda: keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None,
                                                                   classes=10, classifier_activation=None),
                      seconds=150, noise=0.05)


def mobilenet_v2_full():
    """The stock full-size keras.applications.MobileNetV2: alpha 1.0, 224x224x3 in [-1,1], 1000 classes, keras's
    default softmax classifier, exactly as keras builds it. Not trained (too slow on 2 cores). ImageNet weights
    cannot be fetched here, so ``weights=None`` unless ``MNV2_WEIGHTS`` names a keras ImageNet weights file
    (``keras.applications`` ``weights=<path>``). With random weights, first ``shift_relu_bn`` (beta
    ``MNV2_RELU_BETA``, default 2; 0 keeps keras's beta 0, whose int8 file is chaotic: 0.6 dB from float, top-1
    4/24), then ``precise_bn`` on 384 fresh photo crops, so that the activations are neither degenerate nor
    chaotic under int8. int8 I/O only (the full-size model is what the speed bench and the XS3 lowering need),
    file keras_mobilenet_v2_1.0_224_int8.tflite; the float twin stays in /tmp/keras_mobilenet_v2_full_float.tflite.
    About 20 minutes on 2 cores, nearly all of it in ``precise_bn`` (52 BN layers, each a forward pass of its
    prefix over the 384 crops)."""
    import keras
    keras.utils.set_random_seed(SEED)
    h = w = 224
    scale, offset = 1 / 127.5, -1.0
    weights = os.environ.get("MNV2_WEIGHTS") or None
    beta = float(os.environ.get("MNV2_RELU_BETA", "2"))
    t0 = time.time()
    model = keras.applications.MobileNetV2(input_shape=(h, w, 3), alpha=1.0, weights=weights, classes=1000)
    if weights is None:
        trained = "untrained (weights=None) because ImageNet weights cannot be fetched here; "
        if beta:
            n_shift = shift_relu_bn(model, beta)
            trained += (f"BN beta set to {beta:g} in the {n_shift} BatchNormalization layers that feed a ReLU6 (keras "
                        "builds 0; at 0 the random network is chaotic under int8), then ")
        n_bn = precise_bn(model, CropSampler(h, w, 3, 10), scale, offset, batch=64)
        trained += (f"BN statistics set on photo crops (the moving mean / variance of all {n_bn} BatchNormalization "
                    "layers set to the exact inference-mode statistics of their inputs over 384 fresh crops, layer "
                    f"by layer, {time.time() - t0:.0f} s); classifier as keras initializes it")
    else:
        trained = f"ImageNet weights read from {Path(weights).name} (not trained further, BN statistics as stored)"
    print(trained, flush=True)
    desc = ("keras.applications.MobileNetV2(alpha=1.0, input 224x224x3 in [-1,1], classes=1000, "
            f"weights={'None' if weights is None else repr(Path(weights).name)}, default classifier_activation "
            "(softmax): the stock full-size model")
    return convert_all(model, "mobilenet_v2_full", rep_data(h, w, 3, scale, offset), desc, "classifier",
                       _inp(h, w, 3, scale, offset), trained, which=("int8",),
                       file_names={"int8": "keras_mobilenet_v2_1.0_224_int8.tflite"})


def mobilenet_v3():
    import keras
    alpha = float(os.environ.get("V3_ALPHA", "0.5"))
    return _keras_app("mobilenet_v3_small", 96, 96, 3, 10, 1.0, 0.0,
                      f"keras.applications.MobileNetV3Small(alpha={alpha}, input 96x96x3 pixels 0..255, "
                      "include_preprocessing=True (Rescaling 1/127.5-1 inside), hard-swish, SE blocks, classes=10, "
                      "weights=None, classifier_activation=None)",
                      build=lambda: keras.applications.MobileNetV3Small(input_shape=(96, 96, 3), alpha=alpha,
                                                                        weights=None, classes=10,
                                                                        classifier_activation=None),
                      seconds=100)


def efficientnet():
    import keras
    which = tuple(os.environ.get("EFF_WHICH", "int8").split(","))
    return _keras_app("efficientnet_b0", 64, 64, 3, 10, 1.0, 0.0,
                      "keras.applications.EfficientNetB0(input 64x64x3 pixels 0..255, Rescaling+Normalization inside, "
                      "SE blocks, swish, classes=10, weights=None, classifier_activation=None)",
                      which=which,
                      build=lambda: keras.applications.EfficientNetB0(input_shape=(64, 64, 3), weights=None,
                                                                      classes=10, classifier_activation=None),
                      seconds=150)


def dscnn():
    import keras
    from keras import layers

    def build():
        x = inp = keras.Input((49, 10, 1), name="mfcc")
        x = layers.Conv2D(64, (10, 4), strides=2, padding="same", use_bias=False)(x)
        x = layers.BatchNormalization()(x)
        x = layers.ReLU()(x)
        for i in range(4):
            x = layers.DepthwiseConv2D(3, padding="same", use_bias=False)(x)
            x = layers.BatchNormalization()(x)
            x = layers.ReLU()(x)
            x = layers.Conv2D(64, 1, use_bias=False)(x)
            x = layers.BatchNormalization()(x)
            x = layers.ReLU()(x)
        x = layers.Dropout(0.4)(x)
        x = layers.AveragePooling2D(pool_size=(25, 5))(x)
        x = layers.Flatten()(x)
        x = layers.Dense(12)(x)
        return keras.Model(inp, x, name="ds_cnn_s")
    # spectrogram-like range: pixel * 1.0 - 200 -> [-200, 55] (ML-zoo DS-CNN inputs span about [-247, 30])
    return _keras_app("ds_cnn", 49, 10, 1, 12, 1.0, -200.0,
                      "keras 3 DS-CNN-S keyword spotting net (ARM ML-zoo / Hello Edge: input 49x10x1, Conv 10x4 s2 64ch "
                      "+BN+ReLU, 4x [DW 3x3 +BN+ReLU, PW 64 +BN+ReLU], AvgPool 25x5, Dense 12 logits)", build=build,
                      kind="classifier", seconds=100)


def person():
    import keras
    return _keras_app("person_detect", 96, 96, 1, 2, 1 / 127.5, -1.0,
                      "keras.applications.MobileNet(alpha=0.25, input 96x96x1 grayscale in [-1,1], classes=2, "
                      "weights=None, softmax output like TFLM person_detect)",
                      build=lambda: keras.applications.MobileNet(input_shape=(96, 96, 1), alpha=0.25, weights=None,
                                                                 classes=2, classifier_activation="softmax"),
                      from_logits=False, seconds=90)


def uint8():
    """New converter, full-integer with uint8 I/O (int8 inside, QUANTIZE uint8<->int8 at the edges)."""
    import keras
    from keras import layers

    def build():
        return keras.Sequential([
            keras.Input((32, 32, 3)),
            layers.Conv2D(16, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dense(10),
        ], name="small_cnn")
    return _keras_app("cnn_uint8", 32, 32, 3, 10, 1 / 255.0, 0.0,
                      "keras 3 Sequential CNN (2x [Conv2D 3x3 relu, MaxPool 2], Flatten, Dense 10), 32x32x3 in [0,1]",
                      build=build, seconds=100, which=("float", "uint8io"))


def uint8_v1():
    """Legacy truly-uint8 model: tf.compat.v1 graph with fake-quant nodes, inference_type=tf.uint8."""
    tf = _tf()
    v1 = tf.compat.v1
    # the weights are those of keras_cnn_uint8_float.tflite (made by ``uint8``), so that file is its exact float twin
    import keras
    from keras import layers
    src = HERE / "keras_cnn_uint8_float.tflite"
    it = _interpreter(path=src)
    it.allocate_tensors()
    w = []
    for op in it._get_ops_details():
        if op["op_name"] in ("CONV_2D", "FULLY_CONNECTED"):
            k, bias = it.get_tensor(op["inputs"][1]), it.get_tensor(op["inputs"][2])
            w += [k.transpose(1, 2, 3, 0) if op["op_name"] == "CONV_2D" else k.T, bias]
    m = keras.Sequential([keras.Input((32, 32, 3)), layers.Conv2D(16, 3, padding="same", activation="relu"),
                          layers.MaxPooling2D(2), layers.Conv2D(32, 3, padding="same", activation="relu"),
                          layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(10)])
    m.set_weights(w)
    old = {e["file"]: e for e in json.loads(MANIFEST.read_text())}
    trained = old["keras_cnn_uint8_float.tflite"]["source"].split(" -> ")[0].split("32x32x3 in [0,1], ", 1)[-1]
    # activation ranges from the float model on the representative data
    cal = photos.photo_batch(128, 32, 32, 3, split="calib") / 255.0
    sub = keras.Model(m.inputs, [m.layers[0].output, m.layers[2].output, m.layers[-1].output])
    r = [(float(min(0, a.min())), float(max(0, a.max()))) for a in sub.predict(cal, verbose=0)]
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [1, 32, 32, 3], name="input")
        xq = tf.quantization.fake_quant_with_min_max_args(x, 0.0, 1.0)

        def wq(a):
            return tf.quantization.fake_quant_with_min_max_args(tf.constant(a), float(min(0, a.min())),
                                                                float(max(0, a.max())))
        h = tf.nn.relu(tf.nn.conv2d(xq, wq(w[0]), 1, "SAME") + w[1])
        h = tf.quantization.fake_quant_with_min_max_args(h, *r[0])
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        h = tf.nn.relu(tf.nn.conv2d(h, wq(w[2]), 1, "SAME") + w[3])
        h = tf.quantization.fake_quant_with_min_max_args(h, *r[1])
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        h = tf.reshape(h, [1, -1])
        h = tf.matmul(h, wq(w[4])) + w[5]
        out = tf.identity(tf.quantization.fake_quant_with_min_max_args(h, *r[2]), name="logits")
        with v1.Session(graph=g) as sess:
            conv = v1.lite.TFLiteConverter.from_session(sess, [x], [out])
            conv.inference_type = tf.uint8
            conv.inference_input_type = tf.uint8
            conv.quantized_input_stats = {"input": (0.0, 255.0)}  # real = (q - mean) / std
            data = conv.convert()
    fname = "keras_cnn_uint8_v1.tflite"
    (HERE / fname).write_bytes(data)
    print(f"wrote {fname} {len(data)} bytes", flush=True)
    params = int(m.count_params())
    e = {"file": fname, "source": "tf.compat.v1 graph (same CNN as keras_cnn_uint8: 2x [Conv 3x3 relu, MaxPool 2], "
         "Dense 10) with fake_quant_with_min_max_args on input/weights/activations (ranges from the float model "
         f"on 128 calibration crops), weights read from keras_cnn_uint8_float.tflite ({trained}) -> tf.compat.v1.lite.TFLiteConverter.from_session "
         f"inference_type=tf.uint8, quantized_input_stats (0, 255) ({versions()})",
         "kind": "classifier", "quant": "uint8", "float_reference": "keras_cnn_uint8_float.tflite",
         "input": _inp(32, 32, 3, 1 / 255.0, 0.0), "params": params, "macs": count_macs(m),
         "made_by": "models/real/make_keras.py uint8_v1"}
    e.update({k: v for k, v in vs_float(data, src, e["input"]).items() if k != "min_top2_gap_rel"})
    print(f"  {fname}: {e}", flush=True)
    manifest_update([e])
    return [e]


def aeq():
    """Google ai-edge-quantizer recipes applied to keras_mobilenet_v2_float.tflite."""
    import ai_edge_quantizer
    from ai_edge_quantizer import quantizer, recipe
    from importlib.metadata import version
    src = "keras_mobilenet_v2_float.tflite"
    old = {e["file"]: e for e in json.loads(MANIFEST.read_text())} if MANIFEST.exists() else {}
    base = old.get(src, {})
    ver = f"ai-edge-quantizer {version('ai-edge-quantizer')}"
    entries = []
    jobs = [("dynamic_wi8_afp32", "keras_mobilenet_v2_aeq_dynamic_wi8.tflite", None),
            # ("weight_only_wi8_afp32", "keras_mobilenet_v2_aeq_weightonly_wi8.tflite", None),  # size budget
            ("static_wi8_ai8", "keras_mobilenet_v2_aeq_static_wi8_ai8.tflite", "calib")]
    for rname, fname, calib in jobs:
        fn = getattr(recipe, rname, None)
        if fn is None:
            print(f"recipe {rname} not in this ai-edge-quantizer", flush=True)
            continue
        try:
            qt = quantizer.Quantizer(str(HERE / src))
            qt.load_quantization_recipe(fn())
            if calib:
                x = (photos.photo_batch(128, 96, 96, 3, split="calib") / 127.5 - 1.0).astype(np.float32)
                from ai_edge_litert.interpreter import Interpreter
                it = Interpreter(model_path=str(HERE / src))
                sigs = it.get_signature_list()
                skey = next(iter(sigs))
                in_name = sigs[skey]["inputs"][0]
                cal = {skey: [{in_name: x[i:i + 1]} for i in range(len(x))]}
                res = qt.calibrate(cal, num_threads=2)
                out = qt.quantize(res, enable_progress_report=False)
            else:
                out = qt.quantize(enable_progress_report=False)
            data = out.quantized_model
            (HERE / fname).write_bytes(data)
            print(f"wrote {fname} {len(data)} bytes", flush=True)
            e = {"file": fname,
                 "source": f"{src} -> ai_edge_quantizer recipe.{rname}()" + (
                     " calibrated on 128 photo crops (split=calib)" if calib else "") + f" ({ver})",
                 "kind": "classifier", "quant": f"ai-edge-quantizer-{rname}", "float_reference": src,
                 "input": base.get("input", _inp(96, 96, 3, 1 / 127.5, -1.0)), "params": base.get("params"),
                 "macs": base.get("macs"), "made_by": "models/real/make_keras.py aeq (venv with ai-edge-quantizer)"}
            m = vs_float(data, HERE / src, e["input"])
            print(f"  {fname}: {m}", flush=True)
            e["int8_vs_float_db"], e["top1_vs_float"] = m["int8_vs_float_db"], m["top1_vs_float"]
            entries.append(e)
            manifest_update([e])
        except Exception as exc:  # report and go on with the next recipe
            print(f"recipe {rname} failed: {type(exc).__name__}: {exc}", flush=True)
    return entries


MEDIAPIPE = [
    # (path inside the package, our file name, kind, scale, offset)
    ("mediapipe/modules/face_detection/face_detection_short_range.tflite", "mediapipe_face_detection_short_range.tflite",
     "detector", 1 / 127.5, -1.0),
    ("mediapipe/modules/face_landmark/face_landmark.tflite", "mediapipe_face_landmark.tflite", "landmarks",
     1 / 255.0, 0.0),
    ("mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite", "mediapipe_selfie_segmentation.tflite",
     "segmentation", 1 / 255.0, 0.0),
    ("mediapipe/modules/hair_segmentation/hair_segmentation.tflite", "mediapipe_hair_segmentation.tflite",
     "segmentation", 1 / 255.0, 0.0),
]


def graph_counts(path) -> tuple[int, int]:
    """(parameters, MACs per image) estimated from a .tflite graph: weight tensors of CONV_2D /
    DEPTHWISE_CONV_2D / FULLY_CONNECTED / TRANSPOSE_CONV / Convolution2DTransposeBias and their MACs."""
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=str(path))
    shapes = {t["index"]: [int(v) for v in t["shape"]] for t in it.get_tensor_details()}
    params = macs = 0
    for op in it._get_ops_details():
        name, ins, outs = op["op_name"], list(op["inputs"]), list(op["outputs"])
        if len(ins) < 2 or ins[1] < 0:
            continue
        w = shapes[ins[1]]
        o = shapes[outs[0]]
        b = int(np.prod(shapes[ins[2]])) if len(ins) > 2 and ins[2] >= 0 else 0
        if name == "CONV_2D":
            macs += int(np.prod(o)) * int(np.prod(w[1:]))
        elif name == "DEPTHWISE_CONV_2D":
            macs += int(np.prod(o)) * w[1] * w[2]
        elif name == "FULLY_CONNECTED":
            macs += int(np.prod(o)) * w[-1]
        elif name in ("Convolution2DTransposeBias",):
            macs += int(np.prod(shapes[ins[0]])) * int(np.prod(w[:3]))
        elif name == "TRANSPOSE_CONV":
            w = shapes[ins[1]]
            b = 0
            macs += int(np.prod(shapes[ins[2]])) * int(np.prod(w[:3]))
        else:
            continue
        params += int(np.prod(w)) + b
    return params, macs


def mediapipe():
    """Copy pretrained .tflite files shipped inside the mediapipe wheel (MP_ROOT = its install dir)."""
    root = Path(os.environ.get("MP_ROOT", "/tmp/mp_old"))
    ver = os.environ.get("MP_VERSION", "0.10.14")
    from ai_edge_litert.interpreter import Interpreter
    entries = []
    for rel, fname, kind, scale, offset in MEDIAPIPE:
        p = root / rel
        if not p.exists():
            print(f"not shipped: {rel}", flush=True)
            continue
        shutil.copyfile(p, HERE / fname)
        shape = [int(s) for s in Interpreter(model_path=str(p)).get_input_details()[0]["shape"]]
        counts = graph_counts(p)
        print(f"copied {rel} -> {fname} ({p.stat().st_size} bytes, input {shape})", flush=True)
        e = {"file": fname, "source": f"pretrained file shipped in the PyPI package mediapipe=={ver}, path {rel} "
             "(copied unchanged)", "kind": kind, "quant": "float", "float_reference": None,
             "input": _inp(shape[1], shape[2], shape[3], scale, offset), "params": counts[0], "macs": counts[1],
             "counts": "params and macs estimated from the graph's conv/depthwise/fc/transpose-conv ops",
             "made_by": f"models/real/make_keras.py mediapipe (pip install --no-deps --target {root} mediapipe=={ver})"}
        entries.append(e)
        manifest_update([e])
    return entries


def measure():
    """Re-measure every quantized keras_* entry against its float twin in ai-edge-litert (24 test crops) and
    store ``int8_vs_float_db`` / ``top1_vs_float`` in the manifest. EfficientNet's float twin is not kept in
    the repository: it is read from /tmp/keras_efficientnet_b0_float.tflite (written by ``efficientnet``)."""
    out = []
    for e in json.loads(MANIFEST.read_text()):
        if not e["file"].startswith("keras_") or e["quant"] == "float":
            continue
        stem = e.get("made_by", "").split()[-1] if e.get("made_by") else ""
        tmp_twin = Path("/tmp") / f"keras_{stem}_float.tflite"
        ref = HERE / e["float_reference"] if e.get("float_reference") else \
            tmp_twin if stem and tmp_twin.exists() else \
            Path("/tmp") / e["file"].replace("_int8.tflite", "_float.tflite")
        if not ref.exists():
            print(f"no float twin for {e['file']}", flush=True)
            continue
        m = vs_float(HERE / e["file"], ref, e["input"])
        print(f"{e['file']:48s} {m['int8_vs_float_db']:6.1f} dB  top1 {m['top1_vs_float']:.3f}  "
              f"min top2 gap/rms {m['min_top2_gap_rel']:.3f}", flush=True)
        e["int8_vs_float_db"], e["top1_vs_float"] = m["int8_vs_float_db"], m["top1_vs_float"]
        out.append(e)
    manifest_update(out)
    return out


def check():
    """Run every manifest file in LiteRT on 4 test photo crops; print output range and top-2 gap."""
    from ai_edge_litert.interpreter import Interpreter
    ok = True
    for e in json.loads(MANIFEST.read_text()):
        inp = e["input"]
        try:
            it = Interpreter(model_path=str(HERE / e["file"]))
            d = it.get_input_details()
            shape = [int(v) for v in d[0]["shape"]]
            c = inp["channels"]
            x = photos.photo_batch(4, inp["height"], inp["width"], 3 if c >= 3 else 1, split="test")
            if c == 4:  # hair segmentation: RGB + previous mask (zeros)
                x = np.concatenate([x, np.zeros_like(x[..., :1])], -1)
            xf = x * inp["scale"] + inp["offset"]
            if c == 4:
                xf[..., 3] = 0.0
            it.resize_tensor_input(d[0]["index"], [1] + shape[1:])
            it.allocate_tensors()
            d = it.get_input_details()
            gaps, outs = [], []
            for i in range(4):
                xi = xf[i:i + 1]
                if d[0]["dtype"] != np.float32:
                    s, z = d[0]["quantization"]
                    info = np.iinfo(d[0]["dtype"])
                    xi = np.clip(np.round(xi / s) + z, info.min, info.max).astype(d[0]["dtype"])
                it.set_tensor(d[0]["index"], xi)
                it.invoke()
                o = it.get_tensor(it.get_output_details()[0]["index"]).astype(np.float64).ravel()
                outs.append(o)
                if o.size <= 16 and o.size >= 2:
                    t = np.sort(o)
                    gaps.append(t[-1] - t[-2])
            od = it.get_output_details()[0]
            print(f"OK  {e['file']}: in {d[0]['dtype'].__name__}{shape} out {od['dtype'].__name__}"
                  f"{[int(v) for v in od['shape']]} range [{min(o.min() for o in outs):g}, {max(o.max() for o in outs):g}]"
                  + (f" argmax {[int(np.argmax(o)) for o in outs]} top2 gaps {[round(float(g), 3) for g in gaps]}"
                     if gaps else ""), flush=True)
        except Exception as exc:
            ok = False
            print(f"ERR {e['file']}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    return ok


ALL = {"cnn": cnn, "mobilenet": mobilenet, "mobilenet_v2": mobilenet_v2, "mobilenet_v2_full": mobilenet_v2_full,
       "mobilenet_v3": mobilenet_v3,
       "efficientnet": efficientnet, "dscnn": dscnn, "person": person, "uint8": uint8, "uint8_v1": uint8_v1,
       "aeq": aeq, "mediapipe": mediapipe, "measure": measure, "check": check}

if __name__ == "__main__":
    names = sys.argv[1:] or ["cnn", "mobilenet", "mobilenet_v2", "mobilenet_v2_full", "mobilenet_v3", "efficientnet",
                             "dscnn", "person", "uint8", "uint8_v1"]
    for n in names:
        t0 = time.time()
        print(f"== {n}", flush=True)
        ALL[n]()
        print(f"== {n} done in {time.time() - t0:.0f} s", flush=True)
