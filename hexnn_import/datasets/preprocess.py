"""Image preprocessing named on the command line (``--preprocess``), with presets for the common families.

An image (decoded by Pillow, RGB or grey) becomes one model input in real units:

1. resize, keeping the aspect ratio, so that the model's ``H x W`` is the central ``crop`` fraction of
   it (bilinear, Pillow's ``Image.resize``); ``resize=N`` instead sets the shorter side to ``N`` pixels
   (torchvision's ``Resize(256)`` before ``CenterCrop(224)``);
2. crop the central ``H x W``;
3. scale the 0..255 pixels onto ``scale`` (``0,1``, ``-1,1`` or ``0,255``), then ``(x - mean) / std``
   per channel (in the scaled units, in the order the model takes);
4. channel order (``rgb`` / ``bgr``) and layout (``nhwc`` / ``nchw``; ``auto``: NCHW when the model's
   input is ``[1, C, H, W]`` with C of 1 or 3, else NHWC).

Presets (``--preprocess NAME``; ``NAME,key=value,...`` overrides keys):

====================  =========  ======  ====================================  ====================  =====
preset                crop       scale   mean                                  std                   order
====================  =========  ======  ====================================  ====================  =====
``mobilenet``         0.875      -1,1    0                                     1                     rgb
``inception``         0.875      -1,1    0                                     1                     rgb
``torchvision``       256 -> H   0,1     0.485, 0.456, 0.406                   0.229, 0.224, 0.225   rgb
``imagenet-caffe``    0.875      0,255   103.939, 116.779, 123.68              1                     bgr
``raw``               1.0        0,255   0                                     1                     rgb
====================  =========  ======  ====================================  ====================  =====

(Keras' ``mobilenet`` / ``inception_v3`` ``preprocess_input`` is ``x / 127.5 - 1``, TensorFlow's
evaluation crops the central 87.5%; torchvision's ImageNet transform resizes to 256 and crops 224;
Keras' ``caffe`` mode subtracts the BGR means.)
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from hexnn_import.errors import InputDataError

def pillow():  # type: ignore[no-untyped-def]
    """Pillow's ``Image`` module (InputDataError when it is not installed)."""
    try:
        from PIL import Image
    except ImportError as exc:
        raise InputDataError("images are decoded by Pillow: pip install hexnn-import[images]") from exc
    return Image


SCALES = {"0,1": (1.0 / 255.0, 0.0), "-1,1": (1.0 / 127.5, -1.0), "0,255": (1.0, 0.0)}


@dataclass(frozen=True)
class Preprocess:
    """One preprocessing recipe (module doc); ``resize`` (pixels of the shorter side) wins over ``crop``."""

    name: str = "custom"
    crop: float = 1.0
    resize: int | None = None
    scale: str = "0,255"
    mean: tuple[float, float, float] = (0.0, 0.0, 0.0)
    std: tuple[float, float, float] = (1.0, 1.0, 1.0)
    order: str = "rgb"
    layout: str = "auto"

    def describe(self) -> str:
        """The recipe in the ``--preprocess`` syntax (for reports and checkpoints)."""
        size = f"resize={self.resize}" if self.resize else f"crop={self.crop:g}"
        return (f"{self.name}: {size},scale={self.scale},mean={'/'.join(f'{v:g}' for v in self.mean)},"
                f"std={'/'.join(f'{v:g}' for v in self.std)},order={self.order},layout={self.layout}")

    def target(self, shape: Sequence[int]) -> tuple[int, int, int, bool]:
        """``(H, W, C, nchw)`` of a single-image model input ``shape`` (InputDataError otherwise)."""
        dims = [int(d) for d in shape]
        if len(dims) == 3:
            dims = [1, *dims]
        if len(dims) != 4 or dims[0] != 1:
            raise InputDataError(f"an image feeds a [1, H, W, C] or [1, C, H, W] input, the model takes {dims}")
        nchw = self.layout == "nchw" or (self.layout == "auto" and dims[1] in (1, 3) and dims[3] not in (1, 3))
        h, w, c = (dims[2], dims[3], dims[1]) if nchw else (dims[1], dims[2], dims[3])
        if c not in (1, 3):
            raise InputDataError(f"an image has 1 or 3 channels, the model's input {dims} takes {c} "
                                 f"(give --preprocess layout=nchw or nhwc if the layout was guessed wrong)")
        return h, w, c, nchw

    def apply(self, image: "object", shape: Sequence[int]) -> np.ndarray:
        """A Pillow image as the real-valued model input of ``shape`` (float64)."""
        Image = pillow()
        h, w, c, nchw = self.target(shape)
        img = image.convert("RGB" if c == 3 else "L")  # type: ignore[attr-defined]
        iw, ih = img.size
        if self.resize:
            k = self.resize / min(iw, ih)
        else:
            k = max(h / self.crop / ih, w / self.crop / iw)
        nw, nh = max(w, round(iw * k)), max(h, round(ih * k))
        img = img.resize((nw, nh), Image.BILINEAR)
        left, top = (nw - w) // 2, (nh - h) // 2
        img = img.crop((left, top, left + w, top + h))
        x = np.asarray(img, dtype=np.float64).reshape(h, w, c)
        a, b = SCALES[self.scale]
        x = x * a + b
        if c == 3 and self.order == "bgr":
            x = x[..., ::-1]
        x = (x - np.asarray(self.mean[:c])) / np.asarray(self.std[:c])
        if nchw:
            x = x.transpose(2, 0, 1)
        return np.ascontiguousarray(x).reshape(shape)


