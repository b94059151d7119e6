"""Write ``mobilenet_v2_int8.tflite`` and its float twin ``mobilenet_v2_float.tflite``.

A MobileNetV2 (width multiplier 0.35, the paper's 17 inverted residual
blocks, 1x1 conv to 1280, global average pool, a 10-class classifier) at a
small input size (96x96x3), trained on scikit-learn's digits: the 8x8
images are upsampled (bilinear) to 96x96, replicated to 3 channels and
scaled to [-1, 1]. Run from the repository root::

    python models/make_mobilenet.py                 # rebuild from mobilenet_v2_weights.npz
    python models/make_mobilenet.py --retrain       # train again (torch + scikit-learn, CPU)
    python models/make_mobilenet.py --size 224 --out /tmp/mb   # a 224x224 variant, same weights
    python models/make_mobilenet.py --report        # accuracy, int8 vs float, engine vs LiteRT

Rebuilding needs numpy, ``hexnn_import.testing`` and ai-edge-litert only
(no TensorFlow, no torch). Training (``--retrain``, or when the weights file
is missing) needs torch and scikit-learn; it takes a few minutes on two
cores and is seeded, but torch training is not bit-identical across
machines, which is why the trained weights are kept in
``mobilenet_v2_weights.npz``: batch norm already folded into the conv
weights and biases, TFLite layouts (filters OHWI, depthwise 1HWC, FC
[out, in]), stored as float16 (the float model uses exactly those values),
with the held-out digits (``test_images``, ``test_labels``) and the
calibration images (``calib_images``, from the training split) as 8x8
pixel codes 0..16.

Training: the torch network has a BatchNorm after every conv (stem, expand,
depthwise, project, head), ReLU6 after all but the projections, and TF
"SAME" padding (asymmetric at stride 2, as TFLite pads), so the folded
network is exactly the float TFLite model; the classifier's rows share one
learnt norm. AdamW with a one-cycle schedule, 14 epochs, batch 64, label
smoothing 0.1, random shifts of up to +-8 pixels (at 96x96) as
augmentation; the split is ``make_digits.py``'s (stratified 75 / 25, same
seed). The loss has a noise-stability term (:func:`train`) that keeps the
int8 network's output from amplifying rounding differences: with it, our
engine is within 1 LSB of LiteRT on 99.6% of the held-out logits (worst 2);
without it, 88% (worst 4), with LiteRT's own kernel sets as far apart.
The 224x224 variant has the same weights but sees the digits 2.3x larger
than in training: it is for speed measurements, not accuracy.

The int8 model is quantized as the TFLite converter does after calibration:

1. the float twin is built with the flatbuffer builder;
2. it runs in LiteRT on the calibration images with every tensor preserved;
   each activation's observed min/max gives its (scale, zero point)
   (``choose_params``; pools and reshapes share their input's);
3. conv / depthwise weights are symmetric int8 per output channel
   (quantized_dimension 0 / 3), the classifier's per tensor; biases are int32
   on ``s_in * s_w``.
"""
from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hexnn_import.testing import TFLiteBuilder, choose_params, quantize_bias, quantize_per_channel
from hexnn_import.testing.litert import make_interpreter

SEED = 20261121
SPLIT_SEED = 20260315  # make_digits.py's split
ALPHA = 0.35
CLASSES = 10
LAST = 1280
EPOCHS = 14
STABILITY = 1.0
SMOOTHING = 0.1
#: (expansion t, channels c, repeats n, first stride s) of MobileNetV2
BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
MODELS_DIR = Path(__file__).resolve().parent
WEIGHTS = MODELS_DIR / "mobilenet_v2_weights.npz"


