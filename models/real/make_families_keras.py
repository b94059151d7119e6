"""Make REAL keras -> TFLite models of the model families the toolkit must learn (development venv only).

Run from the repository root, in a venv with tensorflow, scikit-learn and ai-edge-litert (never a project
dependency; nothing here imports the toolkit):

    python3 -m venv /work/venv-tf && /work/venv-tf/bin/pip install tensorflow-cpu scikit-learn ai-edge-litert tf-keras
    /work/venv-tf/bin/python models/real/make_families_keras.py [names...]   # default: all, in this order
    /work/venv-tf/bin/python models/real/make_families_keras.py check        # re-measure every file in LiteRT
    /work/venv-tf/bin/python models/real/make_families_keras.py refresh      # recompute ops / dtypes of the files

Names and the files they write in ``models/real/families/``:

* ``mobilenet_v3``: ``keras_mobilenet_v3_small_digits_{float,int8,int8_floatio}.tflite`` (MobileNetV3Small,
  alpha ``V3_ALPHA`` = 0.75, SE blocks, hard-swish, softmax head) on digits upsampled to 32x32x3 in [-1, 1];
* ``vit``: ``keras_vit_digits_{float,int8}.tflite``, a two-block ViT on 2x2 patches of the 8x8 image;
* ``lstm``: ``keras_lstm_digits_{float,int8}.tflite``, rows as 8 time steps -> LSTM(32) -> Dense 10, built in
  tf_keras (Keras 2), whose LSTM the converter fuses into UNIDIRECTIONAL_SEQUENCE_LSTM (Keras 3's is a WHILE loop);
* ``gru``: ``keras_gru_digits_float.tflite`` (and ``_int8`` if the converter manages: converted in a child
  process, as it may crash), Keras 3 GRU(32), a WHILE loop;
* ``lstm_keras3``: ``keras_lstm_keras3_digits_float.tflite`` (and ``_int8`` if the converter manages), the same LSTM
  in Keras 3: a WHILE loop;
* ``gru_unrolled``: ``keras_gru_unrolled_digits_{float,int8}.tflite``, Keras 3 GRU(32, unroll=True): no loop;
* ``conv1d``: ``keras_conv1d_digits_{float,int8}.tflite`` and ``keras_conv1d_digits_int16x8.tflite``, the 64
  pixels as a 1-D signal;
* ``cnn16``: ``keras_cnn_digits_{float,int16x8}.tflite``, a small CNN converted 16x8
  (EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8);
* ``dwmult``: ``keras_dwmult_digits_{float,int8}.tflite``, a small CNN with a DepthwiseConv2D of depth_multiplier 2;
* ``ssd``: ``keras_ssd_digits_{float,int8}.tflite`` (uint8 input), a small SSD-style detector ending in the
  ``TFLite_Detection_PostProcess`` custom op (``make_families_ssd.py``), with ``digits_canvas32_test.npz``
  (canvases under the input name, ``boxes`` [N, 4] ymin/xmin/ymax/xmax normalized, ``labels``).

Data: scikit-learn digits split as ``models/make_digits.py`` ``load_split()`` (1347 train / 450 test, seed
20260315, pixels / 16). Each model trains (seeded, time-capped at ``TRAIN_SECONDS`` = 110 s) on the training
split, and is written by ``tf.lite.TFLiteConverter.from_keras_model`` exactly as the converter emits it. Full-integer
files use a representative dataset of 128 training samples. Every file is run in ai-edge-litert on the whole test
split and gets an entry in ``families/manifest_keras.json`` (merged by file name); the test inputs, as float real
values in each model's own input layout, go in ``families/digits_{seq,img8,img32,sig64}_test.npz`` under each
model's input tensor name, with ``labels``. Beyond the shared schema each entry records ``subgraphs``, ``bytes``,
``op_dtypes`` (per op: input -> output element types) and, for quantized files, ``float_ops`` (ops the converter left
computing in float32 between DEQUANTIZE and QUANTIZE).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = Path(os.environ.get("FAMILIES_OUT", HERE / "families"))  # another folder for trial runs
MANIFEST = OUT / "manifest_keras.json"
SEED = 20260315
TRAIN_SECONDS = float(os.environ.get("TRAIN_SECONDS", "110"))


def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    try:
        tf.config.threading.set_intra_op_parallelism_threads(2)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:  # already initialized
        pass
    return tf


def versions(k=None) -> str:
    """Versions of tensorflow and of the keras that built the model (keras 3 unless ``k`` is tf_keras)."""
    tf = _tf()
    if k is None:
        import keras as k
    return f"tensorflow {tf.__version__}, {k.__name__} {k.__version__}"


def _keras_of(model):
    """The keras package a model belongs to: ``tf_keras`` (Keras 2) or ``keras`` (Keras 3)."""
    if type(model).__module__.startswith("tf_keras"):
        import tf_keras
        return tf_keras
    import keras
    return keras


def load_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The split of ``models/make_digits.py`` ``load_split()``: float32 [N, 8, 8] in [0, 1], int64 labels."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)
    return tuple(train_test_split(x, d.target.astype(np.int64), test_size=0.25, random_state=SEED,
                                  stratify=d.target))  # type: ignore[return-value]


def view(x: np.ndarray, kind: str) -> np.ndarray:
    """Digits [N, 8, 8] in [0, 1] as one model family's input (float32 real values)."""
    if kind == "seq":
        return x.astype(np.float32)
    if kind == "img8":
        return x[..., None].astype(np.float32)
    if kind == "sig64":
        return x.reshape(len(x), 64, 1).astype(np.float32)
    if kind == "img32":  # bilinear 8x8 -> 32x32, 3 channels, scaled to [-1, 1] (MobileNetV3 without preprocessing)
        tf = _tf()
        up = tf.image.resize(x[..., None], (32, 32), method="bilinear").numpy()
        return (np.repeat(up, 3, axis=-1) * 2.0 - 1.0).astype(np.float32)
    raise ValueError(kind)