PRESETS: dict[str, Preprocess] = {
    "mobilenet": Preprocess("mobilenet", crop=0.875, scale="-1,1"),
    "inception": Preprocess("inception", crop=0.875, scale="-1,1"),
    "torchvision": Preprocess("torchvision", resize=256, scale="0,1", mean=(0.485, 0.456, 0.406),
                              std=(0.229, 0.224, 0.225)),
    "imagenet-caffe": Preprocess("imagenet-caffe", crop=0.875, scale="0,255", mean=(103.939, 116.779, 123.68),
                                 order="bgr"),
    "raw": Preprocess("raw"),
}


def _floats(key: str, text: str) -> tuple[float, float, float]:
    try:
        vals = [float(v) for v in text.replace(",", "/").split("/")]
    except ValueError:
        vals = []
    if len(vals) == 1:
        vals *= 3
    if len(vals) != 3 or (key == "std" and any(v == 0 for v in vals)):
        raise InputDataError(f"--preprocess {key}={text}: expected one or three numbers separated by '/'"
                             + (" (none 0)" if key == "std" else ""))
    return vals[0], vals[1], vals[2]


def parse_preprocess(text: str) -> Preprocess:
    """``--preprocess``: a preset name, ``key=value`` settings, or a preset followed by overrides
    (``torchvision,layout=nhwc``); InputDataError naming the presets and keys otherwise."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise InputDataError(f"--preprocess: expected one of {', '.join(PRESETS)} or key=value settings")
    spec = Preprocess()
    if "=" not in parts[0]:
        if parts[0] not in PRESETS:
            raise InputDataError(f"--preprocess {parts[0]}: not a preset ({', '.join(PRESETS)})")
        spec, parts = PRESETS[parts[0]], parts[1:]
    for part in parts:
        key, _, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if key == "crop":
            try:
                crop = float(value)
            except ValueError:
                crop = 0.0
            if not 0 < crop <= 1:
                raise InputDataError(f"--preprocess crop={value}: expected a fraction in (0, 1]")
            spec = replace(spec, crop=crop, resize=None)
        elif key == "resize":
            if not value.isdigit() or int(value) < 1:
                raise InputDataError(f"--preprocess resize={value}: expected the shorter side in pixels")
            spec = replace(spec, resize=int(value))
        elif key == "scale":
            if value.replace(" ", "") not in SCALES:
                raise InputDataError(f"--preprocess scale={value}: expected one of {' | '.join(SCALES)}")
            spec = replace(spec, scale=value.replace(" ", ""))
        elif key in ("mean", "std"):
            spec = replace(spec, **{key: _floats(key, value)})
        elif key in ("order", "layout"):
            allowed = ("rgb", "bgr") if key == "order" else ("auto", "nhwc", "nchw")
            if value.lower() not in allowed:
                raise InputDataError(f"--preprocess {key}={value}: expected one of {', '.join(allowed)}")
            spec = replace(spec, **{key: value.lower()})
        else:
            raise InputDataError(f"--preprocess {part}: unknown setting (crop, resize, scale, mean, std, order, "
                                 f"layout)")
    return spec
