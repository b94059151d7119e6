"""``hexnn-import compare``'s options: what the CLI passes (:class:`CompareOptions`), the references and
targets it may name.

The references (issue [Compare]):

* ``float``: the float model in its own runtime - ``--float-model`` when
  given, else the source model itself when it is a float model;
* ``source``: a quantized source model in its own runtime (LiteRT /
  onnxruntime), the check of bit-faithfulness.

The first reference is the one ``--min-sqnr`` and the per-layer flags judge.
``--reference auto`` picks LiteRT for .tflite files and onnxruntime for
.onnx files; naming one insists on it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from hexnn_import.errors import InputDataError

REFERENCES = ("auto", "onnxruntime", "litert")
#: what ``--targets`` may name: the Hexagon engine (the prepared graph) and the XS3 path (lib_nn kernels)
TARGETS = ("hexagon", "xs3")


@dataclass
class CompareOptions:
    """The command's options, as the CLI passes them."""

    model: str
    data: str | None = None
    random: int | None = None
    reference: str = "auto"
    float_model: str | None = None
    per_layer: bool = False
    report: str | None = None
    json_out: str | None = None
    min_sqnr: float | None = None
    calibration: str | None = None
    percentile: float | None = None
    input_shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    seed: int = 0
    targets: tuple[str, ...] = ("hexagon",)
    #: issue [Scale]: ``--preprocess`` (images), ``--labels`` (a file of labels), ``--limit`` (the first N
    #: samples), ``--jobs`` (local worker processes), ``--scheduler`` (a Dask scheduler's address),
    #: ``--results`` (the checkpoint folder) and ``--resume``
    preprocess: str | None = None
    labels: str | None = None
    limit: int | None = None
    jobs: int = 1
    scheduler: str | None = None
    results: str | None = None
    resume: bool = False


def parse_targets(text: str) -> tuple[str, ...]:
    """``--targets hexagon,xs3`` as a tuple; InputDataError naming the valid targets otherwise."""
    targets = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in targets if t not in TARGETS]
    if bad or not targets or len(set(targets)) != len(targets):
        raise InputDataError(f"--targets {text}: expected a comma-separated list of {', '.join(TARGETS)}")
    return targets
