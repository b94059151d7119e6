"""The HTML report: one self-contained page (no script, nothing fetched) with the tables and the per-layer chart.

Warnings about results that tell nothing (``CompareResult.warnings``, e.g.
"constant output: agreement and accuracy tell nothing") come first, under
the title. Tables leave out the columns that hold nothing in any row (no
labels: no accuracy columns; no flagged layer: no flag column), right-align
the columns of figures, and scroll sideways inside the page when they are
wider than it. The chart is :mod:`.report_chart`: one per reference when
several targets are compared (``--targets``), so that each holds few lines.
"""
from __future__ import annotations

import html
import re
from collections.abc import Sequence

from hexnn_import.compare.results import CompareResult, Comparison
from hexnn_import.compare.report import (class_rows, confusion_line, fmt_db, fmt_lsb, fmt_num, fmt_pct, passed,
                                         targets_rows)
from hexnn_import.compare.report_chart import CHART_CAP_DB, CSS, Series, layer_order, sqnr_chart  # noqa: F401 - re-exported

STYLE = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}
.scroll{overflow-x:auto;margin:1em 0}table{border-collapse:collapse}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
td.t{overflow-wrap:anywhere;min-width:12ch}th{background:#f3f3f3}.n{text-align:right;white-space:nowrap}
.flag{color:#c00;font-weight:bold}.fail{color:#c00}.ok{color:#080}
.warnings{border:2px solid #c60;background:#fff4e5;padding:.6em 1em;margin:1em 0}
.warnings h2{margin:0 0 .3em;font-size:1.2em;color:#a40}.warnings ul{margin:0;padding-left:1.2em}
""" + CSS
_FIGURE = re.compile(r"[-+]?(\d[\d.,]*(e[-+]?\d+)?%?|exact|-?inf|-)")
_EMPTY = ("", "-")


def _esc(v: object) -> str:
    return html.escape(str(v), quote=True)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], raw: Sequence[int] = ()) -> str:
    """A table without the columns that are empty ("" or "-") in every row; columns of figures right-aligned;
    the cells of columns ``raw`` are HTML already."""
    keep = [j for j in range(len(head)) if j == 0 or any(row[j] not in _EMPTY for row in rows)]
    figures = {j for j in keep if j > 0 and all(_FIGURE.fullmatch(row[j]) for row in rows)}

    def cell(tag: str, j: int, text: str) -> str:
        klass = ' class="n"' if j in figures else ' class="t"' if j == 0 and tag == "td" else ""
        return f"<{tag}{klass}>{text if j in raw and tag == 'td' else _esc(text)}</{tag}>"

    out = ["<tr>" + "".join(cell("th", j, head[j]) for j in keep) + "</tr>"]
    out += ["<tr>" + "".join(cell("td", j, row[j]) for j in keep) + "</tr>" for row in rows]
    return '<div class="scroll"><table>' + "\n".join(out) + "</table></div>"


def warnings_block(result: CompareResult) -> str:
    """The result's warnings (results that tell nothing), or nothing when it has none."""
    warnings = list(getattr(result, "warnings", None) or [])
    if not warnings:
        return ""
    items = "".join(f"<li>{_esc(w)}</li>" for w in warnings)
    return (f'<section class="warnings" role="alert"><h2>Warning{"s" if len(warnings) > 1 else ""}</h2>'
            f"<ul>{items}</ul></section>")


def _charts(result: CompareResult, comps: list[Comparison], min_sqnr: float | None) -> str:
    """One chart of every comparison; with several targets, one chart per reference."""
    first = result.comparisons[0] if result.comparisons else None

    def series(group: list[Comparison]) -> list[Series]:
        return [Series(c, c.flags(min_sqnr) if c is first else {}) for c in group]

    if len({c.candidate for c in comps}) < 2:
        return sqnr_chart(series(comps), min_sqnr)
    refs = list(dict.fromkeys(c.reference for c in comps))
    return "".join(f"<h3>against {_esc(r)}</h3>" + sqnr_chart(series([c for c in comps if c.reference == r]),
                                                                  min_sqnr) for r in refs)


def _layers_section(result: CompareResult, min_sqnr: float | None) -> str:
    comps = [c for c in result.comparisons if c.layers]
    if not comps:
        return ""
    several = targets_rows(result)
    if several is not None:
        return "<h2>Per layer, every target</h2>" + _charts(result, comps, min_sqnr) + _table(*several)
    first, flags = comps[0].layers, comps[0].flags(min_sqnr)
    rows = [[n, *[fmt_db(c.layers[n].sqnr_db) if n in c.layers else "-" for c in comps],
             *([f"{first[n].cosine:.6f}", fmt_lsb(first[n].max_lsb), fmt_pct(first[n].frac_off)] if n in first
               else ["-"] * 3), '<span class="flag">loss</span>' if flags.get(n) else ""]
            for n in layer_order(comps)]
    head = ["tensor", *[f"SQNR dB vs {c.reference}" for c in comps], *[f"{h} vs {comps[0].reference}" for h in
                                                                       ("cosine", "max LSB", "> 1 LSB")], "flag"]
    return "<h2>Per layer</h2>" + _charts(result, comps, min_sqnr) + _table(head, rows, raw=(len(head) - 1,))


def html_report(result: CompareResult, min_sqnr: float | None = None) -> str:
    """The whole page as a string."""
    ok, why = passed(result, min_sqnr)
    body = [f"<h1>hexnn-import compare: {_esc(result.model)}</h1>", warnings_block(result),
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
    body.append(_layers_section(result, min_sqnr))
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>compare "
            f"{_esc(result.model)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(b for b in body if b) + "\n</body></html>\n")
