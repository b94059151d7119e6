"""Mark-all fingerprints of every bundled and ``models/real/`` model: did a change alter any tensor?

    python tools/mark_all.py snapshot OUT.json [--models GLOB ...]
    python tools/mark_all.py compare BEFORE.json AFTER.json

``snapshot`` imports and prepares each model as a user does (``hx.import_model`` + ``hx.prepare``),
runs it twice with ``mark_all`` on a seeded input (the second run shows the settled auto ranges) and
records a SHA-1 of every tensor of the second run (shape, dtype and bytes), keyed by node label and output
index (a node without a name by its rank among those in graph order, when compared), plus the graph's outputs. ``compare`` lists, per model, the tensors whose fingerprint changed and
the first node (in graph order) that changed, which is where a difference starts; exit status 1 when any
differs. A model that fails on one side is reported with its error. Run the snapshot before a change
(e.g. in a worktree of the base commit installed in a scratch venv) and after it: a refactor or a speed
change must leave every fingerprint equal (issues 22 and 24).

Inputs: quantized inputs take seeded uniform codes; float inputs seeded uniform values in [-1, 1]
(the engine's arithmetic, not the model's accuracy, is what is fingerprinted). Dynamic dimensions take
:data:`SHAPES` or 1.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_GLOBS = ("models/*.tflite", "models/*.onnx", "models/real/*.tflite", "models/real/*.onnx")
#: input shapes for models whose file leaves height / width open (NCHW, as the ONNX files declare)
SHAPES = {"rapidocr_ppocrv3_det": (1, 3, 64, 64), "rapidocr_ppocrv3_det_qdq": (1, 3, 64, 64),
          "rapidocr_ppocr_mobile_v2_cls": (1, 3, 48, 192), "rapidocr_ppocr_mobile_v2_cls_qdq": (1, 3, 48, 192)}


def _digest(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    h = hashlib.sha1(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.view(np.uint8).reshape(-1) if a.size else b"")
    return h.hexdigest()[:16]


def _input_shapes(path: Path) -> dict[str, tuple[int, ...]] | None:
    shape = SHAPES.get(path.stem)
    if shape is None:
        return None
    if path.suffix == ".onnx":
        import onnx
        name = onnx.load(str(path), load_external_data=False).graph.input[0].name
        return {name: shape}
    return None


def fingerprint(path: Path) -> dict:
    """``{"tensors": {label:idx: digest}, "outputs": [...], "order": [...], "seconds": s}`` or ``{"error": ...}``."""
    import hexnn_import as hx
    from hexnn_import.graph import ELEMENT_DTYPES

    t0 = time.perf_counter()
    try:
        runner = hx.Runner(hx.prepare(hx.import_model(path, input_shapes=_input_shapes(path))))
        rng = np.random.default_rng(20261128)
        feeds = {}
        for spec in runner.graph.inputs:
            dt = np.dtype(spec.dtype) if not isinstance(spec.dtype, str) else np.dtype(ELEMENT_DTYPES.get(spec.dtype, spec.dtype))
            if dt.kind == "f":
                feeds[spec.name] = rng.uniform(-1, 1, spec.shape).astype(dt)
            else:
                info = np.iinfo(dt)
                feeds[spec.name] = rng.integers(info.min, int(info.max) + 1, spec.shape).astype(dt)
        runner.run_all(feeds)
        outs, every = runner.run_all(feeds)
    except Exception as exc:  # noqa: BLE001 - recorded and compared like any result
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    g = runner.graph
    tensors, order = {}, []
    for ref, arr in every.items():
        key = f"{g.node(ref.src_id).label}:{ref.output_idx}"
        tensors[key] = _digest(np.asarray(arr))
        order.append(key)
    return {"tensors": tensors, "order": order, "outputs": {k: _digest(np.asarray(v)) for k, v in outs.items()},
            "seconds": round(time.perf_counter() - t0, 2)}


def snapshot(out: Path, globs: list[str]) -> int:
    files = sorted({Path(p) for pat in globs for p in glob.glob(str(ROOT / pat))})
    result = {}
    for p in files:
        rel = str(p.relative_to(ROOT))
        result[rel] = fingerprint(p)
        r = result[rel]
        print(f"{rel}: " + (r["error"] if "error" in r else f"{len(r['tensors'])} tensors, {r['seconds']} s"),
              flush=True)
    out.write_text(json.dumps(result, indent=0, sort_keys=True))
    return 0


def _by_name(r: dict) -> dict:
    """A snapshot with the nodes that have no name (labelled ``#id``: nodes the passes make, whose ids shift
    when an importer uses ids for nodes a fusion then removes) keyed ``#unnamed<k>:idx`` by their rank in
    graph order instead: ids carry no meaning, positions do."""
    rank: dict[str, str] = {}
    for key in r["order"]:
        label = key.rsplit(":", 1)[0]
        if label.startswith("#") and label not in rank:
            rank[label] = f"#unnamed{len(rank)}"
    def rename(key: str) -> str:
        label, idx = key.rsplit(":", 1)
        return f"{rank.get(label, label)}:{idx}"
    return {**r, "tensors": {rename(k): v for k, v in r["tensors"].items()}, "order": [rename(k) for k in r["order"]]}


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    a = {m: r if "error" in r else _by_name(r) for m, r in a.items()}
    b = {m: r if "error" in r else _by_name(r) for m, r in b.items()}
    bad = 0
    for model in sorted(set(a) | set(b)):
        x, y = a.get(model), b.get(model)
        if x is None or y is None:
            print(f"{model}: only in {'after' if x is None else 'before'}")
            continue
        if "error" in x or "error" in y:
            if x.get("error") != y.get("error"):
                bad += 1
                print(f"{model}: before {x.get('error', 'ran')} / after {y.get('error', 'ran')}")
            continue
        diff = [k for k in y["order"] if x["tensors"].get(k) != y["tensors"][k]]
        missing = set(x["tensors"]) - set(y["tensors"])
        if diff or missing or x["outputs"] != y["outputs"]:
            bad += 1
            print(f"{model}: {len(diff)} of {len(y['tensors'])} tensors differ (first: {diff[:1]}), "
                  f"{len(missing)} gone, outputs {'equal' if x['outputs'] == y['outputs'] else 'differ'}")
        else:
            print(f"{model}: all {len(y['tensors'])} tensors equal")
    print(f"{bad} model(s) differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("out", type=Path)
    s.add_argument("--models", nargs="*", default=list(DEFAULT_GLOBS))
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "snapshot":
        return snapshot(args.out, args.models)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
