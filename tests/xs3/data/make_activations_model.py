"""Make ``activations_int8.tflite``: one int8 TFLite file with every per-tensor activation the XS3 lowering runs
as a lookup8 table, each reading the model's input (so none is fused into a conv), for tests/xs3/test_lookup_ops.py.

Runs in the development venv with tensorflow / keras 3 (seeded; TFLiteConverter full-integer int8, 64
representative samples of N(0, 2) values, int8 I/O)::

    /work/venv-tf/bin/python tests/xs3/data/make_activations_model.py

Ops: LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU (alpha 0.2), ELU, GELU (the tanh form: this converter has no int8
form of the erf one), RELU6, RELU_N1_TO_1, RELU (keras' PReLU on the input and a clip to [0, 1] convert to other
ops: the test builds PRELU and RELU_0_TO_1 itself).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
SEED = 20260315
OUT = Path(__file__).resolve().parent / "activations_int8.tflite"


def build():
    import keras
    import tensorflow as tf
    L = keras.layers
    keras.utils.set_random_seed(SEED)
    x = keras.Input((8, 8, 16), batch_size=1, name="x")
    outs = [
        L.Activation("sigmoid", name="sigmoid")(x),
        L.Activation("tanh", name="tanh")(x),
        L.Activation("hard_swish", name="hard_swish")(x),
        L.LeakyReLU(negative_slope=0.2, name="leaky")(x),
        L.Activation("elu", name="elu")(x),
        L.Activation(lambda v: keras.activations.gelu(v, approximate=True), name="gelu_tanh")(x),
        L.ReLU(max_value=6.0, name="relu6")(x),
        L.Lambda(lambda v: tf.minimum(tf.maximum(v, -1.0), 1.0), name="relu_n1_to_1")(x),
        L.ReLU(name="relu")(x),
    ]
    return keras.Model(x, outs)


def main() -> None:
    import tensorflow as tf
    model = build()
    rep = np.random.default_rng(SEED).normal(0, 2, (64, 1, 8, 8, 16)).astype(np.float32)
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([r] for r in rep)
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = conv.inference_output_type = tf.int8
    OUT.write_bytes(conv.convert())
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
