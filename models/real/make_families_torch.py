"""Make small real torch -> ONNX models of the model families the importers must learn.

Development tool only: it needs torch, onnx, onnxruntime, onnxscript and scikit-learn, and is never
imported by the package or its tests. Run it in a venv outside the repository:

    python3 -m venv /work/venv-torch
    /work/venv-torch/bin/pip install torch==2.13.0 onnx onnxruntime scikit-learn onnxscript   # CPU wheel
    /work/venv-torch/bin/python models/real/make_families_torch.py [names...]

names (default: all, in this order) and the files each writes in models/real/families/:

    encoder     torch_encoder_digits_{float,qdq}.onnx (opset 17), torch_encoder_digits_op13_float.onnx
    lstm        torch_lstm_digits_{float,qdq}.onnx
    gru         torch_gru_digits_{float,qdq}.onnx
    conv1d      torch_conv1d_logmel_digits_{float,qdq}.onnx
    cnn         torch_cnn_digits_{float,qdq}.onnx (TorchScript) and torch_cnn_digits_dynamo_{float,qdq}.onnx
                (dynamo=True), both from the one trained network
    cnn_opset9  torch_cnn_digits_opset9_float.onnx
    dwmult      torch_dwmult_digits_{float,qdq}.onnx, a depthwise Conv2d(8, 16, groups=8) (depth multiplier 2)
    refresh     (no training) re-measures every file of the manifest and rewrites its notes

Every model trains (seeded, capped at ``BUDGET_S`` seconds of wall clock) on the 1347 training
images of scikit-learn's digits, split as ``models/make_digits.py`` ``load_split()`` does (pixels / 16,
stratified 75 / 25, ``random_state=20260315``), presented in the model's own way: as a sequence of 8
rows of 8 pixels [1, 8, 8], as a 64-sample 1-D signal [1, 1, 64] or as an image [1, 1, 8, 8]. It is
exported with batch 1 by ``torch.onnx.export`` (TorchScript exporter, ``dynamo=False``, unless the
name says dynamo) and, where the name ends in ``_qdq``, quantized by onnxruntime's ``quantize_static``
(QDQ format, onnxruntime's default types: QUInt8 activations, QInt8 weights, per tensor, MinMax,
calibrated on 128 training samples; no ``quant_pre_process``, so the QDQ graph wraps the exported
graph node for node). The graphs are written as the tools emit them: nothing is edited.

Outputs in ``models/real/families/``: ``torch_*.onnx``, ``digits_torch_{seq,sig64,img8}_test.npz``
(the 450 held-out samples, key = the model's input name, plus ``labels``) and ``manifest_torch.json``
(schema: one entry per file, merged by file name; accuracies from onnxruntime on the whole split).
"""
from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

SEED = 20260315
HERE = Path(__file__).resolve().parent
OUT = HERE / "families"
MANIFEST = OUT / "manifest_torch.json"
BUDGET_S = 90.0
CALIB_N = 128
INPUT = "input"
SCRIPT = "models/real/make_families_torch.py"

torch.set_num_threads(1)  # two cores shared by several engineers
# nn.TransformerEncoderLayer's eval fast path traces to aten::_transformer_encoder_layer_fwd, which the
# TorchScript exporter cannot export: take the plain module path (same arithmetic)
torch.backends.mha.set_fastpath_enabled(False)


# ---------------------------------------------------------------- data


