"""Speed on real models against LiteRT and onnxruntime: batches, threads, XS3, import and memory (issue 22).

    python bench/speed_real.py [--model INT8.tflite] [--landmark FLOAT.tflite] [--rounds 7] [--quick]
                               [--only mobilenet|small|landmark|xs3] [--batches 1,8] [--load]

``--model`` defaults to ``models/real/keras_mobilenet_v2_1.0_224_int8.tflite``
(the stock keras MobileNetV2 1.0 224, int8 I/O); any int8 TFLite image
classifier of the same family works (e.g. the 0.35-width stand-in
``/tmp/mb/mobilenet_v2_int8_224.tflite`` written by
``models/make_mobilenet.py --size 224 --out /tmp/mb``). Every line names the
model file with its MACs and parameters per image, counted from the TFLite
graph (MACs: conv / depthwise / fully-connected weights x output pixels;
parameters: their weights and biases, and PReLU slopes), so figures of
different models are never confused.

What is measured, all in one process on one machine, each figure a ratio
against a reference runtime timed in the same process:

1. ``mobilenet`` - the int8 model at batch 1, 2, 4, 8 and 1 and 2 threads:
   our engine (``hx.prepare(hx.import_model(path, input_shapes={input:
   (b, H, W, C)}))``, threads through ``$HEXNN_BLAS_THREADS``, which it reads
   at each run), LiteRT (``Interpreter(num_threads=n)``,
   ``resize_tensor_input`` + ``allocate_tensors`` for the batch) and
   onnxruntime (``intra_op_num_threads=n``) on two quantized ONNX twins.
   Only the int8 TFLite is committed, so the twins are built here, in a
   temporary folder: :func:`onnx_twin.float_onnx` rebuilds the float graph
   from the int8 file (dequantized weights and biases, dynamic batch), which
   is checked against LiteRT running the int8 model (same top-1 on test
   photos; also counted: top-1 among LiteRT's tied best classes, since an
   int8 softmax of an untrained model ties, and the largest difference in
   output quanta), then ``quantize_static`` makes it QOperator and QDQ
   (``per_channel=True``, calibrated on 8 other photo crops; QOperator with
   uint8 activations and int8 weights, the form onnxruntime's guide
   recommends on x86-64 - with its default int8 activations its QOperator
   kernels are ~5x slower here; QDQ with onnxruntime's defaults). Time per image is reported for each batch; the
   engine's batch-b outputs are checked to equal its batch-1 outputs.
   Import + prepare is timed in this process (first call and median) and,
   with the peak RSS of one run, in a fresh subprocess (cold).
2. ``small`` - the small int8 models issue 37 names, batch 1, one thread, engine against LiteRT
   (XNNPACK) interleaved: DS-CNN keyword spotting (``models/real/keras_ds_cnn_int8.tflite``) and
   person detection, MobileNet v1 0.25 96x96 (``models/real/keras_person_detect_int8.tflite``), each
   on a photo crop mapped onto its int8 input range; the engine's outputs are compared with LiteRT's.
3. ``landmark`` - a float model with run-time ranges,
   ``models/real/mediapipe_face_landmark.tflite`` (192x192x3 in [0, 1]):
   the engine (``hx.prepare(hx.import_model(path))``) against LiteRT float,
   same photo crop, 1 and 2 threads.
4. ``xs3`` - ``hexnn_import.xs3.run.XS3Runner`` (the lowered layers on the
   simulated XS3 kernels) against the engine on the int8 model at batch 1;
   with ``--load`` again while a subprocess runs a pure busy loop, keeping
   one core busy (the issue's loaded-machine case).

How (the habits of bench/engine_speed.py): the runtimes of one case are timed
in rounds, each round giving every runtime a few untimed runs (to warm its
caches and threads again; fewer for big batches) and then one timed run, so
load changes on a busy machine spread over all runtimes; the figure is the
median of ``--rounds`` rounds (default 7, at least 7 unless ``--quick``).
The onnxruntime session lives only through its own runs in a round
(:class:`engine_speed.OrtRuntime` says why: its spinning worker threads
would slow whatever runs next). ``$HEXNN_BLAS_THREADS`` is set for the
engine's runs only.

Why: the issue asks how far the engine is from the runtimes people use, on
the real full-size model, not a toy: per thread count, per batch (does
batching pay), for a float model with ranges found at run time, for the XS3
path, and at import time and in memory. The ``setup`` line names the CPU
and its vector flags (AVX2, AVX-512, VNNI: the kernels the runtimes can use depend on them). Prints JSON
lines, one per measurement, and a final ``summary`` line with issue 37's targets (engine / LiteRT on
MobileNetV2 <= 2x without VNNI, <= 3x with it; DS-CNN and person detection <= 5x; the float landmark
model <= 8x) and the earlier ones:
engine / onnxruntime-QOperator <= 4x at 1 and at 2 threads (batch 1), float
face landmark engine / LiteRT <= 30x, batch 8 time per image <= batch 1's,
XS3 / engine <= 1.2x (and under ``--load``), import + prepare < 0.15 s,
peak RSS < 300 MB. ``--quick`` (3 rounds, batches 1 and 8) keeps a run
short.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_speed import WARM_RUNS, OrtRuntime, Runtime, emit, timed, xs3_runner  # noqa: E402

REAL_MODEL = ROOT / "models" / "real" / "keras_mobilenet_v2_1.0_224_int8.tflite"
STAND_IN = Path("/tmp/mb/mobilenet_v2_int8_224.tflite")
LANDMARK = ROOT / "models" / "real" / "mediapipe_face_landmark.tflite"
SMALL_MODELS = (ROOT / "models" / "real" / "keras_ds_cnn_int8.tflite",
                ROOT / "models" / "real" / "keras_person_detect_int8.tflite")
THREADS_ENV = "HEXNN_BLAS_THREADS"

#: The issue's targets.
MAX_RATIO_ORT_QOP = 4.0
MAX_RATIO_LANDMARK = 30.0
MAX_RATIO_XS3 = 1.2
MAX_IMPORT_PREPARE_S = 0.15
MAX_PEAK_MB = 300.0
#: Issue 37's targets against LiteRT (one thread, batch 1): MobileNetV2 without / with VNNI, small int8, landmark.
MAX_LITERT_MOBILENET = {False: 2.0, True: 3.0}
MAX_LITERT_SMALL = 5.0
MAX_LITERT_LANDMARK = 8.0
#: Test photos for the twin's top-1 check.
CHECK_IMAGES = 8


# ------------------------------------------------------------------------------------------------ models, inputs

def macs_params(path: Path) -> dict[str, Any]:
    """MACs per image and parameters of a TFLite model, counted from its graph.

    MACs: conv / depthwise / fully-connected weights x output pixels (per
    image); parameters: those layers' weights and biases and PReLU slopes
    (batch-norm folded away, as in the file).
    """
    from hexnn_import.importers.tflite.reader import read_tflite

    m = read_tflite(path)
    macs = params = 0
    for op in m.operators:
        if op.opname in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            out = m.tensors[op.outputs[0]].shape
            w = math.prod(m.tensors[op.inputs[1]].shape)
            if op.opname == "FULLY_CONNECTED":
                rows = math.prod(out[:-1]) // max(out[0], 1)
            else:
                rows = out[1] * out[2]
            macs += rows * w
            params += w + (math.prod(m.tensors[op.inputs[2]].shape) if len(op.inputs) > 2 and op.inputs[2] >= 0
                           else 0)
        elif op.opname == "PRELU":
            params += math.prod(m.tensors[op.inputs[1]].shape)
    return {"model": path.name, "macs": int(macs), "params": int(params)}


def photos(n: int, h: int, w: int, c: int = 3, split: str = "test") -> np.ndarray:
    """``n`` crops of the repository's two sample photographs, float NHWC in [0, 1] (seeded noise without them)."""
    try:
        from hexnn_import.testing.photos import photo_batch

        return (photo_batch(n, h, w, c, split=split) / 255.0).astype(np.float32)
    except Exception:  # noqa: BLE001 - no photos: smooth seeded noise
        rng = np.random.default_rng({"test": 1, "calib": 2}.get(split, 3))
        return (0.5 + 0.5 * np.tanh(rng.normal(0, 1, (n, h, w, c)))).astype(np.float32)


