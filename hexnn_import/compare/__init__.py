"""Accuracy of the Hexagon engine against a float reference, per output and per layer (issue [Compare]).

Polygraphy's model (docs/architecture.md, "Models learned from"): every backend is a runner with
``infer(feed) -> {name: array}`` (:mod:`.runners`; an ONNX reference's session and marked tensors:
:mod:`.onnx_reference`); the comparator (:mod:`.comparator`) feeds them the same samples
(:mod:`hexnn_import.datasets`) and compares them tensor by tensor, matching the engine's tensors to the
source model's names through the import mapping (:mod:`.matching`), into :mod:`.results`
(:mod:`.tensor_stats` per tensor, :mod:`.degenerate` for results that tell nothing); the metrics are pure
functions (:mod:`.metrics`); :mod:`.report` and :mod:`.report_html` print and write the results.
``hexnn-import compare`` is :mod:`.command`: its options (:mod:`.options`), the runners and samples it builds
(:mod:`.build`, labels checked by :mod:`.label_checks`), the shards (:mod:`.shards`) it runs here or on
workers (:mod:`.parallel`), checkpoints (:mod:`.checkpoint`) and merges (:mod:`.merge`).

>>> from hexnn_import.compare import CompareOptions, compare
>>> result = compare(CompareOptions("models/digits_int8.tflite", data="models/digits_test.npz",
...                                 float_model="models/digits_float.tflite", per_layer=True))
>>> {r.name: r.accuracy for r in result.runners}            # doctest: +SKIP
"""
from __future__ import annotations

from hexnn_import.compare.command import compare
from hexnn_import.compare.comparator import run_comparison
from hexnn_import.compare.options import CompareOptions
from hexnn_import.compare.results import CompareResult, Comparison, flag_layers
from hexnn_import.compare.runners import CompareRunner, HexagonRunner, LiteRTRunner, OnnxRuntimeRunner

__all__ = ["CompareOptions", "CompareResult", "CompareRunner", "Comparison", "HexagonRunner", "LiteRTRunner",
           "OnnxRuntimeRunner", "compare", "flag_layers", "run_comparison"]
