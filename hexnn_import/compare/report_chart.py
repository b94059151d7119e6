"""The HTML report's per-layer SQNR chart: inline SVG as wide as the page, legible from 5 to 300 layers.

No plotting library and no script. The SVG is drawn in a fixed coordinate
system :data:`VIEW_WIDTH` units wide and scaled to the page's width (never
below :data:`MIN_WIDTH_PX`: narrower windows scroll the chart), so every
distance below holds at any window size:

* labels are the tensor names without what they share (:mod:`.report_labels`),
  the full name on hover; horizontal when each fits in its column, otherwise
  vertical, every k-th layer only so that two are at least :data:`LABEL_PITCH`
  apart; the space under the plot is as tall as the longest label shown
  (labels use a monospace font, so their length is known here);
* the legend is an HTML list above the chart: it wraps, and overlaps nothing;
* several lines over the same values stay apart: each line is narrower than
  the one under it and the third onwards are dashed;
* a transparent column per layer carries the full name and every value on hover.

An exact (infinite) SQNR and one above :data:`CHART_CAP_DB` are drawn on the
top edge with a hollow marker; flagged layers of the first line in red.
"""
from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

from hexnn_import.compare.results import Comparison
from hexnn_import.compare.report import fmt_db
from hexnn_import.compare.report_labels import Labels, shorten

#: SQNRs above this (float rounding between two runtimes, or exact) sit on the chart's top edge, hollow
CHART_CAP_DB = 100.0
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
DASHES = ("", "", "7 4", "2 3", "10 3 2 3")
VIEW_WIDTH = 1200
MIN_WIDTH_PX = 960
FONT = 11
#: a monospace character's advance (the fonts Chromium and Firefox fall back to: 0.6 em)
CHAR_W = 0.62 * FONT
#: the least distance between two vertical labels' baselines
LABEL_PITCH = 15
LEFT, RIGHT, TOP, PLOT_H = 48, 14, 10, 260
CSS = """.chart{overflow-x:auto}.chart svg{display:block;width:100%;min-width:%MINpx;height:auto}
.chart text{font-size:%FONTpx;fill:#333}.chart text.lab{font-family:ui-monospace,Menlo,Consolas,monospace}
.chart .band{fill:transparent}.chart .band:hover{fill:rgba(0,0,0,.07)}
ul.legend{list-style:none;display:flex;flex-wrap:wrap;gap:.3em 1.6em;padding:0;margin:.6em 0}
ul.legend li{display:flex;align-items:center;gap:.45em}p.note{color:#555;font-size:.9em;margin:.3em 0 1em}
""".replace("%MIN", str(MIN_WIDTH_PX)).replace("%FONT", str(FONT))


def _esc(v: object) -> str:
    return html.escape(str(v), quote=True)


@dataclass
class Series:
    """One line: a comparison and the layers it flags (only the first comparison's flags are drawn)."""

    comp: Comparison
    flags: dict[str, bool]

    @property
    def title(self) -> str:
        return f"{self.comp.candidate} vs {self.comp.reference}"


@dataclass
class _Frame:
    names: list[str]
    labels: Labels
    top: float
    bottom: float
    step: float
    every: int  # label every k-th layer
    vertical: bool
    height: float

    def x(self, i: int) -> float:
        return LEFT + self.step * (i + 0.5)

    def y(self, v: float) -> float:
        v = self.top if v > self.top else max(v, self.bottom)
        return TOP + PLOT_H * (self.top - v) / (self.top - self.bottom)


def layer_order(comps: Sequence[Comparison]) -> list[str]:
    """Every comparison's layers in one graph order: a layer only one comparison has (a QDQ export's
    QuantizeLinear outputs, compared with the source run only) goes right after the layer before it there."""
    names: list[str] = []
    for c in comps:
        pos = -1
        for n in c.layers:
            if n in names:
                pos = names.index(n)
            else:
                pos += 1
                names.insert(pos, n)
    return names


