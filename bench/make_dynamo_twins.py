"""A torchvision-style MobileNetV2 exported by TorchScript and by dynamo, both QDQ-quantized alike (issue 33 item 10).

Development tool, run in the torch venv (torch, onnx, onnxruntime, onnxscript; torchvision is not needed: the
network is torchvision's ``mobilenet_v2`` architecture written out - ConvBNReLU6 stem, 17 inverted residual
blocks of expansion 6 with ReLU6, 1x1 head of 1280, dropout, Linear)::

    python3 -c "from hexnn_import.testing.photos import photo_batch; import numpy as np; \\
        np.save('/tmp/twins/calib.npy', photo_batch(48, 96, 96, split='calib'))"
    /work/venv-torch/bin/python bench/make_dynamo_twins.py /tmp/twins
    python3 bench/onnx_layerwise.py --folder /tmp/twins

Weights are seeded random with BatchNorm statistics drawn per channel (so that folded scales differ by
channel, as in a trained net); a layer-by-layer comparison needs the ops, not accuracy. Writes
``mnv2_{torchscript,dynamo}_{float,qdq}.onnx`` (input 'input' [1, 3, 96, 96], ImageNet-normalized photo crops)
and ``manifest_twins.json``; quantize_static as ``models/real/make_families_torch.py`` does (QUInt8
activations, QInt8 weights, per tensor, MinMax) on the same 48 calibration crops for both.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import torch
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)
from torch import nn

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
#: torchvision mobilenet_v2 inverted residual settings: expansion, channels, repeats, stride
SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
            (6, 320, 1, 1)]


def cbr(cin: int, cout: int, k: int, s: int, groups: int = 1, act: bool = True) -> nn.Sequential:
    layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU6(inplace=True)) if act else nn.Sequential(*layers)


class Inverted(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hid = cin * expand
        layers = [cbr(cin, hid, 1, 1)] if expand != 1 else []
        layers += [cbr(hid, hid, 3, stride, groups=hid), cbr(hid, cout, 1, 1, act=False)]
        self.conv = nn.Sequential(*layers)
        self.res = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) if self.res else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = [cbr(3, 32, 3, 2)]
        cin = 32
        for t, c, n, s in SETTINGS:
            for i in range(n):
                layers.append(Inverted(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(cbr(cin, 1280, 1, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


class Reader(CalibrationDataReader):
    def __init__(self, x: np.ndarray) -> None:
        self.x, self.i = x, 0

    def get_next(self) -> dict | None:
        if self.i >= len(self.x):
            return None
        self.i += 1
        return {"input": self.x[self.i - 1:self.i]}


def build() -> nn.Module:
    torch.manual_seed(20261129)
    net = MobileNetV2()
    g = torch.Generator().manual_seed(7)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=g) * 0.8 + 0.6)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return net.eval()


def main(out: Path) -> int:
    x = np.load(out / "calib.npy").astype(np.float32) / 255.0
    x = ((x - np.asarray(MEAN, np.float32)) / np.asarray(STD, np.float32)).transpose(0, 3, 1, 2).copy()
    net = build()
    entries = []
    for kind, dynamo in (("torchscript", False), ("dynamo", True)):
        fp, qp = out / f"mnv2_{kind}_float.onnx", out / f"mnv2_{kind}_qdq.onnx"
        with torch.no_grad():
            kw = {"external_data": False} if dynamo else {"do_constant_folding": True, "opset_version": 17}
            torch.onnx.export(net, (torch.from_numpy(x[:1]),), str(fp), dynamo=dynamo, input_names=["input"],
                              output_names=["logits"], **kw)
        quantize_static(str(fp), str(qp), Reader(x), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        ops = sorted({n.op_type for n in onnx.load(str(qp)).graph.node})
        entries.append({"file": qp.name, "quant": "qdq", "kind": "classifier", "float_reference": fp.name,
                        "input": {"layout": "NCHW", "height": 96, "width": 96, "channels": 3, "mean": MEAN,
                                  "std": STD},
                        "params": int(sum(p.numel() for p in net.parameters())), "ops": ops,
                        "source": f"torch {torch.__version__}, torch.onnx.export dynamo={dynamo}"})
    (out / "manifest_twins.json").write_text(json.dumps(entries, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
