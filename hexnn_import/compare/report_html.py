"""The HTML report: one self-contained page with the tables and an inline SVG per-layer SQNR chart.

No plotting library: the chart is a few SVG polylines (one per reference)
over 10 dB grid lines, with the layer names along the x axis, a dashed line
at ``--min-sqnr`` and flagged layers drawn in red. An exact (infinite) SQNR
and one above :data:`CHART_CAP_DB` are drawn at the top of the chart with a
hollow marker.
"""
from __future__ import annotations

import html
import math
import os
from typing import Sequence

from hexnn_import.compare.comparator import CompareResult, Comparison
from hexnn_import.compare.report import (class_rows, confusion_line, fmt_db, fmt_lsb, fmt_num, fmt_pct, passed,
                                         targets_rows)
from hexnn_import.serialize import atomic_write_bytes

#: SQNRs above this (float rounding between two runtimes, or exact) sit on the chart's top edge, hollow
CHART_CAP_DB = 100.0
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
STYLE = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}th:first-child,td:first-child{text-align:left}
th{background:#f3f3f3}.flag{color:#c00;font-weight:bold}.fail{color:#c00}.ok{color:#080}svg text{font-size:11px}"""


def _esc(v: object) -> str:
    return html.escape(str(v), quote=True)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], raw_last: bool = False) -> str:
    out = ["<table><tr>" + "".join(f"<th>{_esc(h)}</th>" for h in head) + "</tr>"]
    for row in rows:
        cells = [f"<td>{_esc(c)}</td>" for c in row]
        if raw_last and row:
            cells[-1] = f"<td>{row[-1]}</td>"
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "\n".join(out) + "</table>"