def _frame(series: Sequence[Series], min_sqnr: float | None) -> _Frame | None:
    names = layer_order([s.comp for s in series])
    if not names:
        return None
    finite = [t.sqnr_db for s in series for t in s.comp.layers.values() if math.isfinite(t.sqnr_db)]
    top = max([50.0, *finite, *([min_sqnr] if min_sqnr is not None else [])])
    top = min(CHART_CAP_DB, 10.0 * math.ceil(top / 10.0 + 0.01))
    bottom = min(0.0, 10.0 * math.floor(min(finite, default=0.0) / 10.0))
    labels = shorten(names)
    step = (VIEW_WIDTH - LEFT - RIGHT) / len(names)
    longest = max(len(t) for t in labels.labels) * CHAR_W
    vertical = longest + 8 > step
    every = max(1, math.ceil(LABEL_PITCH / step)) if vertical else 1
    shown = max(len(t) for t in labels.labels[::every]) * CHAR_W
    height = TOP + PLOT_H + (shown + 16 if vertical else FONT + 14)
    return _Frame(names, labels, top, bottom, step, every, vertical, height)


def _axes(f: _Frame, min_sqnr: float | None) -> list[str]:
    right = VIEW_WIDTH - RIGHT
    parts = [f'<line x1="{LEFT}" y1="{f.y(v):.1f}" x2="{right}" y2="{f.y(v):.1f}" stroke="#e5e5e5"/>'
             f'<text x="{LEFT - 6}" y="{f.y(v) + 4:.1f}" text-anchor="end">{v}</text>'
             for v in range(int(f.bottom), int(f.top) + 1, 10)]
    mid = TOP + PLOT_H / 2
    parts.append(f'<text x="12" y="{mid:.0f}" transform="rotate(-90 12 {mid:.0f})" text-anchor="middle">'
                 "SQNR dB</text>")
    if min_sqnr is not None:
        parts.append(f'<line x1="{LEFT}" y1="{f.y(min_sqnr):.1f}" x2="{right}" y2="{f.y(min_sqnr):.1f}" '
                     f'stroke="#c00" stroke-dasharray="6 4"><title>--min-sqnr {min_sqnr:g} dB</title></line>')
    return parts


def _bands(f: _Frame, series: Sequence[Series]) -> list[str]:
    """A transparent column per layer: hovering it names the tensor and every line's value."""
    parts = []
    for i, n in enumerate(f.names):
        values = "&#10;".join(f"{_esc(s.title)}: {fmt_db(s.comp.layers[n].sqnr_db)} dB"
                              for s in series if n in s.comp.layers)
        parts.append(f'<rect class="band" x="{LEFT + f.step * i:.2f}" y="{TOP}" width="{f.step:.2f}" '
                     f'height="{PLOT_H}"><title>{_esc(n)}&#10;{values}</title></rect>')
    return parts


def _labels(f: _Frame) -> list[str]:
    base = TOP + PLOT_H + 12
    parts = []
    for i in range(0, len(f.names), f.every):
        full, short = _esc(f.names[i]), _esc(f.labels.labels[i])
        if f.vertical:
            place = (f'x="{f.x(i):.2f}" y="{base - 8}" dy="0.35em" text-anchor="end" '
                     f'transform="rotate(-90 {f.x(i):.2f} {base - 8})"')
        else:
            place = f'x="{f.x(i):.2f}" y="{base + 2}" text-anchor="middle"'
        parts.append(f'<text class="lab" {place}><title>{full}</title>{short}</text>')
    return parts


