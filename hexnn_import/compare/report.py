"""Reports of a comparison: terminal tables (rich), the JSON document, and the file writers.

The JSON document (``--json``)::

    {"model", "data", "samples", "classifier", "per_layer", "min_sqnr", "passed", "warnings": [line...],
     "runners": {name: {"backend", "model", "accuracy", "top5_accuracy", "one_class",
                        "per_class": [{"label", "name", "samples", "top1"}],
                        "confusions": [{"label", "predicted", "count"}]}},
     "comparisons": [{"candidate", "reference", "top1_agreement", "top5_agreement",
                      "outputs": [stats... + "constant_reference", "constant_tested"],
                      "layers": [stats... + "flagged"], "first_flagged", "unmatched": {tensor: why}}]}

``accuracy`` values are fractions (``null`` without labels; ``per_class`` and ``confusions`` then empty:
the classifier's top-1 accuracy per label, and its most frequent wrong predictions); each stats entry
is :meth:`TensorStats.to_json` (an infinite SQNR is ``null`` with ``exact``). ``warnings`` are the
results that tell nothing (:mod:`.degenerate`: constant outputs, one-class classifiers); an output's
``constant_reference`` / ``constant_tested`` say whether that side was the same on every sample (``null``
under two samples), a runner's ``one_class`` the class it predicts for every sample (else ``null``).
The terminal prints the warnings in yellow before its tables. The HTML page is :mod:`.report_html`.
"""
from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from hexnn_import.compare.results import CompareResult, Comparison


def fmt_db(v: float) -> str:
    """An SQNR for people: one decimal, "exact" for +inf."""
    if v == math.inf:
        return "exact"
    return "-inf" if v == -math.inf else f"{v:.1f}"


def fmt_pct(v: float | None, digits: int = 2) -> str:
    """A fraction as a percentage, "-" when absent."""
    return "-" if v is None else f"{100.0 * v:.{digits}f}%"


def fmt_num(v: float | None, digits: int = 3) -> str:
    """A float with ``digits`` significant digits, "-" when absent."""
    return "-" if v is None else f"{v:.{digits}g}"


def fmt_lsb(v: float | None) -> str:
    """A difference in LSBs with two decimals, "-" when absent."""
    return "-" if v is None else f"{v:.2f}"


def passed(result: CompareResult, min_sqnr: float | None) -> tuple[bool, str]:
    """Whether every output of the first comparison reaches ``min_sqnr``; the one-line reason if not."""
    if min_sqnr is None or not result.comparisons:
        return True, ""
    comp = result.comparisons[0]
    worst = comp.worst_output()
    if worst is None or worst.sqnr_db >= min_sqnr:
        return True, ""
    return False, (f"output '{worst.name}' of {comp.candidate} has SQNR {fmt_db(worst.sqnr_db)} dB against "
                   f"{comp.reference}, below --min-sqnr {min_sqnr:g}")


def _comparison_json(comp: Comparison, min_sqnr: float | None) -> dict[str, Any]:
    flags = comp.flags(min_sqnr)
    layers = [{**s.to_json(), "flagged": flags[n]} for n, s in comp.layers.items()]
    return {"candidate": comp.candidate, "reference": comp.reference, "top1_agreement": comp.top1,
            "top5_agreement": comp.top5,
            "outputs": [{**s.to_json(), "constant_reference": s.ref_constant, "constant_tested": s.test_constant}
                        for s in comp.outputs.values()],
            "layers": layers, "first_flagged": next((n for n, f in flags.items() if f), None),
            "unmatched": dict(comp.unmatched)}


def to_json(result: CompareResult, min_sqnr: float | None = None) -> dict[str, Any]:
    """The machine-readable results (see the module docstring)."""
    ok, _ = passed(result, min_sqnr)
    return {"model": result.model, "data": result.data, "samples": result.samples,
            "classifier": result.classifier, "per_layer": result.per_layer, "min_sqnr": min_sqnr, "passed": ok,
            "warnings": list(result.warnings),
            "runners": {r.name: {"backend": r.backend, "model": r.model, "accuracy": r.accuracy,
                                 "top5_accuracy": r.top5_accuracy, "one_class": r.one_class,
                                 "per_class": r.per_class,
                                 "confusions": r.confusions} for r in result.runners},
            "comparisons": [_comparison_json(c, min_sqnr) for c in result.comparisons]}


