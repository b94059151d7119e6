"""Where samples come from: ``--data`` (and ``--calibration``) as an ``.npz``, a folder of images, a glob
of ``.npy`` files, or generated images (issue [Scale]).

Every source answers ``len(source)`` without reading the samples and ``items(start, stop, inputs)``:
the samples ``start .. stop - 1`` in real units (float64, in the model's input shapes; see
``datasets/samples.py`` for how each runner then gets its own input types) with their integer labels
(None when the source has none). A source is a small picklable value: a worker process or a Dask
worker opens the files itself (the paths must be readable there too).

- ``DATA.npz`` / ``x.npy``: as before (``datasets/samples.load_dataset``: N samples along axis 0 keyed by
  input name, optional ``labels``); read whole, once per process, within the memory budget.
- a folder: images (``.jpg .jpeg .png .bmp .gif .webp .ppm .tif .tiff``) in class sub-folders (labels
  are the sub-folders' indices in sorted order; their names are the class names), or directly in the
  folder (labels from ``--labels FILE``: lines ``file label``, the label an integer or a class name);
  decoded by Pillow, then ``--preprocess`` (:mod:`.preprocess`).
- a glob of ``.npy`` files (``'val/*/*.npy'``): one sample each, in sorted order; labels from
  ``--labels`` or, when the files lie in two or more folders, the folders' sorted names as above.
- ``generated:N[:SEED]``: N images generated on the fly from their index (smooth random colours,
  ``256 x 320``, 10 classes by index), for throughput and memory checks; they go through
  ``--preprocess`` like decoded files.
"""
from __future__ import annotations

import abc
import glob
import os
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hexnn_import.datasets.samples import Dataset, load_dataset, random_dataset, real_sample
from hexnn_import.errors import InputDataError
from hexnn_import.graph import GraphIO

if TYPE_CHECKING:
    from hexnn_import.datasets.preprocess import Preprocess

IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".ppm", ".tif", ".tiff"})
Item = tuple[dict[str, np.ndarray], "int | None"]


class Source(abc.ABC):
    """A data set read in slices (module doc)."""

    #: what the reports call the data
    description: str = ""
    #: class names by label (None: unnamed or no labels)
    classes: tuple[str, ...] | None = None

    @abc.abstractmethod
    def __len__(self) -> int: ...

    @abc.abstractmethod
    def items(self, start: int, stop: int, inputs: Sequence[GraphIO]) -> list[Item]:
        """Samples ``start .. stop - 1`` in real units and their labels."""


def _single_input(inputs: Sequence[GraphIO], what: str) -> GraphIO:
    if len(inputs) != 1:
        raise InputDataError(f"{what} feeds a model with one input; this one has {len(inputs)} "
                             f"({', '.join(s.name for s in inputs)}): give an .npz keyed by input name")
    return inputs[0]


def _read_labels_file(path: str, keys: Sequence[str]) -> tuple[list[int], tuple[str, ...] | None]:
    """``--labels FILE``: one line ``name label`` per sample; the labels by ``keys`` (file names relative to
    the data, or their base names) and the class names when the labels are names."""
    table: dict[str, str] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputDataError(f"--labels {path}: cannot read it ({exc})") from exc
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.rsplit(None, 1)
        if len(parts) != 2:
            raise InputDataError(f"--labels {path}: line {n} is not 'file label'")
        table[parts[0].strip()] = parts[1].strip()
    raw = []
    for key in keys:
        value = table.get(key, table.get(os.path.basename(key)))
        if value is None:
            raise InputDataError(f"--labels {path}: no label for {key}")
        raw.append(value)
    if all(v.lstrip("-").isdigit() for v in raw):
        return [int(v) for v in raw], None
    names = tuple(sorted(set(raw)))
    return [names.index(v) for v in raw], names


@dataclass
class NpzSource(Source):
    """``DATA.npz`` or ``x.npy``, read whole once per process (:func:`.samples.load_dataset`)."""

    path: str
    _cache: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.description = str(self.path)

    def __getstate__(self) -> dict:
        return {"path": self.path, "_cache": None, "description": self.description}

    def __len__(self) -> int:
        return _npz_count(self.path)

    def dataset(self, inputs: Sequence[GraphIO]) -> Dataset:
        """The whole file as a :class:`.samples.Dataset` (read once per process)."""
        if self._cache is None:
            self._cache = load_dataset(self.path, inputs)
        return self._cache  # type: ignore[return-value]

    def items(self, start: int, stop: int, inputs: Sequence[GraphIO]) -> list[Item]:
        data = self.dataset(inputs)
        labels = data.labels
        return [(data.samples[i], None if labels is None else int(labels[i])) for i in range(start, stop)]


