"""Check the example models in LiteRT against the float64 reference.

``python models/check_models.py`` checks the files in ``models/``;
``make_models.py`` calls :func:`check` on what it has just written.  For 64
seeded random inputs (not the calibration set) it runs the model in LiteRT
(TFLite's builtin kernels, intermediate tensors kept) and reports, per
activation, the error of the dequantized LiteRT value against the float
network fed the same (dequantized) input, in units of that tensor's scale
(LSB).  It fails if an error is large, if the classes disagree too often, or
if the output is degenerate (constant, mostly saturated, or using only a
small part of the integer range).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from float_net import ACTIVATIONS, FloatNet, forward, random_inputs  # noqa: E402

from hexnn_import.testing import dequantize, make_interpreter, quantize_per_tensor  # noqa: E402

CHECK_SEED = 7
CHECK_COUNT = 64
MAX_MEAN_LSB = 1.0      # mean |error| of any activation, in its LSBs
MAX_OUTPUT_LSB = 8.0    # worst |error| of the logits over all inputs
MIN_ARGMAX_AGREEMENT = 0.9
MIN_SPAN = 128          # output codes used (max - min) out of 255
MAX_SATURATED = 0.05    # fraction of output codes at qmin or qmax


def run_all_tensors(model: bytes, xs_float: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray],
                                                                   dict[str, tuple[float, int]]]:
    """Quantize each input, run it; return (dequantized inputs, stacked activations, their params)."""
    interp = make_interpreter(model, preserve_all_tensors=True)
    inp = interp.get_input_details()[0]
    index = {d["name"]: d["index"] for d in interp.get_tensor_details()}
    params = {d["name"]: d["quantization"] for d in interp.get_tensor_details() if d["name"] in ACTIVATIONS}
    in_scale, in_zp = inp["quantization"]
    got: dict[str, list[np.ndarray]] = {name: [] for name in ACTIVATIONS}
    for x in xs_float:
        interp.set_tensor(inp["index"], quantize_per_tensor(x[None], in_scale, in_zp, inp["dtype"]))
        interp.invoke()
        for name in ACTIVATIONS:
            got[name].append(np.array(interp.get_tensor(index[name])))
    stacked = {name: np.concatenate(v, axis=0) for name, v in got.items()}
    return dequantize(stacked["input"], in_scale, in_zp), stacked, params


def check_float(name: str, model: bytes, net: FloatNet) -> bool:
    """The float twin in LiteRT must match the float64 reference to float32 precision."""
    from hexnn_import.testing.litert import run_litert

    xs = random_inputs(np.random.default_rng(CHECK_SEED), 8).astype(np.float32)
    got = np.concatenate([run_litert(model, [x[None]])[0] for x in xs])
    want = forward(net, xs.astype(np.float64))["logits"]
    err = float(np.max(np.abs(got - want)))
    print(f"{name}: max |LiteRT - float64 reference| = {err:.2e}")
    return err < 1e-3


def check(name: str, model: bytes, net: FloatNet) -> bool:
    """Print a layer-by-layer report for ``model`` and return whether every criterion holds."""
    if "float" in name:
        return check_float(name, model, net)
    xs = random_inputs(np.random.default_rng(CHECK_SEED), CHECK_COUNT)
    xs_deq, got, params = run_all_tensors(model, xs)
    ref = forward(net, xs_deq)
    ok = True
    print(f"{name}: {'tensor':<12} {'scale':>10} {'zp':>5} {'mean LSB':>9} {'max LSB':>8}")
    for act in ACTIVATIONS:
        scale, zp = params[act]
        info = np.iinfo(got[act].dtype)
        # The reference is clamped to this tensor's representable range: saturating
        # there is the calibration's choice, not an arithmetic error.
        want = np.clip(ref[act].reshape(got[act].shape), (info.min - zp) * scale, (info.max - zp) * scale)
        err = np.abs(dequantize(got[act], scale, zp) - want) / scale
        print(f"{'':{len(name) + 1}} {act:<12} {scale:10.6f} {zp:5d} {err.mean():9.3f} {err.max():8.2f}")
        ok &= bool(err.mean() <= MAX_MEAN_LSB)
        if act == "logits":
            ok &= bool(err.max() <= MAX_OUTPUT_LSB)
    q = got["logits"].astype(np.int64)
    info = np.iinfo(got["logits"].dtype)
    span = int(q.max() - q.min())
    saturated = float(np.mean((q == info.min) | (q == info.max)))
    agree = float(np.mean(q.argmax(axis=1) == ref["logits"].argmax(axis=1)))
    print(f"  output codes {q.min()}..{q.max()} (span {span}), {len(np.unique(q))} distinct, "
          f"saturated {saturated:.1%}, argmax agreement with float {agree:.1%}")
    ok &= span >= MIN_SPAN and saturated <= MAX_SATURATED and agree >= MIN_ARGMAX_AGREEMENT
    print(f"  {'OK' if ok else 'FAILED'}")
    return ok


def main() -> int:
    """Check the model files written by ``make_models.py``."""
    from make_models import MODELS_DIR, make_all

    net, models = make_all()
    ok = True
    for name in models:
        ok &= check(name, (MODELS_DIR / name).read_bytes(), net)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
