"""Full-int8 versions of the three pretrained MediaPipe float models, made by Google's ai-edge-quantizer.

Run from the repository root, in the venv with ai-edge-quantizer (never a project dependency):

    /work/venv-tf2/bin/python models/real/make_aeq_mediapipe.py [face_detection_short_range face_landmark selfie_segmentation]

For each ``mediapipe_<name>.tflite`` (listed in ``manifest_keras.json``) this writes
``mediapipe_<name>_aeq_int8.tflite``: ``ai_edge_quantizer.recipe.static_wi8_ai8()`` (int8 weights, int8
activations, min/max calibration), calibrated on ``N_CALIB`` ``photo_batch(split="calib")`` crops normalized per
the manifest (float = pixel * scale + offset). The files are written as the quantizer emits them: int8 model
inputs and outputs (quantize the normalized float input with the input tensor's scale/zero point; dequantize the
outputs). Ops the quantizer does not support for int8 stay float between QUANTIZE/DEQUANTIZE: PRELU in
face_landmark, the MediaPipe custom op ``Convolution2DTransposeBias`` in selfie_segmentation (manifest
``float_ops``).

The MediaPipe files need up to three lossless preparations before the quantizer accepts them (done in memory; the
float reference stays the unchanged MediaPipe file):

* they have no SignatureDef, which ai-edge-quantizer's calibrator needs: one ``serving_default`` signature is
  added with the subgraph's inputs and outputs (tensor names as keys);
* their operator codes carry only the old ``deprecated_builtin_code`` field (``builtin_code`` is 0 = ADD), and
  ai-edge-quantizer reads ``builtin_code`` (it would treat every op as ADD): ``builtin_code`` is set from it;
* their weights are float16 buffers expanded by DEQUANTIZE ops: each such constant DEQUANTIZE is folded (its
  output tensor gets the float32 copy of the fp16 buffer, the op and the fp16 tensor are removed), so the
  consumers see constant float32 weights the quantizer can quantize. fp16 -> fp32 is exact, so the prepared float model computes the
  same values as the MediaPipe file.

Each int8 file is measured against its MediaPipe float file in ai-edge-litert on ``N_TEST``
``photo_batch(split="test")`` crops: SQNR in dB of every dequantized output (``int8_vs_float_db`` in
``manifest_mediapipe_aeq.json``, merged by file name).
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC_MANIFEST = HERE / "manifest_keras.json"
MANIFEST = HERE / "manifest_mediapipe_aeq.json"
N_CALIB = 48
N_TEST = 16
RECIPE = "static_wi8_ai8"
NAMES = ["face_detection_short_range", "face_landmark", "selfie_segmentation"]

_spec = importlib.util.spec_from_file_location("photos", ROOT / "hexnn_import" / "testing" / "photos.py")
photos = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(photos)


def versions() -> str:
    from importlib.metadata import version
    return f"ai-edge-quantizer {version('ai-edge-quantizer')}, ai-edge-litert {version('ai-edge-litert')}"


def prepare(path: Path) -> tuple[bytes, dict]:
    """The float model with fp16 DEQUANTIZE weights folded to float32 and a ``serving_default`` signature."""
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils as fbu
    model = fbu.read_model_from_bytearray(bytearray(path.read_bytes()))
    sg = model.subgraphs[0]
    codes = [fbu.get_builtin_code_from_operator_code(c) for c in model.operatorCodes]
    fixed_codes = 0
    for c, code in zip(model.operatorCodes, codes):  # old files: only deprecated_builtin_code is set
        if c.builtinCode != code:
            c.builtinCode = code
            fixed_codes += 1
    producers = {o: i for i, op in enumerate(sg.operators) for o in op.outputs}
    folded, keep = 0, []
    for op in sg.operators:
        if codes[op.opcodeIndex] == schema.BuiltinOperator.DEQUANTIZE:
            src = sg.tensors[op.inputs[0]]
            buf = model.buffers[src.buffer]
            if src.type == schema.TensorType.FLOAT16 and op.inputs[0] not in producers and buf.data is not None \
                    and len(buf.data) > 0:
                data = np.frombuffer(np.asarray(buf.data, np.uint8).tobytes(), np.float16).astype(np.float32)
                nb = schema.BufferT()
                nb.data = np.frombuffer(data.tobytes(), np.uint8)
                model.buffers.append(nb)
                dst = sg.tensors[op.outputs[0]]
                dst.buffer = len(model.buffers) - 1
                dst.type = schema.TensorType.FLOAT32
                folded += 1
                continue
        keep.append(op)
    sg.operators = keep
    # drop the now unused fp16 tensors and their buffers (tensor and buffer indices are renumbered)
    used = set(sg.inputs) | set(sg.outputs) | {i for op in sg.operators for i in list(op.inputs) + list(op.outputs)
                                               if i >= 0}
    remap = {old: new for new, old in enumerate(i for i in range(len(sg.tensors)) if i in used)}
    sg.tensors = [t for i, t in enumerate(sg.tensors) if i in used]
    for op in sg.operators:
        op.inputs = [remap[i] if i >= 0 else i for i in op.inputs]
        op.outputs = [remap[i] for i in op.outputs]
    sg.inputs = [remap[i] for i in sg.inputs]
    sg.outputs = [remap[i] for i in sg.outputs]
    metas = list(model.metadata or [])
    bused = sorted({0} | {t.buffer for t in sg.tensors} | {m.buffer for m in metas})
    bremap = {old: new for new, old in enumerate(bused)}
    model.buffers = [model.buffers[i] for i in bused]
    for t in sg.tensors:
        t.buffer = bremap[t.buffer]
    for m in metas:
        m.buffer = bremap[m.buffer]
    sig = schema.SignatureDefT()
    sig.signatureKey = "serving_default"
    sig.subgraphIndex = 0

    def tmap(i):
        t = schema.TensorMapT()
        t.name = sg.tensors[i].name
        t.tensorIndex = i
        return t
    sig.inputs = [tmap(i) for i in sg.inputs]
    sig.outputs = [tmap(i) for i in sg.outputs]
    model.signatureDefs = [sig]
    data = bytes(fbu.convert_object_to_bytearray(model))
    info = {"folded_fp16_dequantize": folded, "fixed_opcodes": fixed_codes,
            "inputs": [sg.tensors[i].name.decode() if isinstance(sg.tensors[i].name, bytes) else sg.tensors[i].name
                       for i in sg.inputs]}
    return data, info


def _interp(model, resolver: str = "AUTO"):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kw = {"model_path": str(model)} if isinstance(model, Path) else {"model_content": bytes(model)}
    it = Interpreter(experimental_op_resolver_type=getattr(OpResolverType, resolver), **kw)
    it.allocate_tensors()
    return it


def run(model, x: np.ndarray) -> dict[str, np.ndarray]:
    """Outputs by name (dequantized if the model emits integers), one crop at a time, stacked."""
    it = _interp(model)
    d = it.get_input_details()[0]
    outs: dict[str, list] = {}
    for i in range(len(x)):
        xi = x[i:i + 1]
        if d["dtype"] != np.float32:
            s, z = d["quantization"]
            info = np.iinfo(d["dtype"])
            xi = np.clip(np.round(xi / s) + z, info.min, info.max)
        it.set_tensor(d["index"], xi.astype(d["dtype"]))
        it.invoke()
        for od in it.get_output_details():
            o = it.get_tensor(od["index"]).astype(np.float64)
            if od["dtype"] != np.float32:
                s, z = od["quantization"]
                o = (o - z) * s
            outs.setdefault(od["name"], []).append(o)
    return {k: np.concatenate(v) for k, v in outs.items()}


def sqnr_db(ref: np.ndarray, q: np.ndarray) -> float:
    noise = float(np.sum((ref - q) ** 2))
    sig = float(np.sum(ref ** 2))
    return round(float(10 * np.log10(sig / noise)), 1) if noise > 0 else float("inf")


def make(name: str, base: dict) -> dict:
    from ai_edge_quantizer import quantizer, recipe
    src = HERE / base["file"]
    fname = f"mediapipe_{name}_aeq_int8.tflite"
    inp = base["input"]
    prepared, info = prepare(src)
    x_cal = photos.photo_batch(N_CALIB, inp["height"], inp["width"], 3, split="calib")
    x_cal = (x_cal * inp["scale"] + inp["offset"]).astype(np.float32)
    in_name = info["inputs"][0]
    qt = quantizer.Quantizer(prepared)
    qt.load_quantization_recipe(getattr(recipe, RECIPE)())
    res = qt.calibrate({"serving_default": [{in_name: x_cal[i:i + 1]} for i in range(len(x_cal))]},
                       num_threads=2)
    out = qt.quantize(res, enable_progress_report=False)
    data = bytes(out.quantized_model)
    (HERE / fname).write_bytes(data)
    print(f"wrote {fname} {len(data)} bytes (folded {info['folded_fp16_dequantize']} fp16 DEQUANTIZE, "
          f"set builtin_code of {info['fixed_opcodes']} operator codes)", flush=True)

    x_test = photos.photo_batch(N_TEST, inp["height"], inp["width"], 3, split="test")
    x_test = (x_test * inp["scale"] + inp["offset"]).astype(np.float32)
    ref = run(src, x_test)
    prep = run(prepared, x_test)
    q = run(HERE / fname, x_test)
    prep_db = {k: sqnr_db(ref[k], prep[k]) for k in ref}
    db = {k: sqnr_db(ref[k], q[k]) for k in ref}
    print(f"  prepared float vs MediaPipe float: {prep_db}", flush=True)
    print(f"  {fname} int8 vs float: {db}", flush=True)
    it = _interp(HERE / fname)
    td = {t["index"]: t for t in it.get_tensor_details()}
    float_ops: dict[str, int] = {}
    for o in it._get_ops_details():  # ops left computing in float
        if o["op_name"] not in ("QUANTIZE", "DEQUANTIZE", "DELEGATE") and any(
                td[i]["dtype"] == np.float32 for i in o["inputs"] if i >= 0):
            float_ops[o["op_name"]] = float_ops.get(o["op_name"], 0) + 1
    io = {"input": [td[i]["dtype"].__name__ for i in it._interpreter.InputIndices()],
          "output": [td[i]["dtype"].__name__ for i in it._interpreter.OutputIndices()]}
    e = {"file": fname,
         "source": (f"{base['file']} ({base['source']}) -> prepared losslessly in memory (fp16 weights: "
                    f"{info['folded_fp16_dequantize']} constant DEQUANTIZE ops folded to float32; builtin_code set from "
                    f"deprecated_builtin_code in {info['fixed_opcodes']} operator codes; added signature "
                    f"'serving_default') -> ai_edge_quantizer recipe.{RECIPE}() (int8 weights per channel, int8 "
                    f"activations, {io['input'][0]} I/O), calibrated on {N_CALIB} photo crops photo_batch({N_CALIB}, {inp['height']}, "
                    f"{inp['width']}, 3, split='calib') * {inp['scale']:.8g} + {inp['offset']:g} ({versions()})"),
         "kind": base["kind"], "quant": f"ai-edge-quantizer-{RECIPE}", "float_reference": base["file"],
         "input": inp, "params": base.get("params"), "macs": base.get("macs")}
    if "counts" in base:
        e["counts"] = base["counts"]
    e.update({"io_dtypes": io, "float_ops": float_ops,
              "made_by": f"models/real/make_aeq_mediapipe.py {name} (venv with ai-edge-quantizer)",
              "int8_vs_float_db": db,
              "int8_vs_float_measured": f"ai-edge-litert OpResolverType.AUTO, {N_TEST} photo_batch(split='test') "
                                        "crops, SQNR of each dequantized output vs the MediaPipe float file"})
    return e


def manifest_update(entries: list[dict]) -> None:
    old = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else []
    by = {e["file"]: e for e in old}
    for e in entries:
        by[e["file"]] = e
    MANIFEST.write_text(json.dumps(sorted(by.values(), key=lambda e: e["file"]), indent=1) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    src = {e["file"]: e for e in json.loads(SRC_MANIFEST.read_text())}
    for n in sys.argv[1:] or NAMES:
        t0 = time.time()
        print(f"== {n}", flush=True)
        try:
            e = make(n, src[f"mediapipe_{n}.tflite"])
            manifest_update([e])
        except Exception as exc:  # report and go on with the next model
            import traceback
            traceback.print_exc()
            print(f"{n} failed: {type(exc).__name__}: {exc}", flush=True)
        print(f"   ({time.time() - t0:.0f} s)", flush=True)
