"""Golden files of xs3-export's C runner built against lib_nn's C, for tests/xs3/test_c_runner_golden.py (issue 39).

    python tools/xs3_runner_golden.py --libnn LIB_NN_CHECKOUT [--inputs 2] [--only NAME ...]

For every model of ``models/`` and ``models/real/`` that lowers at least one
layer: the runner's files as xs3-export writes them
(:func:`hexnn_import.xs3.c_runner_replay.runner_export`: the network header,
``xs3_runner.c``, ``build_runner.sh``) are written to a temporary folder and
built with ``build_runner.sh --libnn DIR`` (``--xs3-part`` when Hexagon layers
write network inputs or read its outputs: then every network input is given
from ``run --xs3``'s own tensors); the runner runs ``--inputs`` seeded inputs
(:func:`~hexnn_import.xs3.c_runner_replay.seeded_inputs`, seeds 0, 1, ...)
with ``--dump``, and once more on the first with the arena and scratch
poisoned (0xA5 instead of 0: a kernel that read bytes it does not own would
show). ``tests/data/golden/xs3_runner/<model>.json`` keeps the SHA-256
(first 32 hex digits) of the model file, of each runner file, of each
input, of every network input given, of every tensor the C wrote and of its
outputs, the small outputs' values, and whether ``run --xs3``
(:class:`~hexnn_import.xs3.run.XS3Runner`) gave the same bytes when the file
was written. One more file, ``synthetic_kernels.json``, holds the same of
:mod:`hexnn_import.xs3.c_runner_synthetic`'s network (the kernels and channel
paddings no model lowers to yet), against the kernels' literal references.
lib_nn's checkout is never copied or named in the files.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__":  # this checkout's hexnn_import and its models/
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("HEXNN_MODELS_DIR", str(ROOT / "models"))
OUT = ROOT / "tests/data/golden/xs3_runner"
LIBNN_COMMIT = "96bd67c"
#: input shapes of the models whose inputs have symbolic dimensions (models/real/manifest_ocr_qdq.json, README)
SHAPES: dict[str, dict[str, tuple[int, ...]]] = {"rapidocr_ppocr_mobile_v2_cls_qdq.onnx": {"x": (1, 3, 48, 192)},
                                                 "rapidocr_ppocrv3_det_qdq.onnx": {"x": (1, 3, 160, 160)}}
#: outputs of at most this many bytes are kept as values too
SMALL = 64
POISON = 0xA5
#: the golden file of hexnn_import.xs3.c_runner_synthetic's network
SYNTHETIC = "synthetic_kernels.json"


def model_paths() -> list[Path]:
    """Every model file of models/ and models/real/ (float ones lower nothing and are left out as they go)."""
    out = []
    for folder in (ROOT / "models", ROOT / "models/real"):
        out += sorted(p for p in folder.iterdir() if p.suffix in (".tflite", ".onnx"))
    return out


def compiler() -> str:
    return subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def run_c(exe: Path, work: Path, inputs: list[np.ndarray], poison: int = 0) -> Path:
    """Run the runner with --dump on int8 inputs; the folder of its files."""
    out = work / f"out_{poison}"
    out.mkdir(exist_ok=True)
    files = []
    for i, x in enumerate(inputs):
        files.append(work / f"in_{i}.bin")
        x.astype(np.int8).tofile(files[-1])
    cmd = [str(exe), "--dump", "--poison", str(poison), str(out), *map(str, files)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode:
        raise RuntimeError(f"{exe.name} exited {r.returncode}: {r.stderr.strip()}")
    return out


def one_model(path: Path, libnn: Path, build: Path, work: Path, n_inputs: int) -> dict[str, Any] | str:
    """The golden record of one model, or why it has none."""
    from hexnn_import.xs3.c_runner_replay import (
        digest,
        network_values,
        runner_export,
        seeded_inputs,
    )
    from hexnn_import.xs3.run import XS3Runner

    from hexnn_import.api import import_model

    try:
        runner = XS3Runner(import_model(path, input_shapes=SHAPES.get(path.name)))
    except Exception as e:  # noqa: BLE001 - a model the XS3 path refuses: say so
        return f"not run on the XS3 path: {type(e).__name__}: {e}"
    if not runner.xs3_layers:
        return "lowers no layer"
    net, refs, files = runner_export(runner.graph, path)

    def ours(k: int) -> tuple[dict[str, str], dict[str, np.ndarray]]:
        feeds = seeded_inputs(runner.graph, k)
        return {n: digest(v) for n, v in feeds.items()}, network_values(runner, refs, feeds)

    rec = record(net, files, ours, libnn, build, work, n_inputs)
    return {"model": path.relative_to(ROOT).as_posix(), "model_sha256": digest(path.read_bytes()),
            "input_shapes": {k: list(v) for k, v in (SHAPES.get(path.name) or {}).items()}, **rec}


def one_synthetic(libnn: Path, build: Path, work: Path, n_inputs: int) -> dict[str, Any]:
    """The golden record of :mod:`hexnn_import.xs3.c_runner_synthetic`'s network (the kernels no model uses)."""
    from hexnn_import.xs3.c_network import network_header
    from hexnn_import.xs3.c_runner import runner_files
    from hexnn_import.xs3.c_runner_replay import digest
    from hexnn_import.xs3.c_runner_synthetic import NAME, simulate, synthetic_network
    from hexnn_import.xs3.c_runner_synthetic import SHAPES as NET_SHAPES

    net, calls = synthetic_network(0)
    header = f"{NAME}_xs3_network.h"
    files = {header: network_header(net).encode("utf-8"), **runner_files(net, header)}

    def ours(k: int) -> tuple[dict[str, str], dict[str, np.ndarray]]:
        x = np.random.default_rng(k).integers(-128, 128, NET_SHAPES["x"]).astype(np.int8)
        return {"x": digest(x)}, simulate(calls, x)

    return {"model": None, "network_seed": 0, **record(net, files, ours, libnn, build, work, n_inputs)}


