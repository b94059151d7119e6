"""Write ``mobilenet_v2_int8.tflite`` and its float twin ``mobilenet_v2_float.tflite``.

A MobileNetV2-style network (width multiplier 0.35, the paper's 17 inverted
residual blocks, 1x1 conv to 1280, global average pool, a 10-class
classifier) at a small input size (96x96x3), with seeded untrained weights.
Run ``python models/make_mobilenet.py [--size 96] [--out DIR]`` from the
repository root: numpy, ``hexnn_import.testing`` and ai-edge-litert only
(no TensorFlow).

The int8 model is quantized as the TFLite converter does after calibration:

1. the float twin is built with the flatbuffer builder;
2. it runs in LiteRT on 32 seeded calibration inputs with every tensor
   preserved; each activation's observed min/max gives its (scale, zero
   point) (``choose_params``; pools and reshapes share their input's);
3. conv / depthwise weights are symmetric int8 per output channel
   (quantized_dimension 0 / 3), the classifier's per tensor; biases are int32
   on ``s_in * s_w``.

Weights are He-normal, with the projection convs scaled down so that the
residual sums stay in a sensible range without batch norm; the classifier is
fitted to the pooled features as a linear probe (``fit_head``) so that the
logits vary with the input as a trained network's do.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hexnn_import.testing import TFLiteBuilder, choose_params, quantize_bias, quantize_per_channel
from hexnn_import.testing.litert import make_interpreter

SEED = 20261121
ALPHA = 0.35
CLASSES = 10
LAST = 1280
#: (expansion t, channels c, repeats n, first stride s) of MobileNetV2
BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
MODELS_DIR = Path(__file__).resolve().parent


def make_divisible(v: float, divisor: int = 8) -> int:
    """MobileNet's channel rounding: nearest multiple of 8, never below 90% of ``v``."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


@dataclass
class Layer:
    """One layer of the network in graph order."""

    kind: str  # conv, dw, add, pool, reshape, fc
    name: str
    inputs: list[str]
    shape: tuple[int, ...]
    w: np.ndarray | None = None
    b: np.ndarray | None = None
    stride: int = 1
    act: str = "NONE"


@dataclass
class Net:
    """Layers, and the shapes of every activation tensor by name."""

    size: int
    layers: list[Layer] = field(default_factory=list)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)


