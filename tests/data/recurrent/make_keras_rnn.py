"""Make the Keras 3 recurrent test models of tests/importers/test_recurrent_tflite.py (a development venv with
TensorFlow: ``python tests/data/recurrent/make_keras_rnn.py``; seeded, random weights, about 10 kB each).

Each is ``keras.Input((6, 4), batch_size=1)`` -> LSTM / GRU / SimpleRNN(8) (``return_sequences`` or the last
state then Dense(5)), weights drawn from N(0, 0.5) so that the outputs vary with the input, converted by
``tf.lite.TFLiteConverter.from_keras_model`` (float32, no optimizations): Keras 3 layers become a WHILE loop
with cond and body subgraphs. ``tf_keras`` (Keras 2, ``pip install tf-keras``) LSTMs convert to the
fused UNIDIRECTIONAL_SEQUENCE_LSTM instead: ``tfk_lstm_seq_float`` and ``tfk_lstm_seq_int8`` (full-integer,
int8 I/O, 100 N(0, 1) representative samples). ``if_on_batch``: a ``tf.function`` on ``x [None, 4]`` whose
``tf.cond`` on the batch size stays an IF with then / else subgraphs (``tanh(2 x W)`` for a batch > 1, else
``tanh(relu(x W) + 1)``). ``stream_variable``: a ``tf.Module`` whose state ``s [1, 8]`` (a resource variable,
initial value N(0, 0.3)) is ``tanh(x W + s R)`` each call, returning ``2 s`` (CALL_ONCE, VAR_HANDLE,
READ_VARIABLE, ASSIGN_VARIABLE; ``experimental_enable_resource_variables``). ``keras_bilstm_seq`` /
``tfk_bilstm_seq``: Bidirectional(LSTM(8, return_sequences=True)) in Keras 3 (two WHILE loops) and tf_keras
(two UNIDIRECTIONAL_SEQUENCE_LSTM), the backward one between two REVERSE_V2.
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


def make_fused(int8: bool) -> bytes:
    """tf_keras LSTM(8, return_sequences=True) on [1, 6, 4]: UNIDIRECTIONAL_SEQUENCE_LSTM."""
    import tensorflow as tf
    import tf_keras

    rng = np.random.default_rng(10)
    inp = tf_keras.Input((6, 4), batch_size=1, name="x")
    model = tf_keras.Model(inp, tf_keras.layers.LSTM(8, return_sequences=True)(inp))
    model.set_weights([rng.normal(0, 0.5, w.shape).astype(np.float32) for w in model.get_weights()])
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        def rep():  # type: ignore[no-untyped-def]
            for _ in range(100):
                yield [rng.normal(0, 1, (1, 6, 4)).astype(np.float32)]
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = conv.inference_output_type = tf.int8
    return conv.convert()


def make_if() -> bytes:
    """The IF model of the module doc (the converter cannot fold a condition on a dynamic batch)."""
    import tensorflow as tf

    w = tf.constant(np.random.default_rng(11).normal(0, 0.5, (4, 3)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def f(x):  # type: ignore[no-untyped-def]
        y = tf.cond(tf.shape(x)[0] > 1, lambda: tf.matmul(x, w) * 2.0, lambda: tf.nn.relu(tf.matmul(x, w)) + 1.0)
        return tf.tanh(y)

    return tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f).convert()


def make_stream() -> bytes:
    """The resource-variable model of the module doc."""
    import tensorflow as tf

    rng = np.random.default_rng(12)
    w = tf.constant(rng.normal(0, 0.5, (4, 8)).astype(np.float32))
    r = tf.constant(rng.normal(0, 0.5, (8, 8)).astype(np.float32))

    class Stream(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.state = tf.Variable(tf.constant(rng.normal(0, 0.3, (1, 8)).astype(np.float32)))

        @tf.function(input_signature=[tf.TensorSpec([1, 4], tf.float32, name="x")])
        def __call__(self, x):  # type: ignore[no-untyped-def]
            s = tf.tanh(tf.matmul(x, w) + tf.matmul(self.state, r))
            self.state.assign(s)
            return s * 2.0

    m = Stream()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([m.__call__.get_concrete_function()], m)
    conv.experimental_enable_resource_variables = True
    return conv.convert()


def make_bidirectional(legacy: bool) -> bytes:
    """Bidirectional LSTM of the module doc (``legacy``: tf_keras, else Keras 3)."""
    import tensorflow as tf

    if legacy:
        import tf_keras as keras
    else:
        import keras
    rng = np.random.default_rng(13)
    inp = keras.Input((6, 4), batch_size=1, name="x")
    model = keras.Model(inp, keras.layers.Bidirectional(keras.layers.LSTM(8, return_sequences=True))(inp))
    model.set_weights([rng.normal(0, 0.5, w.shape).astype(np.float32) for w in model.get_weights()])
    return tf.lite.TFLiteConverter.from_keras_model(model).convert()


if __name__ == "__main__":
    for key, (kind, seq) in MODELS.items():
        (HERE / f"{key}.tflite").write_bytes(make(key, kind, seq))
        print("wrote", key)
    for variant in ("float", "int8"):
        (HERE / f"tfk_lstm_seq_{variant}.tflite").write_bytes(make_fused(variant == "int8"))
        print("wrote", f"tfk_lstm_seq_{variant}")
    (HERE / "if_on_batch.tflite").write_bytes(make_if())
    print("wrote if_on_batch")
    (HERE / "stream_variable.tflite").write_bytes(make_stream())
    print("wrote stream_variable")
    for legacy, key in ((False, "keras_bilstm_seq"), (True, "tfk_bilstm_seq")):
        (HERE / f"{key}.tflite").write_bytes(make_bidirectional(legacy))
        print("wrote", key)