# ----------------------------------------------------------------------------- counting

def _all_layers(model):
    keras = _keras_of(model)
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            yield from _all_layers(layer)
        else:
            yield layer


def count_macs(model) -> int:
    """Multiply-accumulates per sample, from the layer shapes of a batch-1 model: convolutions, Dense (per token
    on sequences), MultiHeadAttention (Q/K/V/output projections, scores and weighted sum), LSTM / GRU gates."""
    keras = _keras_of(model)
    macs = 0
    for layer in _all_layers(model):
        if isinstance(layer, keras.layers.DepthwiseConv2D):
            macs += int(np.prod(layer.output.shape[1:])) * int(np.prod(layer.kernel_size))
        elif isinstance(layer, (keras.layers.Conv2D, keras.layers.Conv1D)):
            cin = layer.input.shape[-1] // layer.groups
            macs += int(np.prod(layer.output.shape[1:])) * int(np.prod(layer.kernel_size)) * cin
        elif isinstance(layer, keras.layers.Dense):
            macs += int(np.prod(layer.output.shape[1:])) * int(layer.input.shape[-1])
        elif isinstance(layer, keras.layers.MultiHeadAttention):
            t, d = int(layer.output.shape[1]), int(layer.output.shape[-1])  # self-attention, output = query shape
            hk = layer.num_heads * layer.key_dim
            macs += 4 * t * d * hk + 2 * t * t * hk
        elif isinstance(layer, (keras.layers.LSTM, keras.layers.GRU)):
            t, f = int(layer.input.shape[1]), int(layer.input.shape[2])
            gates = 4 if isinstance(layer, keras.layers.LSTM) else 3
            macs += t * gates * (f + layer.units) * layer.units
    return int(macs)


# ----------------------------------------------------------------------------- training

def train(model, x: np.ndarray, y: np.ndarray, xt: np.ndarray, yt: np.ndarray, epochs: int, lr: float = 2e-3,
          batch: int = 32, seconds: float = TRAIN_SECONDS, shift: float = 0.0, from_logits: bool = True) -> str:
    """Adam, learning rate on a cosine over the time budget ``seconds`` (or over ``epochs`` if they end first), in
    one ``fit`` stopped at ``seconds``; ``shift`` > 0 puts a
    ``RandomTranslation`` (that fraction of the image, nearest fill) in front of the model for training only.
    Returns a sentence for the manifest's ``source``."""
    keras = _keras_of(model)
    keras.utils.set_random_seed(SEED)
    net = model
    if shift > 0:
        inp = keras.Input(x.shape[1:])
        net = keras.Model(inp, model(keras.layers.RandomTranslation(shift, shift, fill_mode="nearest",
                                                                    seed=SEED)(inp)))
    net.compile(optimizer=keras.optimizers.Adam(lr),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits), metrics=["accuracy"])
    t0 = time.time()

    class Clock(keras.callbacks.Callback):
        epoch = 0

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_begin(self, b, logs=None):
            frac = min(1.0, max((time.time() - t0) / seconds, (self.epoch + b * batch / len(x)) / epochs))
            self.model.optimizer.learning_rate.assign(lr * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * frac))))

        def on_epoch_end(self, epoch, logs=None):
            if epoch % 10 == 9 or time.time() - t0 > seconds:
                print(f"  epoch {epoch + 1} t {time.time() - t0:.0f}s loss {logs['loss']:.3f} "
                      f"acc {logs['accuracy']:.3f}", flush=True)
            if time.time() - t0 > seconds:
                self.model.stop_training = True
    h = net.fit(x, y, batch_size=batch, epochs=epochs, verbose=0, shuffle=True, callbacks=[Clock()])
    done, took = len(h.history["loss"]), time.time() - t0
    acc = float(np.mean(np.argmax(model.predict(xt, verbose=0, batch_size=64), -1) == yt))
    print(f"  keras test accuracy {acc:.4f} after {done} epochs, {took:.0f} s", flush=True)
    aug = f", random shifts up to {shift:g} of the size" if shift > 0 else ""
    return (f"trained {done} epochs (batch {batch}, Adam lr {lr}, cosine over the time budget{aug}) in "
            f"{took:.0f} s on the 1347 training digits; keras test accuracy {acc * 100:.1f}%")


