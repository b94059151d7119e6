"""Data sources and image preprocessing (issue [Scale]): values worked by hand, labels from folders and
files, calibration from an image folder."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import hexnn_import as hx
from hexnn_import.datasets import ImageFolder, NpyGlob, open_source, parse_preprocess
from hexnn_import.errors import InputDataError
from hexnn_import.graph import GraphIO

ROOT = Path(__file__).resolve().parents[2]
RGB = (200, 100, 0)


def flat_image(w: int = 10, h: int = 8, rgb: tuple[int, int, int] = RGB) -> Image.Image:
    return Image.new("RGB", (w, h), rgb)


@pytest.mark.parametrize("preset, shape, want", [
    # x / 127.5 - 1 per channel
    ("mobilenet", (1, 4, 4, 3), [200 / 127.5 - 1, 100 / 127.5 - 1, -1.0]),
    # (x / 255 - mean) / std, channels first (a [1, 3, H, W] input)
    ("torchvision", (1, 3, 4, 4), [(200 / 255 - 0.485) / 0.229, (100 / 255 - 0.456) / 0.224,
                                   (0 - 0.406) / 0.225]),
    # BGR order, the BGR means subtracted
    ("imagenet-caffe", (1, 4, 4, 3), [0 - 103.939, 100 - 116.779, 200 - 123.68]),
    ("raw", (1, 4, 4, 3), [200.0, 100.0, 0.0]),
])
def test_presets_scale_a_flat_image_as_worked_by_hand(preset: str, shape: tuple, want: list[float]) -> None:
    x = parse_preprocess(preset).apply(flat_image(), shape)
    assert x.shape == shape
    per_channel = x[0, :, 0, 0] if shape[1] == 3 else x[0, 0, 0, :]
    np.testing.assert_allclose(per_channel, want, rtol=1e-12)
    assert np.ptp(x.reshape(-1, 3) if shape[3] == 3 else x.reshape(3, -1).T, axis=0).max() == 0


def test_the_centre_crop_takes_the_middle_columns() -> None:
    # a 4 x 2 image into a 2 x 2 input with crop 1.0: no resize (2 / 2 = 1), columns 1 and 2 kept
    img = Image.fromarray(np.array([[[0] * 3, [10] * 3, [20] * 3, [30] * 3]] * 2, np.uint8))
    x = parse_preprocess("raw,crop=1").apply(img, (1, 2, 2, 3))
    assert x[0, :, :, 0].tolist() == [[10.0, 20.0], [10.0, 20.0]]
    # resize=2: the shorter side (2) stays, then the same crop; a grey input takes the luminance
    g = parse_preprocess("raw,resize=2").apply(img.convert("L"), (1, 2, 2, 1))
    assert g[0, :, :, 0].tolist() == [[10.0, 20.0], [10.0, 20.0]]


@pytest.mark.parametrize("text, why", [
    ("nosuch", "not a preset"), ("crop=1.5", "fraction in (0, 1]"), ("scale=0,2", "expected one of"),
    ("mean=1/2", "one or three numbers"), ("std=0", "none 0"), ("layout=chw", "expected one of"),
    ("mobilenet,size=3", "unknown setting"),
])
def test_bad_preprocess_settings_are_named(text: str, why: str) -> None:
    with pytest.raises(InputDataError, match=re.escape(why)):
        parse_preprocess(text)


def write_folder(root: Path, classes: dict[str, int], size: tuple[int, int] = (30, 20), seed: int = 0) -> Path:
    """``classes``: sub-folder -> number of random images (png)."""
    rng = np.random.default_rng(seed)
    for name, n in classes.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            arr = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
            Image.fromarray(arr).save(root / name / f"img{i:03d}.png")
    return root


def test_image_folder_labels_come_from_sorted_sub_folders(tmp_path: Path) -> None:
    root = write_folder(tmp_path / "data", {"zebra": 2, "ant": 3})
    (root / "notes.txt").write_text("not an image")
    src = open_source(str(root), parse_preprocess("mobilenet"))
    assert isinstance(src, ImageFolder) and len(src) == 5
    assert src.classes == ("ant", "zebra") and src.labels == [0, 0, 0, 1, 1]
    items = src.items(2, 4, [GraphIO("x", (1, 8, 8, 3), "float32")])
    assert [label for _, label in items] == [0, 1]
    assert items[0][0]["x"].shape == (1, 8, 8, 3) and -1 <= items[0][0]["x"].min() <= items[0][0]["x"].max() <= 1


def test_labels_file_and_npy_globs(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / "flat").mkdir(exist_ok=True)
        flat_image().save(tmp_path / "flat" / f"p{i}.png")
        (tmp_path / "npy" / f"c{i % 2}").mkdir(parents=True, exist_ok=True)
        np.save(tmp_path / "npy" / f"c{i % 2}" / f"s{i}.npy", np.full((1, 2), i, np.float32))
    labels = tmp_path / "labels.txt"
    labels.write_text("# file label\np0.png cat\np1.png dog\np2.png cat\n")
    src = open_source(str(tmp_path / "flat"), parse_preprocess("raw"), str(labels))
    assert src.labels == [0, 1, 0] and src.classes == ("cat", "dog")
    glob_src = open_source(str(tmp_path / "npy" / "*" / "*.npy"))
    # sorted paths: c0/s0, c0/s2, c1/s1
    assert isinstance(glob_src, NpyGlob) and glob_src.labels == [0, 0, 1] and glob_src.classes == ("c0", "c1")
    got = glob_src.items(0, 3, [GraphIO("x", (1, 2), "float32")])
    assert [float(s["x"][0, 0]) for s, _ in got] == [0.0, 2.0, 1.0]
    with pytest.raises(InputDataError, match="no label for p1.png"):
        labels.write_text("p0.png 1\n")
        open_source(str(tmp_path / "flat"), parse_preprocess("raw"), str(labels))
    with pytest.raises(InputDataError, match="needs --preprocess"):
        open_source(str(tmp_path / "flat"))


def test_calibration_from_an_image_folder_equals_the_same_samples_in_an_npz(tmp_path: Path) -> None:
    """The folder path and an .npz of the same preprocessed images (decoded and scaled here with numpy:
    x / 127.5 - 1 of each 24 x 24 image, which needs no resize or crop) calibrate the same ranges."""
    root = write_folder(tmp_path / "cal", {"x": 6}, size=(24, 24))
    model = ROOT / "models" / "small_float.tflite"
    by_folder = hx.import_model(model, calibration=str(root), preprocess="mobilenet,crop=1")
    x = np.stack([np.asarray(Image.open(p).convert("RGB"), np.float64) / 127.5 - 1
                  for p in sorted((root / "x").iterdir())])
    np.savez(tmp_path / "cal.npz", **{by_folder.inputs[0].name: x.astype(np.float32)})
    by_npz = hx.import_model(model, calibration=tmp_path / "cal.npz")
    assert by_folder.meta["calibration"]["ranges"] == by_npz.meta["calibration"]["ranges"]