class Int8Model:
    """The int8 model's input: quantization, shape, and photos mapped onto its int8 input range."""

    def __init__(self, path: Path):
        from ai_edge_litert.interpreter import Interpreter

        self.path = path
        lite = Interpreter(model_path=str(path))
        d = lite.get_input_details()[0]
        self.input_name = d["name"]
        self.shape = tuple(int(v) for v in d["shape"])
        self.dtype = d["dtype"]
        if self.dtype not in (np.int8, np.uint8):
            raise SystemExit(f"{path.name}: input is {np.dtype(self.dtype).name}; this bench wants int8 I/O")
        self.scale, self.zp = float(d["quantization"][0]), int(d["quantization"][1])
        info = np.iinfo(self.dtype)
        self.qmin, self.qmax = int(info.min), int(info.max)

    def real_range(self) -> tuple[float, float]:
        return (self.qmin - self.zp) * self.scale, (self.qmax - self.zp) * self.scale

    def float_images(self, n: int, split: str = "test") -> np.ndarray:
        """Photo crops scaled onto the input's real range ([-1, 1] for the keras MobileNets)."""
        lo, hi = self.real_range()
        _, h, w, c = self.shape
        return (lo + photos(n, h, w, c, split) * (hi - lo)).astype(np.float32)

    def quantize(self, x: np.ndarray) -> np.ndarray:
        return np.clip(np.round(x / self.scale) + self.zp, self.qmin, self.qmax).astype(self.dtype)

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        return ((q.astype(np.float32) - self.zp) * self.scale).astype(np.float32)


