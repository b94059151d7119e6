"""The ONNX model-zoo classics the onnx wheel ships as "light" models, against onnxruntime (issue 33, item 7).

    python bench/onnx_light_models.py [--only SUBSTRING] [--random N] [--calibrate K] [--json out.json]

The light files (``onnx/backend/test/data/light/light_*.onnx``: AlexNet, DenseNet-121, Inception v1 / v2,
ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512; opset 9, IR 3) keep each network's graph but
replace its weights by ``ConstantOfShape`` constants, so their outputs barely depend on the input. Per
model, with no flags (run-time ranges): whether it converts and runs, the conversion time, and on N
seeded uniform [0, 1) inputs plus the input onnx's backend runner makes for it (``arange(n) / n``, whose
onnxruntime output is the shipped ``_output_0.pb``): the SQNR and max |diff| of the output and of the
last tensor before the final Softmax (``logits``) against onnxruntime, whether onnxruntime reproduces
``_output_0.pb``, and the output std across the inputs (near 0: a degenerate, near-constant output, where
an SQNR says little about accuracy). ``--calibrate K``: the float model calibrated on K other seeded
uniform inputs instead of run-time ranges.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hexnn_import as hx  # noqa: E402
from hexnn_import.compare.metrics import sqnr_db  # noqa: E402
from hexnn_import.errors import HexnnError  # noqa: E402
from hexnn_import.testing.onnx_compare import graph_tensor, run_ort  # noqa: E402

LIGHT = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "light"
MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet", "squeezenet",
          "vgg19", "zfnet512")


def feeds(model: onnx.ModelProto, n: int) -> tuple[str, list[np.ndarray]]:
    """The input's name; the backend runner's ``arange(n) / n`` input first, then ``n`` uniform ones."""
    inits = {t.name for t in model.graph.initializer}
    vi = next(i for i in model.graph.input if i.name not in inits)
    shape = tuple(d.dim_value if d.dim_value else 1 for d in vi.type.tensor_type.shape.dim)
    size = int(np.prod(shape))
    rng = np.random.default_rng(0)
    return vi.name, [(np.arange(size).reshape(shape) / size).astype(np.float32)] + \
        [rng.random(shape, np.float32) for _ in range(n)]


def logits_name(model: onnx.ModelProto) -> str | None:
    """The input of the final Softmax (the tensor before it), if the graph ends with one."""
    outs = {o.name for o in model.graph.output}
    for node in model.graph.node:
        if node.op_type == "Softmax" and node.output[0] in outs:
            return node.input[0]
    return None


def evaluate(name: str, n: int, calibrate: int = 0) -> dict:
    path = LIGHT / f"light_{name}.onnx"
    model = onnx.load(str(path))
    row: dict = {"model": name, "nodes": len(model.graph.node), "ranges": f"calibrated on {calibrate}" if calibrate
                 else "run-time"}
    t0 = time.perf_counter()
    cal = None
    if calibrate:
        inp, _ = feeds(model, 0)
        rng = np.random.default_rng(1)
        shape = feeds(model, 0)[1][0].shape
        cal = {inp: np.stack([rng.random(shape, np.float32) for _ in range(calibrate)])}
    try:
        graph = hx.import_model(path, calibration=cal)
    except HexnnError as exc:
        return {**row, "converts": False, "error": str(exc)}
    row.update(converts=True, import_s=round(time.perf_counter() - t0, 1))
    prepared = hx.prepare(graph)
    runner = hx.Runner(prepared)
    inp, xs = feeds(model, n)
    out = model.graph.output[0].name
    mid = logits_name(model)
    probe = onnx.load(str(path))
    if mid is not None:
        probe.graph.output.append(onnx.helper.make_value_info(mid, onnx.TypeProto()))
    blob = probe.SerializeToString()
    ours, ref, ours_mid, ref_mid = [], [], [], []
    t0 = time.perf_counter()
    for x in xs:
        got, every = runner.run_all({inp: x})
        want = run_ort(blob, {inp: x})
        ours.append(np.asarray(got[out], np.float64))
        ref.append(np.asarray(want[out], np.float64))
        if mid is not None and graph_tensor(prepared, every, mid) is not None:
            ours_mid.append(graph_tensor(prepared, every, mid).reshape(want[mid].shape))
            ref_mid.append(np.asarray(want[mid], np.float64))
    row["run_s_per_input"] = round((time.perf_counter() - t0) / len(xs), 2)
    a, r = np.stack(ours), np.stack(ref)
    row.update(runs=True, sqnr_db=round(float(sqnr_db(r, a)), 1), max_diff=float(np.abs(a - r).max()),
               output_std_across_inputs=float(r.std(axis=0).mean()), output_range=[float(r.min()), float(r.max())])
    if ours_mid:
        am, rm = np.stack(ours_mid), np.stack(ref_mid)
        row.update(logits=mid, logits_sqnr_db=round(float(sqnr_db(rm, am)), 1),
                   logits_max_diff=float(np.abs(am - rm).max()), logits_std_across_inputs=float(rm.std(axis=0).mean()))
    shipped = path.with_name(f"light_{name}_output_0.pb")
    if shipped.exists():
        expected = onnx.numpy_helper.to_array(onnx.load_tensor(str(shipped)))
        row["ort_matches_output_0_pb"] = bool(np.allclose(ref[0].reshape(expected.shape), expected, atol=1e-6))
        row["ours_vs_output_0_pb_max_diff"] = float(np.abs(ours[0].reshape(expected.shape) - expected).max())
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--random", type=int, default=4, help="uniform [0, 1) inputs besides the arange one")
    ap.add_argument("--calibrate", type=int, default=0, help="calibrate on this many other inputs")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    for name in MODELS:
        if args.only and args.only not in name:
            continue
        row = evaluate(name, args.random, args.calibrate)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
