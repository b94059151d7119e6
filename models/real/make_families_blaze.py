"""Train a BlazeFace-style float CNN (BlazeBlocks with explicit spatial pads) on digits; convert it to TFLite.

The shape of MediaPipe's full-range BlazeFace / BlazePose detector backbones as their public PyTorch ports
(hollance/BlazeFace-PyTorch ``BlazeBlock``) describe them: each BlazeBlock pads its input explicitly before a
VALID 3x3 depthwise convolution - one pixel all round at stride 1, two pixels at the bottom / right at stride 2
(TFLite's padding there differs from PyTorch's) - then a 1x1 convolution, added to the shortcut (at stride 2 a
2x2 max pool, and a channel pad where the block widens), then ReLU. The spatial pads are ``PAD`` ops on the
height and width only, after a convolution or a residual add; the channel pads pad depth. A float file keeps
them as QuantizedPad_8 with run-time ranges, which hexagon_nn's prepare.c turns into QuantizedPad_8_d32 where the
depth is left alone (the hidden full-range BlazeFace / BlazePose detectors' divergence, issue 36).

Runs only in the development venv with tensorflow / keras 3, ai-edge-litert and scikit-learn; it reuses
``make_families_keras.py``'s split, training loop, converter and measuring. From the repository root::

    /work/venv-tf/bin/python models/real/make_families_blaze.py

writes into ``models/real/families/``

* ``keras_blaze_digits_float.tflite``: TFLiteConverter float32;
* ``digits_blaze32_test.npz``: the 450 held-out digits as the model's input, float32 [N, 32, 32, 3] (8x8 upsampled
  bilinear, grey on 3 channels, scaled to [-1, 1]), and ``labels``;
* ``manifest_blaze.json``: its family-manifest entry.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_families_keras as mk

mk.MANIFEST = mk.OUT / "manifest_blaze.json"
TRAIN_SECONDS = float(os.environ.get("TRAIN_SECONDS", "40"))


def blaze_block(keras, L, x, channels: int, stride: int, name: str):
    """One BlazeBlock: explicit pad, VALID depthwise 3x3, 1x1 conv, + shortcut (max pool, channel pad), ReLU."""
    pads = ((1, 1), (1, 1)) if stride == 1 else ((0, 2), (0, 2))
    h = L.ZeroPadding2D(pads, name=f"{name}_pad")(x)
    h = L.DepthwiseConv2D(3, strides=stride, padding="valid", name=f"{name}_dw")(h)
    h = L.Conv2D(channels, 1, name=f"{name}_pw")(h)
    if stride == 2:
        x = L.MaxPooling2D(2, name=f"{name}_pool")(x)
    grow = channels - x.shape[-1]
    if grow:
        x = L.Lambda(lambda t, g=grow: keras.ops.pad(t, [[0, 0], [0, 0], [0, 0], [0, g]]), name=f"{name}_chpad")(x)
    return L.ReLU(name=f"{name}_relu")(L.Add(name=f"{name}_add")([h, x]))


def build(batch):
    keras, L = mk._layers()
    inp = keras.Input((32, 32, 3), batch_size=batch, name="image")
    x = L.Conv2D(16, 5, strides=2, padding="same", activation="relu", name="stem")(inp)   # 16x16x16
    x = blaze_block(keras, L, x, 16, 1, "b1")
    x = blaze_block(keras, L, x, 16, 1, "b2")
    x = blaze_block(keras, L, x, 24, 2, "b3")                                            # 8x8x24
    x = blaze_block(keras, L, x, 24, 1, "b4")
    x = blaze_block(keras, L, x, 32, 2, "b5")                                            # 4x4x32
    x = blaze_block(keras, L, x, 32, 1, "b6")
    x = L.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(inp, L.Dense(10, name="logits")(x))


def main() -> None:
    mk.SPLIT = (xtr, xte, ytr, yte) = mk.load_split()
    xs, xt = mk.view(xtr, "img32"), mk.view(xte, "img32")
    model = build(None)
    trained = mk.train(model, xs, ytr, xt, yte, epochs=40, lr=3e-3, batch=32, seconds=TRAIN_SECONDS)
    desc = ("keras 3 functional BlazeFace-style CNN on [1, 32, 32, 3] (digits upsampled bilinear to 32x32, 3 "
            "channels, [-1, 1]): Conv2D 16 5x5 stride 2 same + ReLU, six BlazeBlocks (16, 16, 24 s2, 24, 32 s2, 32: "
            "ZeroPadding2D 1 all round at stride 1, (0, 2) bottom / right at stride 2, DepthwiseConv2D 3x3 valid, "
            "Conv2D 1x1, + shortcut (MaxPool 2 at stride 2, a channel pad where the block widens), ReLU), "
            "GlobalAveragePooling, Dense 10 logits")
    mk.emit(mk.rebatch(build, model), "blaze_digits", "cnn", ("float",), {"digits_blaze32_test.npz": xt},
            yte, xs[mk.REP], desc, trained, "models/real/make_families_blaze.py")


if __name__ == "__main__":
    main()