def litert_interpreter(path: Path, threads: int, batch: int | None = None) -> Any:
    """A LiteRT interpreter (default XNNPACK delegate) with ``threads`` threads, resized to ``batch``."""
    from ai_edge_litert.interpreter import Interpreter

    lite = Interpreter(model_path=str(path), num_threads=threads)
    if batch is not None:
        d = lite.get_input_details()[0]
        if int(d["shape"][0]) != batch:
            lite.resize_tensor_input(d["index"], [batch] + [int(v) for v in d["shape"][1:]])
    lite.allocate_tensors()
    return lite


def litert_run(lite: Any, x: np.ndarray) -> list[np.ndarray]:
    lite.set_tensor(lite.get_input_details()[0]["index"], x)
    lite.invoke()
    return [lite.get_tensor(o["index"]) for o in lite.get_output_details()]


# -------------------------------------------------------------------------------------------------- runtimes

class EngineRuntime(Runtime):
    """``fn`` (our engine's run, or the XS3 runner's) with ``$HEXNN_BLAS_THREADS`` = ``threads`` during its runs."""

    def __init__(self, fn: Callable[[], Any], threads: int):
        super().__init__(fn)
        self.threads = threads
        self.saved: str | None = None

    def open(self) -> None:
        self.saved = os.environ.get(THREADS_ENV)
        os.environ[THREADS_ENV] = str(self.threads)

    def close(self) -> None:
        if self.saved is None:
            os.environ.pop(THREADS_ENV, None)
        else:
            os.environ[THREADS_ENV] = self.saved


class OrtThreads(OrtRuntime):
    """:class:`engine_speed.OrtRuntime` with ``intra_op_num_threads`` = ``threads`` (other options default)."""

    def __init__(self, ort: Any, path: Path, x_nchw: np.ndarray, threads: int):
        super().__init__(ort, path, x_nchw)
        self.threads = threads

    def open(self) -> None:
        so = self.ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        self.sess = self.ort.InferenceSession(str(self.path), so, providers=["CPUExecutionProvider"])
        self.feed = {self.sess.get_inputs()[0].name: self.x}


def interleaved(runtimes: dict[str, Runtime], rounds: int, warm: int) -> tuple[dict[str, list[float]],
                                                                               dict[str, float]]:
    """Per-round times (ms) of every runtime, timed in interleaved rounds, and each one's first run."""
    first: dict[str, float] = {}
    for k, rt in runtimes.items():  # first runs (caches, first-run range work, allocation)
        rt.open()
        first[k] = timed(rt.run)
        rt.close()
    times: dict[str, list[float]] = {k: [] for k in runtimes}
    for _ in range(rounds):
        for k, rt in runtimes.items():
            rt.open()
            for _ in range(warm):
                rt.run()
            times[k].append(timed(rt.run))
            rt.close()
    gc.collect()
    return times, first


def med(times: dict[str, list[float]], key: str) -> float | None:
    return statistics.median(times[key]) if times.get(key) else None


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def warm_runs(batch: int) -> int:
    """Untimed runs per round: engine_speed's 3 at batch 1, fewer when one run is already a batch of images."""
    return max(1, round(WARM_RUNS / batch))


class BusyLoad:
    """A subprocess running a pure busy loop (one core kept busy) while the ``with`` block runs."""

    def __enter__(self) -> "BusyLoad":
        self.proc = subprocess.Popen([sys.executable, "-c", "while True:\n    pass"])
        time.sleep(0.5)  # let it reach full speed
        return self

    def __exit__(self, *exc: Any) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ----------------------------------------------------------------------------------------------- measurements

