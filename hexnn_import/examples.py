"""The example models and data installed with the package, by name (issue 34 finding 2).

The README's examples name them through :func:`example_file`, so they run from any folder after
``pip install``, not only from a checkout. The files live in ``hexnn_import/example_models/`` (package data);
``models/`` of a checkout links to them under the names the README's commands use. How each was made:
``models/README.md``.
"""
from __future__ import annotations

from pathlib import Path

from hexnn_import.errors import ModelFormatError

#: the folder of the installed example files
EXAMPLES_DIR = Path(__file__).resolve().parent / "example_models"


def example_files() -> list[str]:
    """The names of every example file (models ``.tflite``, data ``.npz``), sorted."""
    return sorted(p.name for p in EXAMPLES_DIR.iterdir() if p.suffix in (".tflite", ".onnx", ".npz"))


def example_file(name: str) -> str:
    """The path of the example file ``name`` (``"small_int8.tflite"``, ``"digits_test.npz"``, ...); a
    ModelFormatError listing the names there are when there is none of that name."""
    path = EXAMPLES_DIR / name
    if Path(name).name != name or not path.is_file():
        raise ModelFormatError(f"no example file named {name!r}; there are: {', '.join(example_files())}")
    return str(path)