def _line(f: _Frame, s: Series, k: int, count: int) -> tuple[list[str], list[str]]:
    """The polyline and markers of series ``k`` of ``count``, and its flagged markers (drawn last, on top).
    Each series is narrower than the one before it, lines and markers, so that equal values stay apart."""
    color, dash = COLORS[k % len(COLORS)], DASHES[k % len(DASHES)]
    width = 1.5 + 1.5 * (count - 1 - k)
    pts = [(f.x(i), f.y(s.comp.layers[n].sqnr_db), n) for i, n in enumerate(f.names) if n in s.comp.layers]
    parts = [f'<polyline fill="none" stroke="{color}" stroke-width="{width:g}" stroke-linejoin="round"'
             + (f' stroke-dasharray="{dash}"' if dash else "") + ' points="'
             + " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in pts) + '"/>']
    flagged: list[str] = []
    radius = min(4.0, f.step / 3) * (1.0 - 0.6 * k / max(count - 1, 1))
    for px, py, n in pts:
        t = s.comp.layers[n]
        flag, capped = s.flags.get(n, False), t.sqnr_db > CHART_CAP_DB
        if radius < 1.2 and not flag:
            continue
        fill = "#c00" if flag else ("white" if capped else color)
        circle = (f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{max(radius, 3.5) if flag else radius:.1f}" '
                  f'fill="{fill}" stroke="{"#700" if flag else color}"><title>{_esc(n)}: {_esc(s.title)}: '
                  f'{fmt_db(t.sqnr_db)} dB{" (flagged)" if flag else ""}</title></circle>')
        (flagged if flag else parts).append(circle)
    return parts, flagged


def _swatch(color: str, width: float, dash: str = "", dot: str = "") -> str:
    line = (f'<line x1="1" y1="6" x2="29" y2="6" stroke="{color}" stroke-width="{width:g}"'
            + (f' stroke-dasharray="{dash}"' if dash else "") + "/>") if not dot else ""
    circle = f'<circle cx="15" cy="6" r="4" fill="{dot}" stroke="{color}"/>' if dot else ""
    return f'<svg width="30" height="12" aria-hidden="true">{line}{circle}</svg>'


def legend(series: Sequence[Series], min_sqnr: float | None, capped: bool) -> str:
    """The chart's legend as an HTML list (it wraps with the page and overlaps nothing)."""
    items = [_swatch(COLORS[k % len(COLORS)], 1.5 + 1.5 * (len(series) - 1 - k), DASHES[k % len(DASHES)])
             + _esc(s.title) for k, s in enumerate(series)]
    if min_sqnr is not None:
        items.append(_swatch("#c00", 1.5, "6 4") + f"--min-sqnr {min_sqnr:g} dB")
    if any(any(s.flags.values()) for s in series):
        items.append(_swatch("#c00", 1, dot="#c00") + "flagged layer (accuracy lost here)")
    if capped:
        items.append(_swatch("#555", 1, dot="white") + f"exact or above {CHART_CAP_DB:g} dB")
    return '<ul class="legend">' + "".join(f"<li>{i}</li>" for i in items) + "</ul>"


def _caption(f: _Frame) -> str:
    said = []
    if f.labels.dropped_prefixes:
        said.append("before: " + ", ".join(f"<code>{_esc(p)}</code>" for p in f.labels.dropped_prefixes))
    if f.labels.dropped_suffixes:
        said.append("after: " + ", ".join(f"<code>{_esc(p)}</code>" for p in f.labels.dropped_suffixes))
    if f.labels.dropped_inside:
        said.append("inside: " + ", ".join(f"<code>{_esc(p)}</code>" for p in f.labels.dropped_inside))
    text = f"{len(f.names)} layers in graph order"
    if f.every > 1:
        text += f", one in {f.every} labelled"
    if said:
        text += "; labels leave out what most names share (" + "; ".join(said) + ")"
    return f'<p class="note">{text}. Hover a label or a column for the full name and the values.</p>'


def sqnr_chart(series: Sequence[Series], min_sqnr: float | None = None) -> str:
    """The legend, the SVG chart of per-layer SQNR (one line per series, graph order) and its caption."""
    f = _frame(series, min_sqnr)
    if f is None:
        return ""
    parts = [f'<svg viewBox="0 0 {VIEW_WIDTH} {f.height:.0f}" role="img" aria-label="per-layer SQNR">', *_axes(f, min_sqnr), *_bands(f, series), *_labels(f)]
    on_top: list[str] = []
    for k, s in enumerate(series):
        line, flagged = _line(f, s, k, len(series))
        parts += line
        on_top += flagged
    parts += [*on_top, "</svg>"]
    capped = any(t.sqnr_db > CHART_CAP_DB for s in series for t in s.comp.layers.values())
    return (legend(series, min_sqnr, capped) + '<div class="chart">' + "\n".join(parts) + "</div>"
            + _caption(f))