def rebatch(build, trained):
    """The same architecture with a static batch of 1 (so the converter sees static shapes), trained weights."""
    m1 = build(1)
    m1.set_weights(trained.get_weights())
    return m1


# ----------------------------------------------------------------------------- conversion and measurement

def convert(model, variant: str, rep_x: np.ndarray) -> tuple[bytes, str]:
    """``TFLiteConverter.from_keras_model`` for one variant; returns the file and a phrase for the manifest."""
    tf = _tf()
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if variant == "float":
        return conv.convert(), "TFLiteConverter float32 (no optimizations)"

    def gen():
        for i in range(len(rep_x)):
            yield [rep_x[i:i + 1]]
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = gen
    if variant == "int16x8":
        conv.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        try:
            c16 = tf.lite.TFLiteConverter.from_keras_model(model)
            c16.optimizations, c16.representative_dataset = conv.optimizations, gen
            c16.target_spec.supported_ops = conv.target_spec.supported_ops
            c16.inference_input_type = c16.inference_output_type = tf.int16
            return c16.convert(), ("TFLiteConverter 16x8 (EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8,"
                                   " Optimize.DEFAULT, 128 representative samples), int16 I/O")
        except Exception as e:  # noqa: BLE001 - the converter's own refusal, recorded
            print(f"  int16 I/O refused ({str(e).splitlines()[0][:120]}); float I/O", flush=True)
            return conv.convert(), ("TFLiteConverter 16x8 (EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8,"
                                    " Optimize.DEFAULT, 128 representative samples), float I/O (int16 I/O refused)")
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    rep = "128 representative training samples"
    if variant == "int8":
        conv.inference_input_type = conv.inference_output_type = tf.int8
        return conv.convert(), f"TFLiteConverter full-integer int8 ({rep}), int8 I/O"
    return conv.convert(), f"TFLiteConverter full-integer int8 ({rep}), float I/O (default)"


def convert_isolated(key: str, variant: str, model1, rep_x: np.ndarray) -> tuple[bytes, str]:
    """``convert`` in a child process (``_convert key variant dir``): the converter crashes the process on some
    graphs (a segmentation fault on the keras 3 GRU's WHILE loop in int8); this turns that into an exception."""
    with tempfile.TemporaryDirectory() as tmp:
        model1.save_weights(str(Path(tmp) / "m.weights.h5"))
        np.save(Path(tmp) / "rep.npy", rep_x)
        r = subprocess.run([sys.executable, __file__, "_convert", key, variant, tmp], capture_output=True, text=True)
        out = Path(tmp) / "out.tflite"
        if r.returncode != 0 or not out.exists():
            why = "segmentation fault" if r.returncode == -11 else (r.stderr.strip().splitlines() or ["?"])[-1]
            raise RuntimeError(f"converter process ended with code {r.returncode} ({why})")
        return out.read_bytes(), (Path(tmp) / "how.txt").read_text()


def _convert_child(key: str, variant: str, tmp: str) -> None:
    model1 = BUILDERS[key](1)
    model1.load_weights(str(Path(tmp) / "m.weights.h5"))
    data, how = convert(model1, variant, np.load(Path(tmp) / "rep.npy"))
    (Path(tmp) / "how.txt").write_text(how)
    (Path(tmp) / "out.tflite").write_bytes(data)


def graph_info(data: bytes) -> tuple[list[str], int]:
    """(sorted unique op names over every subgraph, subgraph count) read from the flatbuffer."""
    from tensorflow.lite.python import schema_py_generated as sfb
    names = {v: k for k, v in vars(sfb.BuiltinOperator).items() if not k.startswith("_")}
    m = sfb.Model.GetRootAsModel(data, 0)
    ops = set()
    for s in range(m.SubgraphsLength()):
        g = m.Subgraphs(s)
        for i in range(g.OperatorsLength()):
            oc = m.OperatorCodes(g.Operators(i).OpcodeIndex())
            code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
            ops.add(oc.CustomCode().decode() if code == sfb.BuiltinOperator.CUSTOM else names[code])
    return sorted(ops), int(m.SubgraphsLength())