def runners_table(result: CompareResult) -> Table:
    """One row per runner: what ran which model, and its accuracy when labels were given."""
    t = Table(title="runners", title_justify="left")
    for col in ("runner", "backend", "model"):
        t.add_column(col)
    with_acc = any(r.accuracy is not None for r in result.runners)
    if with_acc:
        t.add_column("accuracy", justify="right")
        t.add_column("top-5 accuracy", justify="right")
    for r in result.runners:
        row = [r.name, r.backend, r.model]
        if with_acc:
            row += [fmt_pct(r.accuracy), fmt_pct(r.top5_accuracy)]
        t.add_row(*row)
    return t


#: classes listed in the terminal's per-class table (the worst first; JSON and HTML list them all)
CLASS_ROWS = 10


def class_rows(result: CompareResult, most: int | None = None) -> tuple[list[str], list[list[str]]] | None:
    """Per class: samples and each runner's top-1 accuracy, the worst classes of the first runner first
    (``most`` of them), or None without labels."""
    runners = [r for r in result.runners if r.per_class]
    if not runners:
        return None
    by_runner = [{row["label"]: row for row in r.per_class} for r in runners]
    first = sorted(runners[0].per_class, key=lambda row: (row["top1"], row["label"]))[:most]
    head = ["class", "samples", *[f"{r.name} top-1" for r in runners]]
    rows = [[f"{row['label']} {row['name']}" if row["name"] != str(row["label"]) else str(row["label"]),
             str(row["samples"]), *[fmt_pct(t.get(row["label"], {}).get("top1")) for t in by_runner]]
            for row in first]
    return head, rows


def confusion_line(result: CompareResult) -> str | None:
    """The tested runner's most frequent confusions, ``label -> predicted (count)``, or None."""
    r = result.runners[0]
    if not r.confusions:
        return None
    names = dict(enumerate(result.classes or ()))
    nm = {k: f"{k} {v}" for k, v in names.items()}
    return f"{r.name}'s most frequent confusions: " + ", ".join(
        f"{nm.get(c['label'], c['label'])} -> {nm.get(c['predicted'], c['predicted'])} ({c['count']})"
        for c in r.confusions[:5])


#: the outputs table's headers: wide (one line each), and compact (two lines, for narrow terminals)
_OUT_HEADS = ("SQNR dB", "cosine", "max |diff|", "max LSB", "> 1 LSB", "top-1 agree", "top-5 agree")
_OUT_HEADS_COMPACT = ("SQNR\ndB", "cosine", "max\n|diff|", "max\nLSB", "> 1\nLSB", "top-1\nagree", "top-5\nagree")


def _outputs_table(result: CompareResult, compact: bool) -> Table:
    t = Table(title=f"outputs of {result.comparisons[0].candidate if result.comparisons else '-'}",
              title_justify="left")
    for col in (("output, vs",) if compact else ("vs", "output")):
        t.add_column(col, overflow="fold")
    heads = _OUT_HEADS_COMPACT if compact else _OUT_HEADS
    classifier = result.classifier is not None  # top-1 / top-5 only with an output that looks like class scores
    for col in heads if classifier else heads[:-2]:
        t.add_column(col, justify="right", no_wrap=True)  # numbers are never cut: the names wrap instead
    several = len({c.candidate for c in result.comparisons}) > 1
    for comp in result.comparisons:
        for name, s in comp.outputs.items():
            top = name == result.classifier
            vs = f"{comp.candidate} vs {comp.reference}" if several else comp.reference
            figures = [fmt_db(s.sqnr_db), f"{s.cosine:.6f}", fmt_num(s.max_abs), fmt_lsb(s.max_lsb),
                       fmt_pct(s.frac_off)]
            if classifier:
                figures += [fmt_pct(comp.top1) if top else "-", fmt_pct(comp.top5) if top else "-"]
            t.add_row(*([f"{name}, {vs}" if several else f"{name} vs {vs}"] if compact else [vs, name]), *figures)
    return t


def outputs_table(result: CompareResult, console: Console | None = None) -> Table:
    """One row per (reference, output), with top-1 / top-5 agreement when an output looks like class scores
    (:func:`.degenerate.looks_like_class_scores`); on a ``console`` too narrow for it (e.g. 80 columns), the
    compact form: two-line headers and the output and its reference in one column, so no number is cut."""
    table = _outputs_table(result, False)
    natural = console and Measurement.get(console, console.options.update_width(1 << 16), table).maximum
    if console is not None and natural > console.width:
        return _outputs_table(result, True)
    return table


