"""Make the Keras 3 recurrent test models of tests/importers/test_recurrent_tflite.py (a development venv with
TensorFlow: ``python tests/data/recurrent/make_keras_rnn.py``; seeded, random weights, about 10 kB each).

Each is ``keras.Input((6, 4), batch_size=1)`` -> LSTM / GRU / SimpleRNN(8) (``return_sequences`` or the last
state then Dense(5)), weights drawn from N(0, 0.5) so that the outputs vary with the input, converted by
``tf.lite.TFLiteConverter.from_keras_model`` (float32, no optimizations): Keras 3 layers become a WHILE loop
with cond and body subgraphs.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODELS = {"keras_lstm_seq": ("LSTM", True), "keras_lstm_last": ("LSTM", False), "keras_gru_seq": ("GRU", True),
          "keras_gru_last": ("GRU", False), "keras_simple_rnn_seq": ("SimpleRNN", True)}


def make(name: str, layer: str, sequences: bool) -> bytes:
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(sorted(MODELS).index(name))
    keras.utils.set_random_seed(0)
    inp = keras.Input((6, 4), batch_size=1, name="x")
    y = getattr(keras.layers, layer)(8, return_sequences=sequences)(inp)
    if not sequences:
        y = keras.layers.Dense(5)(y)
    model = keras.Model(inp, y)
    for w in model.weights:
        w.assign(rng.normal(0, 0.5, w.shape).astype(np.float32))
    return tf.lite.TFLiteConverter.from_keras_model(model).convert()


if __name__ == "__main__":
    for key, (kind, seq) in MODELS.items():
        (HERE / f"{key}.tflite").write_bytes(make(key, kind, seq))
        print("wrote", key)
