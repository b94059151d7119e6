"""Make real, converter-made ONNX models for the acceptance tests (models/real/*.onnx).

Development tool only, never imported by the package or the tests. Run it in a
venv outside the repo:

    python3 -m venv /work/venv-torch
    /work/venv-torch/bin/pip install torch==2.14.1 torchvision==0.29.1 \
        onnx onnxruntime onnxscript scikit-learn pillow rapidocr-onnxruntime
    /work/venv-torch/bin/python models/real/make_torch.py [names...]

names: resnet18 mobilenet_v3_small shufflenet_v2 squeezenet efficientnet_b0
yolo rapidocr (default: all), then ``check`` runs every .onnx in onnxruntime.

Every classifier is a torchvision builder with num_classes=10, trained (seeded, wall-clock
capped) in the distribution the tests use: jittered random crops of the two photographs
(hexnn_import/testing/photos.py), 10 classes = photo id x which of 5 vertical bands holds the
crop centre, with an int8-noise stability term so that the int8 model stays close to the float
one (see train()). The YOLO-style detector is trained on the same crops (stripe class + box per
anchor). Each model is exported in eval mode by torch.onnx.export (TorchScript exporter, opset
17, dynamic batch on dim 0 of input and output), then quantized by
onnxruntime.quantization.quantize_static after quant_pre_process, calibrated on 64 photo crops
(split="calib"); the int8-vs-float SQNR and top-1 agreement on 24 split="test" crops go into
the manifest. The exported and
quantized graphs are written as the tools emit them: nothing is edited.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFEST = HERE / "manifest_torch.json"
OPSET = 17
SIZE = 64
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]

torch.set_num_threads(1)  # the 2 cores are shared: 2 threads oversubscribe and stall

_spec = importlib.util.spec_from_file_location("photos", ROOT / "hexnn_import" / "testing" / "photos.py")
photos = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(photos)


def versions() -> dict:
    return {"torch": torch.__version__.split("+")[0], "torchvision": torchvision.__version__.split("+")[0],
            "onnx": onnx.__version__, "onnxruntime": ort.__version__}


# ---------------------------------------------------------------- inputs


def imagenet_norm(nhwc: np.ndarray) -> np.ndarray:
    """[n,H,W,3] pixels in [0,255] -> NCHW float32 (pixel/255 - mean)/std."""
    x = (nhwc / 255.0 - np.array(MEAN)) / np.array(STD)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2)).astype(np.float32)


# ---------------------------------------------------------------- training data: photo crops

CALIB_N = 64
NOISE_TYPES = (nn.BatchNorm2d, nn.ReLU, nn.ReLU6, nn.Hardswish, nn.Hardsigmoid, nn.SiLU, nn.Sigmoid, nn.Linear,
               nn.AdaptiveAvgPool2d, nn.MaxPool2d)


class CropSampler:
    """Random square crops of the two photographs (load_photos()), like photo_batch's (side 35-100% of
    the shorter side, anywhere in the photo, area-resized to SIZE) with a wider scale range (25-100%)
    and photometric jitter. Label = photo id * 5 + which of 5 vertical bands (by x, 128 px wide) of
    the photo holds the crop centre."""

    def __init__(self, seed: int):
        self.p = torch.tensor(photos.load_photos(), dtype=torch.float32).permute(0, 3, 1, 2).contiguous()
        self.g = np.random.default_rng(seed)
        # area-downsampled copies (factor f = 1..7) so that each crop is pooled from < 2*SIZE pixels
        self.pyr = {f: F.avg_pool2d(self.p, f, ceil_mode=True) if f > 1 else self.p for f in range(1, 8)}

    def sample(self, n: int, jitter: bool = True):
        H, W = self.p.shape[2:]
        xs, ys, pos = [], [], []
        for i in range(n):
            pid = int(self.g.integers(0, 2))
            side = int(min(H, W) * self.g.uniform(0.25 if jitter else 0.35, 1.0))
            y = int(self.g.integers(0, H - side + 1))
            x = int(self.g.integers(0, W - side + 1))
            f = max(1, min(7, side // SIZE))
            q = self.pyr[f]
            c = F.adaptive_avg_pool2d(q[pid:pid + 1, :, y // f:(y + side) // f, x // f:(x + side) // f], SIZE)
            xs.append(c)
            ys.append(pid * 5 + min(4, int((x + side / 2) * 5 // W)))
            pos.append((pid, x, y, side))
        px = torch.cat(xs) / 255.0                                                   # [n,3,S,S] in 0..1
        if jitter:
            b = torch.tensor(self.g.uniform(0.7, 1.3, (n, 1, 1, 1)), dtype=torch.float32)   # brightness
            cj = torch.tensor(self.g.uniform(0.9, 1.1, (n, 3, 1, 1)), dtype=torch.float32)  # colour
            ct = torch.tensor(self.g.uniform(0.75, 1.25, (n, 1, 1, 1)), dtype=torch.float32)  # contrast
            m = px.mean((1, 2, 3), keepdim=True)
            px = ((px - m) * ct + m) * b * cj
            px = px + torch.tensor(self.g.normal(0, 0.01, px.shape), dtype=torch.float32)
            px = px.clamp(0, 1)
        return px, torch.tensor(ys), pos


def test_crops(n: int, split: str = "test"):
    """photo_batch(n, SIZE, SIZE, 3, split) as pixels 0..1 NCHW, with the labels of CropSampler (the
    crop placement is replayed with photo_batch's own generator)."""
    px = photos.photo_batch(n, SIZE, SIZE, 3, split=split)
    src = photos.load_photos()
    rng = np.random.default_rng({"test": 1234, "calib": 5678}[split])
    ys, pos = [], []
    for i in range(n):
        H, W = src.shape[1:3]
        side = int(min(H, W) * rng.uniform(0.35, 1.0))
        cw = min(W, side)
        y = int(rng.integers(0, H - side + 1))
        x = int(rng.integers(0, W - cw + 1))
        ys.append((i % 2) * 5 + min(4, int((x + cw / 2) * 5 // W)))
        pos.append((i % 2, x, y, side))
    return torch.tensor(px).permute(0, 3, 1, 2).contiguous() / 255.0, torch.tensor(ys), pos


def to_imagenet(px: torch.Tensor) -> torch.Tensor:
    return (px - torch.tensor(MEAN)[:, None, None]) / torch.tensor(STD)[:, None, None]


class NoiseInjector:
    """Forward hooks that add uniform noise of one int8 step ((max-min)/255 of the batch) to the
    output of every module the int8 model quantizes (BN/activation/pool/linear outputs)."""

    def __init__(self, model):
        self.on = False
        self.gen = torch.Generator().manual_seed(123)  # own generator: dropout masks stay those of the clean pass
        self.hs = [m.register_forward_hook(self.hook) for m in model.modules() if isinstance(m, NOISE_TYPES)]

    def hook(self, m, inp, out):
        if not self.on:
            return None
        step = (out.detach().amax() - out.detach().amin()) / 255.0
        return out + (torch.rand(out.shape, generator=self.gen) - 0.5) * step

    def remove(self):
        for h in self.hs:
            h.remove()


def train(model: nn.Module, lr: float = 3e-3, budget_s: float = 150.0, bs: int = 48, warmup: float = 0.05,
          wd: float = 3e-4, noise_w: float = 0.3, prep=to_imagenet, loss_fn=None, acc_fn=None,
          view=lambda o: o) -> dict:
    """AdamW (weight decay ``wd``), label smoothing 0.1, learning rate warm-up then cosine decay to 0
    over the wall-clock budget (the machine is shared, so the step count varies); from 25% of the
    budget the loss adds ``noise_w`` x the mean squared logit change when every quantized tensor gets
    one int8 step of uniform noise (in units of 6*std(logits)/255, about one output step). Then the
    BatchNorm statistics are recomputed exactly (cumulative average over 20 batches of 64 of un-jittered
    crops, BN layers alone in train mode)."""
    import math
    torch.manual_seed(0)
    samp = CropSampler(seed=0)
    if loss_fn is None:
        loss_fn = lambda out, y, pos: F.cross_entropy(out, y, label_smoothing=0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=wd)
    inj = NoiseInjector(model)
    t0 = time.time()
    done, tl, td = 0, 0.0, 0.0
    model.train()
    while True:
        frac = (time.time() - t0) / budget_s
        if frac >= 1.0:
            break
        for grp in opt.param_groups:
            grp["lr"] = lr * 0.5 * (1 + math.cos(math.pi * frac)) * min(1.0, (frac + 1e-3) / warmup)
        px, y, pos = samp.sample(bs)
        x = prep(px)
        rng = torch.get_rng_state()
        out = model(x)
        loss = loss_fn(out, y, pos)
        tl = 0.98 * tl + 0.02 * float(loss.detach())
        if noise_w and frac > 0.25:
            inj.on = True
            torch.set_rng_state(rng)  # same dropout / stochastic-depth masks as the clean pass
            outn = model(x)
            inj.on = False
            o, on = view(out), view(outn)
            unit = 6 * o.detach().std() / 255.0
            drift = ((on - o) ** 2).mean() / unit ** 2
            td = 0.98 * td + 0.02 * float(drift.detach())
            loss = loss + noise_w * min(1.0, (frac - 0.25) / 0.25) * drift
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        done += 1
        if done % 50 == 0:
            print(f"   step {done} t {time.time() - t0:.0f}s loss {tl:.3f} drift {td:.2f}", flush=True)
    inj.remove()
    model.eval()
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    with torch.no_grad():
        for i in range(20):
            model(prep(samp.sample(64, jitter=False)[0]))
    for m in bns:
        m.momentum = 0.1
    model.eval()
    xte, yte, pte = test_crops(256)
    with torch.no_grad():
        out = model(prep(xte))
        acc = float((out.argmax(1) == yte).float().mean()) if acc_fn is None else acc_fn(out, yte, pte)
    info = {"steps": done, "batch": bs, "seconds": round(time.time() - t0, 1), "lr": lr, "weight_decay": wd,
            "noise_weight": noise_w, "test_acc": round(acc, 4)}
    print("  trained", info, flush=True)
    return info


def int8_vs_float(float_path: Path, q_path: Path, prep, cls_slice=slice(None)) -> dict:
    """onnxruntime, 24 photo_batch(split="test") crops: SQNR (dB) of the quantized output vs the
    float model's, and top-1 agreement (argmax over dim 1, restricted to ``cls_slice``)."""
    x = prep(photos.photo_batch(24, SIZE, SIZE, 3, split="test"))
    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    r = {}
    for k, p in (("f", float_path), ("q", q_path)):
        s = ort.InferenceSession(str(p), o, providers=["CPUExecutionProvider"])
        r[k] = s.run(None, {"input": x})[0].astype(np.float64)
    db = 10 * np.log10((r["f"] ** 2).sum() / max(((r["q"] - r["f"]) ** 2).sum(), 1e-30))
    t1 = float((r["q"][:, cls_slice].argmax(1) == r["f"][:, cls_slice].argmax(1)).mean())
    print(f"  {q_path.name}: int8 vs float {db:.1f} dB, top-1 agreement {t1:.3f}", flush=True)
    return {"int8_vs_float_db": round(float(db), 1), "top1_vs_float": round(t1, 4)}


def count_macs(model: nn.Module, x: torch.Tensor) -> int:
    """Multiply-accumulates per image of Conv2d and Linear layers (forward hooks)."""
    total = [0]

    def hook(m, inp, out):
        if isinstance(m, nn.Conv2d):
            total[0] += out[0].numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]
        elif isinstance(m, nn.Linear):
            total[0] += m.in_features * m.out_features
    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        model(x[:1])
    for h in hs:
        h.remove()
    return int(total[0])


# ---------------------------------------------------------------- export + quantize


def export(model: nn.Module, path: Path, in_ch=3, size=SIZE, out_names=("logits",)):
    model.eval()
    x = torch.zeros(2, in_ch, size, size)
    dyn = {"input": {0: "batch"}}
    for n in out_names:
        dyn[n] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(model, (x,), str(path), dynamo=False, opset_version=OPSET,
                          input_names=["input"], output_names=list(out_names), dynamic_axes=dyn,
                          do_constant_folding=True)
    onnx.checker.check_model(onnx.load(str(path)))
    print("  wrote", path.name, path.stat().st_size, flush=True)


class PhotoReader(CalibrationDataReader):
    def __init__(self, prep, n=None, size=SIZE, batch=8):
        n = n or CALIB_N
        x = prep(photos.photo_batch(n, size, size, 3, split="calib"))
        self.batches = [x[i:i + batch] for i in range(0, n, batch)]
        self.i = 0

    def get_next(self):
        if self.i >= len(self.batches):
            return None
        self.i += 1
        return {"input": self.batches[self.i - 1]}

    def rewind(self):
        self.i = 0


def quantize(float_path: Path, out_path: Path, fmt: str, per_channel: bool, prep, size=SIZE) -> dict:
    with tempfile.TemporaryDirectory() as td:
        pre = Path(td) / "pre.onnx"
        pre_opts = {}
        try:
            quant_pre_process(str(float_path), str(pre))
        except Exception as exc:  # ORT's documented fallback when symbolic shape inference fails
            print("  quant_pre_process failed:", repr(exc), "-> retry with skip_symbolic_shape=True", flush=True)
            pre_opts = {"skip_symbolic_shape": True, "symbolic_shape_error": repr(exc)}
            quant_pre_process(str(float_path), str(pre), skip_symbolic_shape=True)
        if fmt == "qdq":
            kw = dict(quant_format=QuantFormat.QDQ)  # ORT defaults: QInt8 activations, QInt8 weights
            act = "QInt8"
        else:
            kw = dict(quant_format=QuantFormat.QOperator, activation_type=QuantType.QUInt8,
                      weight_type=QuantType.QInt8)
            act = "QUInt8"
        quantize_static(str(pre), str(out_path), PhotoReader(prep, size=size), per_channel=per_channel, **kw)
    onnx.checker.check_model(onnx.load(str(out_path)))
    print("  wrote", out_path.name, out_path.stat().st_size, flush=True)
    return {"activation_type": act, "weight_type": "QInt8", "per_channel": per_channel, **pre_opts}


def update_manifest(entries: list[dict]):
    import fcntl
    with open(Path(tempfile.gettempdir()) / "manifest_torch.lock", "w") as lk:  # names may run in parallel
        fcntl.flock(lk, fcntl.LOCK_EX)
        old = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else []
        names = {e["file"] for e in entries}
        new = [e for e in old if e["file"] not in names] + entries
        new.sort(key=lambda e: e["file"])
        MANIFEST.write_text(json.dumps(new, indent=1) + "\n")


def classifier(name: str, model: nn.Module, desc: str, qop_per_channel: bool = True, **train_kw):
    t0 = time.time()
    print(name, flush=True)
    torch.manual_seed(0)
    info = train(model, **train_kw)
    params = sum(p.numel() for p in model.parameters())
    macs = count_macs(model, torch.zeros(1, 3, SIZE, SIZE))
    v = versions()
    base = f"torch_{name}"
    fpath = HERE / f"{base}_float.onnx"
    export(model, fpath)
    src = (f"torchvision {v['torchvision']} {desc} (num_classes=10, trained {info['steps']} steps x {info['batch']} "
           f"({info['seconds']:.0f} s) on jittered {SIZE}x{SIZE} crops of the two photos, task: photo id x 5 vertical "
           f"bands of the crop centre; AdamW wd {info['weight_decay']}, label smoothing 0.1, cosine LR from "
           f"{info['lr']}, int8-noise stability weight {info['noise_weight']}, BN stats recomputed; accuracy "
           f"{info['test_acc']} on 256 photo_batch(split='test') crops) -> torch {v['torch']} "
           f"torch.onnx.export(dynamo=False) opset {OPSET} dynamic batch")
    inp = {"layout": "NCHW", "height": SIZE, "width": SIZE, "channels": 3, "mean": MEAN, "std": STD}
    common = {"kind": "classifier", "float_reference": fpath.name, "input": inp, "params": int(params),
              "macs": macs, "made_by": f"models/real/make_torch.py {name}", "training": info}
    entries = [dict(file=fpath.name, source=src, quant="float", **common)]
    qdq = HERE / f"{base}_qdq.onnx"
    q = quantize(fpath, qdq, "qdq", True, imagenet_norm)
    entries.append(dict(file=qdq.name, source=src + f" -> onnxruntime {v['onnxruntime']} quant_pre_process + "
                        f"quantize_static QDQ per_channel=True (activations QInt8, weights QInt8, MinMax, "
                        f"{CALIB_N} photo calib crops)", quant="qdq", quantization=q, **common,
                        **int8_vs_float(fpath, qdq, imagenet_norm)))
    qop = HERE / f"{base}_qop.onnx"
    q = quantize(fpath, qop, "qop", qop_per_channel, imagenet_norm)
    entries.append(dict(file=qop.name, source=src + f" -> onnxruntime {v['onnxruntime']} quant_pre_process + "
                        f"quantize_static QOperator per_channel={qop_per_channel} (activations QUInt8, weights "
                        f"QInt8, MinMax, {CALIB_N} photo calib crops)", quant="qoperator", quantization=q, **common,
                        **int8_vs_float(fpath, qop, imagenet_norm)))
    update_manifest(entries)
    print(f"  done {name} in {time.time() - t0:.0f}s", flush=True)


def onnx_params_macs(m: onnx.ModelProto, shape: list[int]) -> tuple[int, int]:
    """Weights (initializers and Constant tensors) and Conv/ConvTranspose/MatMul/Gemm MACs per
    image, from ONNX shape inference with the input fixed to ``shape`` (batch 1)."""
    from onnx import numpy_helper
    m = onnx.ModelProto.FromString(m.SerializeToString())
    dims = m.graph.input[0].type.tensor_type.shape.dim
    for d, v in zip(dims, shape):
        d.Clear()
        d.dim_value = v
    m = onnx.shape_inference.infer_shapes(m)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output)}
    consts = {t.name: list(t.dims) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    consts[n.output[0]] = list(numpy_helper.to_array(a.t).shape)
    params = int(sum(int(np.prod(v)) for v in consts.values()))
    macs = 0
    for n in m.graph.node:
        if n.op_type in ("Conv", "ConvTranspose") and n.input[1] in consts:
            w = consts[n.input[1]]
            out = shapes.get(n.output[0]) if n.op_type == "Conv" else shapes.get(n.input[0])
            if out:
                macs += int(np.prod(out[1:])) * int(np.prod(w[1:]))
        elif n.op_type in ("MatMul", "Gemm") and n.input[1] in consts:
            a = shapes.get(n.input[0])
            w = consts[n.input[1]]
            if a:
                macs += int(np.prod(a[1:])) * int(w[-1] if n.op_type == "MatMul" else np.prod(w) // a[-1])
    return params, macs


# ---------------------------------------------------------------- models


class ThinResNet18(torchvision.models.resnet.ResNet):
    """torchvision's ResNet with BasicBlock [2,2,2,2] (ResNet-18 topology) at stage widths
    w, 2w, 4w, 8w instead of 64..512: torchvision's resnet18() hard-codes 64..512 (11.2M
    params, 45 MB float), too big for the size budget. Layers/forward are torchvision's own."""

    def __init__(self, base: int = 8, num_classes: int = 10):
        nn.Module.__init__(self)
        from torchvision.models.resnet import BasicBlock
        self._norm_layer = nn.BatchNorm2d
        self.inplanes = base
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, base, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(base)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(BasicBlock, base, 2)
        self.layer2 = self._make_layer(BasicBlock, base * 2, 2, stride=2)
        self.layer3 = self._make_layer(BasicBlock, base * 4, 2, stride=2)
        self.layer4 = self._make_layer(BasicBlock, base * 8, 2, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(base * 8, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")


def m_resnet18():
    torch.manual_seed(0)
    classifier("resnet18", ThinResNet18(8), "ResNet (models.resnet.ResNet/BasicBlock, ResNet-18 layers [2,2,2,2], "
               "stage widths 8/16/32/64)", budget_s=150.0)


def m_mobilenet_v3_small():
    torch.manual_seed(0)
    classifier("mobilenet_v3_small", torchvision.models.mobilenet_v3_small(num_classes=10, width_mult=0.35),
               "mobilenet_v3_small(width_mult=0.35)", budget_s=150.0)


def m_shufflenet_v2():
    torch.manual_seed(0)
    classifier("shufflenet_v2", torchvision.models.shufflenet_v2_x0_5(num_classes=10), "shufflenet_v2_x0_5()",
               qop_per_channel=False, budget_s=150.0)


def m_squeezenet():
    torch.manual_seed(0)
    classifier("squeezenet", torchvision.models.squeezenet1_1(num_classes=10), "squeezenet1_1()",
               qop_per_channel=False, lr=1e-3, budget_s=150.0, warmup=0.2)  # no BatchNorm: needs warm-up


def m_efficientnet_b0():
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
    torch.manual_seed(0)
    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=1.0)
    model = EfficientNet(setting, 0.2, num_classes=10, last_channel=last)
    classifier("efficientnet_b0", model, "EfficientNet(_efficientnet_conf('efficientnet_b0', width_mult=0.25, "
               "depth_mult=1.0), dropout 0.2)", budget_s=300.0, noise_w=1.0)


# ---------------------------------------------------------------- YOLO-style detector


class ConvBnSiLU(nn.Sequential):
    def __init__(self, cin, cout, k=3, s=1):
        super().__init__(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.SiLU())


class C2f(nn.Module):
    """ultralytics-style C2f: 1x1 conv, chunk(2) (Split), bottlenecks, Concat, 1x1 conv."""

    def __init__(self, cin, cout, n=1):
        super().__init__()
        self.c = cout // 2
        self.cv1 = ConvBnSiLU(cin, 2 * self.c, 1)
        self.m = nn.ModuleList(nn.Sequential(ConvBnSiLU(self.c, self.c), ConvBnSiLU(self.c, self.c)) for _ in range(n))
        self.cv2 = ConvBnSiLU((2 + n) * self.c, cout, 1)

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class TinyYOLO(nn.Module):
    """YOLOv8-like: backbone (SiLU, C2f), FPN neck (nn.Upsample nearest + Concat), decoupled
    Detect head at strides 8 and 16 with DFL (reg_max 8: Reshape, Transpose, Softmax, 1x1 conv
    with fixed arange weights), dist2bbox with anchors, Sigmoid class scores. Output
    [batch, 4 + nc, anchors] like ultralytics' exported YOLOv8."""

    def __init__(self, nc=3, reg_max=8, size=SIZE):
        super().__init__()
        self.nc, self.reg_max = nc, reg_max
        self.b0 = ConvBnSiLU(3, 8, 3, 2)            # /2
        self.b1 = ConvBnSiLU(8, 16, 3, 2)           # /4
        self.b2 = C2f(16, 16)
        self.b3 = ConvBnSiLU(16, 32, 3, 2)          # /8  -> P3
        self.b4 = C2f(32, 32)
        self.b5 = ConvBnSiLU(32, 64, 3, 2)          # /16 -> P4
        self.b6 = C2f(64, 64)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.n1 = C2f(64 + 32, 32)                  # P3 out
        self.down = ConvBnSiLU(32, 32, 3, 2)
        self.n2 = C2f(32 + 64, 64)                  # P4 out
        chs = (32, 64)
        c2, c3 = 16, 16
        self.box = nn.ModuleList(nn.Sequential(ConvBnSiLU(c, c2), ConvBnSiLU(c2, c2), nn.Conv2d(c2, 4 * reg_max, 1))
                                 for c in chs)
        self.cls = nn.ModuleList(nn.Sequential(ConvBnSiLU(c, c3), ConvBnSiLU(c3, c3), nn.Conv2d(c3, nc, 1))
                                 for c in chs)
        self.dfl = nn.Conv2d(reg_max, 1, 1, bias=False).requires_grad_(False)
        self.dfl.weight.data[:] = torch.arange(reg_max, dtype=torch.float32).view(1, reg_max, 1, 1)
        anchors, strides = [], []
        for s in (8, 16):
            h = w = size // s
            sy, sx = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
            anchors.append(torch.stack((sx, sy), -1).view(-1, 2))
            strides.append(torch.full((h * w, 1), float(s)))
        self.register_buffer("anchors", torch.cat(anchors).transpose(0, 1)[None])   # [1,2,A]
        self.register_buffer("strides", torch.cat(strides).transpose(0, 1)[None])   # [1,1,A]

    def forward(self, x):
        x = self.b2(self.b1(self.b0(x)))
        p3 = self.b4(self.b3(x))
        p4 = self.b6(self.b5(p3))
        n3 = self.n1(torch.cat([self.up(p4), p3], 1))
        n4 = self.n2(torch.cat([self.down(n3), p4], 1))
        b = x.shape[0]
        feats = [torch.cat([self.box[i](f), self.cls[i](f)], 1) for i, f in enumerate((n3, n4))]
        y = torch.cat([f.view(b, 4 * self.reg_max + self.nc, -1) for f in feats], 2)
        box, cls = y.split((4 * self.reg_max, self.nc), 1)
        a = box.shape[2]
        dist = self.dfl(box.view(b, 4, self.reg_max, a).transpose(2, 1).softmax(1)).view(b, 4, a)
        lt, rb = dist.chunk(2, 1)
        x1y1 = self.anchors - lt
        x2y2 = self.anchors + rb
        xywh = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * self.strides
        return torch.cat((xywh, cls.sigmoid()), 1)


def yolo_targets(model: "TinyYOLO", pos) -> torch.Tensor:
    """Detection targets [n, 4+3, A] for crops at ``pos`` (pid, x, y, side): the photo is cut into 3
    vertical stripes (213 px wide); at every anchor the class is the stripe under it (one-hot), the
    box spans that stripe's part of the crop horizontally and the whole crop vertically, each side
    clipped to the DFL's reach ((reg_max-1)*stride)."""
    W = 640
    st = model.strides[0, 0]
    ax, ay = model.anchors[0, 0] * st, model.anchors[0, 1] * st
    lim = (model.reg_max - 1) * st * 0.99
    out = []
    for pid, x0, y0, side in pos:
        gx = x0 + ax * side / SIZE
        k = torch.clamp((gx * 3 // W).long(), 0, 2)
        left = torch.maximum(k * W / 3.0, torch.tensor(float(x0)))
        right = torch.minimum((k + 1) * W / 3.0, torch.tensor(float(x0 + side)))
        l = torch.minimum((gx - left) * SIZE / side, lim)
        r = torch.minimum((right - gx) * SIZE / side, lim)
        t = torch.minimum(ay, lim)
        b = torch.minimum(SIZE - ay, lim)
        x1, x2, y1, y2 = ax - l, ax + r, ay - t, ay + b
        box = torch.stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1))
        out.append(torch.cat((box, F.one_hot(k, 3).T.float()), 0))
    return torch.stack(out)


def m_yolo():
    t0 = time.time()
    print("yolo", flush=True)
    torch.manual_seed(0)
    model = TinyYOLO()
    st = model.strides

    def loss_fn(out, y, pos):
        tgt = yolo_targets(model, pos)
        box = (F.smooth_l1_loss(out[:, :4] / st, tgt[:, :4] / st))
        cls = F.binary_cross_entropy(out[:, 4:].clamp(1e-6, 1 - 1e-6), tgt[:, 4:] * 0.9 + 0.05)
        return box + cls

    def acc_fn(out, y, pos):
        tgt = yolo_targets(model, pos)
        return float((out[:, 4:].argmax(1) == tgt[:, 4:].argmax(1)).float().mean())

    prep_t = lambda px: px
    info = train(model, lr=3e-3, budget_s=150.0, prep=prep_t, loss_fn=loss_fn, acc_fn=acc_fn,
                 view=lambda o: torch.cat((o[:, :4] / st, o[:, 4:] * 4), 1))
    params = sum(p.numel() for p in model.parameters())
    macs = count_macs(model, torch.zeros(1, 3, SIZE, SIZE))
    v = versions()
    fpath = HERE / "torch_yolo_tiny_float.onnx"
    export(model, fpath, out_names=("output0",))
    src = (f"torch {v['torch']} hand-written YOLOv8-style detector (SiLU backbone with C2f, Upsample+Concat neck, "
           f"Detect head with DFL reg_max 8, nc 3) trained {info['steps']} steps x {info['batch']} "
           f"({info['seconds']:.0f} s) on jittered {SIZE}x{SIZE} crops of the two photos, task: at every anchor the "
           f"class = which of 3 vertical stripes of the photo lies under it, box = that stripe's extent in the crop "
           f"(smooth-L1 in stride units + BCE); AdamW wd {info['weight_decay']}, cosine LR from {info['lr']}, "
           f"int8-noise stability weight {info['noise_weight']}, BN stats recomputed; per-anchor class accuracy "
           f"{info['test_acc']} on 256 photo_batch(split='test') crops) -> "
           f"torch.onnx.export(dynamo=False) opset {OPSET} dynamic batch")
    inp = {"layout": "NCHW", "height": SIZE, "width": SIZE, "channels": 3, "scale": 1 / 255.0, "offset": 0.0}
    common = {"kind": "detector", "float_reference": fpath.name, "input": inp, "params": int(params), "macs": macs,
              "made_by": "models/real/make_torch.py yolo", "training": info,
              "output": "output0 [batch, 4+3, 80]: xywh in pixels (anchors at strides 8 and 16) + sigmoid scores"}
    prep = lambda nhwc: np.ascontiguousarray((nhwc / 255.0).transpose(0, 3, 1, 2)).astype(np.float32)
    entries = [dict(file=fpath.name, source=src, quant="float", **common)]
    qdq = HERE / "torch_yolo_tiny_qdq.onnx"
    q = quantize(fpath, qdq, "qdq", True, prep)
    m = int8_vs_float(fpath, qdq, prep, cls_slice=slice(4, None))
    m["top1_vs_float_note"] = "per-anchor argmax over the 3 class scores"
    entries.append(dict(file=qdq.name, source=src + f" -> onnxruntime {v['onnxruntime']} quant_pre_process + "
                        f"quantize_static QDQ per_channel=True (activations QInt8, weights QInt8, MinMax, {CALIB_N} "
                        "photo calib crops)", quant="qdq", quantization=q, **common, **m))
    update_manifest(entries)
    print(f"  done yolo in {time.time() - t0:.0f}s", flush=True)


# ---------------------------------------------------------------- rapidocr


RAPIDOCR_VERSION = "1.2.3"  # ships PP-OCRv3 det (2.4 MB); 1.4.x ships PP-OCRv4 det (4.7 MB), over the size budget


def m_rapidocr():
    """Copy rapidocr-onnxruntime's det and cls models unchanged out of its PyPI wheel.

    The wheel is fetched with pip (``pip download --no-deps rapidocr-onnxruntime==1.2.3``)
    rather than installed, so it does not disturb the venv's newer rapidocr. The cls model is
    byte-identical in 1.2.3 and 1.4.4 (sha256 e47acedf...)."""
    import hashlib
    import subprocess
    import zipfile
    with tempfile.TemporaryDirectory() as td:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        f"rapidocr-onnxruntime=={RAPIDOCR_VERSION}", "-d", td], check=True)
        whl = next(Path(td).glob("rapidocr_onnxruntime-*.whl"))
        entries = []
        common_src = f"rapidocr-onnxruntime {RAPIDOCR_VERSION} (PyPI wheel {whl.name}), file shipped at "
        imagenet = {"mean": MEAN, "std": STD}
        half = {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5]}
        for rel, out, kind, inp, note in [
            ("rapidocr_onnxruntime/models/ch_PP-OCRv3_det_infer.onnx", "rapidocr_ppocrv3_det.onnx", "ocr-det",
             {"layout": "NCHW", "height": 160, "width": 160, "channels": 3, **imagenet, "channel_order": "BGR",
              "note": "H,W are -1 in the model: any multiple of 32 works; normalisation as in the package's "
                      "ch_ppocr_v3_det/text_detect.py (scale 1/255, ImageNet mean/std, on cv2 BGR images)"},
             "PP-OCRv3 text detection (DB), Paddle2ONNX; output [batch,1,H,W] text probability map"),
            ("rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", "rapidocr_ppocr_mobile_v2_cls.onnx",
             "ocr-cls",
             {"layout": "NCHW", "height": 48, "width": 192, "channels": 3, **half, "channel_order": "BGR",
              "note": "cls_image_shape [3,48,192]: resize to height 48, (x/255-0.5)/0.5, pad width to 192 with 0"},
             "PP-OCR mobile v2.0 text direction classifier, Paddle2ONNX; output [batch,2] softmax over ['0','180']"),
        ]:
            with zipfile.ZipFile(whl) as z:
                data = z.read(rel)
            (HERE / out).write_bytes(data)
            m = onnx.load(str(HERE / out))
            params, macs = onnx_params_macs(m, [1, 3, inp["height"], inp["width"]])
            entries.append({"file": out, "source": common_src + rel + f" ({note}); copied unchanged",
                            "kind": kind, "quant": "float", "float_reference": out, "input": inp, "params": params,
                            "macs": macs, "macs_note": f"Conv/MatMul MACs at {inp['height']}x{inp['width']} "
                            "from ONNX shape inference", "made_by": "models/real/make_torch.py rapidocr",
                            "sha256": hashlib.sha256(data).hexdigest(),
                            "opset": [f"{o.domain or 'ai.onnx'}:{o.version}" for o in m.opset_import],
                            "producer": f"{m.producer_name} {m.producer_version}"})
            print("  copied", out, len(data), flush=True)
    update_manifest(entries)


# ---------------------------------------------------------------- check


def check():
    """Run every manifest file in onnxruntime on 4 photo crops at batch 1 and batch 3."""
    man = json.loads(MANIFEST.read_text())
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    for e in man:
        inp = e["input"]
        px = photos.photo_batch(4, inp["height"], inp["width"], inp["channels"], split="test")
        if "mean" in inp:
            if inp.get("channel_order") == "BGR":
                px = px[..., ::-1]
            x = (px / 255.0 - np.array(inp["mean"])) / np.array(inp["std"])
        else:
            x = px * inp["scale"] + inp["offset"]
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2)).astype(np.float32)
        s = ort.InferenceSession(str(HERE / e["file"]), opts, providers=["CPUExecutionProvider"])
        name = s.get_inputs()[0].name
        one = np.concatenate([s.run(None, {name: x[i:i + 1]})[0] for i in range(4)])
        three = np.concatenate([s.run(None, {name: x[0:3]})[0], s.run(None, {name: x[1:4]})[0][2:]])
        diff = float(np.abs(one - three).max())
        msg = f"{e['file']:42s} out {list(one.shape)} batch1-vs-batch3 maxdiff {diff:.2e}"
        if e["kind"] == "classifier":
            srt = np.sort(one, 1)
            msg += f" argmax {one.argmax(1).tolist()} top1-top2 {np.round(srt[:, -1] - srt[:, -2], 2).tolist()}"
            if e["quant"] != "float":
                ref = ort.InferenceSession(str(HERE / e["float_reference"]), opts, providers=["CPUExecutionProvider"])
                fr = ref.run(None, {name: x})[0]
                msg += f" float argmax {fr.argmax(1).tolist()}"
        print(msg, flush=True)


MODELS = {"resnet18": m_resnet18, "mobilenet_v3_small": m_mobilenet_v3_small, "shufflenet_v2": m_shufflenet_v2,
          "squeezenet": m_squeezenet, "efficientnet_b0": m_efficientnet_b0, "yolo": m_yolo, "rapidocr": m_rapidocr}

if __name__ == "__main__":
    args = sys.argv[1:] or list(MODELS) + ["check"]
    for a in args:
        check() if a == "check" else MODELS[a]()