def load_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """x_train [1347, 8, 8], x_test [450, 8, 8] (pixels / 16, float32), y_train, y_test (int64):
    the split of models/make_digits.py load_split()."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)
    return tuple(train_test_split(x, d.target.astype(np.int64), test_size=0.25, random_state=SEED,
                                  stratify=d.target))  # type: ignore[return-value]


VIEWS: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray]]] = {
    "seq": ("digits_torch_seq_test.npz", lambda x: x.reshape(-1, 8, 8)),
    "sig64": ("digits_torch_sig64_test.npz", lambda x: x.reshape(-1, 1, 64)),
    "img8": ("digits_torch_img8_test.npz", lambda x: x.reshape(-1, 1, 8, 8)),
}


# ---------------------------------------------------------------- models


class Encoder(nn.Module):
    """BERT-style: 8 tokens (digit rows) x 8 pixels -> Linear 32 + learned positions, 2 post-norm
    TransformerEncoderLayers (2 heads, FFN 64, exact gelu), mean over tokens, Linear 10."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(8, 32)
        self.pos = nn.Parameter(torch.randn(1, 8, 32) * 0.1)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d_model=32, nhead=2, dim_feedforward=64,
                                                                activation="gelu", batch_first=True,
                                                                dropout=0.1) for _ in range(2)])
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x) + self.pos
        for layer in self.layers:
            h = layer(h)
        return self.head(h.mean(dim=1))


class Recurrent(nn.Module):
    """nn.LSTM or nn.GRU (8 -> 32, batch_first) over the 8 rows, last step -> Linear 10."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(8, 32, batch_first=True)
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


class LogMelConv1d(nn.Module):
    """Audio-style front end on the 64 pixels as a signal: Conv1d(1,16,5) -> power (pow 2) -> Conv1d
    16->16 k1 (the 'mel' mix) -> clamp(min = amax * 1e-2, a computed bound) -> log -> minus the
    per-band mean over time (CMVN) -> Conv1d(16,32,3) relu -> MaxPool1d 2 -> mean -> Linear 10."""

    def __init__(self) -> None:
        super().__init__()
        self.filt = nn.Conv1d(1, 16, 5)
        self.mel = nn.Conv1d(16, 16, 1)
        self.conv = nn.Conv1d(16, 32, 3)
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = torch.pow(self.filt(x), 2)
        m = self.mel(p)
        # floor at 1 % of the peak (40 dB): a 1e-4 floor sat below one uint8 step of the QDQ model's
        # Clip output, which then rounded to 0 and Log gave -inf
        m = torch.log(torch.clamp(m, min=m.amax() * 1e-2))
        m = m - m.mean(dim=2, keepdim=True)
        y = F.max_pool1d(F.relu(self.conv(m)), 2)
        return self.head(y.mean(dim=2))


class SmallCNN(nn.Module):
    """Conv 16 3x3 pad 1 relu, MaxPool 2, Conv 32 3x3 pad 1 relu, MaxPool 2, Flatten, Linear 10.
    ``legacy`` adds an unsqueeze / squeeze pair, a channel split + concat and a ReduceMean term so that
    an opset-9 export holds Unsqueeze / Squeeze / Split / ReduceMean with attribute axes."""

    def __init__(self, legacy: bool = False) -> None:
        super().__init__()
        self.legacy = legacy
        self.c1 = nn.Conv2d(1, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.max_pool2d(F.relu(self.c1(x)), 2)
        if self.legacy:
            a, b = torch.split(y, 8, dim=1)
            y = torch.cat([a, b.unsqueeze(1).squeeze(1) - b.mean(dim=(2, 3), keepdim=True)], dim=1)
        y = F.max_pool2d(F.relu(self.c2(y)), 2)
        return self.fc(torch.flatten(y, 1))


class DwMultCNN(nn.Module):
    """Conv 8 3x3 pad 1 relu, MaxPool 2, depthwise Conv2d(8, 16, 3, groups=8) pad 1 relu (depth multiplier 2),
    Conv 16 1x1 relu, mean over space, Linear 10."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 16, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(16, 16, 1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.dw(F.max_pool2d(F.relu(self.c1(x)), 2)))
        return self.fc(F.relu(self.pw(y)).mean(dim=(2, 3)))


# ---------------------------------------------------------------- train / measure


def train(model: nn.Module, x: np.ndarray, y: np.ndarray, epochs: int, lr: float = 3e-3) -> dict:
    """Adam + cosine learning rate, batches of 32, ``epochs`` passes or BUDGET_S seconds."""
    torch.manual_seed(SEED)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    t0, done = time.time(), 0
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(xt))
        for i in range(0, len(xt), 32):
            idx = order[i:i + 32]
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        done += 1
        if time.time() - t0 > BUDGET_S:
            break
    model.eval()
    return {"epochs": done, "seconds": round(time.time() - t0, 1)}