def record(net: Any, files: dict[str, bytes], ours_of: Any, libnn: Path, build: Path, work: Path,
           n_inputs: int) -> dict[str, Any]:
    """Build the runner of ``net`` from ``files``, run it on ``n_inputs`` inputs (``ours_of(k)``: the input
    digests and the XS3 path's value of every network tensor) and record what the C wrote."""
    from hexnn_import.xs3.c_runner import part_reason
    from hexnn_import.xs3.c_runner_replay import digest

    work.mkdir(parents=True)
    for name, data in files.items():
        (work / name).write_bytes(data)
    part = part_reason(net)
    cmd = ["sh", str(work / "build_runner.sh"), "--libnn", str(libnn), "--build", str(build)]
    r = subprocess.run(cmd + (["--xs3-part"] if part else []), capture_output=True, text=True, timeout=1800)
    if r.returncode:
        raise RuntimeError(f"{net.name}: build_runner.sh exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    index = {t.name: i for i, t in enumerate(net.tensors)}
    written = [layer.outputs[0] for layer in net.layers]
    runs, exact, compared = [], 0, 0
    for k in range(n_inputs):
        feeds, ours = ours_of(k)
        out = run_c(work / "xs3_runner", work, [ours[t] for t in net.inputs])
        c = {t: np.fromfile(out / f"tensor_{index[t]}.bin", np.int8) for t in written}
        c_out = [np.fromfile(out / f"output_{i}.bin", np.int8) for i in range(len(net.outputs))]
        assert all(np.array_equal(c[t], o) for t, o in zip(net.outputs, c_out) if t in c)
        same = {t: bool(np.array_equal(c[t], ours[t])) for t in written}
        exact += sum(same.values())
        compared += len(same)
        rec: dict[str, Any] = {"seed": k, "feeds": feeds,
                               "given": {t: digest(ours[t]) for t in net.inputs},
                               "tensors": {t: digest(c[t]) for t in written},
                               "outputs": {t: digest(o) for t, o in zip(net.outputs, c_out)},
                               "small_outputs": {t: o.tolist() for t, o in zip(net.outputs, c_out) if o.size <= SMALL},
                               "xs3_equal_when_written": [t for t in written if same[t]] == written}
        if not rec["xs3_equal_when_written"]:
            rec["xs3_differs_when_written"] = [t for t in written if not same[t]]
        if k == 0:
            p_out = run_c(work / "xs3_runner", work, [ours[t] for t in net.inputs], POISON)
            rec["poison_independent"] = all(np.array_equal(np.fromfile(p_out / f"tensor_{index[t]}.bin", np.int8), c[t])
                                            for t in written)
        runs.append(rec)
    kernels: dict[str, int] = {}
    for layer in net.layers:
        kernels[layer.kernel] = kernels.get(layer.kernel, 0) + 1
    return {"mode": "xs3-part" if part else "whole", "part_reason": part,
            "files": {name: digest(data) for name, data in files.items()},
            "layers": len(net.layers), "kernels": dict(sorted(kernels.items())), "tensors": len(net.tensors),
            "network_inputs": net.inputs, "network_outputs": net.outputs, "written": written,
            "runs": runs, "compared": compared, "exact": exact}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libnn", type=Path, required=True, help="a lib_nn checkout (DIR/lib_nn/api, DIR/lib_nn/src)")
    ap.add_argument("--inputs", type=int, default=2, help="seeded inputs per model")
    ap.add_argument("--only", nargs="*", default=None, help="model file names (default: every model)")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    a.out.mkdir(parents=True, exist_ok=True)
    paths: list[Path | None] = [p for p in model_paths() if a.only is None or p.name in a.only]
    provenance = {"lib_nn_commit": LIBNN_COMMIT, "compiler": compiler(), "machine": platform.machine(),
                  "lib_nn_flags": "-O1 -fwrapv -DNN_USE_REF (lib_nn/src/c/*.c, src/c/util/*/*.c, "
                                  "src/asm/asm_constants.c)",
                  "runner_flags": "-std=c99 -O1 -fwrapv -DNN_USE_REF -Wall -Wextra -Werror",
                  "command": f"python tools/xs3_runner_golden.py --libnn <lib_nn checkout> --inputs {a.inputs}",
                  "poison": POISON}
    old = a.out / "summary.json"
    summary: dict[str, Any] = json.loads(old.read_text())["models"] if a.only and old.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths + ([None] if a.only is None or SYNTHETIC in a.only else []):
            t1 = time.perf_counter()
            if path is None:  # the synthetic network of the kernels no model lowers to
                path = Path(SYNTHETIC)
                rec = one_synthetic(a.libnn.resolve(), Path(tmp) / "build", Path(tmp) / path.stem, a.inputs)
            else:
                rec = one_model(path, a.libnn.resolve(), Path(tmp) / "build", Path(tmp) / path.stem, a.inputs)
            if isinstance(rec, str):
                summary[path.name] = rec
                print(f"{path.name}: {rec}", flush=True)
                continue
            rec["provenance"] = provenance
            (a.out / f"{path.stem}.json").write_text(json.dumps(rec, indent=1) + "\n")
            summary[path.name] = {k: rec[k] for k in ("mode", "layers", "tensors", "compared", "exact")}
            poison = rec["runs"][0]["poison_independent"]
            print(f"{path.name}: {rec['mode']}, {rec['layers']} layers, {rec['exact']} of {rec['compared']} tensors "
                  f"bit-exact, poison-independent {poison} ({time.perf_counter() - t1:.0f} s)", flush=True)
    (a.out / "summary.json").write_text(json.dumps({"provenance": provenance, "models": summary}, indent=1) + "\n")
    done = [s for s in summary.values() if isinstance(s, dict)]
    print(f"{len(done)} models, {sum(s['layers'] for s in done)} layers, {sum(s['exact'] for s in done)} of "
          f"{sum(s['compared'] for s in done)} tensors bit-exact ({time.perf_counter() - t0:.0f} s)")
    return 0 if all(s["exact"] == s["compared"] for s in done) else 1


if __name__ == "__main__":
    sys.exit(main())
