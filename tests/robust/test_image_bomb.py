"""An image bomb in ``--data`` / ``--calibration`` (issue [Robust] finding 4d: Pillow's ``DecompressionBombError``,
exit 3): one line naming the file, exit 2, before its pixels are decoded; an image in Pillow's warning range is
decoded without the warning, within the memory budget."""
from __future__ import annotations

import struct
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from hexnn_import.cli import cli
from hexnn_import.datasets import open_source, parse_preprocess
from hexnn_import.errors import ResourceError
from hexnn_import.graph import GraphIO
from hexnn_import.memory import explicit_budget, set_budget

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _bomb(path: Path, side: int = 13500) -> None:
    """A grey PNG of side x side zeros (182 M pixels, above Pillow's 179 M limit) in under 1 MB."""
    pack = zlib.compressobj(1)
    rows = b"\0" * (side + 1) * 100
    data = b"".join(pack.compress(rows) for _ in range(side // 100)) + pack.flush()
    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bomb")
    rng = np.random.default_rng(0)
    for i in range(3):
        Image.fromarray(rng.integers(0, 256, (30, 30, 3), dtype=np.uint8)).save(root / f"a{i}.png")
    _bomb(root / "b.png")
    assert (root / "b.png").stat().st_size < 1 << 20
    return root


@pytest.mark.parametrize("command", [
    ["compare", str(MODELS / "small_int8.tflite"), "--jobs", "1", "--data"],
    ["convert", str(MODELS / "small_float.tflite"), "--calibration"]])
def test_an_image_bomb_is_one_line_naming_the_file(images: Path, tmp_path: Path, command: list[str]) -> None:
    out = ["-o", str(tmp_path / "g.hexnn.json")] if command[0] == "convert" else []
    result = CliRunner().invoke(cli, [*command, str(images), "--preprocess", "mobilenet", *out])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {images / 'b.png'}: refused before decoding, an image "
                                                   f"bomb (Image size (182250000 pixels) exceeds limit"), lines
    assert list(tmp_path.iterdir()) == []


def test_an_image_in_pillows_warning_range_is_decoded_within_the_budget(images: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 600)  # 30 x 30 = 900 pixels: warned about, not refused
    source = open_source(str(images), parse_preprocess("mobilenet"))
    spec = GraphIO("x", (1, 24, 24, 3), "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x, _), = source.items(0, 1, [spec])
    assert x["x"].shape == (1, 24, 24, 3)
    before = explicit_budget()
    set_budget(2000)  # 900 pixels x 3 bands do not fit
    try:
        with pytest.raises(ResourceError, match=r"a0\.png: a 30 x 30 image decoded would need 2.6 KiB, above"):
            source.items(0, 1, [spec])
    finally:
        set_budget(before)
