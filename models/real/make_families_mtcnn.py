"""Train an MTCNN-style CNN (10 / 16 / 32 channels, PReLU, max pools) on digits; convert it to int8 TFLite.

The layer shapes of MTCNN's P-Net / R-Net (Zhang et al. 2016): 3x3 convolutions of 10, 16 and 32 channels, each
followed by a PReLU with one alpha per channel (keras ``PReLU(shared_axes=[1, 2])``, as the public MTCNN ports
have it), max pools between them, and fully-connected layers at the end (a 32-unit Dense with a PReLU, then the
10 logits). Runs only in the development venv with tensorflow / keras 3, ai-edge-litert and scikit-learn; it reuses
``make_families_keras.py``'s split, training loop, converter and measuring. From the repository root::

    /work/venv-tf/bin/python models/real/make_families_mtcnn.py

writes into ``models/real/families/``

* ``keras_mtcnn_digits_int8.tflite``: TFLiteConverter full-integer int8 (128 representative training samples),
  int8 I/O;
* ``digits_img24_test.npz``: the 450 held-out digits as the model's input, float32 [N, 24, 24, 3] (8x8 upsampled
  3x, nearest, repeated over 3 channels, scaled to [-1, 1]), and ``labels``;
* ``manifest_mtcnn.json``: its family-manifest entry.

The input has 24x24 pixels (R-Net's size) so that the three convolutions and two pools keep a 2x2 image.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_families_keras as mk

mk.MANIFEST = mk.OUT / "manifest_mtcnn.json"
TRAIN_SECONDS = float(os.environ.get("TRAIN_SECONDS", "40"))


def img24(x: np.ndarray) -> np.ndarray:
    """Digits [N, 8, 8] in [0, 1] -> [N, 24, 24, 3] in [-1, 1] (nearest 3x upsampling, grey on 3 channels)."""
    up = np.kron(x, np.ones((3, 3), np.float32))[..., None]
    return (np.repeat(up, 3, axis=-1) * 2.0 - 1.0).astype(np.float32)


def build(batch):
    keras, L = mk._layers()
    inp = keras.Input((24, 24, 3), batch_size=batch, name="image")
    x = L.Conv2D(10, 3, name="conv1")(inp)                       # 22x22x10
    x = L.PReLU(shared_axes=[1, 2], name="prelu1")(x)
    x = L.MaxPooling2D(2, name="pool1")(x)                       # 11x11x10
    x = L.Conv2D(16, 3, name="conv2")(x)                         # 9x9x16
    x = L.PReLU(shared_axes=[1, 2], name="prelu2")(x)
    x = L.MaxPooling2D(3, strides=2, name="pool2")(x)            # 4x4x16
    x = L.Conv2D(32, 3, name="conv3")(x)                         # 2x2x32
    x = L.PReLU(shared_axes=[1, 2], name="prelu3")(x)
    x = L.Dense(32, name="fc1")(L.Flatten()(x))
    x = L.PReLU(name="prelu4")(x)
    return keras.Model(inp, L.Dense(10, name="logits")(x))


def main() -> None:
    mk.SPLIT = (xtr, xte, ytr, yte) = mk.load_split()
    xs, xt = img24(xtr), img24(xte)
    model = build(None)
    trained = mk.train(model, xs, ytr, xt, yte, epochs=40, lr=3e-3, batch=32, seconds=TRAIN_SECONDS)
    desc = ("keras 3 functional MTCNN-style CNN on [1, 24, 24, 3] (digits upsampled 3x): Conv2D 10 3x3 valid, "
            "PReLU (per channel), MaxPool 2, Conv2D 16 3x3, PReLU, MaxPool 3 stride 2, Conv2D 32 3x3, PReLU, "
            "Flatten, Dense 32, PReLU, Dense 10 logits")
    entries = mk.emit(mk.rebatch(build, model), "mtcnn_digits", "cnn", ("int8",), {"digits_img24_test.npz": xt},
                      yte, xs[mk.REP], desc, trained, "models/real/make_families_mtcnn.py")
    for e in entries:  # no float twin is written
        e["float_reference"] = None
    mk.manifest_update(entries)


if __name__ == "__main__":
    main()