def op_dtypes(data: bytes) -> dict[str, str]:
    """Per op name of the main subgraph: its inputs' and outputs' element types, e.g. ``"int8,int16 -> int8"``;
    shows what a quantized file holds (float islands, int16 intermediates). Read without the default delegate
    (XNNPACK would fold ops into DELEGATE nodes)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=data,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    dt = {t["index"]: np.dtype(t["dtype"]).name for t in it.get_tensor_details()}
    seen: dict[str, tuple[set, set]] = {}
    for op in it._get_ops_details():
        ins, outs = seen.setdefault(op["op_name"], (set(), set()))
        ins.update(dt[i] for i in op["inputs"] if i >= 0 and i in dt)
        outs.update(dt[i] for i in op["outputs"] if i in dt)
    return {k: f"{','.join(sorted(i))} -> {','.join(sorted(o))}" for k, (i, o) in sorted(seen.items())}


def float_islands(data: bytes) -> list[str]:
    """Ops of a quantized file that compute in float32 (between a DEQUANTIZE and a QUANTIZE), sorted."""
    return sorted(k for k, v in op_dtypes(data).items()
                  if k not in ("QUANTIZE", "DEQUANTIZE") and v.endswith("float32"))


def variable_note(data: bytes) -> dict:
    """A ``notes`` entry when the file has variable tensors (state that persists across invocations)."""
    from tensorflow.lite.python import schema_py_generated as sfb
    g = sfb.Model.GetRootAsModel(data, 0).Subgraphs(0)
    n = sum(bool(g.Tensors(i).IsVariable()) for i in range(g.TensorsLength()))
    if not n:
        return {}
    return {"variable_tensors": n,
            "notes": f"{n} variable tensors (e.g. the state of UNIDIRECTIONAL_SEQUENCE_LSTM) persist across "
                     "invocations; measured with reset_all_variables() before each sample (keras' zero initial state)"}


def interpreter(data: bytes):
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=data, num_threads=2)
    it.allocate_tensors()
    return it


def run(data: bytes, x: np.ndarray, out_index: int = 0) -> np.ndarray:
    """Outputs (dequantized to float) of a .tflite file on a float batch, one sample at a time. Variable tensors
    (UNIDIRECTIONAL_SEQUENCE_LSTM keeps its state in them across invocations) are reset before each sample, so
    every sample starts from the zero state as in keras."""
    it = interpreter(data)
    d, od = it.get_input_details()[0], it.get_output_details()[out_index]
    xq = x
    if d["dtype"] != np.float32:
        s, z = d["quantization"]
        info = np.iinfo(d["dtype"])
        xq = np.clip(np.round(x / s) + z, info.min, info.max).astype(d["dtype"])
    outs = []
    for i in range(len(x)):
        it.reset_all_variables()
        it.set_tensor(d["index"], xq[i:i + 1])
        it.invoke()
        outs.append(it.get_tensor(od["index"]).copy())
    o = np.array(outs).reshape(len(x), -1).astype(np.float64)
    if od["dtype"] != np.float32:
        s, z = od["quantization"]
        o = (o - z) * s
    return o


def write_data(name: str, key: str, x: np.ndarray, y: np.ndarray) -> None:
    """Add (or refresh) one input key in a test-data npz, keeping keys other models stored."""
    path = OUT / name
    old = dict(np.load(path)) if path.exists() else {}
    old[key] = x.astype(np.float32)
    old["labels"] = y.astype(np.int64)
    np.savez_compressed(path, **old)


def manifest_update(entries: list[dict]) -> None:
    old = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else []
    names = {e["file"] for e in entries}
    merged = [e for e in old if e["file"] not in names] + entries
    merged.sort(key=lambda e: e["file"])
    MANIFEST.write_text(json.dumps(merged, indent=1, allow_nan=False) + "\n")


QUANT = {"float": "float", "int8": "int8-io", "int8_floatio": "float-io", "int16x8": "int16x8"}


def emit(model1, stem: str, family: str, variants, xs: dict, y_test: np.ndarray, rep_x: np.ndarray,
         desc: str, trained: str, made_by: str, extra: dict | None = None, isolate: str | None = None) -> list[dict]:
    """Convert the batch-1 model to each variant, write it, measure it in LiteRT, write data and manifest.
    ``xs`` = {npz file name: test inputs}; the first is the model's own. ``isolate`` = a ``BUILDERS`` key: the
    quantized variants are converted in a child process."""
    OUT.mkdir(exist_ok=True)
    params, macs = int(model1.count_params()), count_macs(model1)
    data_name, x_test = next(iter(xs.items()))
    float_name, float_acc, entries = f"keras_{stem}_float.tflite", None, []
    for variant in variants:
        fname = f"keras_{stem}_{variant}.tflite"
        try:
            if isolate and variant != "float":
                data, how = convert_isolated(isolate, variant, model1, rep_x)
            else:
                data, how = convert(model1, variant, rep_x)
        except Exception as e:  # noqa: BLE001 - recorded, the other variants go on
            print(f"  {fname}: converter failed: {str(e).splitlines()[0][:300]}", flush=True)
            continue
        (OUT / fname).write_bytes(data)
        ops, nsub = graph_info(data)
        it = interpreter(data)
        ins = [{"name": d["name"], "shape": [int(v) for v in d["shape"]], "dtype": np.dtype(d["dtype"]).name}
               for d in it.get_input_details()]
        write_data(data_name, ins[0]["name"], x_test, y_test)
        out = run(data, x_test)
        pred = np.argmax(out, -1)
        acc = float(np.mean(pred == y_test))
        if variant == "float":
            float_acc = acc
        e = {"file": fname, "family": family, "source": f"{desc}; {trained} -> {how} ({versions(_keras_of(model1))})",
             "quant": QUANT[variant], "float_reference": None if variant == "float" else float_name,
             "inputs": ins, "data": data_name, "task": "classifier", "params": params, "macs": macs, "ops": ops,
             "subgraphs": nsub, "runtime_accuracy": round(acc, 4),
             "float_accuracy": round(float_acc, 4) if float_acc is not None else None,
             "distinct_top1": int(len(np.unique(pred))), "output_std": round(float(out.std()), 5),
             "bytes": len(data), "made_by": made_by, "op_dtypes": op_dtypes(data)}
        if variant != "float":
            e["float_ops"] = float_islands(data)
        e.update(variable_note(data))
        e.update(extra or {})
        print(f"  wrote {fname} {len(data)} B, {nsub} subgraph(s), acc {acc:.4f}, distinct {e['distinct_top1']}, "
              f"std {e['output_std']}, ops {ops}", flush=True)
        entries.append(e)
        manifest_update([e])
    return entries


# ----------------------------------------------------------------------------- the models

def _layers():
    import keras
    return keras, keras.layers


def mobilenet_v3() -> list[dict]:
    keras, L = _layers()
    alpha = float(os.environ.get("V3_ALPHA", "0.75"))

    def build(batch):
        inp = keras.Input((32, 32, 3), batch_size=batch, name="image")
        m = keras.applications.MobileNetV3Small(input_tensor=inp, alpha=alpha, weights=None, classes=10,
                                                include_preprocessing=False, minimalistic=False)
        for layer in _all_layers(m):  # keras' 0.999 would still remember the first epochs after ~1000 steps
            if isinstance(layer, L.BatchNormalization):
                layer.momentum = 0.9
        return m
    (xtr, xte, ytr, yte) = SPLIT
    xtr32, xte32 = view(xtr, "img32"), view(xte, "img32")
    model = build(None)
    trained = train(model, xtr32, ytr, xte32, yte, epochs=60, lr=3e-3, batch=32, from_logits=False,
                    shift=0.1, seconds=TRAIN_SECONDS + 40)
    desc = (f"keras.applications.MobileNetV3Small(input 32x32x3, alpha={alpha}, minimalistic=False, "
            "include_preprocessing=False, weights=None, classes=10, softmax head; SE blocks, hard-swish; "
            "BN momentum 0.9) on digits upsampled bilinear to 32x32, 3 channels, scaled to [-1, 1]")
    return emit(rebatch(build, model), "mobilenet_v3_small_digits", "squeeze_excite",
                ("float", "int8", "int8_floatio"), {"digits_img32_test.npz": xte32}, yte, xtr32[REP], desc,
                trained, "models/real/make_families_keras.py mobilenet_v3")


def vit() -> list[dict]:
    keras, L = _layers()

    class PositionEmbedding(L.Layer):
        """A learned [1, tokens, dim] table added to the patch embeddings."""

        def build(self, shape):
            self.pos = self.add_weight(shape=(1,) + tuple(shape[1:]), name="pos",
                                       initializer=keras.initializers.RandomNormal(stddev=0.02))

        def call(self, x):
            return x + self.pos

    def build(batch):
        inp = keras.Input((8, 8, 1), batch_size=batch, name="image")
        x = L.Reshape((4, 2, 4, 2))(inp)
        x = L.Permute((1, 3, 2, 4))(x)          # [4 rows of patches, 4 cols, 2, 2]
        x = L.Reshape((16, 4))(x)               # 16 tokens of 2x2 pixels
        x = PositionEmbedding()(L.Dense(32)(x))
        for _ in range(2):
            h = L.LayerNormalization(epsilon=1e-6)(x)
            x = L.Add()([x, L.MultiHeadAttention(num_heads=2, key_dim=16)(h, h)])
            h = L.LayerNormalization(epsilon=1e-6)(x)
            x = L.Add()([x, L.Dense(32)(L.Dense(64, activation="gelu")(h))])
        x = L.GlobalAveragePooling1D()(L.LayerNormalization(epsilon=1e-6)(x))
        return keras.Model(inp, L.Dense(10)(x))
    (xtr, xte, ytr, yte) = SPLIT
    model = build(None)
    trained = train(model, view(xtr, "img8"), ytr, view(xte, "img8"), yte, epochs=150, lr=2e-3, batch=32)
    desc = ("keras 3 functional tiny ViT: 8x8x1 -> 2x2 patches (Reshape, Permute, Reshape: 16 tokens) -> Dense 32 + "
            "learned position embedding, 2 blocks of [LayerNormalization, MultiHeadAttention(2 heads, key_dim 16), "
            "residual, LayerNormalization, Dense 64 gelu -> Dense 32, residual], LayerNormalization, "
            "GlobalAveragePooling1D, Dense 10 logits")
    return emit(rebatch(build, model), "vit_digits", "transformer", ("float", "int8"),
                {"digits_img8_test.npz": view(xte, "img8")}, yte, view(xtr, "img8")[REP], desc, trained,
                "models/real/make_families_keras.py vit")


# name -> (keras package, layer, unroll): the LSTM in tf_keras (Keras 2), whose LSTM the converter fuses into
# UNIDIRECTIONAL_SEQUENCE_LSTM; Keras 3 recurrent layers become WHILE loops (3 subgraphs) unless unrolled
RNNS = {"lstm": ("tf_keras", "LSTM", False), "gru": ("keras", "GRU", False),
        "lstm_keras3": ("keras", "LSTM", False), "gru_unrolled": ("keras", "GRU", True)}


def rnn_build(name: str, batch):
    """rows [B, 8, 8] -> LSTM / GRU(32) (last state) -> Dense 10, as ``RNNS[name]`` says."""
    import importlib
    pkg, layer, unroll = RNNS[name]
    keras = importlib.import_module(pkg)
    inp = keras.Input((8, 8), batch_size=batch, name="rows")
    return keras.Model(inp, keras.layers.Dense(10)(getattr(keras.layers, layer)(32, unroll=unroll)(inp)))


def _rnn(name: str, variants) -> list[dict]:
    def build(batch):
        return rnn_build(name, batch)
    pkg, layer, unroll = RNNS[name]
    (xtr, xte, ytr, yte) = SPLIT
    model = build(None)
    trained = train(model, xtr, ytr, xte, yte, epochs=120, lr=5e-3, batch=32)
    k = "tf_keras (Keras 2)" if pkg == "tf_keras" else "keras 3"
    desc = (f"{k} functional {layer}: input [1, 8, 8] (the 8 image rows as 8 time steps of 8 features), "
            f"{layer}(32{', unroll=True' if unroll else ''}) (last state) -> Dense 10 logits")
    loop = pkg == "keras" and not unroll  # a WHILE loop: its int8 conversion has crashed the converter
    return emit(rebatch(build, model), f"{name}_digits", "sequence", variants, {"digits_seq_test.npz": xte}, yte,
                xtr[REP], desc, trained, f"models/real/make_families_keras.py {name}",
                isolate=name if loop else None)


def lstm() -> list[dict]:
    return _rnn("lstm", ("float", "int8"))


def gru() -> list[dict]:
    return _rnn("gru", ("float", "int8"))


def lstm_keras3() -> list[dict]:
    return _rnn("lstm_keras3", ("float", "int8"))


def gru_unrolled() -> list[dict]:
    return _rnn("gru_unrolled", ("float", "int8"))


def conv1d() -> list[dict]:
    keras, L = _layers()

    def build(batch):
        inp = keras.Input((64, 1), batch_size=batch, name="signal")
        x = L.MaxPooling1D(2)(L.Conv1D(16, 5, activation="relu")(inp))
        x = L.GlobalAveragePooling1D()(L.Conv1D(32, 3, activation="relu")(x))
        return keras.Model(inp, L.Dense(10)(x))
    (xtr, xte, ytr, yte) = SPLIT
    xs, xt = view(xtr, "sig64"), view(xte, "sig64")
    model = build(None)
    trained = train(model, xs, ytr, xt, yte, epochs=150, lr=5e-3, batch=32)
    desc = ("keras 3 functional 1-D CNN on the 64 pixels as a signal [1, 64, 1]: Conv1D(16, 5, relu, valid), "
            "MaxPooling1D 2, Conv1D(32, 3, relu, valid), GlobalAveragePooling1D, Dense 10 logits")
    return emit(rebatch(build, model), "conv1d_digits", "conv1d", ("float", "int8", "int16x8"),
                {"digits_sig64_test.npz": xt}, yte, xs[REP], desc, trained, "models/real/make_families_keras.py conv1d")


def cnn16() -> list[dict]:
    keras, L = _layers()

    def build(batch):
        inp = keras.Input((8, 8, 1), batch_size=batch, name="image")
        x = L.MaxPooling2D(2)(L.Conv2D(16, 3, padding="same", activation="relu")(inp))
        x = L.MaxPooling2D(2)(L.Conv2D(32, 3, padding="same", activation="relu")(x))
        return keras.Model(inp, L.Dense(10)(L.Flatten()(x)))
    (xtr, xte, ytr, yte) = SPLIT
    xs, xt = view(xtr, "img8"), view(xte, "img8")
    model = build(None)
    trained = train(model, xs, ytr, xt, yte, epochs=80, lr=3e-3, batch=32)
    desc = ("keras 3 functional CNN on [1, 8, 8, 1]: Conv2D 16 3x3 same relu, MaxPool 2, Conv2D 32 3x3 same relu, "
            "MaxPool 2, Flatten, Dense 10 logits")
    return emit(rebatch(build, model), "cnn_digits", "int16x8", ("float", "int16x8"),
                {"digits_img8_test.npz": xt}, yte, xs[REP], desc, trained, "models/real/make_families_keras.py cnn16")


def dwmult() -> list[dict]:
    """A depthwise layer with ``depth_multiplier=2`` (TFLite DEPTHWISE_CONV_2D weights [1, 3, 3, 16]): the form the
    importers rewrite for hexagon_nn's device (issue 36, ``hexnn_import/importers/nodes/dwise_mult.py``)."""
    keras, L = _layers()

    def build(batch):
        inp = keras.Input((8, 8, 1), batch_size=batch, name="image")
        x = L.Conv2D(8, 3, padding="same", activation="relu")(inp)
        x = L.DepthwiseConv2D(3, padding="same", depth_multiplier=2, activation="relu")(x)
        x = L.MaxPooling2D(2)(x)
        x = L.Conv2D(16, 1, activation="relu")(x)
        return keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))
    (xtr, xte, ytr, yte) = SPLIT
    xs, xt = view(xtr, "img8"), view(xte, "img8")
    model = build(None)
    trained = train(model, xs, ytr, xt, yte, epochs=80, lr=3e-3, batch=32, seconds=min(TRAIN_SECONDS, 60.0))
    desc = ("keras 3 functional CNN on [1, 8, 8, 1]: Conv2D 8 3x3 same relu, DepthwiseConv2D 3x3 same "
            "depth_multiplier 2 relu (8 -> 16 channels), MaxPool 2, Conv2D 16 1x1 relu, GlobalAveragePooling2D, "
            "Dense 10 logits")
    return emit(rebatch(build, model), "dwmult_digits", "cnn", ("float", "int8"),
                {"digits_img8_test.npz": xt}, yte, xs[REP], desc, trained, "models/real/make_families_keras.py dwmult")


