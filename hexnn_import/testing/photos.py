"""Real photographs as model inputs: crops of scikit-learn's two sample photos.

``models/real/photos.npz`` holds china.jpg and flower.jpg (uint8 [2, 427,
640, 3], made by ``models/real/make_photos.py``). :func:`photo_batch` cuts
``n`` deterministic crops of varied size and place from them and resizes each
to the model's input by area averaging (numpy only, so this module can be
loaded alone by the model-making scripts with ``importlib``).

``split="test"`` and ``split="calib"`` draw different crops, so calibration
never sees the test inputs.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

def models_dir() -> Path:
    """The repository's ``models/``: ``$HEXNN_MODELS_DIR``, else ``./models``, else beside the source tree
    (the package may be installed from a wheel while the tests run in the checkout, as in CI)."""
    import os

    env = os.environ.get("HEXNN_MODELS_DIR")
    for cand in ([Path(env)] if env else []) + [Path.cwd() / "models", Path(__file__).resolve().parents[2] / "models"]:
        if (cand / "real").is_dir():
            return cand
    return Path.cwd() / "models"


PHOTOS = models_dir() / "real" / "photos.npz"


def load_photos(path: str | Path | None = None) -> np.ndarray:
    """The two photographs, uint8 [2, 427, 640, 3]."""
    with np.load(Path(path) if path else PHOTOS) as z:
        return np.asarray(z["photos"])


def _resize_area(img: np.ndarray, h: int, w: int) -> np.ndarray:
    """Resize float [H, W, C] to [h, w, C]: each output pixel is the mean of its source box."""
    H, W = img.shape[:2]
    ys = np.linspace(0, H, h + 1).astype(int)
    xs = np.linspace(0, W, w + 1).astype(int)
    ys[1:] = np.maximum(ys[1:], ys[:-1] + 1)
    xs[1:] = np.maximum(xs[1:], xs[:-1] + 1)
    ys = np.minimum(ys, H)
    xs = np.minimum(xs, W)
    csum = np.zeros((H + 1, W + 1, img.shape[2]), np.float64)
    csum[1:, 1:] = img.cumsum(0).cumsum(1)
    y0, y1 = ys[:-1], np.maximum(ys[1:], ys[:-1] + 1)
    x0, x1 = xs[:-1], np.maximum(xs[1:], xs[:-1] + 1)
    tot = (csum[y1][:, x1] - csum[y0][:, x1] - csum[y1][:, x0] + csum[y0][:, x0])
    area = ((y1 - y0)[:, None] * (x1 - x0)[None, :])[..., None]
    return tot / area


def photo_batch(n: int, height: int, width: int, channels: int = 3, split: str = "test",
                photos: np.ndarray | None = None) -> np.ndarray:
    """``n`` crops as float32 [n, height, width, channels] with values in [0, 255].

    Crops alternate between the two photographs; their size (35-100% of the
    shorter side) and place come from a generator seeded by ``split``.
    ``channels=1`` gives luminance (ITU-R BT.601 weights).
    """
    if channels not in (1, 3):
        raise ValueError(f"channels must be 1 or 3, not {channels}")
    src = load_photos() if photos is None else photos
    rng = np.random.default_rng({"test": 1234, "calib": 5678}.get(split, abs(hash(split)) % 2**32))
    out = np.empty((n, height, width, channels), np.float32)
    for i in range(n):
        img = src[i % len(src)].astype(np.float64)
        H, W = img.shape[:2]
        side = int(min(H, W) * rng.uniform(0.35, 1.0))
        ch = side
        cw = min(W, int(round(side * width / max(height, 1))))
        y = int(rng.integers(0, H - ch + 1))
        x = int(rng.integers(0, W - cw + 1))
        crop = _resize_area(img[y:y + ch, x:x + cw], height, width)
        if channels == 1:
            crop = crop @ np.array([0.299, 0.587, 0.114])[:, None]
        out[i] = crop
    return out


__all__ = ["PHOTOS", "load_photos", "models_dir", "photo_batch"]