def _npz_count(path: str) -> int:
    """The number of samples of an .npz / .npy from the array headers alone (0 when unreadable: the
    loader then says what is wrong in its own words)."""
    from numpy.lib import format as npformat

    def count(member) -> int:  # type: ignore[no-untyped-def]
        version = npformat.read_magic(member)
        read = npformat.read_array_header_1_0 if version == (1, 0) else npformat.read_array_header_2_0
        shape = read(member)[0]
        return int(shape[0]) if shape else 0

    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                names = [n for n in zf.namelist() if n.endswith(".npy") and n != "labels.npy"]
                if not names:
                    return 0
                with zf.open(names[0]) as member:
                    return count(member)
        with open(path, "rb") as f:
            return count(f)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return 0


@dataclass
class ImageFolder(Source):
    """A folder of images (module doc), preprocessed by ``preprocess``."""

    root: str
    preprocess: "Preprocess"
    labels_file: str | None = None
    files: list[str] = field(default_factory=list)
    labels: list[int] | None = None

    def __post_init__(self) -> None:
        root = Path(self.root)
        if not root.is_dir():
            raise InputDataError(f"{self.root}: no such folder")
        subdirs = sorted(d for d in root.iterdir() if d.is_dir() and _images(d))
        if subdirs and not self.labels_file:
            self.classes = tuple(d.name for d in subdirs)
            pairs = [(str(f.relative_to(root)), k) for k, d in enumerate(subdirs) for f in _images(d)]
            self.files, self.labels = [p for p, _ in pairs], [k for _, k in pairs]
        else:
            self.files = [str(f.relative_to(root)) for f in
                          (_images(root) if not subdirs else sorted(f for d in subdirs for f in _images(d)))]
            if self.labels_file:
                self.labels, self.classes = _read_labels_file(self.labels_file, self.files)
        if not self.files:
            raise InputDataError(f"{self.root}: no images ({', '.join(sorted(IMAGE_SUFFIXES))}) in the folder or "
                                 f"its sub-folders")
        self.description = f"{self.root} ({len(self.files)} images, {self.preprocess.describe()})"

    def __len__(self) -> int:
        return len(self.files)

    def items(self, start: int, stop: int, inputs: Sequence[GraphIO]) -> list[Item]:
        from hexnn_import.datasets.preprocess import pillow

        Image = pillow()
        spec = _single_input(inputs, "an image folder")
        out: list[Item] = []
        for i in range(start, stop):
            path = Path(self.root) / self.files[i]
            x = _decode(Image, path, self.preprocess, spec.shape)
            out.append(({spec.name: x}, None if self.labels is None else self.labels[i]))
        return out


def _decode(Image, path: Path, preprocess: "Preprocess", shape: Sequence[int]) -> np.ndarray:  # type: ignore[no-untyped-def]
    """One image file as a model input; InputDataError / ResourceError (one line, naming the file) for a file
    Pillow cannot decode, an image bomb (Pillow's ``DecompressionBombError``: more than twice
    ``Image.MAX_IMAGE_PIXELS``; issue [Robust] finding 4d) or pixels above the memory budget (Pillow's
    warning below that limit is replaced by the budget: :mod:`hexnn_import.memory`)."""
    from hexnn_import.memory import check_bytes, shape_bytes

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                check_bytes(shape_bytes(img.size, len(img.getbands())),
                            f"{path}: a {img.size[0]} x {img.size[1]} image decoded")
                return preprocess.apply(img, shape)
    except Image.DecompressionBombError as exc:
        raise InputDataError(f"{path}: refused before decoding, an image bomb ({exc})") from exc
    except (OSError, ValueError, EOFError, SyntaxError) as exc:  # UnidentifiedImageError is an OSError
        raise InputDataError(f"{path}: not an image Pillow can decode ({exc})") from exc


def _images(folder: Path) -> list[Path]:
    return sorted(f for f in folder.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)