def ssd() -> list[dict]:
    """The stretch detector (``make_families_ssd.py``): SavedModel export as the OD API does, float and int8."""
    import tempfile
    sys.path.insert(0, str(HERE))
    import make_families_ssd as S
    tf = _tf()
    (xtr, xte, ytr, yte) = SPLIT
    ctr, btr, ltr = S.canvases(xtr, ytr, seed=SEED + 1, copies=4)
    cte, bte, lte = S.canvases(xte, yte, seed=SEED + 2)
    net = S.build(None)
    trained = S.train(net, ctr, S.targets(btr, ltr, S.anchors()), seconds=TRAIN_SECONDS + 20)
    net1 = rebatch(S.build, net)
    key = None
    params, macs = int(net1.count_params()), count_macs(net1)
    desc = ("keras 3 SSD-style detector (4 convs to an 8x8 grid, 2 square anchors of 12 and 16 px per cell, 3x3 box "
            "and class heads, softmax score conversion, faster_rcnn box coder 10/10/5/5) on 32x32x1 canvases with "
            "one digit (10..16 px) at a random place; exported as the TF OD API TF2 export does (tf.Module "
            "inference_fn, experimental_implements TFLite_Detection_PostProcess "
            f"{json.dumps(S.NMS)}, SavedModel)")
    entries, float_acc = [], None
    with tempfile.TemporaryDirectory() as tmp:
        sm = str(S.saved_model(net1, Path(tmp) / "saved"))
        for variant in ("float", "int8"):
            conv = tf.lite.TFLiteConverter.from_saved_model(sm)
            how = "TFLiteConverter.from_saved_model float32"
            if variant == "int8":
                def gen():
                    for i in REP:
                        yield [ctr[i:i + 1]]
                conv.optimizations = [tf.lite.Optimize.DEFAULT]
                conv.representative_dataset = gen
                conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8, tf.lite.OpsSet.TFLITE_BUILTINS]
                conv.inference_input_type = tf.uint8
                how = ("TFLiteConverter.from_saved_model, Optimize.DEFAULT, 128 representative training canvases, "
                       "supported_ops TFLITE_BUILTINS_INT8 + TFLITE_BUILTINS, inference_input_type uint8")
            fname = f"keras_ssd_digits_{variant}.tflite"
            try:
                data = conv.convert()
            except Exception as e:  # noqa: BLE001 - recorded
                print(f"  {fname}: converter failed: {str(e).splitlines()[0][:300]}", flush=True)
                continue
            (OUT / fname).write_bytes(data)
            ops, nsub = graph_info(data)
            it = interpreter(data)
            ins = [{"name": d["name"], "shape": [int(v) for v in d["shape"]], "dtype": np.dtype(d["dtype"]).name}
                   for d in it.get_input_details()]
            key = ins[0]["name"]
            old = dict(np.load(OUT / "digits_canvas32_test.npz")) if (OUT / "digits_canvas32_test.npz").exists() else {}
            old.update({key: cte, "boxes": bte, "labels": lte.astype(np.int64)})
            np.savez_compressed(OUT / "digits_canvas32_test.npz", **old)
            acc, distinct, std = S.measure(data, cte, bte, lte)
            float_acc = acc if variant == "float" else float_acc
            e = {"file": fname, "family": "detector", "source": f"{desc}; {trained} -> {how} ({versions()})",
                 "quant": "float" if variant == "float" else "int8-io",
                 "float_reference": None if variant == "float" else "keras_ssd_digits_float.tflite",
                 "inputs": ins, "data": "digits_canvas32_test.npz", "task": "detector",
                 "params": params, "macs": macs, "ops": ops, "subgraphs": nsub,
                 "runtime_accuracy": round(acc, 4), "float_accuracy": round(float_acc, 4) if float_acc else None,
                 "accuracy_metric": "top detection has the digit's class and IoU >= 0.5 with its box",
                 "distinct_top1": distinct, "output_std": round(std, 5),
                 "notes": S.NOTE,
                 "outputs": ["boxes [1, 10, 4] (ymin, xmin, ymax, xmax)", "classes [1, 10]", "scores [1, 10]",
                             "num_detections [1]"],
                 "bytes": len(data), "made_by": "models/real/make_families_keras.py ssd"}
            print(f"  wrote {fname} {len(data)} B, acc {acc:.4f}, distinct {e['distinct_top1']}, ops {ops}, "
                  f"inputs {ins}", flush=True)
            entries.append(e)
            manifest_update([e])
    return entries