def make_net(size: int, rng: np.random.Generator) -> Net:
    """The layer list with seeded weights (filters OHWI, depthwise 1HWC, FC [out, in])."""
    net = Net(size)
    net.shapes["input"] = (1, size, size, 3)

    def he(shape: tuple[int, ...], fan_in: int, gain: float = 1.0) -> np.ndarray:
        return rng.normal(0.0, gain * np.sqrt(2.0 / fan_in), size=shape)

    def add(layer: Layer) -> str:
        net.layers.append(layer)
        net.shapes[layer.name] = layer.shape
        return layer.name

    def conv(name: str, x: str, cout: int, k: int, stride: int, act: str, gain: float = 1.0) -> str:
        _, h, w, cin = net.shapes[x]
        oh, ow = -(-h // stride), -(-w // stride)
        return add(Layer("conv", name, [x], (1, oh, ow, cout), he((cout, k, k, cin), k * k * cin, gain),
                         rng.normal(0, 0.05, cout), stride, act))

    def dw(name: str, x: str, stride: int) -> str:
        _, h, w, c = net.shapes[x]
        oh, ow = -(-h // stride), -(-w // stride)
        # low-pass taps (positive mean), as trained depthwise filters mostly are: a zero-mean random
        # 3x3 filter removes the smooth part of its input and keeps mainly noise
        w = rng.normal(1.0, 0.5, size=(1, 3, 3, c)) / 9.0
        return add(Layer("dw", name, [x], (1, oh, ow, c), w, rng.normal(0, 0.05, c), stride, "RELU6"))

    x = conv("stem", "input", make_divisible(32 * ALPHA), 3, 2, "RELU6")
    cin = net.shapes[x][-1]
    for bi, (t, c, n, s) in enumerate(BLOCKS):
        cout = make_divisible(c * ALPHA)
        for r in range(n):
            name = f"block{bi}_{r}"
            stride = s if r == 0 else 1
            h = conv(f"{name}/expand", x, cin * t, 1, 1, "RELU6") if t != 1 else x
            h = dw(f"{name}/depthwise", h, stride)
            h = conv(f"{name}/project", h, cout, 1, 1, "NONE", gain=0.5)
            if stride == 1 and cin == cout:
                h = add(Layer("add", f"{name}/add", [x, h], net.shapes[h]))
            x, cin = h, cout
    x = conv("head", x, LAST, 1, 1, "RELU6")
    _, h, w, c = net.shapes[x]
    x = add(Layer("pool", "pool", [x], (1, 1, 1, c), stride=h))
    x = add(Layer("reshape", "flatten", [x], (1, c)))
    add(Layer("fc", "logits", [x], (1, CLASSES), he((CLASSES, c), c), rng.normal(0, 0.05, CLASSES)))
    return net


def build(net: Net, params: dict[str, tuple[float, int]] | None) -> bytes:
    """TFLite bytes: float32 when ``params`` is None, else full-integer int8 with those activation params."""
    q = params is not None
    kind = "int8" if q else "float"
    b = TFLiteBuilder(description=f"hexnn-import MobileNetV2-style {kind} model (models/make_mobilenet.py)")
    ids: dict[str, int] = {}

    def act(name: str) -> int:
        shape = net.shapes[name]
        if params is None:
            ids[name] = b.add_tensor(name, shape, np.float32)
        else:
            s, zp = params[name]
            ids[name] = b.add_tensor(name, shape, np.int8, scale=s, zero_point=zp)
        return ids[name]

    def weights(layer: Layer, axis: int, per_channel: bool) -> tuple[int, int]:
        assert layer.w is not None and layer.b is not None
        if params is None:
            return (b.add_const(f"{layer.name}/weights", layer.w.astype(np.float32)),
                    b.add_const(f"{layer.name}/bias", layer.b.astype(np.float32)))
        if per_channel:
            wq, scales = quantize_per_channel(layer.w, axis=axis)
        else:
            scales = np.array([np.float32(np.abs(layer.w).max() / 127)], np.float32)
            wq = np.clip(np.round(layer.w / scales[0]), -127, 127).astype(np.int8)
        wt = b.add_const(f"{layer.name}/weights", wq, scale=scales, zero_point=np.zeros(len(scales), np.int64),
                         quantized_dimension=axis)
        qb, bs = quantize_bias(layer.b, params[layer.inputs[0]][0], scales)
        bt = b.add_const(f"{layer.name}/bias", qb, scale=bs, zero_point=np.zeros(len(bs), np.int64))
        return wt, bt

    x = act("input")
    for L in net.layers:
        ins = [ids[n] for n in L.inputs]
        if L.kind == "conv":
            wt, bt = weights(L, 0, True)
            b.add_operator("CONV_2D", [ins[0], wt, bt], [act(L.name)],
                           {"padding": "SAME", "stride_w": L.stride, "stride_h": L.stride},
                           fused_activation=L.act, version=3 if q else 1)
        elif L.kind == "dw":
            wt, bt = weights(L, 3, True)
            b.add_operator("DEPTHWISE_CONV_2D", [ins[0], wt, bt], [act(L.name)],
                           {"padding": "SAME", "stride_w": L.stride, "stride_h": L.stride, "depth_multiplier": 1},
                           fused_activation=L.act, version=3 if q else 1)
        elif L.kind == "add":
            b.add_operator("ADD", ins, [act(L.name)], {}, version=2 if q else 1)
        elif L.kind == "pool":
            b.add_operator("AVERAGE_POOL_2D", ins, [act(L.name)],
                           {"padding": "VALID", "stride_w": 1, "stride_h": 1, "filter_width": L.stride,
                            "filter_height": L.stride}, version=2 if q else 1)
        elif L.kind == "reshape":
            shape = b.add_const(f"{L.name}/shape", np.array(L.shape, np.int32))
            b.add_operator("RESHAPE", [ins[0], shape], [act(L.name)], {"new_shape": list(L.shape)})
        elif L.kind == "fc":
            wt, bt = weights(L, 0, False)
            b.add_operator("FULLY_CONNECTED", [ins[0], wt, bt], [act(L.name)], {"keep_num_dims": False},
                           version=4 if q else 1)
    b.set_io([x], [ids["logits"]])
    return b.build()


def calibration_inputs(size: int, count: int, seed: int) -> np.ndarray:
    """``count`` smooth random images in [-1, 1] (a normalized image's range), float32 NHWC."""
    rng = np.random.default_rng(seed)
    coarse = rng.uniform(-1, 1, size=(count, 6, 6, 3))
    reps = -(-size // 6)
    img = np.repeat(np.repeat(coarse, reps, axis=1), reps, axis=2)[:, :size, :size]
    return np.clip(img + rng.normal(0, 0.15, size=img.shape), -1, 1).astype(np.float32)


def observe(model: bytes, xs: np.ndarray, names: list[str]) -> dict[str, tuple[float, float]]:
    """min/max of every named tensor over the inputs, from LiteRT with all tensors preserved."""
    interp = make_interpreter(model, preserve_all_tensors=True)
    index = {d["name"]: d["index"] for d in interp.get_tensor_details()}
    inp = interp.get_input_details()[0]["index"]
    lo = {n: np.inf for n in names}
    hi = {n: -np.inf for n in names}
    for x in xs:
        interp.set_tensor(inp, x[None])
        interp.invoke()
        for n in names:
            a = interp.get_tensor(index[n])
            lo[n], hi[n] = min(lo[n], float(a.min())), max(hi[n], float(a.max()))
    return {n: (lo[n], hi[n]) for n in names}


def fit_head(net: Net, xs: np.ndarray) -> None:
    """Set the classifier so its logits follow the input, as a trained head's do.

    With untrained weights the global-average-pooled features barely change
    from image to image, so random classifier weights give logits that are
    nearly constant (their own bias) and an output quantization finer than
    anything the features carry. The head is instead fitted like a linear
    probe: the top principal directions of the pooled features over ``xs``,
    scaled by one factor so the first logit spreads with a standard deviation
    of 2 around 0 (one factor: no direction of tiny variance is amplified).
    """
    feats = observe_tensor(build(net, None), xs, "flatten")
    mean = feats.mean(axis=0)
    _, sing, vt = np.linalg.svd(feats - mean, full_matrices=False)
    sd = sing[:CLASSES] / np.sqrt(len(feats))
    w = vt[:CLASSES] * (2.0 / max(float(sd[0]), 1e-12))
    fc = net.layers[-1]
    fc.w, fc.b = w, -(w @ mean)


def observe_tensor(model: bytes, xs: np.ndarray, name: str) -> np.ndarray:
    """One tensor's values for every input, stacked (LiteRT, all tensors preserved)."""
    interp = make_interpreter(model, preserve_all_tensors=True)
    index = {d["name"]: d["index"] for d in interp.get_tensor_details()}
    inp = interp.get_input_details()[0]["index"]
    out = []
    for x in xs:
        interp.set_tensor(inp, x[None])
        interp.invoke()
        out.append(np.array(interp.get_tensor(index[name])).reshape(-1))
    return np.stack(out).astype(np.float64)


def make_models(size: int = 96) -> dict[str, bytes]:
    """Both models' bytes by file name."""
    net = make_net(size, np.random.default_rng(SEED))
    fit_head(net, calibration_inputs(size, 64, SEED + 2))
    float_model = build(net, None)
    ranges = observe(float_model, calibration_inputs(size, 32, SEED + 1), list(net.shapes))
    params = {n: choose_params(*r, np.int8) for n, r in ranges.items()}
    for L in net.layers:  # the converter gives pools and reshapes their input's parameters
        if L.kind in ("pool", "reshape"):
            params[L.name] = params[L.inputs[0]]
    suffix = "" if size == 96 else f"_{size}"
    return {f"mobilenet_v2_float{suffix}.tflite": float_model,
            f"mobilenet_v2_int8{suffix}.tflite": build(net, params)}


def main(argv: list[str] | None = None) -> int:
    """Write the models; print their sizes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=96, help="input height and width (default 96)")
    ap.add_argument("--out", type=Path, default=MODELS_DIR, help="output folder (default models/)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in make_models(args.size).items():
        (args.out / name).write_bytes(data)
        print(f"wrote {args.out / name} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
