"""The HTML report laid out by a real browser (Debian's headless ``chromium``): legible from 5 to 300 layers.

Each case renders a report of synthetic comparisons (tensor names as real exports spell them), adds a
script that writes the boxes of every chart label, legend entry, chart and table cell into the page, and
has Chromium lay it out at 1,400 x 900 (``--dump-dom`` and ``--screenshot`` in one run). What must hold:
no two labels overlap, every label lies inside its chart and under the plot, none leaves the page, the
legend overlaps nothing, the chart is as wide as the page, labels are at least 10 px tall on screen, the
page does not scroll sideways and no table column is empty.
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hexnn_import.compare.results import CompareResult, Comparison, RunnerResult
from hexnn_import.compare.report_html import html_report
from hexnn_import.compare.tensor_stats import TensorStats

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="no /usr/bin/chromium (Debian: apt-get install chromium): the HTML report's "
                                       "layout is not checked in a browser")
WIDTH, HEIGHT = 1400, 900
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")

MEASURE = """<script>(() => {
const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const own = e => [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.data).join('');
const title = e => { const t = e.querySelector(':scope > title'); return t ? t.textContent : null; };
const page = {width: innerWidth, scroll: document.documentElement.scrollWidth, body: box(document.body),
  charts: [...document.querySelectorAll('svg[role=img]')].map(svg => ({svg: box(svg),
    scrolls: svg.parentElement.scrollWidth > svg.parentElement.clientWidth + 1,
    plot: [...svg.querySelectorAll('polyline, circle')].map(box),
    bands: [...svg.querySelectorAll('rect')].map(title).filter(t => t),
    texts: [...svg.querySelectorAll('text')].map(t => [box(t), own(t), title(t)])})),
  legend: [...document.querySelectorAll('li, svg text')].filter(e => own(e).includes(' vs ')).map(box),
  tables: [...document.querySelectorAll('table')].map(t => [...t.rows].map(r => [...r.cells].map(c => c.textContent))),
  warnings: [...document.querySelectorAll('.warnings li')].map(e => [e.textContent, box(e)]),
  firstH2: box(document.querySelector('body > h2'))};
const out = document.createElement('pre'); out.id = 'measure'; out.hidden = true;
out.textContent = JSON.stringify(page); document.body.appendChild(out); })();</script>"""


def _stats(name: str, sqnr: float) -> TensorStats:
    """Sums that give ``sqnr`` dB (signal 1, noise 10^(-sqnr/10); +inf: no noise)."""
    noise = 0.0 if math.isinf(sqnr) else 10.0 ** (-sqnr / 10.0)
    return TensorStats(name, signal=1.0, noise=noise, dot=1.0 - noise / 2, test_sq=1.0, max_abs=math.sqrt(noise),
                       max_lsb=1.0, off=0, lsb_count=10, count=10, samples=2)


def _comparison(cand: str, ref: str, names: list[str], drop: float, outputs: tuple[str, ...]) -> Comparison:
    """SQNR falling from 70 dB to 70 - drop dB along the graph, with a 3-layer ripple; the input exact."""
    n = len(names)
    sq = [math.inf if i == 0 else 70.0 - drop * i / n - 3.0 * (i % 3) for i in range(n)]
    return Comparison(cand, ref, outputs={o: _stats(o, sq[-1]) for o in outputs},
                      layers={n: _stats(n, s) for n, s in zip(names, sq)}, top1=1.0)


def _result(names: list[str], pairs: list[tuple[str, str]], warnings: list[str] | None = None) -> CompareResult:
    runners = list(dict.fromkeys(r for p in pairs for r in p))
    comps = [_comparison(c, r, names, 40.0 + 5.0 * k, (names[-1],)) for k, (c, r) in enumerate(pairs)]
    result = CompareResult("models/m.onnx", "random 2 (seed 0)", 2, [RunnerResult(r, r, "models/m.onnx")
                                                                     for r in runners], comps, per_layer=True)
    if warnings is not None:  # the field another change adds; the report reads it with getattr
        result.warnings = warnings  # type: ignore[attr-defined]
    return result


def _ort_names(n: int) -> list[str]:
    """onnxruntime QDQ names, the graph path flattened with "_", most ending in ``_Conv_output_0_quantized``."""
    body = [f"_layer{i // 4 + 1}_layer{i // 4 + 1}.{i % 4}_conv{i % 3 + 1}_Conv_output_0_quantized"
            for i in range(n - 4)]
    return ["input", *body, "_relu_Relu_output_0_quantized", "_fc_Gemm_output_0_quantized", "output"]


def _mobilenet_names() -> list[str]:
    blocks = [f"block{b}_{j}/{op}" for b, reps in enumerate((1, 2, 3, 4, 3, 3, 1)) for j in range(reps)
              for op in (("depthwise", "project") if b == 0 else ("expand", "depthwise", "project", "add")
                         if j else ("expand", "depthwise", "project"))]
    return ["input", "stem", *blocks, "head", "pool", "flatten", "logits"]


def _long_names(n: int) -> list[str]:
    stages = ("encoder", "bottleneck", "decoder")
    return [f"/model/backbone/{stages[i * 3 // n]}/stage{i // 10}/unit{i % 10}/{('Conv', 'Add', 'Mul')[i % 3]}"
            f"_output_0" for i in range(n)]


CASES = {
    "5 layers": (["input", "conv1", "pool1", "conv2", "logits"], [("hexagon", "float"), ("hexagon", "source")],
                 None),
    "34 layers, ONNX names": (_ort_names(34), [("hexagon", "float"), ("hexagon", "source")],
                              ["constant output: agreement and accuracy tell nothing"]),
    "MobileNetV2, hexagon and xs3": (_mobilenet_names(), [("hexagon", "float"), ("hexagon", "source"),
                                                          ("xs3", "float"), ("xs3", "source"), ("source", "float")],
                                     None),
    "300 layers": (_long_names(300), [("hexagon", "float"), ("hexagon", "source")], None),
}


def _overlap(a: list[float], b: list[float], slack: float = 0.5) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def _layout(page: Path, tmp_path: Path) -> tuple[dict, Path]:
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    shot = tmp_path / "page.png"
    run = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                          f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    found = re.search(r'<pre id="measure" hidden="">(.*?)</pre>', run.stdout, re.DOTALL)
    assert found, f"chromium exited {run.returncode}: {run.stderr[-2000:]}"
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")), shot


def _check_chart(chart: dict, names: list[str], legend: list[list[float]], m: dict) -> None:
    """The properties of one chart (see the module docstring)."""
    svg = chart["svg"]
    labels = [(b, text, full or text) for b, text, full in chart["texts"] if (full or text) in names]
    plot = [min(b[0] for b in chart["plot"]), min(b[1] for b in chart["plot"]),
            max(b[2] for b in chart["plot"]), max(b[3] for b in chart["plot"])]
    assert len(labels) >= min(len(names), 60), f"only {len(labels)} labels for {len(names)} layers"
    for i, (a, ta, _) in enumerate(labels):
        for b, tb, _ in labels[i + 1:]:
            assert not _overlap(a, b), f"labels {ta!r} and {tb!r} overlap"
    for box, text, full in labels:
        assert 0 <= box[0] and box[2] <= m["width"], f"label {text!r} leaves the page"
        assert box[0] >= svg[0] - 0.5 and box[2] <= svg[2] + 0.5 and box[3] <= svg[3] + 0.5, f"{text!r} is cut"
        assert box[1] >= plot[3] - 1, f"label {text!r} overlaps the plot"
        assert min(box[2] - box[0], box[3] - box[1]) >= 10, f"label {text!r} smaller than 10 px"
        assert text.replace("\u2026", "") and len(text) <= 28, f"label {text!r} not short"
    assert len({text for _, text, _ in labels}) == len(labels), "two labels read the same"
    for i, a in enumerate(legend):
        assert a[2] <= m["width"] and not _overlap(a, plot), "the legend overlaps the plot or leaves the page"
        assert not any(_overlap(a, b) for b in legend[i + 1:] + [b for b, _, _ in labels]), "the legend overlaps"
    assert not chart["scrolls"] and svg[2] - svg[0] >= 0.98 * (m["body"][2] - m["body"][0]), \
        "the chart is not as wide as the page"
    assert [t.split("\n")[0] for t in chart["bands"]] == names  # every layer's full name on hover


@pytest.mark.parametrize("case", list(CASES))
def test_report_is_legible_in_a_browser(case: str, tmp_path: Path) -> None:
    names, pairs, warnings = CASES[case]
    result = _result(names, pairs, warnings)
    page = tmp_path / "report.html"
    page.write_text(html_report(result, min_sqnr=30.0))
    m, shot = _layout(page, tmp_path)
    assert m["scroll"] <= m["width"], "the page scrolls sideways"
    for chart in m["charts"]:
        _check_chart(chart, names, m["legend"], m)
    several = len({c for c, _ in pairs}) > 1
    assert len(m["charts"]) == (len({r for _, r in pairs}) if several else 1)
    if "ONNX" in case:  # the shared suffix is said once, not on each label
        assert not any("output_0_quantized" in text for _, text, _ in m["charts"][0]["texts"])
    for table in m["tables"]:
        for j in range(len(table[0])):
            assert table[0][j].strip(), f"a column without a heading: {table[0]}"
            assert any(row[j].strip() not in ("", "-") for row in table[1:]), f"column {table[0][j]!r} is empty"
    if warnings:
        assert [w for w, _ in m["warnings"]] == warnings and m["warnings"][0][1][3] <= m["firstH2"][1]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == WIDTH


def test_mobilenet_v2_on_two_targets_in_a_browser(tmp_path: Path) -> None:
    """The finding as replayed: ``compare`` on the bundled MobileNetV2 with ``--targets hexagon,xs3`` and its float
    twin (five comparisons, 66 layers), laid out by the browser."""
    from click.testing import CliRunner

    from hexnn_import.cli import cli

    models = Path(__file__).resolve().parents[2] / "models"
    page = tmp_path / "r.html"
    run = CliRunner().invoke(cli, ["compare", str(models / "mobilenet_v2_int8.tflite"), "--float-model",
                                   str(models / "mobilenet_v2_float.tflite"), "--targets", "hexagon,xs3",
                                   "--random", "1", "--jobs", "1", "--per-layer", "--report", str(page)])
    assert run.exit_code == 0, run.output
    m, _ = _layout(page, tmp_path)
    assert m["scroll"] <= m["width"] and len(m["charts"]) == 2  # against float (3 lines), against source (2)
    names = [t.split("\n")[0] for t in m["charts"][0]["bands"]]
    assert len(names) == 66 and names[:2] == ["input", "stem"]
    for chart in m["charts"]:
        _check_chart(chart, names, m["legend"], m)