def measure(data: bytes, d) -> tuple[float, int, float]:
    """(accuracy, distinct top-1 classes, output std) of a classifier file on its npz."""
    out = run(data, d[interpreter(data).get_input_details()[0]["name"]])
    pred = np.argmax(out, -1)
    return float(np.mean(pred == d["labels"])), int(len(np.unique(pred))), float(out.std())


def refresh() -> None:
    """Recompute, from the files, the graph facts (ops, subgraphs, op_dtypes, float_ops, bytes) of every manifest
    entry and the measured figures of every classifier (runtime / float accuracy, distinct_top1, output_std)."""
    entries = json.loads(MANIFEST.read_text())
    for e in entries:
        data = (OUT / e["file"]).read_bytes()
        e["ops"], e["subgraphs"] = graph_info(data)
        e["bytes"], e["op_dtypes"] = len(data), op_dtypes(data)
        if e["quant"] != "float":
            e["float_ops"] = float_islands(data)
        e.update(variable_note(data))
        if e["task"] == "classifier":
            d = np.load(OUT / e["data"])
            acc, e["distinct_top1"], std = measure(data, d)
            e["runtime_accuracy"], e["output_std"] = round(acc, 4), round(std, 5)
            ref = (OUT / e["float_reference"]).read_bytes() if e["float_reference"] else data
            e["float_accuracy"] = round(measure(ref, d)[0], 4)
        elif e["task"] == "detector":
            sys.path.insert(0, str(HERE))
            import make_families_ssd as S
            d = np.load(OUT / e["data"])
            args = (d[e["inputs"][0]["name"]], d["boxes"], d["labels"])
            acc, e["distinct_top1"], std = S.measure(data, *args)
            e["runtime_accuracy"], e["output_std"], e["notes"] = round(acc, 4), round(std, 5), S.NOTE
            ref = (OUT / e["float_reference"]).read_bytes() if e["float_reference"] else data
            e["float_accuracy"] = round(S.measure(ref, *args)[0], 4)
        print(f"{e['file']}: {e.get('runtime_accuracy')} (float {e.get('float_accuracy')})", flush=True)
    manifest_update(entries)