def count_macs(model: nn.Module, x: torch.Tensor) -> int:
    """Multiply-accumulates per sample: Conv1d/2d, Linear, LSTM/GRU gates (input and recurrent),
    and the two activation x activation products of each attention layer (QK^T and AV)."""
    total = [0]

    def hook(m: nn.Module, inp: tuple, out) -> None:
        o = out[0] if isinstance(out, tuple) else out
        if isinstance(m, (nn.Conv1d, nn.Conv2d)):
            total[0] += o[0].numel() * (m.in_channels // m.groups) * int(np.prod(m.kernel_size))
        elif isinstance(m, nn.Linear):
            total[0] += int(np.prod(o.shape[1:-1])) * m.in_features * m.out_features
        elif isinstance(m, (nn.LSTM, nn.GRU)):
            gates = 4 if isinstance(m, nn.LSTM) else 3
            total[0] += o.shape[1] * gates * m.hidden_size * (m.input_size + m.hidden_size)
        elif isinstance(m, nn.MultiheadAttention):
            t, e = inp[0].shape[1], m.embed_dim
            total[0] += 2 * t * t * e + 4 * t * e * e  # QK^T, AV; in-proj (3 e x e) and out-proj per token

    hs = [m.register_forward_hook(hook) for m in model.modules()]
    with torch.no_grad():
        model(x[:1])
    for h in hs:
        h.remove()
    return int(total[0])


def ops_of(path: Path) -> tuple[list[str], dict[str, int]]:
    """Sorted 'Type xN' op counts of the top graph, and the opset imports."""
    m = onnx.load(str(path))
    c = Counter(n.op_type for n in m.graph.node)
    return [f"{k} x{v}" for k, v in sorted(c.items())], {o.domain or "ai.onnx": o.version for o in m.opset_import}


def run_ort(path: Path, x: np.ndarray) -> np.ndarray:
    """The model in onnxruntime (CPU, 1 thread), one sample at a time (batch-1 graphs)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    return np.concatenate([s.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))])


class Reader(CalibrationDataReader):
    """CALIB_N training samples, one at a time."""

    def __init__(self, x: np.ndarray) -> None:
        self.x = x[:CALIB_N]
        self.i = 0

    def get_next(self) -> dict | None:
        if self.i >= len(self.x):
            return None
        self.i += 1
        return {INPUT: self.x[self.i - 1:self.i]}

    def rewind(self) -> None:
        self.i = 0


def export(model: nn.Module, path: Path, x: np.ndarray, opset: int | None, dynamo: bool = False) -> None:
    """torch.onnx.export at batch 1, input 'input', output 'logits'."""
    kw = {"opset_version": opset} if opset else {}
    if opset is not None and opset < 14:
        # the exporter has scaled_dot_product_attention (which nn.MultiheadAttention calls) only from
        # opset 14, although its decomposition (Transpose, Mul, Sqrt, MatMul, Softmax) needs nothing newer:
        # register that same symbolic for the older opset
        from torch.onnx._internal.torchscript_exporter import symbolic_opset14
        torch.onnx.register_custom_op_symbolic("aten::scaled_dot_product_attention",
                                               symbolic_opset14.scaled_dot_product_attention, opset)
    with torch.no_grad():
        if dynamo:
            torch.onnx.export(model, (torch.from_numpy(x[:1]),), str(path), dynamo=True,
                              input_names=[INPUT], output_names=["logits"], external_data=False, **kw)
        else:
            torch.onnx.export(model, (torch.from_numpy(x[:1]),), str(path), dynamo=False,
                              input_names=[INPUT], output_names=["logits"], do_constant_folding=True, **kw)
    onnx.checker.check_model(onnx.load(str(path)))


def quantize(float_path: Path, out_path: Path, xcal: np.ndarray) -> None:
    quantize_static(str(float_path), str(out_path), Reader(xcal), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    onnx.checker.check_model(onnx.load(str(out_path)))


def unwrapped_ops(path: Path) -> list[str]:
    """'Type xN' of the nodes of a QDQ graph that read an activation not produced by DequantizeLinear
    (what quantize_static left in float, shape arithmetic included)."""
    m = onnx.load(str(path))
    consts = {i.name for i in m.graph.initializer} | {"", *(o for n in m.graph.node if n.op_type == "Constant"
                                                           for o in n.output)}
    dq = {o for n in m.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
    c = Counter(n.op_type for n in m.graph.node if n.op_type not in ("QuantizeLinear", "DequantizeLinear", "Constant")
                and any(i not in consts and i not in dq for i in n.input))
    return [f"{k} x{v}" for k, v in sorted(c.items())]


def measure(path: Path, xte: np.ndarray, yte: np.ndarray, quant: str) -> dict:
    """The fields measured on the file itself: onnxruntime over the whole held-out split, op counts."""
    out = run_ort(path, xte)
    pred = out.argmax(1)
    ops, opset = ops_of(path)
    e = {"ops": ops, "opset": opset, "size_bytes": path.stat().st_size,
         "runtime_accuracy": round(float((pred == yte).mean()), 4), "distinct_top1": int(len(np.unique(pred))),
         "output_std": round(float(out.std()), 4)}
    if quant == "qdq":
        e["qdq_float_ops"] = unwrapped_ops(path)
    print(f"  {path.name}: acc {e['runtime_accuracy']} distinct {e['distinct_top1']} std {e['output_std']} "
          f"{e['size_bytes']} B  {ops}", flush=True)
    if e["distinct_top1"] <= 5:
        raise SystemExit(f"{path.name}: only {e['distinct_top1']} distinct classes")
    return e


def entry(path: Path, family: str, quant: str, float_ref: str | None, view: str, xte: np.ndarray,
          yte: np.ndarray, params: int, macs: int, source: str, name: str, float_acc: float | None,
          notes: str) -> dict:
    e = {"file": path.name, "family": family, "source": source, "quant": quant, "float_reference": float_ref,
         "inputs": [{"name": INPUT, "shape": [1, *xte.shape[1:]], "dtype": "float32"}],
         "data": VIEWS[view][0], "task": "classifier", "params": params, "macs": macs,
         **measure(path, xte, yte, quant), "notes": notes, "made_by": f"{SCRIPT} {name}"}
    e["float_accuracy"] = e["runtime_accuracy"] if float_acc is None else float_acc
    return e


def refresh() -> None:
    """Re-measure every file of the manifest (no training) and refresh its notes from RECIPES."""
    entries = json.loads(MANIFEST.read_text())
    by_file = {e["file"]: e for e in entries}
    for e in entries:
        d = np.load(OUT / e["data"])
        e.update(measure(OUT / e["file"], d[INPUT], d["labels"], e["quant"]))
        r = RECIPES[e["made_by"].split()[-1]]
        tag = e["file"][len(r["stem"]):].rsplit("_", 1)[0]
        e["notes"] = note(r, tag, e["quant"])
    for e in entries:
        ref = by_file.get(e["float_reference"] or e["file"])
        e["float_accuracy"] = ref["runtime_accuracy"]
    write_manifest(entries)


KEY_ORDER = ("file", "family", "source", "quant", "float_reference", "inputs", "data", "task", "params", "macs",
             "ops", "opset", "size_bytes", "runtime_accuracy", "float_accuracy", "distinct_top1", "output_std",
             "qdq_float_ops", "notes", "made_by")


def write_manifest(entries: list[dict]) -> None:
    """Entries sorted by file, keys in the schema's order (then any others)."""
    rank = {k: i for i, k in enumerate(KEY_ORDER)}
    out = [dict(sorted(e.items(), key=lambda kv: rank.get(kv[0], len(rank)))) for e in entries]
    MANIFEST.write_text(json.dumps(sorted(out, key=lambda e: e["file"]), indent=1) + "\n")


def update_manifest(entries: list[dict]) -> None:
    old = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else []
    names = {e["file"] for e in entries}
    write_manifest([e for e in old if e["file"] not in names] + entries)


def versions() -> str:
    return (f"torch {torch.__version__.split('+')[0]}, onnx {onnx.__version__}, "
            f"onnxruntime {ort.__version__}")


# ---------------------------------------------------------------- recipes


ENCODER_NOTE = ("exported with torch.backends.mha.set_fastpath_enabled(False) (the eval fast path traces to "
                "aten::_transformer_encoder_layer_fwd, which the TorchScript exporter cannot export); attention "
                "runs in [T, B, E] after a Transpose; the in-projection MatMul 32->96 is split into q/k/v through "
                "a rank-5 Reshape / Unsqueeze / Transpose [3,1,2,0,4] / Squeeze / Gather, with a Shape-derived "
                "subgraph (Shape, Slice, Mod, Concat) and the 1/sqrt(16) scale computed at run time from Shape "
                "(Slice, Cast, Sqrt, Div, Cast, then Sqrt applied to q and to k^T each) that constant folding left "
                "in place although every shape is static; scores are MatMul [1,2,8,16] x [1,2,16,8] and "
                "[1,2,8,8] x [1,2,8,16]; exact gelu is Div sqrt2, Erf, Add 1, Mul, Mul 0.5; the out-projection "
                "is a 2-D Gemm between Reshapes")
RNN_NOTE = ("one ONNX {op} node (forward, default activations), input Transpose to [T, B, I]; the {extra} are "
            "zeros Expanded to a shape computed at run time (Shape, Gather, Unsqueeze, Concat, Expand); the "
            "last step is Squeeze of Y's direction axis, Transpose, Gather index -1")
RNN_QDQ_NOTE = ("; quantize_static has no QDQ rule for {op}: the {op} node, its input and its weights stay "
                "float (the graph input is not quantized at all), only the head Gemm is wrapped in QDQ")
CONV1D_NOTE = ("the clamp's bound is ReduceMax with an empty axes attribute and keepdims=0 (reduce all to a "
               "0-d scalar), Mul 0.01, then two Cast(to=float) nodes, fed to Clip's min input (max input "
               "empty); the square is Pow with exponent 2; Conv / MaxPool are rank-3 (1-D)")
CNN_DYNAMO_NOTE = ("the same weights as torch_cnn_digits; the dynamo exporter writes opset 20, IR 10, a "
                   "Reshape (allowzero=1, shape [1, 128]) where TorchScript writes Flatten, explicit auto_pad / "
                   "storage_order / transA attributes and tensor names from the FX graph (relu, max_pool2d, "
                   "view); its nodes carry metadata_props (FX node, class hierarchy, a stack trace naming the maker "
                   "script's path and line numbers, so the bytes change when the script is edited); quantize_static "
                   "gives both twins the same scales and zero points")

DWMULT_NOTE = ("the depthwise layer is a Conv with group 8 and weights [16, 1, 3, 3] (output channel c * 2 + k "
               "reads input channel c): a depth multiplier of 2, which the importers emit as a channel replication "
               "and a multiplier-1 depthwise layer for hexagon_nn's device (issue 36)")

DWMULT_QDQ_NOTE = ("; runtime_accuracy is onnxruntime's default session, whose AVX2 U8S8 kernels (no VNNI) sum "
                   "product pairs in 16 bits with saturation; with session.x64quantprecision (exact U8U8 "
                   "kernels, the toolkit's reference session) the file scores 93.1%")

RECIPES: dict[str, dict] = {
    "encoder": dict(make=Encoder, view="seq", family="transformer", stem="torch_encoder_digits",
                    epochs=60, lr=2e-3, variants=[("", 17, False, True), ("_op13", 13, False, False)],
                    desc="BERT-style encoder (Linear 8->32 + learned positions, 2 x nn.TransformerEncoderLayer "
                         "d_model 32, 2 heads, FFN 64, exact gelu, post-norm, batch_first; mean over tokens; "
                         "Linear 10) on the 8 digit rows as tokens",
                    notes={"float": ENCODER_NOTE, "qdq": ENCODER_NOTE + "; quantize_static puts QDQ on the activations "
                           "read by MatMul (the activation x activation ones too), Gemm, LayerNormalization, Softmax, "
                           "Add, Mul, Div, Transpose, Reshape, Gather, Squeeze / Unsqueeze and ReduceMean, including "
                           "the run-time attention scale (Sqrt outputs) and the Erf output; Erf's input and the "
                           "Shape / Slice / Cast / Sqrt arithmetic stay float",
                           "_op13:float": ENCODER_NOTE + "; opset 13: aten::scaled_dot_product_attention is "
                           "registered for opset 13 with the exporter's own opset-14 symbolic (same nodes); each "
                           "LayerNorm is ReduceMean(axes=[-1]), Sub, Pow 2, ReduceMean, Add 1e-5, Sqrt, Div, Mul, Add"}),
    "lstm": dict(make=lambda: Recurrent("lstm"), view="seq", family="sequence", stem="torch_lstm_digits",
                 epochs=40, lr=5e-3, variants=[("", 17, False, True)],
                 desc="nn.LSTM(8, 32, batch_first) over the 8 digit rows, last step -> Linear 10",
                 notes={"float": RNN_NOTE.format(op="LSTM", extra="initial h and c"),
                        "qdq": RNN_NOTE.format(op="LSTM", extra="initial h and c") + RNN_QDQ_NOTE.format(op="LSTM")}),
    "gru": dict(make=lambda: Recurrent("gru"), view="seq", family="sequence", stem="torch_gru_digits",
                epochs=40, lr=5e-3, variants=[("", 17, False, True)],
                desc="nn.GRU(8, 32, batch_first) over the 8 digit rows, last step -> Linear 10",
                notes={"float": RNN_NOTE.format(op="GRU (linear_before_reset=1)", extra="initial h"),
                       "qdq": RNN_NOTE.format(op="GRU (linear_before_reset=1)", extra="initial h")
                       + RNN_QDQ_NOTE.format(op="GRU")}),
    "conv1d": dict(make=LogMelConv1d, view="sig64", family="conv1d", stem="torch_conv1d_logmel_digits",
                   epochs=60, lr=3e-3, variants=[("", 17, False, True)],
                   desc="log-mel style 1-D front end on the 64 pixels as a signal (Conv1d 1->16 k5, pow 2, "
                        "Conv1d 16->16 k1, clamp(min=amax*1e-2), log, minus per-band mean, Conv1d 16->32 k3 relu, "
                        "MaxPool1d 2, mean, Linear 10)",
                   notes={"float": CONV1D_NOTE, "qdq": CONV1D_NOTE + "; quantize_static drops the Relu (the "
                          "uint8 QuantizeLinear with zero point 0 after the Conv clamps instead), puts QDQ on the "
                          "scalar ReduceMax / Mul of the Clip bound as well (Clip's min input, after the Casts, is "
                          "float), quantizes Log's input but not its output: ReduceMean and Sub run float and QDQ "
                          "resumes after Sub"}),
    "cnn": dict(make=SmallCNN, view="img8", family="cnn", stem="torch_cnn_digits", epochs=40,
                lr=3e-3, variants=[("", 17, False, True), ("_dynamo", None, True, True)],
                desc="small CNN (Conv 16 3x3 pad 1 relu, MaxPool 2, Conv 32 3x3 pad 1 relu, MaxPool 2, "
                     "Flatten, Linear 10) on the 8x8 image; torch_cnn_digits_dynamo_* is the same trained "
                     "network",
                notes={"_dynamo:float": CNN_DYNAMO_NOTE, "_dynamo:qdq": CNN_DYNAMO_NOTE}),
    "cnn_opset9": dict(make=lambda: SmallCNN(legacy=True), view="img8", family="cnn",
                       stem="torch_cnn_digits_opset9", epochs=40, lr=3e-3,
                       variants=[("", 9, False, False)],
                       desc="small CNN with a channel split (Split), unsqueeze(1).squeeze(1) and a spatial "
                            "mean (ReduceMean) subtracted from half the channels, exported at opset 9 "
                            "(axes / split as attributes)",
                       notes={"float": "opset 9: Split(axis=1, split=[8, 8]), Unsqueeze / Squeeze(axes=[1]) and "
                                       "ReduceMean(axes=[2, 3], keepdims=1) carry their axes as attributes"}),
    "dwmult": dict(make=DwMultCNN, view="img8", family="cnn", stem="torch_dwmult_digits", epochs=200,
                   lr=5e-3, variants=[("", 17, False, True)],
                   desc="small CNN with a depthwise layer of depth multiplier 2 (Conv 8 3x3 pad 1 relu, MaxPool 2, "
                        "Conv2d(8, 16, 3, groups=8) pad 1 relu, Conv 16 1x1 relu, mean over space, Linear 10) on "
                        "the 8x8 image",
                   notes={"float": DWMULT_NOTE, "qdq": DWMULT_NOTE + DWMULT_QDQ_NOTE}),
}


def note(r: dict, tag: str, quant: str) -> str:
    """A recipe's note for one file: keyed '<tag>:<quant>' for a variant, '<quant>' for the main export."""
    notes = r.get("notes", {})
    return notes.get(f"{tag}:{quant}", "") if tag else notes.get(quant, "")


def make(name: str, data: tuple[np.ndarray, ...]) -> list[Path]:
    r = RECIPES[name]
    xtr0, xte0, ytr, yte = data
    fname, to_view = VIEWS[r["view"]]
    xtr, xte = to_view(xtr0), to_view(xte0)
    np.savez_compressed(OUT / fname, **{INPUT: xte, "labels": yte})
    torch.manual_seed(SEED)
    model = r["make"]()
    info = train(model, xtr, ytr, r["epochs"], r["lr"])
    params = int(sum(p.numel() for p in model.parameters()))
    macs = count_macs(model, torch.from_numpy(xtr[:1]))
    with torch.no_grad():
        torch_acc = float((model(torch.from_numpy(xte)).argmax(1).numpy() == yte).mean())
    print(f"{name}: trained {info}, torch accuracy {torch_acc:.4f}, params {params}, MACs {macs}", flush=True)
    train_src = (f"{versions()}; {r['desc']}; trained on the 1347 digits training samples (Adam, cosine lr "
                 f"{r['lr']}, batch 32, {info['epochs']} epochs, {info['seconds']} s, seed {SEED})")
    written, entries = [], []
    for tag, opset, dynamo, qdq in r["variants"]:
        exporter = "torch.onnx.export dynamo=True" if dynamo else "torch.onnx.export TorchScript (dynamo=False)"
        fpath = OUT / f"{r['stem']}{tag}_float.onnx"
        export(model, fpath, xtr, opset, dynamo=dynamo)
        src = f"{train_src}; {exporter}, opset {opset or 'default'}, batch 1"
        fe = entry(fpath, r["family"], "float", None, r["view"], xte, yte, params, macs, src, name, None,
                   note(r, tag, "float"))
        entries.append(fe)
        update_manifest([fe])
        written.append(fpath)
        if qdq:
            qpath = OUT / f"{r['stem']}{tag}_qdq.onnx"
            try:
                quantize(fpath, qpath, xtr)
                qsrc = (f"{src}; then onnxruntime.quantization.quantize_static QDQ (QUInt8 activations, QInt8 "
                        f"weights, per tensor, MinMax, {CALIB_N} training samples, no quant_pre_process)")
                entries.append(entry(qpath, r["family"], "qdq", fpath.name, r["view"], xte, yte, params, macs,
                                     qsrc, name, fe["runtime_accuracy"], note(r, tag, "qdq")))
                update_manifest(entries[-1:])
                written.append(qpath)
            except Exception as exc:  # record and go on: the float model still stands
                print(f"  {qpath.name}: quantization failed: {exc!r}", flush=True)
    return written


def main(argv: list[str]) -> None:
    if argv == ["refresh"]:
        refresh()
        return
    names = argv or list(RECIPES)
    OUT.mkdir(exist_ok=True)
    data = load_split()
    for n in names:
        make(n, data)


if __name__ == "__main__":
    main(sys.argv[1:])