def print_warnings(result: CompareResult, console: Console) -> None:
    """The results that tell nothing (:mod:`.degenerate`), one yellow line each."""
    for line in result.warnings:
        console.print(Text(f"warning: {line}", style="yellow"), highlight=False, soft_wrap=True)


def targets_rows(result: CompareResult) -> tuple[list[str], list[list[str]]] | None:
    """The per-layer table of several targets (``compare --targets``): one row per tensor, for each
    comparison its SQNR, and the largest difference in LSB of each comparison whose reference is quantized
    (the source model's own quantized run); None with one target."""
    comps = [c for c in result.comparisons if c.layers]
    if len({c.candidate for c in comps}) < 2:
        return None
    quantized = {r.name for r in result.runners if r.name == "source"}
    lsb = [c for c in comps if c.reference in quantized]
    head = ["tensor"] + [f"{c.candidate} v {c.reference} SQNR dB" for c in comps]
    head += [f"{c.candidate} v {c.reference} max LSB" for c in lsb]
    names: list[str] = []
    for c in comps:
        names += [n for n in c.layers if n not in names]
    rows = []
    for n in names:
        row = [n] + [fmt_db(c.layers[n].sqnr_db) if n in c.layers else "-" for c in comps]
        row += [fmt_lsb(c.layers[n].max_lsb) if n in c.layers else "-" for c in lsb]
        rows.append(row)
    return head, rows


def layers_table(result: CompareResult, min_sqnr: float | None = None) -> Table | None:
    """Per layer, in graph order: SQNR against every reference, details against the first; flags. With several
    targets: :func:`targets_rows`."""
    comps = [c for c in result.comparisons if c.layers]
    if not comps:
        return None
    several = targets_rows(result)
    if several is not None:
        head, rows = several
        t = Table(title="per layer, every target", title_justify="left")
        for i, col in enumerate(head):
            t.add_column(col, justify="left" if i == 0 else "right")
        for row in rows:
            t.add_row(*row)
        return t
    first = comps[0]
    flags = first.flags(min_sqnr)
    t = Table(title=f"per layer ({first.candidate}; details vs {first.reference})", title_justify="left")
    t.add_column("tensor")
    for c in comps:
        t.add_column(f"SQNR dB vs {c.reference}", justify="right")
    for col in ("cosine", "max LSB", "> 1 LSB"):
        t.add_column(col, justify="right")
    t.add_column("")
    names = list(first.layers) + [n for c in comps[1:] for n in c.layers if n not in first.layers]
    for name in names:
        s = first.layers.get(name)
        row = [name] + [fmt_db(c.layers[name].sqnr_db) if name in c.layers else "-" for c in comps]
        row += ([f"{s.cosine:.6f}", fmt_lsb(s.max_lsb), fmt_pct(s.frac_off)] if s else ["-"] * 3)
        row.append("[bold red]<- loss[/]" if flags.get(name) else "")
        t.add_row(*row)
    return t


def print_report(result: CompareResult, console: Console, min_sqnr: float | None = None) -> None:
    """The terminal report: what ran on what, runners, outputs, per-layer table."""
    console.print(f"compare {result.model}: {result.samples} samples from {result.data}", highlight=False,
                  markup=False)
    print_warnings(result, console)
    console.print(runners_table(result))
    classes = class_rows(result, CLASS_ROWS)
    if classes is not None:
        head, rows = classes
        t = Table(title=f"per class (the {len(rows)} worst of {len(result.runners[0].per_class)})",
                  title_justify="left")
        for col in head:
            t.add_column(col, justify="left" if col == "class" else "right")
        for row in rows:
            t.add_row(*row)
        console.print(t)
        line = confusion_line(result)
        if line:
            console.print(line, highlight=False, markup=False)
    console.print(outputs_table(result, console))
    table = layers_table(result, min_sqnr)
    if table is not None:
        console.print(table)
    for comp in result.comparisons[:1]:
        if comp.layers and comp.unmatched:
            shown = ", ".join(f"{n} ({why})" for n, why in list(comp.unmatched.items())[:5])
            more = f" and {len(comp.unmatched) - 5} more" if len(comp.unmatched) > 5 else ""
            console.print(f"not compared against {comp.reference}: {shown}{more}")
