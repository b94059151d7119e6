"""The HTML report without a browser: short labels, label spacing in the SVG, no empty columns, warnings first,
one self-contained file. (The layout a browser makes of it: test_report_html_browser.py.)"""
from __future__ import annotations

import math
import re
from itertools import pairwise

from hexnn_import.compare.results import CompareResult, Comparison, RunnerResult
from hexnn_import.compare.report_chart import LABEL_PITCH, VIEW_WIDTH
from hexnn_import.compare.report_html import html_report
from hexnn_import.compare.report_labels import shorten
from hexnn_import.compare.tensor_stats import TensorStats

ORT = ["input", "_layer1_layer1.0_conv1_Conv_output_0_quantized", "_layer1_layer1.1_conv2_Conv_output_0_quantized",
       "_layer2_layer2.0_conv1_Conv_output_0_quantized", "_layer2_layer2.1_conv2_Conv_output_0_quantized",
       "_relu_Relu_output_0_quantized",
       "_fc_Gemm_output_0_quantized", "output"]


def _stats(name: str, sqnr: float) -> TensorStats:
    noise = 10.0 ** (-sqnr / 10.0)
    return TensorStats(name, signal=1.0, noise=noise, dot=1.0, test_sq=1.0, count=4, samples=1)


def _result(sqnrs: dict[str, float], refs: tuple[str, ...] = ("float",)) -> CompareResult:
    comps = [Comparison("hexagon", r, outputs={"logits": _stats("logits", 40.0)},
                        layers={n: _stats(n, s) for n, s in sqnrs.items()}) for r in refs]
    runners = [RunnerResult(r, "litert", "m.tflite") for r in ("hexagon", *refs)]
    return CompareResult("m.tflite", "random 1", 1, runners, comps, per_layer=True)


def _columns(page: str) -> list[list[str]]:
    """Each table's column headings."""
    return [re.findall(r"<th[^>]*>(.*?)</th>", t) for t in re.findall(r"<table>(.*?)</table>", page, re.DOTALL)]


def test_labels_drop_what_most_onnx_names_share() -> None:
    """Worked by hand: 6 names of 8 end in _output_0_quantized, then 4 of 8 in _Conv (at least half: dropped)."""
    got = shorten(ORT)
    assert got.labels == ["input", "layer1_layer1.0_conv1", "layer1_layer1.1_conv2", "layer2_layer2.0_conv1",
                          "layer2_layer2.1_conv2", "relu_Relu", "fc_Gemm", "output"]
    assert shorten(ORT[:4] + ORT[5:]).labels[1] == "layer1_layer1.0_conv1_Conv"  # 3 of 7: _Conv stays
    assert got.dropped_suffixes == ["_output_0_quantized", "_Conv"] and got.dropped_prefixes == []


def test_labels_keep_names_that_share_nothing_and_never_merge_two() -> None:
    """A part is dropped when at least half of the names, and three, share it, and no two labels become one."""
    digits = ["input", "conv1", "pool1", "conv2", "pool2", "flatten", "logits"]
    assert shorten(digits).labels == digits  # "conv" is not a whole token: nothing shared
    assert shorten(["m/a/out", "m/b/out", "m/a", "m/b"]).labels == ["a/out", "b/out", "a", "b"]
    assert shorten([f"/model/{c}/Conv_output_0" for c in "xyz"]).labels == ["x", "y", "z"]
    assert shorten(["/model/x/Conv_output_0", "/model/y/Conv_output_0"]).labels[0] == "model/x/Conv_output_0"


def test_long_labels_lose_their_middle_and_stay_distinct() -> None:
    names = [c * 40 for c in "abc"] + ["x"]
    labels = shorten(names).labels
    assert labels == ["a" * 13 + "\u2026" + "a" * 14, "b" * 13 + "\u2026" + "b" * 14, "c" * 13 + "\u2026" + "c" * 14, "x"]
    alike = ["x" * 40 + "1" + "x" * 40, "x" * 40 + "2" + "x" * 40, "y"]
    assert shorten(alike).labels == alike  # clipped, the two would read the same


def test_vertical_labels_keep_their_distance_at_300_layers() -> None:
    names = [f"/net/block{i // 10}/unit{i % 10}/Conv_output_0" for i in range(300)]
    page = html_report(_result({n: 30.0 + (i % 7) for i, n in enumerate(names)}))
    xs = [float(x) for x in re.findall(r'<text class="lab" x="([\d.]+)"', page)]
    pitch = (VIEW_WIDTH - 62) / 300  # the plot's width over the layers
    every = math.ceil(LABEL_PITCH / pitch)
    assert len(xs) == math.ceil(300 / every) and min(b - a for a, b in pairwise(xs)) >= LABEL_PITCH
    assert page.count('<rect class="band"') == 300 and "<title>/net/block29/unit9/Conv_output_0&#10;" in page
    assert ">block0/unit0</text>" in page  # "/net/" and "/Conv_output_0" said once, in the caption
    assert "<code>/net/</code>" in page and "<code>/Conv_output_0</code>" in page


def test_no_empty_columns() -> None:
    """No labels: no accuracy columns; no flagged layer: no flag column; every heading says something."""
    quiet = html_report(_result({"a": 50.0, "b": 48.0, "c": 47.0}))
    heads = _columns(quiet)
    assert heads[0] == ["runner", "backend", "model"] and ["tensor", "SQNR dB vs float", "cosine vs float"] == heads[-1]
    assert all(h for t in heads for h in t)
    loud = html_report(_result({"a": 50.0, "b": 20.0, "c": 19.0}))  # b: 30 dB below a, under the 40 dB ceiling
    assert _columns(loud)[-1][-1] == "flag" and loud.count('<span class="flag">loss</span>') == 1


def test_warnings_come_first_when_the_result_has_them() -> None:
    result = _result({"a": 50.0})
    assert 'class="warnings"' not in html_report(result)  # read with getattr: a result without the field
    result.warnings = ["constant output: agreement and accuracy tell nothing", "<b>x</b>"]  # type: ignore[attr-defined]
    page = html_report(result)
    block = page.index('class="warnings"')
    assert page.index("<h1>") < block < page.index("constant output: agreement") < page.index("1 samples from")
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page


def test_one_self_contained_file() -> None:
    page = html_report(_result({f"t{i}": 40.0 for i in range(40)}, refs=("float", "source")), min_sqnr=30.0)
    for needle in ("<script", "src=", "href=", "url(", "@import", "http"):
        assert needle not in page, needle
    assert page.count("<svg") - page.count('aria-hidden="true"') == 1 and page.count("<polyline") == 2
