"""Figures of every model in models/real/ against its own runtime (LiteRT / onnxruntime).

    python bench/real_models.py [--n 24] [--json out.json] [--only SUBSTRING] [--no-runtime-ranges]

Per model: params, MACs (from the manifest), and per output the SQNR (dB)
against the reference, the fraction of elements within 1 LSB and exact, the
worst difference in LSBs, top-1 agreement on classifiers; float models once
with run-time ranges and once calibrated on 16 other photo crops. Inputs
are crops of scikit-learn's two photographs (``hexnn_import.testing.photos``).
For quantized models also the reference runtime's own int8-vs-float SQNR
(``int8 vs float``), which says how much a 1-LSB rounding difference can grow
in that network; and the runtime against itself (``runtime_spread``: LiteRT's
builtin kernels against its reference kernels and its XNNPACK delegate,
onnxruntime optimized against unoptimized), which bounds the agreement any
second implementation of the same model can reach. Models the importer refuses with no flags run with the
manifest's input shape (``--input-shape``).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hexnn_import.compare.metrics import sqnr_db  # noqa: E402
from hexnn_import.errors import HexnnError  # noqa: E402
from hexnn_import.testing.real_models import (REAL, Reference, evaluate, float_inputs, is_float_model,  # noqa: E402
                                               load_manifest, manifest_shape)
from hexnn_import.testing.runtime_spread import least_agreeing, spread  # noqa: E402


def int8_vs_float(entry: dict, n: int) -> float | None:
    """The reference runtime's own quantized model against its float twin (SQNR, dB)."""
    ref_name = entry.get("float_reference")
    if not ref_name or ref_name == entry["file"] or not (REAL / ref_name).is_file() or is_float_model(entry):
        return None
    q, f = Reference(REAL / entry["file"]), Reference(REAL / ref_name)
    x = float_inputs(entry, n)
    if q.onnx:
        name = q.sess.get_inputs()[0].name
        det = q.sess.get_inputs()[0]
        dtype = "float32" if "float" in det.type else "int8"
        scale = zp = None
    else:
        det = q.interp.get_input_details()[0]
        name, dtype = det["name"], np.dtype(det["dtype"]).name
        scale, zp = det["quantization"]
    fname = f.sess.get_inputs()[0].name if f.onnx else f.interp.get_input_details()[0]["name"]
    a, b = [], []
    for k in range(n):
        xf = x[k:k + 1]
        xq = xf if dtype == "float32" else np.clip(np.round(xf / scale) + zp, *(
            (-128, 127) if dtype == "int8" else (0, 255))).astype(dtype)
        out_q = list(q.run({name: xq}).values())[0]
        if out_q.dtype != np.float32:
            od = q.interp.get_output_details()[0]["quantization"]
            out_q = (out_q.astype(np.float64) - od[1]) * od[0]
        a.append(list(f.run({fname: xf}).values())[0])
        b.append(out_q)
    return float(sqnr_db(np.stack(a).astype(np.float64), np.stack(b).astype(np.float64)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--no-runtime-ranges", action="store_true", help="float models: calibrated run only")
    ap.add_argument("--markdown", default=None, metavar="JSON", help="print the table of an earlier --json run")
    args = ap.parse_args()
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text())))
        return 0
    rows = []
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
    for e in load_manifest():
        if args.only and args.only not in e["file"]:
            continue
        t0 = time.perf_counter()
        row = {"file": e["file"], "quant": e["quant"], "params": e.get("params"), "macs": e.get("macs")}
        shapes = None
        try:
            try:
                fig = evaluate(e, n=args.n if not is_float_model(e) else min(args.n, 8),
                               runtime_ranges=not args.no_runtime_ranges)
            except HexnnError as exc:
                if "--input-shape" not in str(exc):
                    raise
                shapes = {"x": manifest_shape(e)}
                row["refused_without_flags"] = str(exc)
                fig = evaluate(e, n=min(args.n, 8), runtime_ranges=not args.no_runtime_ranges, input_shapes=shapes)
            row.update(fig.as_dict())
            row["int8_vs_float_db"] = int8_vs_float(e, min(args.n, 12))
            if not is_float_model(e):
                row["spread"] = {k: [vars(f) for f in v] for k, v in spread(e, args.n).items()}
        except Exception as exc:  # noqa: BLE001 - the table reports every model, failing or not
            row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(_line(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=float))
    return 0


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def _line(row: dict) -> str:
    if "error" in row:
        return f"{row['file']:48s} ERROR {row['error']}"
    parts = []
    for label, outs in (("", row.get("outputs", [])), ("cal ", row.get("calibrated", []))):
        for o in outs[:2]:
            parts.append(f"{label}{o['name'][:14]}: {_fmt(o['sqnr_db'], '.1f')} dB"
                         + (f" w1 {o['within1'] * 100:.2f}% ex {o['exact'] * 100:.1f}% worst {o['worst_lsb']:g}"
                            if o["within1"] is not None else "")
                         + (f" top1 {o['top1'] * 100:.0f}%" if o["top1"] is not None else ""))
    for o in row.get("outputs", [])[:2]:
        self_fig = least_agreeing(row.get("spread", {}), o["name"])
        if self_fig is not None and self_fig.get("within1") is not None:
            parts.append(f"runtime vs itself ({self_fig['label']}) w1 {self_fig['within1'] * 100:.2f}% "
                         f"worst {self_fig['worst_lsb']:g}")
    extra = f" | int8 vs float {row['int8_vs_float_db']:.1f} dB" if row.get("int8_vs_float_db") is not None else ""
    flag = " [needs --input-shape]" if "refused_without_flags" in row else ""
    return f"{row['file']:48s} {row['quant'][:12]:12s} {row['seconds']:6.1f}s  " + " | ".join(parts) + extra + flag


def markdown(rows: list[dict]) -> str:
    """The figures as a Markdown table (docs/real_models.md)."""
    out = ["| model | quant | params | MACs | output | vs runtime: SQNR dB | within 1 LSB | exact | worst LSB "
           "| top-1 | runtime vs itself: within 1 LSB / worst | runtime int8 vs float dB |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['file']} | {r['quant']} | | | error: {r['error'][:80]} | | | | | | |")
            continue
        outs = [("", o) for o in r.get("outputs", [])] + [("calibrated ", o) for o in r.get("calibrated", [])]
        for label, o in outs:
            pct = (lambda v: "-" if v is None else f"{v * 100:.2f}%")
            sf = least_agreeing(r.get("spread", {}), o["name"]) if not label else None
            own = "-" if sf is None or sf.get("within1") is None else (
                f"{sf['within1'] * 100:.2f}% / {sf['worst_lsb']:g} ({sf['label']})")
            out.append(f"| {r['file']} | {r['quant']}{' (needs --input-shape)' if 'refused_without_flags' in r else ''}"
                       f" | {r.get('params') or '-'} | {r.get('macs') or '-'} | {label}{o['name'][:28]} "
                       f"| {_fmt(o['sqnr_db'], '.1f')} | {pct(o['within1'])} | {pct(o['exact'])} "
                       f"| {_fmt(o['worst_lsb'], 'g')} | {pct(o['top1'])} | {own} "
                       f"| {_fmt(r.get('int8_vs_float_db'), '.1f')} |")
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
