"""Accuracy of the Hexagon engine against a float reference, per output and per layer (issue [Compare]).

Polygraphy's model (docs/architecture.md, "Models learned from"): every backend is a runner with
``infer(feed) -> {name: array}`` (:mod:`.runners`); the comparator
(:mod:`.comparator`) feeds them the same samples (:mod:`.data`) and compares
them tensor by tensor, matching the engine's tensors to the source model's
names through the import mapping (:mod:`.matching`); the metrics are pure
functions (:mod:`.metrics`); :mod:`.report` and :mod:`.report_html` print and
write the results; :mod:`.command` is ``hexnn-import compare``.

>>> from hexnn_import.compare import CompareOptions, compare
>>> result = compare(CompareOptions("models/digits_int8.tflite", data="models/digits_test.npz",
...                                 float_model="models/digits_float.tflite", per_layer=True))
>>> {r.name: r.accuracy for r in result.runners}            # doctest: +SKIP
"""
from __future__ import annotations

from hexnn_import.compare.command import CompareOptions, compare
from hexnn_import.compare.comparator import CompareResult, Comparison, flag_layers, run_comparison
from hexnn_import.compare.runners import CompareRunner, HexagonRunner, LiteRTRunner, OnnxRuntimeRunner

__all__ = ["CompareOptions", "CompareResult", "CompareRunner", "Comparison", "HexagonRunner", "LiteRTRunner",
           "OnnxRuntimeRunner", "compare", "flag_layers", "run_comparison"]
