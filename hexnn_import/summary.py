"""Summaries for the CLI: the imported graph, and the op-set coverage table.

Tables are drawn with ``rich``.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from hexnn_import.graph import ELEMENT_DTYPES, Graph


def graph_summary(graph: Graph, model: str, written: str | None,
                  imported_ops: dict[str, int] | None = None) -> dict[str, Any]:
    """Node count by op, tensor bytes, inputs/outputs: a JSON-ready dict.

    ``imported_ops`` (the op counts before prepare) adds ``op_counts_imported``;
    a prepare run with timing adds its per-pass table as ``prepare_timing``.
    """
    act_bytes = 0
    for n in graph.nodes:
        if n.is_const:
            continue
        for od in n.output_defs:
            dt = ELEMENT_DTYPES.get(od.dtype, np.dtype(np.uint8))
            act_bytes += int(np.prod(od.shape)) * dt.itemsize
    return {
        "model": model,
        "source_format": graph.meta.get("source_format"),
        "nodes": len(graph.nodes),
        "op_counts": graph.op_counts(),
        "const_bytes": graph.const_bytes(),
        "activation_bytes": act_bytes,
        "inputs": [_io(io) for io in graph.inputs],
        "outputs": [_io(io) for io in graph.outputs],
        "notes": list(graph.meta.get("notes", [])),  # type: ignore[arg-type]
        "graph_file": written,
        "ranges": range_mode(graph, imported_ops),
        **({"op_counts_imported": dict(sorted(imported_ops.items()))} if imported_ops is not None else {}),
        **({"prepare_timing": graph.meta["prepare_timing"]} if "prepare_timing" in graph.meta else {}),
    }


#: ops that take their output range from each run's data (SEMANTICS §2, §4): a float model without calibration
RUNTIME_RANGE_OPS = ("AutoQuantize", "QuantizeDownAndShrinkRange_32to8")


def range_mode(graph: Graph, imported_ops: dict[str, int] | None = None) -> dict[str, Any]:
    """How the activation ranges are set: ``calibrated`` (``--calibration``), ``run-time`` (a float model
    without calibration: AutoQuantize / QuantizeDownAndShrinkRange_32to8 take each run's min / max), or
    ``fixed`` (the source model's own quantization). Counted on the imported graph, before prepare fuses
    the shrink-range ops into supernodes."""
    cal = graph.meta.get("calibration")
    if cal or graph.meta.get("calibrated"):
        method = cal.get("method") if isinstance(cal, dict) else None
        return {"mode": "calibrated", **({"method": method} if method else {})}
    counts = imported_ops if imported_ops is not None else graph.op_counts()
    shrink = counts.get("QuantizeDownAndShrinkRange_32to8", 0)
    if shrink:
        return {"mode": "run-time", "ops": {op: counts[op] for op in RUNTIME_RANGE_OPS if counts.get(op)}}
    return {"mode": "fixed"}


def _io(io: Any) -> dict[str, Any]:
    d = {"name": io.name, "shape": list(io.shape), "dtype": io.dtype}
    if io.scale is not None:
        d["scale"] = io.scale
        d["zero_point"] = io.zero_point
    return d


def print_summary(s: dict[str, Any]) -> None:
    """Human-readable summary on stdout."""
    con = Console(highlight=False, soft_wrap=True)
    con.print(f"model: {s['model']} ({s['source_format']})")
    for kind in ("inputs", "outputs"):
        for io in s[kind]:
            q = f"  scale {io['scale']:.6g} zero point {io['zero_point']}" if "scale" in io else ""
            con.print(f"{kind[:-1]:>6}: {io['name']}  {io['shape']} {io['dtype']}{q}")
    before = s.get("op_counts_imported")
    table = Table(title=f"{s['nodes']} nodes" + (f" ({sum(before.values())} imported)" if before else ""),
                  title_justify="left")
    table.add_column("op")
    if before is not None:
        table.add_column("imported", justify="right")
    table.add_column("prepared" if before is not None else "count", justify="right")
    for op in sorted(set(s["op_counts"]) | set(before or {})):
        counts = ([str(before.get(op, "-"))] if before is not None else []) + [str(s["op_counts"].get(op, "-"))]
        table.add_row(op, *counts)
    con.print(table)
    if s.get("prepare_timing"):
        print_timing(con, s["prepare_timing"])
    con.print(f"const bytes: {s['const_bytes']:,}   activation bytes: {s['activation_bytes']:,}")
    for note, count in grouped_notes(s["notes"]):
        more = f" (and {count - 1} more like it; --json lists every note)" if count > 1 else ""
        con.print(f"note: {note}{more}")
    if s.get("ranges", {}).get("mode") == "run-time":
        con.print(f"note: {runtime_ranges_note(s)}")
    if s.get("graph_file"):
        con.print(f"wrote {s['graph_file']}")


def note_kind(note: str) -> str:
    """What a note says without whom it concerns: the node name before the first ``": "`` (a name has no
    spaces) dropped and every number masked, so "conv1: channel 3 scale ratio below 1/4096; weights rescaled"
    and "conv7: channel 12 ..." are one kind (issue 34 finding 6)."""
    head, sep, rest = note.partition(": ")
    text = rest if sep and " " not in head else note
    return re.sub(r"\d+(\.\d+)?(e-?\d+)?", "#", text)


def grouped_notes(notes: list[str]) -> list[tuple[str, int]]:
    """The notes one per kind (:func:`note_kind`), in first-seen order: the first note of each kind and how
    many there are; the summary's ``notes`` (``--json``) keeps every one."""
    groups: dict[str, list[Any]] = {}
    for note in notes:
        groups.setdefault(note_kind(note), [note, 0])[1] += 1
    return [(first, count) for first, count in groups.values()]


def runtime_ranges_note(s: dict[str, Any]) -> str:
    """The note a float model imported without calibration gets: what runs, and how to calibrate."""
    ops = s["ranges"]["ops"]
    keys = ", ".join(f"'{io['name']}'" for io in s["inputs"])
    return ("no calibration: this float model runs with run-time ranges ("
            + ", ".join(f"{n} {op}" for op, n in ops.items())
            + " take each run's own min / max); to fix the ranges from data, "
            f"add --calibration DATA.npz (float samples along axis 0 keyed by input name: {keys})")


def print_timing(con: Console, records: list[dict[str, Any]]) -> None:
    """The per-pass prepare timing table (records of optimizer.pipeline.PassRecord)."""
    table = Table(title="prepare passes", title_justify="left")
    for col, just in (("pass", "left"), ("ms", "right"), ("rewrites", "right"), ("nodes", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in records:
        ms = f"{r['seconds'] * 1e3:.2f}" if r["ran"] else "skipped"
        table.add_row(r["name"], ms, str(r["rewrites"]), f"{r['nodes_before']} -> {r['nodes_after']}")
    table.add_row("total", f"{sum(r['seconds'] for r in records) * 1e3:.2f}", "", "")
    con.print(table)


def op_coverage() -> list[dict[str, Any]]:
    """Every documented op with ``kernel`` (bool), ``emitted_by`` (importer names) and how its kernel is
    ``verified`` (:mod:`hexnn_import.ops.verification`), then the lib_nn kernels the XS3 lowering uses
    (:mod:`hexnn_import.xs3.verification`)."""
    from hexnn_import.importers.coverage import emitted_ops
    from hexnn_import.ops.catalog import CATALOG
    from hexnn_import.ops.registry import has_kernel
    from hexnn_import.ops.verification import verification
    from hexnn_import.xs3.verification import XS3_KERNELS
    from hexnn_import.xs3.verification import verification as xs3_verification

    emitted = emitted_ops()
    rows = []
    for name in sorted(CATALOG):
        spec = CATALOG[name]
        rows.append({
            "name": name,
            "kernel": has_kernel(name) or name in ("INPUT", "OUTPUT", "Const"),
            "emitted_by": sorted(k for k, ops in emitted.items() if name in ops),
            "source": spec.source,
            "inputs": [f"{'?' if s.optional else ''}{s.name}:{'|'.join(s.types)}" for s in spec.inputs],
            "outputs": [f"{s.name}:{'|'.join(s.types)}" for s in spec.outputs],
            **(verification(name) if has_kernel(name) else {"verified": None}),
        })
    from hexnn_import.xs3.kernel_table import KERNELS as LOWERED  # the kernels layers lower to (the rest: simulated)

    for name in XS3_KERNELS:
        rows.append({"name": name, "kernel": True, "emitted_by": ["xs3"] if name in LOWERED else [],
                     "source": "lib_nn", "inputs": [], "outputs": [], **xs3_verification(name)})
    return rows


def print_op_table(rows: list[dict[str, Any]]) -> None:
    """The coverage table on stdout."""
    table = Table(title=_count_line(rows), title_justify="left")
    for col in ("op", "document", "kernel", "verified", "emitted by"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["source"], "yes" if r["kernel"] else "-", _verified_text(r),
                      ", ".join(r["emitted_by"]) or "-")
    Console(highlight=False, soft_wrap=True).print(table)


def markdown_op_table(rows: list[dict[str, Any]]) -> str:
    """The coverage table as Markdown (the README's op coverage section is this text)."""
    lines = [_count_line(rows) + ".", "", "| op | document | kernel | verified | emitted by |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['source']} | {'yes' if r['kernel'] else '-'} | {_verified_text(r)} | "
                     f"{', '.join(r['emitted_by']) or '-'} |")
    return "\n".join(lines)


def _count_line(rows: list[dict[str, Any]]) -> str:
    """``257 documented ops, 257 with kernels; 5 more from nnlib's op table; 6 lib_nn kernels (XS3)``."""
    doc = [r for r in rows if r["source"] not in ("lib_nn", "nnlib")]
    n_nnlib = sum(r["source"] == "nnlib" for r in rows)
    n_x = sum(r["source"] == "lib_nn" for r in rows)
    return (f"{len(doc)} documented ops, {sum(r['kernel'] for r in doc)} with kernels; {n_nnlib} more from "
            f"nnlib's op table (prepare.c creates them); {n_x} lib_nn kernels (XS3)")


def _verified_text(r: dict[str, Any]) -> str:
    """``nnlib-exact``, ``nnlib-partial (62.5%)``, ... with ``; device exact`` / ``; device 27.3%`` (nnlib's device
    code under emulation), or ``-`` for an op without a kernel."""
    v = r.get("verified")
    if not v:
        return "-"
    pct = r.get("nnlib_exact_pct", r.get("libnn_exact_pct"))
    text = f"{v} ({pct}%)" if pct is not None and v.endswith("partial") else v
    dev = r.get("device")
    if dev and not v.startswith("device"):
        text += "; device exact" if dev["exact"] == dev["cases"] else f"; device {dev['exact_pct']}%"
    elif dev and v == "device-partial":
        text = f"{v} ({dev['exact_pct']}%)"
    return text
