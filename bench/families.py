"""Figures of every model in models/real/families/ on its own held-out digits, against its own runtime.

    python bench/families.py [--n N] [--only SUBSTRING] [--json out.json]

Per model (converted with no flags, as a user would: a float model runs with run-time ranges): family,
quantization, params and MACs (from the manifest), the engine's accuracy and the runtime's (LiteRT /
onnxruntime on the same file and samples), top-1 agreement, distinct predicted classes (a run that puts every
sample in one class tells nothing, and says so), output SQNR against the runtime and, for quantized outputs,
the share within 1 LSB; or the importer's one-line refusal.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hexnn_import.errors import HexnnError  # noqa: E402
from hexnn_import.testing.families import FAMILIES, evaluate_family, load_families  # noqa: E402


def _vad(e: dict, n: int | None) -> dict:
    """The streaming VAD, with run-time ranges (no flags) and calibrated (hexnn_import.testing.vad)."""
    import hexnn_import as hx
    from hexnn_import.testing.vad import calibration_feed, evaluate_vad

    path = FAMILIES / e["file"]
    fig = {"file": e["file"]}
    for tag, cal in (("runtime_ranges", None), ("calibrated", calibration_feed())):
        fig[tag] = evaluate_vad(hx.prepare(hx.import_model(path, calibration=cal)), n=n).as_dict()
    return fig


def _row(e: dict, n: int | None) -> dict:
    t0 = time.perf_counter()
    if e.get("task") == "detector":
        from hexnn_import.testing.detector_family import evaluate_detector

        fig = evaluate_detector(e, n=n).as_dict()
        fig["seconds"] = round(time.perf_counter() - t0, 1)
        return fig
    if e.get("task") == "yolo":
        from hexnn_import.testing.yolo_family import evaluate_yolo

        fig = evaluate_yolo(e, n=n).as_dict()
        fig["seconds"] = round(time.perf_counter() - t0, 1)
        return fig
    if e.get("task") == "stream-vad":
        fig = _vad(e, n)
        fig["seconds"] = round(time.perf_counter() - t0, 1)
        return fig
    try:
        fig = evaluate_family(e, n=n).as_dict()
    except HexnnError as exc:
        return {"file": e["file"], "refused": str(exc).splitlines()[0]}
    fig["seconds"] = round(time.perf_counter() - t0, 1)
    fig["uninformative"] = fig["engine_distinct_top1"] <= 5 or fig["runtime_distinct_top1"] <= 5
    return fig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="samples per model (default: all)")
    ap.add_argument("--only", default="", help="models whose file name contains this")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''}, python {platform.python_version()}")
    rows = []
    for e in load_families():
        if a.only not in e["file"]:
            continue
        r = _row(e, a.n)
        r.update(family=e.get("family"), quant=e.get("quant"), params=e.get("params"), macs=e.get("macs"))
        rows.append(r)
        if e.get("task") == "detector":
            print(f"{e['file']:48s} n={r['n']} engine {100 * r['engine_accuracy']:.2f}% runtime "
                  f"{100 * r['runtime_accuracy']:.2f}% LiteRT detections matched (same class, IoU >= 0.9) "
                  f"{100 * r['detections_matched']:.1f}% counts alike {100 * r['count_agreement']:.1f}%")
            continue
        if e.get("task") == "yolo":
            print(f"{e['file']:48s} n={r['n']} true boxes found: engine {100 * r['engine_recall']:.1f}% runtime "
                  f"{100 * r['runtime_recall']:.1f}%; onnxruntime's boxes matched (same class, IoU >= 0.9) "
                  f"{100 * r['boxes_matched']:.1f}%; SQNR {r['sqnr_db']:.1f} dB (scores {r['score_sqnr_db']:.1f})")
            continue
        if e.get("task") == "stream-vad":
            for tag in ("runtime_ranges", "calibrated"):
                v = r[tag]
                print(f"{e['file']:48s} {tag}: {v['chunks']} chunks engine {100 * v['engine_accuracy']:.2f}% "
                      f"runtime {100 * v['runtime_accuracy']:.2f}% decisions agree "
                      f"{100 * v['decision_agreement']:.1f}% mean |dp| {v['mean_prob_diff']:.3f}")
            continue
        if "refused" in r:
            print(f"{e['file']:48s} REFUSED: {r['refused']}")
            continue
        w1 = "" if r["within1"] is None else f" within1 {100 * r['within1']:.1f}% worst {r['worst_lsb']}"
        flag = "  (UNINFORMATIVE: too few distinct classes)" if r["uninformative"] else ""
        print(f"{e['file']:48s} n={r['n']} engine {100 * r['engine_accuracy']:.2f}% runtime "
              f"{100 * r['runtime_accuracy']:.2f}% top-1 agree {100 * r['top1_agreement']:.1f}% "
              f"SQNR {r['sqnr_db']:.1f} dB{w1} classes {r['engine_distinct_top1']}/{r['runtime_distinct_top1']} "
              f"({r['seconds']} s){flag}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
