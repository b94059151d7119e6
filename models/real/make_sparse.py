"""Sparse TFLite models: a keras CNN with pruned weights, converted with EXPERIMENTAL_SPARSITY.

    /work/venv-tf/bin/python models/real/make_sparse.py

The converter stores a weight tensor in TFLite's sparse format (``Tensor.sparsity``:
traversal order, block map, DENSE / SPARSE_CSR dimension metadata) when enough of it
is zero; float models read it through a DENSIFY op, int8 models directly. The weights
are random (seeded), 80% of each Dense / Conv kernel set to zero in 1x4 blocks along
the input axis (the pattern the converter's block-sparse path keeps), and the model
is not trained: these files exist to check the sparse reader against LiteRT.
Writes keras_sparse_float.tflite and keras_sparse_int8.tflite, and their entries in
manifest_sparse.json.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import tensorflow as tf

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("photos", HERE.parents[1] / "hexnn_import" / "testing" / "photos.py")
photos = importlib.util.module_from_spec(spec)
spec.loader.exec_module(photos)


def build() -> tf.keras.Model:
    keras = tf.keras
    keras.utils.set_random_seed(7)
    inp = keras.Input((32, 32, 3), name="image")
    x = keras.layers.Conv2D(16, 3, strides=2, activation="relu", name="conv1")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, activation="relu", name="conv2")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(64, activation="relu", name="fc1")(x)
    out = keras.layers.Dense(10, name="logits")(x)
    model = keras.Model(inp, out)
    rng = np.random.default_rng(7)
    for layer in model.layers:
        if not layer.weights:
            continue
        w, b = layer.get_weights()
        flat = w.reshape(-1, w.shape[-1])  # [inputs, outputs]
        rows = flat.shape[0] // 4 * 4
        keep = rng.random((rows // 4, flat.shape[1])) > 0.8
        mask = np.ones_like(flat)
        mask[:rows] = np.repeat(keep, 4, axis=0)
        layer.set_weights([(flat * mask).reshape(w.shape), b])
    return model


def convert(model: tf.keras.Model, int8: bool) -> bytes:
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY] + ([tf.lite.Optimize.DEFAULT] if int8 else [])
    if int8:
        cal = photos.photo_batch(32, 32, 32, 3, "calib") / 255.0

        def rep():
            for k in range(len(cal)):
                yield [cal[k:k + 1].astype(np.float32)]

        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = conv.inference_output_type = tf.int8
    return conv.convert()


def main() -> None:
    model = build()
    entries = []
    for int8 in (False, True):
        name = f"keras_sparse_{'int8' if int8 else 'float'}.tflite"
        (HERE / name).write_bytes(convert(model, int8))
        entries.append({
            "file": name, "kind": "classifier", "quant": "int8-io" if int8 else "float",
            "float_reference": None if not int8 else "keras_sparse_float.tflite",
            "source": f"keras CNN (2 conv, 2 dense), random seeded weights 80% zero in 1x4 blocks, untrained -> "
                      f"TFLiteConverter EXPERIMENTAL_SPARSITY{' + full-integer int8, int8 I/O' if int8 else ''} "
                      f"(tensorflow {tf.__version__})",
            "input": {"layout": "NHWC", "height": 32, "width": 32, "channels": 3, "scale": 1 / 255.0, "offset": 0.0},
            "params": int(model.count_params()), "macs": 0, "made_by": "models/real/make_sparse.py"})
        print(name, (HERE / name).stat().st_size)
    (HERE / "manifest_sparse.json").write_text(json.dumps(entries, indent=1) + "\n")


if __name__ == "__main__":
    main()