@dataclass
class NpyGlob(Source):
    """``.npy`` files matching a glob, one sample each (module doc)."""

    pattern: str
    labels_file: str | None = None
    files: list[str] = field(default_factory=list)
    labels: list[int] | None = None

    def __post_init__(self) -> None:
        self.files = sorted(glob.glob(self.pattern, recursive=True))
        if not self.files:
            raise InputDataError(f"--data {self.pattern}: no .npy file matches")
        if self.labels_file:
            self.labels, self.classes = _read_labels_file(self.labels_file, self.files)
        else:
            folders = sorted({str(Path(f).parent) for f in self.files})
            if len(folders) >= 2:
                self.classes = tuple(Path(f).name for f in folders)
                self.labels = [folders.index(str(Path(f).parent)) for f in self.files]
        self.description = f"{self.pattern} ({len(self.files)} .npy files)"

    def __len__(self) -> int:
        return len(self.files)

    def items(self, start: int, stop: int, inputs: Sequence[GraphIO]) -> list[Item]:
        spec = _single_input(inputs, "a glob of .npy files")
        out: list[Item] = []
        for i in range(start, stop):
            try:
                arr = np.load(self.files[i], allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise InputDataError(f"{self.files[i]}: not a readable .npy file ({exc})") from exc
            out.append(({spec.name: real_sample(arr, spec, self.files[i])},
                        None if self.labels is None else self.labels[i]))
        return out


@dataclass
class RandomSource(Source):
    """``--random N``: seeded random samples (:func:`.samples.random_dataset`), made once per process."""

    n: int
    seed: int = 0
    _cache: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.description = f"random {self.n} (seed {self.seed})"

    def __getstate__(self) -> dict:
        return {"n": self.n, "seed": self.seed, "_cache": None, "description": self.description}

    def __len__(self) -> int:
        return self.n

    def items(self, start: int, stop: int, inputs: Sequence[GraphIO]) -> list[Item]:
        from hexnn_import.memory import check_bytes

        if self._cache is None:  # one seeded stream: every sample is made (and held), whatever the slice
            check_bytes(self.n * sum(int(np.prod(s.shape)) for s in inputs) * 8,
                        f"--random {self.n}: the samples as float64 (--data generated:N streams instead)")
            self._cache = random_dataset(self.n, inputs, self.seed)
        return [(s, None) for s in self._cache.samples[start:stop]]  # type: ignore[attr-defined]


@dataclass
class GeneratedImages(Source):
    """``generated:N[:SEED]`` (module doc): image ``i`` is made from ``(seed, i)`` alone."""

    n: int
    preprocess: "Preprocess"
    seed: int = 0
    n_classes: int = 10

    def __post_init__(self) -> None:
        if self.n < 1:
            raise InputDataError(f"--data generated:{self.n}: expected a positive number of images")
        self.classes = tuple(f"class{k}" for k in range(self.n_classes))
        self.description = f"generated:{self.n}:{self.seed} ({self.preprocess.describe()})"

    def __len__(self) -> int:
        return self.n

    def image(self, i: int):  # type: ignore[no-untyped-def]
        """Image ``i``: a 16 x 20 grid of random colours, smoothly enlarged to 256 x 320."""
        from hexnn_import.datasets.preprocess import pillow

        Image = pillow()
        rng = np.random.default_rng([self.seed, i])
        small = rng.integers(0, 256, (16, 20, 3), dtype=np.uint8)
        return Image.fromarray(small).resize((320, 256), Image.BILINEAR)

    def items(self, start: int, stop: int, inputs: Sequence[GraphIO]) -> list[Item]:
        spec = _single_input(inputs, "generated images")
        return [({spec.name: self.preprocess.apply(self.image(i), spec.shape)}, i % self.n_classes)
                for i in range(start, stop)]


def open_source(data: str, preprocess: "Preprocess | None" = None, labels: str | None = None) -> Source:
    """The source ``--data`` names (module doc); images need ``preprocess`` (InputDataError otherwise)."""
    def need_preprocess(what: str) -> "Preprocess":
        if preprocess is None:
            from hexnn_import.datasets.preprocess import PRESETS

            raise InputDataError(f"{what} needs --preprocess ({', '.join(PRESETS)}, or key=value settings: "
                                 f"crop, resize, scale, mean, std, order, layout)")
        return preprocess

    if data.startswith("generated:"):
        parts = data.split(":")
        try:
            n, seed = int(parts[1]), int(parts[2]) if len(parts) > 2 else 0
        except (ValueError, IndexError) as exc:
            raise InputDataError(f"--data {data}: expected generated:N or generated:N:SEED") from exc
        return GeneratedImages(n, need_preprocess(f"--data {data}"), seed)
    if os.path.isdir(data):
        return ImageFolder(data, need_preprocess(f"--data {data} (a folder of images)"), labels)
    if glob.has_magic(data):
        return NpyGlob(data, labels)
    if labels:
        raise InputDataError(f"--labels: {data} holds its own labels (its 'labels' array)")
    return NpzSource(data)  # model inputs already: a --preprocess is for the images of --calibration