def import_prepare(path: Path, rounds: int, label: dict[str, Any]) -> dict[str, Any]:
    """Import + prepare in this process: the first call and the median of ``rounds`` more."""
    import hexnn_import as hx

    t: list[float] = []
    for _ in range(rounds + 1):
        t0 = time.perf_counter()
        graph = hx.prepare(hx.import_model(path))
        t.append(time.perf_counter() - t0)
    rec = {"measure": "import_prepare", **label, "first_s": t[0], "median_s": statistics.median(t[1:]),
           "min_s": min(t[1:]), "rounds": rounds, "nodes": len(graph.nodes)}
    emit(rec)
    return rec


def cold_subprocess(path: Path, x: np.ndarray, label: dict[str, Any]) -> dict[str, Any]:
    """In a fresh subprocess: import + prepare (cold: its first call) and the peak RSS of one run
    (``ru_maxrss``, with the peak and the current RSS after the imports and after prepare for context)."""
    code = r'''
import json, resource, sys, time
import numpy as np
import hexnn_import as hx
rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def now():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
x = np.load(sys.argv[2])
base, base_now = rss(), now()
t0 = time.perf_counter()
graph = hx.prepare(hx.import_model(sys.argv[1]))
cold = time.perf_counter() - t0
after_prepare, after_prepare_now = rss(), now()
runner = hx.Runner(graph)
t0 = time.perf_counter()
runner.run({graph.inputs[0].name: x})
run_s = time.perf_counter() - t0
print(json.dumps({"cold_import_prepare_s": cold, "first_run_s": run_s, "peak_rss_mb": rss(),
                  "peak_rss_after_imports_mb": base, "peak_rss_after_prepare_mb": after_prepare,
                  "rss_now_after_imports_mb": base_now, "rss_now_after_prepare_mb": after_prepare_now,
                  "rss_now_after_run_mb": now()}))
'''
    with tempfile.TemporaryDirectory() as tmp:
        xp = Path(tmp) / "x.npy"
        np.save(xp, x)
        env = dict(os.environ, **{THREADS_ENV: "1"})
        done = subprocess.run([sys.executable, "-c", code, str(path), str(xp)], capture_output=True, text=True,
                              check=False, env=env)
    if done.returncode != 0:
        rec = {"measure": "cold_subprocess", **label, "error": done.stderr.strip().splitlines()[-1:]}
    else:
        rec = {"measure": "cold_subprocess", **label, **json.loads(done.stdout.strip().splitlines()[-1])}
    emit(rec)
    return rec


def build_twins(model: Int8Model, tmp: Path, label: dict[str, Any]) -> dict[str, Path]:
    """The float twin rebuilt from the int8 file (checked against LiteRT int8) and its QOperator / QDQ twins."""
    import onnx
    import onnxruntime as ort

    from onnx_twin import float_onnx, quantized_onnx

    t0 = time.perf_counter()
    fm = float_onnx(model.path, dynamic_batch=True)
    paths = {"float": tmp / "twin_float.onnx"}
    onnx.save(fm, paths["float"])
    calib = model.float_images(8, "calib")
    # QOperator as onnxruntime recommends it on x86-64 (uint8 activations, int8 weights: U8S8); with its
    # defaults (int8 activations) its QOperator kernels run ~5x slower here, which would flatter the engine
    for fmt, key in (("QOperator", "ort_qoperator"), ("QDQ", "ort_qdq")):
        paths[key] = quantized_onnx(fm, calib, tmp / f"twin_{key}.onnx", fmt, explicit_int8=False,
                                    u8s8=fmt == "QOperator")
    build_s = time.perf_counter() - t0

    # the check: same top-1 as LiteRT on the int8 model, one photo at a time (LiteRT at its own batch)
    q = model.quantize(model.float_images(CHECK_IMAGES))
    x_nchw = np.ascontiguousarray(model.dequantize(q).transpose(0, 3, 1, 2))
    lite = litert_interpreter(model.path, 1)
    out = lite.get_output_details()[0]
    o_scale, o_zp = out["quantization"]
    ref = np.concatenate([litert_run(lite, q[i:i + 1])[0] for i in range(len(q))]).astype(np.float32)
    if o_scale:
        ref = (ref - o_zp) * o_scale
    ref = ref.reshape(len(q), -1)
    # an int8 output can tie at its maximum (an untrained model's softmax is near-uniform): a twin's top-1
    # among LiteRT's tied best classes is counted apart from an exactly equal top-1
    ties = ref >= ref.max(1, keepdims=True) - (float(o_scale) / 2 if o_scale else 0.0)
    rec: dict[str, Any] = {"measure": "twin_check", **label, "images": len(q), "build_s": build_s,
                           "litert_top1": ref.argmax(1).tolist(), "litert_tied_best": ties.sum(1).tolist()}
    for key, p in paths.items():
        sess = ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
        y = sess.run(None, {sess.get_inputs()[0].name: x_nchw})[0].reshape(len(q), -1)
        top = y.argmax(1)
        rec[f"{key}_same_top1"] = int(np.sum(top == ref.argmax(1)))
        rec[f"{key}_top1_among_litert_best"] = int(np.sum(ties[np.arange(len(q)), top]))
        rec[f"{key}_max_abs_diff"] = float(np.abs(y - ref).max())
        if o_scale:
            rec[f"{key}_max_abs_diff_quanta"] = float(np.abs(y - ref).max() / o_scale)
    rec["output_range"] = [float(ref.min()), float(ref.max())]
    emit(rec)
    del lite
    return paths