def sqnr_chart(comps: Sequence[Comparison], min_sqnr: float | None = None, height: int = 320) -> str:
    """An inline SVG line chart of per-layer SQNR (dB), one line per comparison, in graph order."""
    names: list[str] = []
    for c in comps:
        names += [n for n in c.layers if n not in names]
    if not names:
        return ""
    finite = [s.sqnr_db for c in comps for s in c.layers.values() if math.isfinite(s.sqnr_db)]
    top = max([50.0, *finite, *([min_sqnr] if min_sqnr is not None else [])])
    top = min(CHART_CAP_DB, 10.0 * math.ceil(top / 10.0 + 0.01))
    bottom = min(0.0, 10.0 * math.floor(min(finite, default=0.0) / 10.0))
    left, right, upper, lower = 50, 20, 20, 110
    step = max(24, min(60, 900 // max(len(names), 1)))
    width = left + right + step * len(names)
    plot_h = height - upper - lower

    def y(v: float) -> float:
        v = top if v > top else bottom if v == -math.inf else v
        return upper + plot_h * (top - v) / (top - bottom)

    def x(i: int) -> float:
        return left + step * (i + 0.5)

    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
              f'aria-label="per-layer SQNR">')]
    for v in range(int(bottom), int(top) + 1, 10):
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{width - right}" y2="{y(v):.1f}" stroke="#e5e5e5"/>'
                     f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    parts.append(f'<text x="12" y="{upper + plot_h / 2:.0f}" transform="rotate(-90 12 {upper + plot_h / 2:.0f})" '
                 f'text-anchor="middle">SQNR dB</text>')
    for i, n in enumerate(names):
        parts.append(f'<text x="{x(i):.1f}" y="{upper + plot_h + 12}" text-anchor="end" '
                     f'transform="rotate(-45 {x(i):.1f} {upper + plot_h + 12})">{_esc(n)}</text>')
    if min_sqnr is not None:
        parts.append(f'<line x1="{left}" y1="{y(min_sqnr):.1f}" x2="{width - right}" y2="{y(min_sqnr):.1f}" '
                     f'stroke="#c00" stroke-dasharray="6 4"><title>--min-sqnr {min_sqnr:g} dB</title></line>')
    for k, c in enumerate(comps):
        color = COLORS[k % len(COLORS)]
        flags = c.flags(min_sqnr) if k == 0 else {}
        pts = [(x(i), y(c.layers[n].sqnr_db), n) for i, n in enumerate(names) if n in c.layers]
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="'
                     + " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in pts) + '"/>')
        for px, py, n in pts:
            s = c.layers[n]
            fill = "#c00" if flags.get(n) else ("white" if s.sqnr_db > CHART_CAP_DB else color)
            label = f"{_esc(n)}: {_esc(c.candidate)} vs {_esc(c.reference)}"
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{fill}" stroke="{color}">'
                         f'<title>{label}: {fmt_db(s.sqnr_db)} dB</title></circle>')
        parts.append(f'<rect x="{left + 10 + 150 * k}" y="{height - 18}" width="12" height="12" fill="{color}"/>'
                     f'<text x="{left + 26 + 150 * k}" y="{height - 8}">'
                     f'{_esc(c.candidate)} vs {_esc(c.reference)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def html_report(result: CompareResult, min_sqnr: float | None = None) -> str:
    """The whole page as a string."""
    ok, why = passed(result, min_sqnr)
    body = [f"<h1>hexnn-import compare: {_esc(result.model)}</h1>",
            f"<p>{result.samples} samples from {_esc(result.data)}.</p>"]
    if min_sqnr is not None:
        body.append(f'<p class="{"ok" if ok else "fail"}">--min-sqnr {min_sqnr:g} dB: '
                    f'{"passed" if ok else _esc(why)}</p>')
    body.append("<h2>Runners</h2>" + _table(
        ["runner", "backend", "model", "accuracy", "top-5 accuracy"],
        [[r.name, r.backend, r.model, fmt_pct(r.accuracy), fmt_pct(r.top5_accuracy)] for r in result.runners]))
    classes = class_rows(result)
    if classes is not None:
        line = confusion_line(result)
        body.append("<h2>Per class</h2>" + _table(*classes) + (f"<p>{_esc(line)}</p>" if line else ""))
    rows = [[f"{c.candidate} vs {c.reference}", n, fmt_db(s.sqnr_db), f"{s.cosine:.6f}", fmt_num(s.max_abs),
             fmt_lsb(s.max_lsb), fmt_pct(s.frac_off), fmt_pct(c.top1) if n == result.classifier else "-",
             fmt_pct(c.top5) if n == result.classifier else "-"]
            for c in result.comparisons for n, s in c.outputs.items()]
    body.append("<h2>Outputs</h2>" + _table(["tested vs reference", "output", "SQNR dB", "cosine", "max |diff|",
                                              "max LSB", "> 1 LSB", "top-1 agree", "top-5 agree"], rows))
    comps = [c for c in result.comparisons if c.layers]
    several = targets_rows(result)
    if several is not None:
        body.append("<h2>Per layer, every target</h2>" + sqnr_chart(comps, min_sqnr) + _table(*several))
    elif comps:
        body.append("<h2>Per layer</h2>" + sqnr_chart(comps, min_sqnr))
        flags = comps[0].flags(min_sqnr)
        rows = []
        for n, s in comps[0].layers.items():
            rows.append([n, *[fmt_db(c.layers[n].sqnr_db) if n in c.layers else "-" for c in comps],
                         f"{s.cosine:.6f}", fmt_lsb(s.max_lsb), fmt_pct(s.frac_off),
                         '<span class="flag">loss</span>' if flags[n] else ""])
        head = ["tensor", *[f"SQNR dB vs {c.reference}" for c in comps], "cosine", "max LSB", "> 1 LSB", ""]
        body.append(_table(head, rows, raw_last=True))
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>compare "
            f"{_esc(result.model)}</title><style>{STYLE}</style></head><body>\n" + "\n".join(body)
            + "\n</body></html>\n")


def write_html(result: CompareResult, path: "str | os.PathLike", min_sqnr: float | None = None) -> None:
    """Write :func:`html_report` atomically."""
    atomic_write_bytes(path, html_report(result, min_sqnr).encode("utf-8"))