def make_divisible(v: float, divisor: int = 8) -> int:
    """MobileNet's channel rounding: nearest multiple of 8, never below 90% of ``v``."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


@dataclass
class Spec:
    """One layer, independent of the input size: what the torch model and the TFLite builder share."""

    kind: str  # conv, dw, add, pool, reshape, fc
    name: str
    inputs: list[str]
    cin: int = 0
    cout: int = 0
    k: int = 1
    stride: int = 1
    act: str = "NONE"


def layer_specs() -> list[Spec]:
    """The network in graph order."""
    specs: list[Spec] = []
    stem = make_divisible(32 * ALPHA)
    specs.append(Spec("conv", "stem", ["input"], 3, stem, 3, 2, "RELU6"))
    x, cin = "stem", stem
    for bi, (t, c, n, s) in enumerate(BLOCKS):
        cout = make_divisible(c * ALPHA)
        for r in range(n):
            name = f"block{bi}_{r}"
            stride = s if r == 0 else 1
            h = x
            if t != 1:
                specs.append(Spec("conv", f"{name}/expand", [h], cin, cin * t, 1, 1, "RELU6"))
                h = f"{name}/expand"
            specs.append(Spec("dw", f"{name}/depthwise", [h], cin * t, cin * t, 3, stride, "RELU6"))
            specs.append(Spec("conv", f"{name}/project", [f"{name}/depthwise"], cin * t, cout, 1, 1, "NONE"))
            h = f"{name}/project"
            if stride == 1 and cin == cout:
                specs.append(Spec("add", f"{name}/add", [x, h], cout, cout))
                h = f"{name}/add"
            x, cin = h, cout
    specs.append(Spec("conv", "head", [x], cin, LAST, 1, 1, "RELU6"))
    specs.append(Spec("pool", "pool", ["head"], LAST, LAST))
    specs.append(Spec("reshape", "flatten", ["pool"], LAST, LAST))
    specs.append(Spec("fc", "logits", ["flatten"], LAST, CLASSES))
    return specs


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


def make_net(size: int, weights: dict[str, np.ndarray]) -> Net:
    """The layer list at input ``size`` with the trained ``weights`` ("<layer>/w", "<layer>/b", TFLite layouts)."""
    net = Net(size)
    net.shapes["input"] = (1, size, size, 3)
    for sp in layer_specs():
        src = net.shapes[sp.inputs[0]]
        h, w, c = src[1:] if len(src) == 4 else (1, 1, src[-1])
        wt = bt = None
        if sp.kind in ("conv", "dw", "fc"):
            wt = np.asarray(weights[f"{sp.name}/w"], np.float32)
            bt = np.asarray(weights[f"{sp.name}/b"], np.float32)
        stride = sp.stride
        if sp.kind in ("conv", "dw"):
            shape: tuple[int, ...] = (1, -(-h // stride), -(-w // stride), sp.cout)
        elif sp.kind == "add":
            shape = net.shapes[sp.inputs[1]]
        elif sp.kind == "pool":
            shape, stride = (1, 1, 1, c), h
        elif sp.kind == "reshape":
            shape = (1, sp.cout)
        else:
            shape = (1, sp.cout)
        net.layers.append(Layer(sp.kind, sp.name, list(sp.inputs), shape, wt, bt, stride, sp.act))
        net.shapes[sp.name] = shape
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


# ---------------------------------------------------------------------------------------------------- data

def upsample(codes: np.ndarray, size: int) -> np.ndarray:
    """8x8 digit pixel codes (0..16) [N, 8, 8] -> float32 NHWC [N, size, size, 3] in [-1, 1].

    Bilinear with half-pixel centres (torch's ``align_corners=False``, edges clamped),
    the grey level replicated to 3 channels.
    """
    src = np.clip((np.arange(size) + 0.5) * 8 / size - 0.5, 0, 7)
    i0 = np.floor(src).astype(int)
    i1 = np.minimum(i0 + 1, 7)
    frac = src - i0
    a = np.zeros((size, 8))
    a[np.arange(size), i0] += 1 - frac
    a[np.arange(size), i1] += frac
    img = np.einsum("ij,njk,lk->nil", a, np.asarray(codes, np.float64) / 8.0 - 1.0, a)
    return np.repeat(img[..., None], 3, axis=-1).astype(np.float32)


def load_data() -> dict[str, np.ndarray]:
    """The stored held-out and calibration images (8x8 codes) with the held-out labels."""
    with np.load(WEIGHTS) as z:
        return {k: z[k] for k in ("test_images", "test_labels", "calib_images")}


def calibration_inputs(size: int, count: int, seed: int) -> np.ndarray:
    """``count`` held-out digits (seeded choice, float32 NHWC in [-1, 1] at ``size``) for tests and reports."""
    imgs = load_data()["test_images"]
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(imgs), count, replace=count > len(imgs))
    return upsample(imgs[idx], size)


def held_out(size: int) -> tuple[np.ndarray, np.ndarray]:
    """All held-out images at ``size`` and their labels."""
    d = load_data()
    return upsample(d["test_images"], size), d["test_labels"]


# ---------------------------------------------------------------------------------------------------- training

def _split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's digits as pixel codes 0..16 [N, 8, 8], make_digits.py's stratified 75 / 25 split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = np.round(d.images).astype(np.uint8)
    return tuple(train_test_split(x, d.target.astype(np.int64), test_size=0.25, random_state=SPLIT_SEED,
                                  stratify=d.target))  # type: ignore[return-value]


def _torch_model():  # type: ignore[no-untyped-def]
    """The torch network (BN after every conv) built from :func:`layer_specs`.

    ``forward(x, noisy=True)`` adds uniform noise of one int8 quantization
    step (+-0.5 LSB) to the input and to every activation the int8 model
    quantizes, the step taken from that tensor's own min/max over the batch
    (as calibration takes it over the calibration set): the int8 model's
    rounding, for the noise-stability term of :func:`train`. The classifier's
    rows share one (learnt) norm, so that no class's logit is noisier than
    the others' for having a longer weight row.
    """
    import torch
    from torch import nn

    def q(a, noisy: bool):  # type: ignore[no-untyped-def]
        if not noisy:
            return a
        step = (a.max().clamp(min=0) - a.min().clamp(max=0)) / 255.0
        return a + (torch.rand_like(a) - 0.5) * step

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.specs = layer_specs()
            self.mods = nn.ModuleDict()
            for sp in self.specs:
                key = sp.name.replace("/", "__")
                if sp.kind in ("conv", "dw"):
                    groups = sp.cin if sp.kind == "dw" else 1
                    self.mods[key] = nn.Sequential(nn.Conv2d(sp.cin, sp.cout, sp.k, sp.stride, 0, groups=groups,
                                                             bias=False), nn.BatchNorm2d(sp.cout))
                elif sp.kind == "fc":
                    self.mods[key] = nn.Linear(sp.cin, sp.cout)
                    # rows of one common norm (a learnt scalar): no class's logit is noisier for a longer row
                    self.fc_gain = nn.Parameter(torch.tensor(1.0))

        def fc_weight(self):  # type: ignore[no-untyped-def]
            v = self.mods["logits"].weight
            return v / v.norm(dim=1, keepdim=True) * self.fc_gain

        def forward(self, x, noisy: bool = False):  # type: ignore[no-untyped-def]
            t = {"input": q(x, noisy)}
            for sp in self.specs:
                a = t[sp.inputs[0]]
                key = sp.name.replace("/", "__")
                if sp.kind in ("conv", "dw"):
                    if sp.k > 1:  # TF SAME: total pad max((out-1)*s + k - in, 0), the extra pixel at the end
                        h = a.shape[-1]
                        pad = max((-(-h // sp.stride) - 1) * sp.stride + sp.k - h, 0)
                        a = nn.functional.pad(a, (pad // 2, pad - pad // 2, pad // 2, pad - pad // 2))
                    y = self.mods[key](a)
                    t[sp.name] = q(nn.functional.relu6(y) if sp.act == "RELU6" else y, noisy)
                elif sp.kind == "add":
                    t[sp.name] = q(a + t[sp.inputs[1]], noisy)
                elif sp.kind == "pool":
                    t[sp.name] = q(a.mean(dim=(2, 3)), noisy)
                elif sp.kind == "reshape":
                    t[sp.name] = a
                else:
                    t[sp.name] = nn.functional.linear(a, self.fc_weight(), self.mods[key].bias)
            return t["logits"]

    torch.manual_seed(SEED)
    return Model()


def _drift(model, x, logits):  # type: ignore[no-untyped-def]
    """Change of the logits under one step of rounding noise, in units of 6 standard deviations of the logits / 255.

    That is about the output step of a network whose logits have no outliers. (Normalizing by the batch's
    range instead rewards a single extreme logit, which coarsens the step of all the others and is itself
    the noisiest.)
    """
    step = 6.0 * logits.std() / 255.0
    return (model(x, noisy=True) - logits) / step


def _fold(model) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """Batch norm folded into the conv weights; TFLite layouts; float16 (the stored precision)."""
    out: dict[str, np.ndarray] = {}
    for sp in model.specs:
        key = sp.name.replace("/", "__")
        if sp.kind in ("conv", "dw"):
            conv, bn = model.mods[key]
            g = (bn.weight / (bn.running_var + bn.eps).sqrt()).detach().double().numpy()
            w = conv.weight.detach().double().numpy() * g[:, None, None, None]
            b = bn.bias.detach().double().numpy() - bn.running_mean.detach().double().numpy() * g
            out[f"{sp.name}/w"] = w.transpose(1, 2, 3, 0) if sp.kind == "dw" else w.transpose(0, 2, 3, 1)
            out[f"{sp.name}/b"] = b
        elif sp.kind == "fc":
            out[f"{sp.name}/w"] = model.fc_weight().detach().double().numpy()
            out[f"{sp.name}/b"] = model.mods[key].bias.detach().double().numpy()
    return {k: v.astype(np.float16) for k, v in out.items()}


def train(epochs: int = EPOCHS, stability: float = STABILITY, size: int = 96) -> dict[str, np.ndarray]:
    """Train on the digits' training split; return the folded weights plus the data arrays to store.

    The loss is cross-entropy plus ``stability`` times the mean squared
    change of the logits, in output quantization steps (:func:`_drift`),
    when every quantized tensor gets one step of uniform noise
    (``forward(noisy=True)``), ramped in once the classifier has formed. A
    deep int8 network re-rounds a small perturbation at every layer into
    whole 1-LSB flips (one flip into a 1x1 expansion flips several of its
    outputs), so the inner layers of two int8 implementations that round
    one element in a thousand differently soon differ by about 1 LSB rms;
    only a network that damps that noise on the way to its output keeps
    their outputs within 1 LSB.
    """
    import torch

    torch.manual_seed(SEED)
    x_train, x_test, y_train, y_test = _split()
    rng = np.random.default_rng(SEED)
    calib = x_train[rng.choice(len(x_train), 64, replace=False)]
    xt = torch.from_numpy(upsample(x_train, size)[..., :1]).permute(0, 3, 1, 2).contiguous()  # grey, NCHW
    yt = torch.from_numpy(y_train)
    model = _torch_model()
    steps = epochs * (-(-len(xt) // 64))
    opt = torch.optim.AdamW(model.parameters(), lr=4e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=steps, pct_start=0.25)
    gen = torch.Generator().manual_seed(SEED)
    shift = 8
    t0 = time.time()
    for ep in range(epochs):
        model.train()
        order = torch.randperm(len(xt), generator=gen)
        total = pen = 0.0
        for i in range(0, len(xt), 64):
            idx = order[i:i + 64]
            padded = torch.nn.functional.pad(xt[idx], (shift,) * 4, value=-1.0)
            offs = torch.randint(0, 2 * shift + 1, (len(idx), 2), generator=gen)
            xb = torch.stack([padded[j, :, oy:oy + size, ox:ox + size] for j, (oy, ox) in enumerate(offs.tolist())])
            xb = xb.expand(-1, 3, -1, -1)
            # the stability term is ramped in from 30% to 60% of training, once the classifier has formed
            ramp = min(max((sched.last_epoch / steps - 0.3) / 0.3, 0.0), 1.0)
            logits = model(xb)
            loss = torch.nn.functional.cross_entropy(logits, yt[idx], label_smoothing=SMOOTHING)
            if stability and ramp > 0:
                p = _drift(model, xb, logits).pow(2).mean()
                loss = loss + stability * ramp * p
                pen += float(p.detach()) * len(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        print(f"epoch {ep + 1}/{epochs}: loss {total / len(xt):.4f}, logit drift {np.sqrt(pen / len(xt)):.3f} rms "
              f"({time.time() - t0:.0f} s)", flush=True)
    model.eval()
    with torch.no_grad():  # in chunks of 150 images (the dict of activations is kept whole)
        hits, sq = 0, []
        for i in range(0, len(x_test), 150):
            xe = torch.from_numpy(upsample(x_test[i:i + 150], size)).permute(0, 3, 1, 2)
            clean = model(xe)
            hits += int((clean.argmax(1).numpy() == y_test[i:i + 150]).sum())
            sq.append(float(_drift(model, xe, clean).pow(2).mean()))
        acc, drift = hits / len(x_test), float(np.sqrt(np.mean(sq)))
    print(f"torch held-out accuracy {acc:.4f}, logit drift {drift:.3f} rms; training took {time.time() - t0:.0f} s")
    w = _fold(model)
    w.update(test_images=x_test, test_labels=y_test, calib_images=calib)
    return w


def load_weights(retrain: bool = False) -> dict[str, np.ndarray]:
    """The stored trained weights; train (and store them) when asked or when the file is missing."""
    if retrain or not WEIGHTS.exists():
        w = train()
        buf = io.BytesIO()
        np.savez_compressed(buf, **w)
        WEIGHTS.write_bytes(buf.getvalue())
        print(f"wrote {WEIGHTS} ({len(buf.getvalue())} bytes)")
    with np.load(WEIGHTS) as z:
        return {k: z[k] for k in z.files}


# ---------------------------------------------------------------------------------------------------- export

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


def make_models(size: int = 96, retrain: bool = False) -> dict[str, bytes]:
    """Both models' bytes by file name (``_<size>`` appended to the names unless 96)."""
    weights = load_weights(retrain)
    net = make_net(size, weights)
    float_model = build(net, None)
    ranges = observe(float_model, upsample(weights["calib_images"], size), list(net.shapes))
    params = {n: choose_params(*r, np.int8) for n, r in ranges.items()}
    for L in net.layers:  # the converter gives pools and reshapes their input's parameters
        if L.kind in ("pool", "reshape"):
            params[L.name] = params[L.inputs[0]]
    suffix = "" if size == 96 else f"_{size}"
    return {f"mobilenet_v2_float{suffix}.tflite": float_model,
            f"mobilenet_v2_int8{suffix}.tflite": build(net, params)}


def report(float_model: bytes, int8_model: bytes, size: int, n_engine: int | None = None) -> None:
    """Print held-out accuracy (float, int8), int8-vs-float SQNR, and our engine vs LiteRT int8 (all held-out inputs
    unless ``n_engine``)."""
    import hexnn_import as hx

    xs, ys = held_out(size)
    fi = make_interpreter(float_model)
    qi = make_interpreter(int8_model)
    s, z = qi.get_input_details()[0]["quantization"]
    so, zo = qi.get_output_details()[0]["quantization"]
    flt, q8, xq = [], [], []
    for x in xs:
        fi.set_tensor(fi.get_input_details()[0]["index"], x[None])
        fi.invoke()
        flt.append(fi.get_tensor(fi.get_output_details()[0]["index"])[0].astype(np.float64))
        xq.append(np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)[None])
        qi.set_tensor(qi.get_input_details()[0]["index"], xq[-1])
        qi.invoke()
        q8.append(qi.get_tensor(qi.get_output_details()[0]["index"])[0].astype(np.int32))
    f, q = np.array(flt), np.array(q8)
    deq = (q - zo) * so
    sqnr = 10 * np.log10(np.sum(f ** 2) / np.sum((deq - f) ** 2))
    print(f"held-out ({len(ys)}): float accuracy {np.mean(f.argmax(1) == ys):.4f}, "
          f"int8 accuracy {np.mean(q.argmax(1) == ys):.4f}, argmax agreement {np.mean(f.argmax(1) == q.argmax(1)):.4f}")
    print(f"LiteRT int8 vs float logits: SQNR {sqnr:.1f} dB; output scale {so:.4g}, zero point {zo}; "
          f"float logits in [{f.min():.2f}, {f.max():.2f}], |int8 - float| max {np.abs(deq - f).max() / so:.2f} LSB")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.tflite"
        path.write_bytes(int8_model)
        runner = hx.Runner(hx.prepare(hx.import_model(path)))
    rng = np.random.default_rng(SEED)
    idx = np.arange(len(xs)) if n_engine is None else rng.choice(len(xs), n_engine, replace=False)
    ours = np.array([runner.run({"input": xq[i]})["logits"][0].astype(np.int32) for i in idx])
    d = np.abs(ours - q[idx])
    print(f"engine vs LiteRT int8 on {len(idx)} held-out inputs: {np.mean(d == 0):.4f} exact, "
          f"{np.mean(d <= 1):.4f} within 1 LSB, worst {d.max()}; "
          f"inputs with any element off by >1: {int(np.sum(d.max(1) > 1))}")


def main(argv: list[str] | None = None) -> int:
    """Write the models; print their sizes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=96, help="input height and width (default 96)")
    ap.add_argument("--out", type=Path, default=MODELS_DIR, help="output folder (default models/)")
    ap.add_argument("--retrain", action="store_true", help="train again and rewrite mobilenet_v2_weights.npz")
    ap.add_argument("--report", action="store_true", help="print accuracy and agreement figures")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    models = make_models(args.size, args.retrain)
    for name, data in models.items():
        (args.out / name).write_bytes(data)
        print(f"wrote {args.out / name} ({len(data)} bytes)")
    if args.report:
        fl, q8 = models.values()
        report(fl, q8, args.size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