def mobilenet(path: Path, batches: list[int], rounds: int, label: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Section 1 (module doc): per batch and thread count, engine vs LiteRT vs the two onnxruntime twins."""
    import onnxruntime as ort

    import hexnn_import as hx

    model = Int8Model(path)
    res: dict[str, Any] = {"configs": {}}
    res["import_prepare"] = import_prepare(path, rounds, label)
    x1 = model.quantize(model.float_images(1))
    res["cold"] = cold_subprocess(path, x1, label)

    twins = build_twins(model, tmp, label)
    images = model.quantize(model.float_images(max(batches)))
    _, h, w, c = model.shape
    single = hx.Runner(hx.prepare(hx.import_model(path)))
    name = single.graph.inputs[0].name
    ref_rows = [next(iter(single.run({name: images[i:i + 1]}).values())) for i in range(len(images))]

    for b in batches:
        x = np.ascontiguousarray(images[:b])
        x_nchw = np.ascontiguousarray(model.dequantize(x).transpose(0, 3, 1, 2))
        notes: dict[str, str] = {}
        try:
            graph = hx.prepare(hx.import_model(path, input_shapes={name: (b, h, w, c)}))
            runner: Any = hx.Runner(graph)
            y = next(iter(runner.run({name: x}).values()))
            batch_ok = bool(all(np.array_equal(y[i:i + 1], ref_rows[i]) for i in range(b)))
        except Exception as exc:  # noqa: BLE001 - a refused batch is a finding to report
            runner, batch_ok = None, None
            notes["engine"] = f"{type(exc).__name__}: {exc}"
        for n in (1, 2):
            runtimes: dict[str, Runtime] = {}
            if runner is not None:
                runtimes["engine"] = EngineRuntime(lambda runner=runner: runner.run({name: x}), n)
            try:
                lite = litert_interpreter(path, n, b)
                runtimes["litert"] = Runtime(lambda lite=lite: litert_run(lite, x))
            except Exception as exc:  # noqa: BLE001
                notes["litert"] = f"{type(exc).__name__}: {str(exc).strip()}"
            for key in ("ort_qoperator", "ort_qdq"):
                runtimes[key] = OrtThreads(ort, twins[key], x_nchw, n)
            times, first = interleaved(runtimes, rounds, warm_runs(b))
            per_img = {k: (med(times, k) / b if med(times, k) is not None else None) for k in
                       ("engine", "litert", "ort_qoperator", "ort_qdq")}
            rec = {"measure": "mobilenet", **label, "batch": b, "threads": n, "rounds": rounds,
                   **{f"{k}_ms_per_image": v for k, v in per_img.items()},
                   "ratio_engine_vs_ort_qoperator": ratio(per_img["engine"], per_img["ort_qoperator"]),
                   "ratio_engine_vs_ort_qdq": ratio(per_img["engine"], per_img["ort_qdq"]),
                   "ratio_engine_vs_litert": ratio(per_img["engine"], per_img["litert"]),
                   "engine_first_ms": first.get("engine"), "engine_batch_rows_equal_batch1": batch_ok}
            if notes:
                rec["refused"] = notes
            emit(rec)
            res["configs"][(b, n)] = rec
            runtimes.clear()
            gc.collect()

    # our engine against LiteRT, batch 1, same int8 input
    lite = litert_interpreter(path, 1)
    mine = np.concatenate([r.reshape(1, -1) for r in ref_rows]).astype(np.int32)
    ref = np.concatenate([litert_run(lite, images[i:i + 1])[0].reshape(1, -1)
                          for i in range(len(images))]).astype(np.int32)
    diff = np.abs(mine - ref)
    emit({"measure": "agreement_vs_litert", **label, "images": len(images), "exact_share": float(np.mean(diff == 0)),
          "max_abs_diff": int(diff.max()), "same_top1": int(np.sum(mine.argmax(1) == ref.argmax(1)))})
    return res


def small(paths: tuple[Path, ...], rounds: int) -> dict[str, Any]:
    """Section 2 (module doc): each small int8 model, engine vs LiteRT, batch 1, one thread."""
    import hexnn_import as hx

    res: dict[str, Any] = {}
    for path in paths:
        label = macs_params(path)
        model = Int8Model(path)
        x = model.quantize(model.float_images(1))
        runner = hx.Runner(hx.prepare(hx.import_model(path)))
        name = runner.graph.inputs[0].name
        lite = litert_interpreter(path, 1)
        runtimes: dict[str, Runtime] = {"engine": EngineRuntime(lambda runner=runner: runner.run({name: x}), 1),
                                        "litert": Runtime(lambda lite=lite: litert_run(lite, x))}
        times, first = interleaved(runtimes, rounds, WARM_RUNS)
        mine = next(iter(runner.run({name: x}).values())).astype(np.int32).reshape(-1)
        ref = litert_run(lite, x)[0].astype(np.int32).reshape(-1)
        rec = {"measure": "small", **label, "batch": 1, "threads": 1, "rounds": rounds,
               "engine_ms": med(times, "engine"), "litert_ms": med(times, "litert"),
               "ratio_engine_vs_litert": ratio(med(times, "engine"), med(times, "litert")),
               "engine_first_ms": first["engine"], "engine_vs_litert_max_abs_diff": int(np.abs(mine - ref).max()),
               "load_average": list(os.getloadavg())}
        emit(rec)
        res[path.name] = rec
    return res


def cpu_flags() -> dict[str, Any]:
    """The CPU's model name and the vector flags that decide the runtimes' integer kernels (``/proc/cpuinfo``, read
    by the engine's own choice: :func:`hexnn_import.ops.compiled_int8.cpu_flags`)."""
    from hexnn_import.ops.compiled_int8 import cpu_flags as flags_of_cpu, has_vnni

    flags = flags_of_cpu()
    if not flags:
        return {"cpu": None, "cpu_flags": None, "vnni": None}
    names = [line.partition(":")[2].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
             if line.startswith("model name")]
    want = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8")
    return {"cpu": names[0] if names else None, "cpu_flags": [f for f in want if f in flags], "vnni": has_vnni()}


def landmark(path: Path, rounds: int) -> dict[str, Any]:
    """Section 3 (module doc): the float face-landmark model, engine vs LiteRT float, 1 and 2 threads."""
    import hexnn_import as hx

    label = macs_params(path)
    emit({"measure": "model", "section": "landmark", **label})
    graph = hx.prepare(hx.import_model(path))
    runner = hx.Runner(graph)
    gin = graph.inputs[0]
    x = photos(1, *gin.shape[1:4]).astype(np.float32)  # 192x192x3 in [0, 1]
    res: dict[str, Any] = {}
    for n in (1, 2):
        lite = litert_interpreter(path, n)
        runtimes: dict[str, Runtime] = {"engine": EngineRuntime(lambda: runner.run({gin.name: x}), n),
                                        "litert": Runtime(lambda lite=lite: litert_run(lite, x))}
        times, first = interleaved(runtimes, rounds, WARM_RUNS)
        rec = {"measure": "landmark", **label, "batch": 1, "threads": n, "rounds": rounds,
               "engine_ms": med(times, "engine"), "litert_ms": med(times, "litert"),
               "ratio_engine_vs_litert": ratio(med(times, "engine"), med(times, "litert")),
               "engine_first_ms": first["engine"]}
        emit(rec)
        res[n] = rec
    # agreement: each output's largest difference and LiteRT's range (small outputs: both values)
    mine = runner.run({gin.name: x})
    lite = litert_interpreter(path, 1)
    ref = litert_run(lite, x)
    agree: dict[str, Any] = {}
    for det, r in zip(lite.get_output_details(), ref):
        y = mine.get(det["name"])
        if y is None:
            agree[det["name"]] = "not among the engine's outputs"
            continue
        y = np.asarray(y, np.float32).reshape(r.shape)
        rec_o: dict[str, Any] = {"max_abs_diff": float(np.abs(y - r).max()),
                                 "litert_range": [float(r.min()), float(r.max())]}
        if r.size <= 4:
            rec_o.update(engine=y.reshape(-1).tolist(), litert=r.reshape(-1).tolist())
        agree[det["name"]] = rec_o
    emit({"measure": "landmark_agreement_vs_litert", **label, "outputs": agree})
    return res


def xs3(path: Path, rounds: int, load: bool, label: dict[str, Any]) -> dict[str, Any]:
    """Section 4 (module doc): the XS3 path against the engine, batch 1, one BLAS thread; again under load."""
    import hexnn_import as hx

    model = Int8Model(path)
    x = model.quantize(model.float_images(1))
    t0 = time.perf_counter()
    fn, note = xs3_runner(path)
    build_s = time.perf_counter() - t0
    if fn is None:
        emit({"measure": "xs3", **label, "unavailable": note})
        return {}
    runner = hx.Runner(hx.prepare(hx.import_model(path)))
    name = runner.graph.inputs[0].name
    res: dict[str, Any] = {}
    cases = [("idle", False)] + ([("busy_core", True)] if load else [])
    for case, busy in cases:
        runtimes: dict[str, Runtime] = {"xs3": EngineRuntime(lambda: fn(x), 1),
                                        "engine": EngineRuntime(lambda: runner.run({name: x}), 1)}
        if busy:
            with BusyLoad():
                times, first = interleaved(runtimes, rounds, WARM_RUNS)
        else:
            times, first = interleaved(runtimes, rounds, WARM_RUNS)
        rec = {"measure": "xs3", **label, "load": case, "batch": 1, "threads": 1, "rounds": rounds,
               "xs3_ms": med(times, "xs3"), "engine_ms": med(times, "engine"),
               "ratio_xs3_vs_engine": ratio(med(times, "xs3"), med(times, "engine")),
               "xs3_first_ms": first["xs3"], "xs3_build_s": build_s, "note": note}
        emit(rec)
        res[case] = rec
    ref = litert_run(litert_interpreter(path, 1), x)[0].astype(np.int32)
    y = next(iter(fn(x).values())).astype(np.int32)
    d = np.abs(y.reshape(-1) - ref.reshape(-1))
    emit({"measure": "xs3_agreement_vs_litert", **label, "exact_share": float(np.mean(d == 0)),
          "max_abs_diff": int(d.max())})
    return res


# -------------------------------------------------------------------------------------------------------- main

def summary(mb: dict[str, Any] | None, lm: dict[str, Any] | None, x3: dict[str, Any] | None,
            label: dict[str, Any] | None, batches: list[int], load: bool, sm: dict[str, Any] | None = None,
            vnni: bool = False) -> dict[str, Any]:
    """The final line: the issues' targets, each with its figure and pass / fail (None: not measured)."""
    s: dict[str, Any] = {"measure": "summary", **(label or {})}

    def check(key: str, value: float | None, ok: bool | None) -> None:
        s[key] = value
        s[f"target_{key}_ok"] = ok

    if mb is not None:
        for n in (1, 2):
            r = mb["configs"].get((batches[0], n), {}).get("ratio_engine_vs_ort_qoperator")
            check(f"ratio_engine_vs_ort_qoperator_{n}t", r, None if r is None else r <= MAX_RATIO_ORT_QOP)
            b1 = mb["configs"].get((1, n), {}).get("engine_ms_per_image")
            b8 = mb["configs"].get((8, n), {}).get("engine_ms_per_image")
            check(f"batch8_vs_batch1_per_image_{n}t", ratio(b8, b1),
                  None if b1 is None or b8 is None else b8 <= b1)
        r = mb["configs"].get((batches[0], 1), {}).get("ratio_engine_vs_litert")
        check("ratio_engine_vs_litert_1t", r, None if r is None or batches[0] != 1 else r <= MAX_LITERT_MOBILENET[vnni])
        ip = mb["import_prepare"]["median_s"]
        check("import_prepare_s", ip, ip < MAX_IMPORT_PREPARE_S)
        s["cold_import_prepare_s"] = mb["cold"].get("cold_import_prepare_s")
        peak = mb["cold"].get("peak_rss_mb")
        check("peak_rss_mb", peak, None if peak is None else peak < MAX_PEAK_MB)
    for name, rec in (sm or {}).items():
        r = rec.get("ratio_engine_vs_litert")
        check(f"{Path(name).stem}_ratio_engine_vs_litert_1t", r, None if r is None else r <= MAX_LITERT_SMALL)
    if lm is not None:
        for n in (1, 2):
            r = lm.get(n, {}).get("ratio_engine_vs_litert")
            top = MAX_LITERT_LANDMARK if n == 1 else MAX_RATIO_LANDMARK
            check(f"landmark_ratio_engine_vs_litert_{n}t", r, None if r is None else r <= top)
    if x3 is not None:
        for case, key in (("idle", "ratio_xs3_vs_engine"), ("busy_core", "ratio_xs3_vs_engine_loaded")):
            if case == "busy_core" and not load:
                continue
            r = x3.get(case, {}).get("ratio_xs3_vs_engine")
            check(key, r, None if r is None else r <= MAX_RATIO_XS3)
    s["targets"] = {"engine_vs_ort_qoperator_max": MAX_RATIO_ORT_QOP, "landmark_engine_vs_litert_max":
                    MAX_RATIO_LANDMARK, "landmark_engine_vs_litert_1t_max": MAX_LITERT_LANDMARK,
                    "mobilenet_engine_vs_litert_1t_max": MAX_LITERT_MOBILENET[vnni],
                    "small_engine_vs_litert_1t_max": MAX_LITERT_SMALL, "batch8_per_image_vs_batch1_max": 1.0, "xs3_vs_engine_max": MAX_RATIO_XS3,
                    "import_prepare_s_max": MAX_IMPORT_PREPARE_S, "peak_rss_mb_max": MAX_PEAK_MB}
    oks = [v for k, v in s.items() if k.startswith("target_") and k.endswith("_ok")]
    s["all_measured_targets_met"] = all(v is True for v in oks) if oks else None
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=REAL_MODEL, help="int8 TFLite MobileNet (int8 I/O)")
    ap.add_argument("--landmark", type=Path, default=LANDMARK, help="float TFLite face-landmark model")
    ap.add_argument("--rounds", type=int, default=None,
                    help="interleaved rounds per case, medians (default 7; at least 7 unless --quick)")
    ap.add_argument("--quick", action="store_true", help="3 rounds, batches 1 and 8 only")
    ap.add_argument("--only", choices=("mobilenet", "small", "landmark", "xs3"), default=None,
                    help="run one section")
    ap.add_argument("--batches", default=None, help="MobileNet batches, comma-separated (default 1,2,4,8)")
    ap.add_argument("--load", action="store_true",
                    help="also time XS3 vs engine while a busy-loop subprocess keeps one core busy")
    args = ap.parse_args(argv)
    rounds = args.rounds if args.rounds is not None else (3 if args.quick else 7)
    if not args.quick:
        rounds = max(7, rounds)
    batches = [1, 8] if args.quick else [1, 2, 4, 8]
    if args.batches:
        batches = [int(b) for b in args.batches.split(",")]
    sections = [args.only] if args.only else ["mobilenet", "small", "landmark", "xs3"]

    import onnxruntime as ort

    t_start = time.perf_counter()
    cpu = cpu_flags()
    emit({"measure": "setup", "cpus": os.cpu_count(), **cpu, "load_average": list(os.getloadavg()),
          "numpy": np.__version__, "onnxruntime": ort.__version__, "litert": _version("ai-edge-litert"),
          "rounds": rounds, "batches": batches, "sections": sections, "load": args.load})
    label = None
    if "mobilenet" in sections or "xs3" in sections:
        if not args.model.is_file():
            hint = f" (until it exists: --model {STAND_IN})" if args.model == REAL_MODEL else ""
            raise SystemExit(f"{args.model}: not found{hint}")
        label = macs_params(args.model)
        emit({"measure": "model", "section": "mobilenet", **label,
              "stand_in": args.model.resolve() != REAL_MODEL.resolve()})
    mb = lm = x3 = sm = None
    with tempfile.TemporaryDirectory(prefix="speed_real_") as tmp:
        if "mobilenet" in sections:
            mb = mobilenet(args.model, batches, rounds, label, Path(tmp))
    if "small" in sections:
        sm = small(SMALL_MODELS, rounds)
    if "landmark" in sections:
        lm = landmark(args.landmark, rounds)
    if "xs3" in sections:
        x3 = xs3(args.model, rounds, args.load, label)
    s = summary(mb, lm, x3, label, batches, args.load, sm, bool(cpu["vnni"]))
    s["load_average_end"] = list(os.getloadavg())
    s["wall_s"] = time.perf_counter() - t_start
    emit(s)
    return 0


def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    sys.exit(main())