def check() -> None:
    """Re-run every manifest file in LiteRT on its data; print the accuracy next to the recorded one."""
    sys.path.insert(0, str(HERE))
    import make_families_ssd as S
    for e in json.loads(MANIFEST.read_text()):
        data = (OUT / e["file"]).read_bytes()
        d = np.load(OUT / e["data"])
        x = d[e["inputs"][0]["name"]]
        acc = S.measure(data, x, d["boxes"], d["labels"])[0] if e["task"] == "detector" else measure(data, d)[0]
        print(f"{e['file']}: accuracy {acc:.4f} (manifest {e['runtime_accuracy']}), ops {graph_info(data)[0]}")


SPLIT: tuple = ()
REP = np.random.default_rng(SEED).permutation(1347)[:128]  # the representative training samples
BUILDERS = {k: (lambda batch, k=k: rnn_build(k, batch)) for k in RNNS}  # for ``convert_isolated``
MODELS = {"mobilenet_v3": mobilenet_v3, "vit": vit, "lstm": lstm, "gru": gru, "conv1d": conv1d, "cnn16": cnn16, "ssd": ssd,
          "lstm_keras3": lstm_keras3, "gru_unrolled": gru_unrolled, "dwmult": dwmult}


def main(argv: list[str]) -> None:
    global SPLIT
    if argv in (["check"], ["refresh"]):
        {"check": check, "refresh": refresh}[argv[0]]()
        return
    if argv[:1] == ["_convert"]:
        _convert_child(*argv[1:])
        return
    SPLIT = load_split()
    for name in argv or list(MODELS):
        if name not in MODELS:
            raise SystemExit(f"unknown model {name!r}; names: {' '.join(MODELS)} check")
        print(f"== {name}", flush=True)
        MODELS[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
