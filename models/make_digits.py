"""Train a small CNN on scikit-learn's digits and write it as float and int8 TFLite models.

Run ``python models/make_digits.py`` from the repository root. This script
(and only this script) needs ``scikit-learn`` and ``torch`` (CPU); the
toolkit and its tests never import them. It writes

* ``digits_float.tflite``: the trained network in float32;
* ``digits_int8.tflite``: the same network full-integer int8 (int8 input and
  output), quantized the way the TFLite converter does after calibration;
* ``digits_test.npz``: the held-out split, ``input`` float32 [N, 1, 8, 8, 1]
  (pixels / 16) and ``labels`` int64 [N];
* ``digits_calibration.npz``: 64 training images, for ``--calibration``.

The network (NHWC, TFLite layouts)::

    input [1,8,8,1]
    -> CONV_2D 3x3 SAME, 16 filters, RELU    [1,8,8,16]   conv1
    -> MAX_POOL_2D 2x2 s2                     [1,4,4,16]   pool1
    -> CONV_2D 3x3 SAME, 32 filters, RELU    [1,4,4,32]   conv2
    -> MAX_POOL_2D 2x2 s2                     [1,2,2,32]   pool2
    -> RESHAPE [1,128]                                     flatten
    -> FULLY_CONNECTED 10                     [1,10]       logits

Quantization follows ``make_mobilenet.py``: the float model runs in LiteRT
with every tensor preserved on the calibration images; each activation's
min/max gives its (scale, zero point) (``choose_params``; pools and reshape
share their input's), conv filters are symmetric int8 per output channel,
the FC weights per tensor, biases int32 on ``s_in * s_w``.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np

from hexnn_import.testing import TFLiteBuilder, choose_params, quantize_bias, quantize_per_channel
from hexnn_import.testing.litert import make_interpreter

SEED = 20260315
MODELS_DIR = Path(__file__).resolve().parent
SHAPES = {"input": (1, 8, 8, 1), "conv1": (1, 8, 8, 16), "pool1": (1, 4, 4, 16), "conv2": (1, 4, 4, 32),
          "pool2": (1, 2, 2, 32), "flatten": (1, 128), "logits": (1, 10)}
SHARED = {"pool1": "conv1", "pool2": "conv2", "flatten": "pool2"}  # tensors that reuse their input's params


def load_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Digits as float32 NHWC in [0, 1]; a seeded stratified 75 / 25 split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[..., None]
    return tuple(train_test_split(x, d.target.astype(np.int64), test_size=0.25, random_state=SEED,
                                  stratify=d.target))  # type: ignore[return-value]


def train(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Train the CNN with torch; return TFLite-layout weights (filters OHWI, FC [out, in] over HWC)."""
    import torch
    from torch import nn

    torch.manual_seed(SEED)
    net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
    fc = nn.Linear(128, 10)
    params = list(net.parameters()) + list(fc.parameters())
    opt = torch.optim.Adam(params, lr=3e-3, weight_decay=1e-4)
    xt = torch.from_numpy(x).permute(0, 3, 1, 2)
    yt = torch.from_numpy(y)
    for _ in range(40):
        order = torch.randperm(len(xt))
        for i in range(0, len(xt), 64):
            idx = order[i:i + 64]
            # flatten in NHWC order so the FC weights read a TFLite RESHAPE of NHWC
            logits = fc(net(xt[idx]).permute(0, 2, 3, 1).flatten(1))
            loss = nn.functional.cross_entropy(logits, yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    c1, c2 = net[0], net[3]
    return {"conv1/w": c1.weight.detach().numpy().transpose(0, 2, 3, 1), "conv1/b": c1.bias.detach().numpy(),
            "conv2/w": c2.weight.detach().numpy().transpose(0, 2, 3, 1), "conv2/b": c2.bias.detach().numpy(),
            "logits/w": fc.weight.detach().numpy(), "logits/b": fc.bias.detach().numpy()}


def build(w: dict[str, np.ndarray], params: dict[str, tuple[float, int]] | None) -> bytes:
    """TFLite bytes: float32 when ``params`` is None, else full-integer int8 with those activation params."""
    kind = "float" if params is None else "int8"
    b = TFLiteBuilder(description=f"hexnn-import digits CNN, {kind} (models/make_digits.py)")

    def act(name: str) -> int:
        if params is None:
            return b.add_tensor(name, SHAPES[name], np.float32)
        s, zp = params[name]
        return b.add_tensor(name, SHAPES[name], np.int8, scale=s, zero_point=zp)

    def weights(layer: str, src: str, per_channel: bool) -> tuple[int, int]:
        wf, bf = w[f"{layer}/w"], w[f"{layer}/b"]
        if params is None:
            return b.add_const(f"{layer}/weights", wf.astype(np.float32)), b.add_const(f"{layer}/bias", bf)
        if per_channel:
            q, scales = quantize_per_channel(wf, axis=0)
        else:
            scales = np.array([np.float32(np.abs(wf).max() / 127)], np.float32)
            q = np.clip(np.round(wf / scales[0]), -127, 127).astype(np.int8)
        wt = b.add_const(f"{layer}/weights", q, scale=scales, zero_point=np.zeros(len(scales), np.int64))
        qb, bs = quantize_bias(bf, params[src][0], scales)
        return wt, b.add_const(f"{layer}/bias", qb, scale=bs, zero_point=np.zeros(len(bs), np.int64))

    q = params is not None
    pool = {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2}
    x = act("input")
    h = x
    for conv, src, pl in (("conv1", "input", "pool1"), ("conv2", "pool1", "pool2")):
        wt, bt = weights(conv, src, True)
        c = act(conv)
        b.add_operator("CONV_2D", [h, wt, bt], [c], {"padding": "SAME", "stride_w": 1, "stride_h": 1},
                       fused_activation="RELU", version=3 if q else 1)
        h = act(pl)
        b.add_operator("MAX_POOL_2D", [c], [h], pool, version=2 if q else 1)
    flat = act("flatten")
    b.add_operator("RESHAPE", [h, b.add_const("flatten/shape", np.array([1, 128], np.int32))], [flat],
                   {"new_shape": [1, 128]})
    wt, bt = weights("logits", "flatten", False)
    out = act("logits")
    b.add_operator("FULLY_CONNECTED", [flat, wt, bt], [out], {"keep_num_dims": False}, version=4 if q else 1)
    b.set_io([x], [out])
    return b.build()


def observe(model: bytes, xs: np.ndarray) -> dict[str, tuple[float, float]]:
    """min/max of every activation over ``xs``, from LiteRT with all tensors preserved."""
    interp = make_interpreter(model, preserve_all_tensors=True)
    index = {d["name"]: d["index"] for d in interp.get_tensor_details()}
    inp = interp.get_input_details()[0]["index"]
    lo, hi = {n: np.inf for n in SHAPES}, {n: -np.inf for n in SHAPES}
    for x in xs:
        interp.set_tensor(inp, x[None])
        interp.invoke()
        for n in SHAPES:
            a = interp.get_tensor(index[n])
            lo[n], hi[n] = min(lo[n], float(a.min())), max(hi[n], float(a.max()))
    return {n: (lo[n], hi[n]) for n in SHAPES}


def float_accuracy(model: bytes, xs: np.ndarray, ys: np.ndarray) -> float:
    """Top-1 accuracy of the float model in LiteRT."""
    interp = make_interpreter(model)
    inp, out = interp.get_input_details()[0]["index"], interp.get_output_details()[0]["index"]
    hits = 0
    for x, y in zip(xs, ys):
        interp.set_tensor(inp, x[None])
        interp.invoke()
        hits += int(np.argmax(interp.get_tensor(out)) == y)
    return hits / len(ys)


def npz_bytes(**arrays: np.ndarray) -> bytes:
    """A compressed .npz in memory."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def main() -> int:
    """Train, quantize, write the two models and the two .npz files."""
    x_train, x_test, y_train, y_test = load_split()
    weights = train(x_train, y_train)
    float_model = build(weights, None)
    calib = x_train[np.random.default_rng(SEED).choice(len(x_train), 64, replace=False)]
    params = {n: choose_params(*r, np.int8) for n, r in observe(float_model, x_train).items()}
    for name, src in SHARED.items():
        params[name] = params[src]
    files = {"digits_float.tflite": float_model, "digits_int8.tflite": build(weights, params),
             "digits_test.npz": npz_bytes(input=x_test[:, None], labels=y_test),
             "digits_calibration.npz": npz_bytes(input=calib[:, None])}
    for name, data in files.items():
        (MODELS_DIR / name).write_bytes(data)
        print(f"wrote {MODELS_DIR / name} ({len(data)} bytes)")
    print(f"float accuracy on the held-out split: {float_accuracy(float_model, x_test, y_test):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
