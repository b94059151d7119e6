"""The TFLite Hexagon delegate's single-op tests, rebuilt as one-op models, engine vs LiteRT.

Source: ``tensorflow/lite/delegates/hexagon/builders/tests/*_test.cc``
(TensorFlow; the delegate's own test cases, which define which builtins the
delegate accepts and how far its results may be from TFLite's). Each case
below keeps its test's shapes, quantization parameters (``TensorData``
``{type, shape, min, max[, scale, zero_point]}``, parameters computed as
``kernels/test_util.h`` QuantizationParams does), fixed inputs, options and
tolerance (``tol``: the ``ArrayFloatNear`` bound in real units, 1e-4 when
the test gives none; ``exact`` when it compares codes). Inputs a test draws
at random are drawn here from a seeded generator over the same range.

The check: the engine's output codes against LiteRT's on the same input
must lie within the test's tolerance (``worst code difference * output
scale <= tol``), except where ``known`` records a measured difference and
its cause. :func:`figures` (``python tests/importers/test_tflite_delegate_cases.py``
prints it) summarises per test file: cases, exact, within 1 code, worse, refused.
``batch_seq_config_test.cc`` is not a single-op test and is not rebuilt.
"""
from __future__ import annotations

import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hexnn_import.testing import TFLiteBuilder, run_litert

LIMITS = {"uint8": (0, 255), "int8": (-128, 127), "int32": (-(2 ** 31), 2 ** 31 - 1)}
FLOAT_NEAR = 1e-4  # gmock ArrayFloatNear's default max_abs_error


# ---- building a case ------------------------------------------------------------------------------
def quantization_params(lo: float, hi: float, dtype: str) -> tuple[float, int]:
    """``(scale, zero_point)`` as ``kernels/test_util.h`` QuantizationParams computes them (float32)."""
    qmin, qmax = (np.float32(v) for v in LIMITS[dtype])
    f_min, f_max = np.float32(lo), np.float32(hi)
    scale = np.float32((f_max - f_min) / (qmax - qmin))
    zp_min, zp_max = qmin - f_min / scale, qmax - f_max / scale
    zp = zp_min if abs(qmin) + abs(f_min / scale) < abs(qmax) + abs(f_max / scale) else zp_max
    zp_int = int(qmin) if zp < qmin else int(qmax) if zp > qmax else int(np.sign(zp) * np.floor(abs(zp) + 0.5))
    return float(scale), zp_int


def quantize(data: Any, scale: Any, zp: Any, dtype: str) -> np.ndarray:
    """``QuantizeAndPopulate``: ``round(zp + x / scale)`` in float32, half away from zero, saturated."""
    v = np.float32(zp) + np.asarray(data, np.float32) / np.asarray(scale, np.float32)
    v = np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))
    return np.clip(v, *LIMITS[dtype]).astype(dtype)


def params(spec: dict) -> tuple[Any, Any]:
    """``(scale, zero_point)`` of a tensor spec (arrays when per channel), (None, None) unquantized.

    As ``SingleOpModel::AddTensor`` does, a nonzero min / max wins over an explicit scale.
    """
    if "scales" in spec:
        return np.asarray(spec["scales"], np.float32), np.zeros(len(spec["scales"]), np.int64)
    if "range" in spec and any(spec["range"]):
        return quantization_params(*spec["range"], spec["dtype"])
    if "scale" in spec:
        return float(np.float32(spec["scale"])), int(spec.get("zp", 0))
    return None, None


def codes_of(spec: dict, scale: Any, zp: Any) -> np.ndarray | None:
    """A spec's integer contents: ``codes`` as given, ``data`` quantized; None without either."""
    shape = tuple(spec["shape"])
    if "codes" in spec:
        return np.asarray(spec["codes"]).astype(spec["dtype"]).reshape(shape)
    if "data" not in spec:
        return None
    data = np.asarray(spec["data"], np.float32).reshape(shape)
    if "scales" in spec:  # SymmetricPerChannelQuantizeValues: round(x / s[c]) in [-127, 127]
        axis = spec.get("axis", 0)
        s = np.asarray(spec["scales"], np.float32).reshape([-1 if i == axis else 1 for i in range(len(shape))])
        return np.clip(quantize(data, s, 0, "int32"), -127, 127).astype(spec["dtype"])
    return data.astype(spec["dtype"]) if scale is None else quantize(data, scale, zp, spec["dtype"])


def bias_spec(spec: dict, built: list[dict]) -> dict:
    """An int32 bias on ``input scale * filter scale`` (per channel when the filter is): SetBias /
    PerChannelQuantizeBias."""
    x, w = built[spec["bias_of"][0]], built[spec["bias_of"][1]]
    s = np.float32(x["scale"]) * np.asarray(w["scale"], np.float32)
    out: dict[str, Any] = {"shape": spec["shape"], "dtype": "int32", "const": True}
    if s.size > 1:
        out.update(scales=s.tolist(), axis=0, codes=quantize(spec["data"], s, 0, "int32"))
    else:
        s1 = float(s.reshape(-1)[0])
        out.update(scale=s1, zp=0, codes=quantize(spec["data"], s1, 0, "int32"))
    return out


def build_case(case: dict, seed: int = 0) -> tuple[bytes, dict[str, np.ndarray], float | None]:
    """The case's one-op model, its input feed (codes) and the first output's scale."""
    rng = np.random.default_rng(seed)
    b = TFLiteBuilder()
    built: list[dict] = []
    indices, graph_inputs = [], []
    feed: dict[str, np.ndarray] = {}
    for pos, spec in enumerate(case["ins"]):
        if spec is None:
            indices.append(-1)
            built.append({})
            continue
        if "bias_of" in spec:
            spec = bias_spec(spec, built)
        scale, zp = params(spec)
        kw = {} if scale is None else {"scale": scale, "zero_point": zp, "quantized_dimension": spec.get("axis", 0)}
        codes = codes_of(spec, scale, zp)
        name = f"in{pos}"
        if spec.get("const"):
            idx = b.add_tensor(name, spec["shape"], spec["dtype"], codes, **kw)
        else:
            idx = b.add_tensor(name, spec["shape"], spec["dtype"], **kw)
            if codes is None:  # the test draws this input at random: here from a seeded generator
                if scale is None:
                    codes = rng.integers(*LIMITS[spec["dtype"]], size=spec["shape"]).astype(spec["dtype"])
                else:
                    lo, hi = spec.get("random", spec.get("range"))
                    codes = quantize(rng.uniform(lo, hi, size=spec["shape"]), scale, zp, spec["dtype"])
            feed[name] = codes
            graph_inputs.append(idx)
        indices.append(idx)
        built.append({"scale": scale, "zp": zp})
    outs, out_scale = [], None
    for k, spec in enumerate(case["outs"]):
        scale, zp = params(spec)
        outs.append(b.add_tensor(f"out{k}", spec["shape"], spec["dtype"],
                                 **({} if scale is None else {"scale": scale, "zero_point": zp})))
        out_scale = scale if k == 0 else out_scale
    b.add_operator(case["op"], indices, outs, case.get("options") or None, fused_activation=case.get("act"),
                   version=case.get("version", 1))
    b.set_io(graph_inputs, outs)
    return b.build(), feed, out_scale


def run_case(c: dict, seed: int = 0) -> tuple[float, float | None]:
    """Run a case in the engine and in LiteRT on one feed: (worst code difference, output scale).

    A case whose model LiteRT cannot run (``expect``: e.g. NEG has no uint8 kernel in LiteRT) is
    compared with the test's expected real values instead; the difference is then in output steps.
    """
    import hexnn_import as hx

    model, feed, out_scale = build_case(c, seed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "case.tflite"
        path.write_bytes(model)
        g = hx.prepare(hx.import_model(path))
    ours = hx.Runner(g).run(feed)
    if "expect" in c:
        _, zp = params(c["outs"][0])
        real = (np.asarray(ours["out0"], np.float64).reshape(-1) - zp) * out_scale
        return float(np.max(np.abs(real - np.asarray(c["expect"])))) / out_scale, out_scale
    ref = run_litert(model, feed, as_dict=True)
    worst = 0
    for name, r in ref.items():
        a = np.asarray(ours[name])
        assert a.shape == np.asarray(r).shape, (name, a.shape, np.asarray(r).shape)
        if a.size:
            worst = max(worst, int(np.max(np.abs(a.astype(np.int64) - np.asarray(r).astype(np.int64)))))
    return worst, out_scale


# ---- the cases ------------------------------------------------------------------------------------
CASES: list[dict] = []
DTYPES = ("uint8", "int8")
ACTS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6")


def T(shape: list[int] | tuple[int, ...], dtype: str, lo: float | None = None, hi: float | None = None,
      **kw: Any) -> dict:
    """A tensor spec: ``TensorData{dtype, shape, lo, hi}`` plus data / codes / const / explicit params."""
    spec: dict[str, Any] = {"shape": list(shape), "dtype": dtype, **kw}
    if lo is not None:
        spec["range"] = (lo, hi)
    return spec


def case(file: str, name: str, op: str, ins: list, outs: dict | list, tol: float = FLOAT_NEAR, **kw: Any) -> None:
    """Record one delegate test case (``file`` without ``_test.cc``)."""
    CASES.append({"file": file, "name": name, "op": op, "ins": ins, "outs": outs if isinstance(outs, list) else [outs],
                  "tol": tol, **kw})


def i32(values: list[int]) -> dict:
    """A constant int32 parameter tensor (shape, axis, paddings, perm)."""
    return T([len(values)], "int32", codes=values, const=True)


# activations_test.cc
for dt in DTYPES:
    case("activations", f"Relu_{dt}", "RELU", [T([1, 3], dt, -6, 6, data=[1, 5, 7])], T([1, 3], dt, -6, 6), 0.03)
    case("activations", f"Relu6_{dt}", "RELU6", [T([1, 3], dt, -8, 8, data=[4, -1, 8])], T([1, 3], dt, -8, 8), 0.03)
    case("activations", f"Tanh_{dt}", "TANH", [T([1, 3], dt, -8, 8 * 127 / 128, data=[4, -1, 8])],
         T([1, 3], dt, -1, 127 / 128), 0.03)
    case("activations", f"Sigmoid_{dt}", "LOGISTIC", [T([1, 3], dt, -8, 8, data=[4, -1, 8])],
         T([1, 3], dt, scale=1 / 256, zp=0 if dt == "uint8" else -128), 0.03)
    for a in ((0.0, 1.0), (-5.0, 10.0)):
        for o in ((0.0, 1.0), (-5.0, 10.0)):
            for size in (1, 3, 40):
                tol = max(0.03, max(a[1] - a[0], o[1] - o[0]) * 1.5 / 256)
                case("activations", f"HardSwish_{dt}_{a}_{o}_{size}", "HARD_SWISH",
                     [T([1, 1, 1, size], dt, *a)], T([1, 1, 1, size], dt, *o), tol)
    lo, hi, olo, ohi = -11.654928, 25.036512, -0.3905796, 24.50887
    s = (hi - lo) / 255.0
    first = round(LIMITS[dt][0] + (-3.0 - lo) / s)
    vals = [lo + (i + 128) * s for i in range(first, round(LIMITS[dt][0] + (3.0 - lo) / s) + 1)]
    case("activations", f"HardSwishBias_{dt}", "HARD_SWISH", [T([1, 1, 1, len(vals)], dt, lo, hi, data=vals)],
         T([1, 1, 1, len(vals)], dt, olo, ohi), (ohi - olo) / 255.0)

# arithmetic_test.cc (ADD)
for dt in DTYPES:
    for act in ACTS:
        case("arithmetic", f"Add_{dt}_{act}", "ADD",
             [T([1, 2, 2, 1], dt, -1, 1, data=[0.1, 0.2, 0.3, 0.4]),
              T([1, 2, 2, 1], dt, -1, 1, data=[0.6, 0.4, 0.3, 0.1])], T([1, 2, 2, 1], dt, -1, 1), 2 / 255, act=act)
for nm, dt, k, codes in (("UInt8_ConstInput_1", "uint8", 0, [110, 142, 156, 171]),
                         ("UInt8_ConstInput_2", "uint8", 1, [110, 142, 156, 171]),
                         ("Int8_ConstInput", "int8", 1, [110, 101, 105, 120])):
    ins = [T([1, 2, 2, 1], dt, -1, 1, data=[0.1, 0.2, 0.3, 0.4]) for _ in range(2)]
    ins[k] = T([1, 2, 2, 1], dt, -1, 1, codes=codes, const=True)
    case("arithmetic", nm, "ADD", ins, T([1, 2, 2, 1], dt, -1, 1), 2 / 255, act="NONE")

# mul_test.cc
for dt in DTYPES:
    for act in ACTS:
        case("mul", f"MulOutput_{dt}_{act}", "MUL",
             [T([2, 3], dt, -0.44, 8.0, data=[1, 2, 3, 4, 5, 6]), T([1, 3], dt, 0, 0.999, data=[0.1, 0.2, 0.3])],
             T([2, 3], dt, -1.0, 1.0), 0.03, act=act)
        case("mul", f"LargeInputRange_{dt}_{act}", "MUL",
             [T([1, 2, 2, 3], dt, -0.44, 55.7, data=[1, 2, 3, 4, 5, 6, 20, 30, 40, 50, 52, 55]),
              T([1, 1, 2, 3], dt, 0, 0.999, data=[0.8, 0.9, 0.99, 0.8, 0.9, 0.99])],
             T([1, 2, 2, 3], dt, -1.0, 1.0), 0.03, act=act)

# neg_test.cc
for dt in DTYPES:
    case("neg", f"Neg_{dt}", "NEG", [T([2, 3], dt, -4, 4, data=[-2, -1, 0, 1, 2, 3])], T([2, 3], dt, -4, 4), 0.05,
         **({"expect": [2, 1, 0, -1, -2, -3]} if dt == "uint8" else {}))  # LiteRT's NEG has no uint8 kernel

# rsqrt_test.cc
for shape in ([1, 8], [2, 4]):
    case("rsqrt", f"Rsqrt_Int8_{shape}", "RSQRT",
         [T(shape, "int8", scale=142 / 255, zp=-128, data=[15, 46, 78, 142, 1, 17, 49, 113])],
         T(shape, "int8", scale=1 / 255, zp=-128), 142 / 255)

# squared_difference_test.cc (int8 only)
case("squared_difference", "SameShape", "SQUARED_DIFFERENCE",
     [T([1, 2, 2, 1], "int8", -1.2, 0.8, data=[-0.2, 0.2, -1.2, 0.8]),
      T([1, 2, 2, 1], "int8", -1.5, 0.5, data=[0.5, 0.2, -1.5, 0.5])], T([1, 2, 2, 1], "int8", 0.0, 0.5), 1 / 255)
for shape in ([6], [2, 3], [2, 1, 3], [1, 3, 1, 2]):
    case("squared_difference", f"VariousInputShapes_{shape}", "SQUARED_DIFFERENCE",
         [T(shape, "int8", -2.0, 1.7, data=[-2.0, 0.2, 0.3, 0.8, 1.1, -2.0]),
          T(shape, "int8", -1.0, 1.0, data=[1.0, 0.2, 0.6, 0.4, -1.0, -0.0])], T(shape, "int8", 0.0, 9.0), 10 / 255)
    case("squared_difference", f"WithBroadcast_{shape}", "SQUARED_DIFFERENCE",
         [T(shape, "int8", -0.2, 1.1, data=[-0.2, 0.2, 0.5, 0.8, 0.11, 1.1]), T([], "int8", 0.0, 0.1, data=[0.1])],
         T(shape, "int8", 0.0, 1.0), 1 / 255)

# matmul_test.cc (FULLY_CONNECTED; the weights are a run-time input in every case)
FC_W = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] * 3
FC_X = [1, 2, 3, 4, 5, 6, 7, 8, -9, -10, 1, 2, 3, 4, 5, 6, 7, -8, 9, -10]
for dt in DTYPES:
    for act in ("NONE", "RELU"):
        for variant, bias in (("", True), ("_NoBias", False), ("_NonConstWeights", True)):
            case("matmul", f"FC_{dt}{variant}_{act}", "FULLY_CONNECTED",
                 [T([2, 10], dt, -63.5, 64, data=FC_X), T([3, 10], dt, -63.5, 64, data=FC_W),
                  {"shape": [3], "bias_of": (0, 1), "data": [1, 2, 3]} if bias else None],
                 T([2, 3], dt, -127, 128), act=act)
case("matmul", "FC_uint8_NonConstWeights_Relu6", "FULLY_CONNECTED",
     [T([2, 10], "uint8", -63.5, 64, data=FC_X), T([3, 10], "uint8", -63.5, 64, data=FC_W),
      {"shape": [3], "bias_of": (0, 1), "data": [1, 2, 3]}], T([2, 3], "uint8", 0, 6), act="RELU6")

# reshape_test.cc (8-bit tensors without quantization parameters)
for dt in DTYPES:
    for nm, new_shape, resolved in (("RegularShapes", [2, 2, 2], [2, 2, 2]), ("WithStretch", [2, 1, -1], [2, 1, 4])):
        x = T([1, 2, 4, 1], dt, codes=[1, 2, 3, 4, 5, 6, 7, 8])
        case("reshape", f"{nm}_{dt}_option", "RESHAPE", [x], T(resolved, dt), options={"new_shape": new_shape})
        case("reshape", f"{nm}_{dt}_tensor", "RESHAPE", [x, i32(new_shape)], T(resolved, dt))

# conv_test.cc
CONV_X = [1, 1, 1, 1, 2, 2, 2, 2, 1, 2, 3, 4, 1, 2, 3, 4]
CONV_W = [1, 2, 3, 4, -1, 1, -1, 1, -1, -1, 1, 1]


def conv(name: str, op: str, x: dict, w: dict, out: dict, bias: list[float], padding: str = "VALID",
         stride: int = 1, dilation: int = 1, act: str = "NONE", tol: float = FLOAT_NEAR) -> None:
    """A QuantizedConvolutionOpModel case: constant filter, int32 bias on input scale * filter scale."""
    opts: dict[str, Any] = {"padding": padding, "stride_w": stride, "stride_h": stride,
                            "dilation_w_factor": dilation, "dilation_h_factor": dilation}
    n_out = w["shape"][3] if op == "DEPTHWISE_CONV_2D" else w["shape"][0]
    if op == "DEPTHWISE_CONV_2D":
        opts["depth_multiplier"] = n_out // x["shape"][3]
    eff = [(w["shape"][i] - 1) * dilation + 1 for i in (1, 2)]
    hw = [-(-x["shape"][i] // stride) if padding == "SAME" else (x["shape"][i] - eff[i - 1]) // stride + 1
          for i in (1, 2)]
    out = dict(out, shape=[x["shape"][0], *hw, n_out])
    case("conv", name, op, [x, dict(w, const=True), {"shape": [n_out], "bias_of": (0, 1), "data": bias}], out,
         tol, act=act, options=opts, version=3 if op == "DEPTHWISE_CONV_2D" else 1)


U = "uint8"
conv("SimpleConvTestNoActivation", "CONV_2D", T([2, 2, 4, 1], U, -63.5, 64, data=CONV_X),
     T([3, 2, 2, 1], U, -63.5, 64, data=CONV_W), T([], U, -127, 128), [1, 2, 3], stride=2)
conv("SimpleConvTestReLU6Activation", "CONV_2D", T([2, 2, 4, 1], U, -63.5, 64, data=CONV_X),
     T([3, 2, 2, 1], U, -63.5, 64, data=CONV_W), T([], U, -127, 128), [1, 2, 3], stride=2, act="RELU6")
conv("SimpleConvTestReLU6Activation_NoRequantizeRequired", "CONV_2D", T([2, 2, 4, 1], U, -63.5, 64, data=CONV_X),
     T([3, 2, 2, 1], U, -63.5, 64, data=CONV_W), T([], U, 0, 6), [1, 2, 3], stride=2, act="RELU6", tol=2e-2)
I8X = [3, 2, 1, -1, -2, -3, 4, 3, 2, -2, -3, -4]
I8W = [1, 2, 3, 4, 3, 4, 5, 6, 7, 8, 5, 6, 3, 4, 1, 2]
for nm, scales, tol in (("SimplePerTensor_Int8", [1], FLOAT_NEAR), ("SimplePerChannel_Int8", [1, 2], 0.6)):
    conv(nm, "CONV_2D", T([1, 2, 3, 2], "int8", scale=0.5, zp=-1, data=I8X),
         T([2, 2, 2, 2], "int8", scales=scales, axis=0, data=I8W), T([], "int8", scale=0.5, zp=-1), [3, -2], tol=tol)
IMG9 = np.zeros((9, 9))
IMG9[3:6, 3:6] = 1
conv("SimpleDilatedDepthwiseConvTestPaddingValid", "DEPTHWISE_CONV_2D", T([1, 9, 9, 1], U, 0, 255, data=IMG9),
     T([1, 3, 3, 1], U, 0, 255, data=list(range(1, 10))), T([], U, 0, 255), [0], dilation=3)
IMG72 = [0] * 27 + [0, 0, 0, 1, 1, 1, 0, 0, 0] * 3 + [0] * 18
conv("DepthwiseConv5x5", "DEPTHWISE_CONV_2D", T([1, 6, 6, 2], U, -63.5, 64, data=IMG72),
     T([1, 5, 5, 2], U, -63.5, 64, data=[1, 2, 3, 4, 5] * 10), T([], U, -127, 128), [1, 2])
IMG36 = [0] * 9 + [0, 0, 0, 1, 1, 1, 0, 0, 0] * 2 + [0] * 9
W75 = ([1, 2, 3, 4, 5] * 5 + [6, 7, 8, 9, 10] * 5 + [1, 2, 3, 4, 5] * 5)
conv("DepthwiseConvWithMultiplier_InputDepth1", "DEPTHWISE_CONV_2D", T([1, 6, 6, 1], U, -63.5, 64, data=IMG36),
     T([1, 5, 5, 3], U, -63.5, 64, data=W75), T([], U, -127, 128), [1, 2, 3])
conv("DepthwiseConvWithMultiplier_InputDepth1_RELU", "DEPTHWISE_CONV_2D", T([1, 6, 6, 1], U, -63.5, 64, data=IMG36),
     T([1, 5, 5, 3], U, -63.5, 64, data=W75), T([], U, -127, 128), [1, 2, 3], stride=2, act="RELU6")
DWX = [3, 1, -2, 4, 2, -3]
DWX4 = [3, 1, -2, 4, 2, -4]
DWW = [1, 2, 3, 4, 3, 4, 5, 6, 7, 8, 5, 6, 3, 4, 1, 2]
for nm, x, scales, act, tol in (("DepthwiseConvSimplePerTensor_Int8", DWX, [1], "NONE", 0.6),
                                ("DepthwiseConvSimplePerTensor_Int8_RELU1", DWX4, [0.1, 2, 3, 0.4], "RELU_N1_TO_1",
                                 1e-2),
                                ("DepthwiseConvSimplePerAxis_Int8", DWX4, [0.1, 2, 3, 0.4], "NONE", 0.6)):
    conv(nm, "DEPTHWISE_CONV_2D", T([1, 2, 3, 1], "int8", scale=0.5, zp=-1, data=x),
         T([1, 2, 2, 4], "int8", scales=scales, axis=3, data=DWW), T([], "int8", scale=0.5, zp=-1), [3, -2, 4, 6],
         act=act, tol=tol)
X72 = [1, 1, 0, 0] * 18
S8 = [0.1, 0.2, 0.3, 0.4, 0.4, 0.3, 0.2, 0.1]
for pad in ("VALID", "SAME"):
    conv(f"DepthwiseConvPerChannel_3x3Filter_{pad}", "DEPTHWISE_CONV_2D",
         T([1, 3, 3, 8], "int8", scale=0.5, zp=-1, data=X72),
         T([1, 3, 3, 8], "int8", scales=S8, axis=3, data=list(range(1, 9)) * 9), T([], "int8", scale=0.5, zp=-1),
         [0] * 8, padding=pad, tol=0.6)
S64 = [0.00053629, 0.00052256, 0.00051463, 0.00050993, 0.00050885, 0.00052403, 0.00053925, 0.00053854, 0.00053962,
       0.00048332, 0.00053551, 0.00052817, 0.00052771, 0.00051854, 0.00053823, 0.000531, 0.000521, 0.00053908,
       0.00053849, 0.0005063, 0.00052631, 0.00050862, 0.00050484, 0.00053353, 0.0005352, 0.00051084, 0.00052429,
       0.00052653, 0.00051875, 0.0005391, 0.00050941, 0.00053934, 0.00049698, 0.00050956, 0.00053204, 0.00051116,
       0.00052303, 0.00053624, 0.00053452, 0.00050418, 0.00048261, 0.00053418, 0.00053058, 0.0005359, 0.0005324,
       0.00053648, 0.00053957, 0.00052388, 0.00053638, 0.00052164, 0.00052303, 0.00053624, 0.00053452, 0.00050418,
       0.00048261, 0.00053418, 0.00053058, 0.0005359, 0.0005324, 0.00053648, 0.00053957, 0.00052388, 0.00053638,
       0.00052164]
_R = np.random.default_rng(64)
conv("DepthwiseConvPerChannel_5x5Filt2x2Stride64Chan", "DEPTHWISE_CONV_2D",
     T([1, 5, 5, 64], "int8", scale=1.8942945003509521, zp=-6, data=_R.uniform(-248, 234, 1600)),
     T([1, 5, 5, 64], "int8", scales=S64, axis=3, data=_R.uniform(-0.06, 0.06, 1600)),
     T([], "int8", scale=0.2960677146911621, zp=7), [0] * 64, stride=2, tol=0.6)

# transpose_conv_test.cc (inputs: output_shape, filter, input)
F9 = [129, 131, 133, 135, 137, 139, 141, 143, 145]
F18 = [129 + 2 * i for i in range(18)]
X16 = list(range(1, 17))
X32 = list(range(1, 33))
for nm, oshape, f, fshape, x, xshape, out, pad in (
        ("SimpleTestQuantized", [1, 4, 4, 1], F9, [1, 3, 3, 1], X16, [1, 4, 4, 1], (-508, 512), "SAME"),
        ("PaddingValidTestQuantized", [1, 6, 6, 1], F18, [1, 3, 3, 2], X32, [1, 4, 4, 2], (-4064, 4096), "VALID"),
        ("TwoFiltersTestQuantized", [1, 4, 4, 1], F18, [1, 3, 3, 2], X32, [1, 4, 4, 2], (-4064, 4096), "SAME")):
    case("transpose_conv", nm, "TRANSPOSE_CONV",
         [i32(oshape), T(fshape, U, -63.5, 64, codes=f, const=True), T(xshape, U, -63.5, 64, data=x)],
         T(oshape, U, *out), options={"padding": pad, "stride_w": 1, "stride_h": 1})
case("transpose_conv", "SimpleTestQuantizedPerChannelSingleChannel", "TRANSPOSE_CONV",
     [i32([1, 4, 4, 1]), T([1, 3, 3, 1], "int8", scales=[9 / 127], axis=0, const=True,
                           codes=[14, 28, 42, 56, 71, 85, 99, 113, 127]),
      T([1, 4, 4, 1], "int8", scale=16 / 255, zp=-128, data=X16)], T([1, 4, 4, 1], "int8", scale=2, zp=-128),
     options={"padding": "SAME", "stride_w": 1, "stride_h": 1}, version=2)
case("transpose_conv", "TestQuantizedPerChannelMultiChannel", "TRANSPOSE_CONV",
     [i32([1, 5, 5, 2]), T([2, 3, 3, 1], "int8", scales=[17 / 127, 18 / 127], axis=0, const=True,
                           codes=[7, 22, 37, 52, 67, 82, 97, 112, 127, 14, 28, 42, 56, 71, 85, 99, 113, 127]),
      T([1, 2, 2, 1], "int8", scale=4 / 255, zp=-128, data=[1, 2, 3, 4])], T([1, 5, 5, 2], "int8", scale=1, zp=-128),
     options={"padding": "VALID", "stride_w": 2, "stride_h": 2}, version=2)

# pool_test.cc
POOL_X = ([0, 6, 2, 4, 0, 6, 2, 4, 3, 2, 10, 7, 3, 2, 10, 7] * 3 + [3, 2, 10, 7, 3, 2, 10, 7] * 2
          + [0, 6, 2, 4, 0, 6, 2, 4] + [3, 2, 10, 7, 3, 2, 10, 7] * 3 + [0, 6, 2, 4, 0, 6, 2, 4] * 3
          + [3, 2, 10, 7, 3, 2, 10, 7])
for dt in DTYPES:
    case("pool", f"AveragePool_{dt}", "AVERAGE_POOL_2D", [T([1, 16, 8, 1], dt, 0, 10, data=POOL_X)],
         T([1, 5, 1, 1], dt, 0, 10),
         options={"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 8, "filter_height": 8})

# softmax_test.cc
for dt in DTYPES:
    o = T([], dt, scale=1 / 256, zp=0 if dt == "uint8" else -128)
    case("softmax", f"Softmax4D_{dt}", "SOFTMAX", [T([1, 2, 1, 4], dt, -10, 10, data=[0, -6, 2, 4, 3, -2, 10, 1])],
         dict(o, shape=[1, 2, 1, 4]), 2 / 256, options={"beta": 0.1})
    case("softmax", f"Softmax4D_{dt}_MultipleBatch", "SOFTMAX",
         [T([4, 1, 1, 2], dt, -10, 10, data=[0, -6, 2, 4, 3, -2, 10, 1])], dict(o, shape=[4, 1, 1, 2]), 2 / 256,
         options={"beta": 0.1})

# min_max_builder_test.cc (codes compared exactly)
for nm, op, dt, rng, d1, d2, const in (
        ("Maximum_Uint8Test", "MAXIMUM", U, (-1, 255), [1, 0, 2, 11, 2, 23], [0, 0, 1, 12, 255, 1], False),
        ("Maximum_Uint8Test_Const", "MAXIMUM", U, (-1, 255), [1, 0, 2, 11, 2, 23], [0, 0, 1, 12, 255, 1], True),
        ("Minimum_Uint8Test", "MINIMUM", U, (-1, 255), [1, 0, 2, 11, 2, 23], [0, 0, 1, 12, 255, 1], False),
        ("Minimum_Uint8Test_Const", "MINIMUM", U, (-1, 25), [1, 0, 2, 11, 2, 23], [0, 0, 1, 12, 20, 1], True),
        ("Maximum_Int8Test", "MAXIMUM", "int8", (-1, 125), [1, 0, 2, 11, 2, 23], [0, 0, 1, 12, 123, 1], False),
        ("Minimum_Int8Test", "MINIMUM", "int8", (-1, 25), [1, 0, 2, 11, 2, 23], [0, 0, 1, 12, 12, 1], False)):
    case("min_max_builder", nm, op,
         [T([1, 3, 1, 2], dt, *rng, codes=d1), T([1, 3, 1, 2], dt, *rng, codes=d2, const=const)],
         T([1, 3, 1, 2], dt, *rng), exact=True)

# quantize_test.cc (QUANTIZE between 8-bit types: codes compared exactly)
Q10 = list(range(1, 11))
for nm, (idt, ilo, ihi), (odt, olo, ohi) in (
        ("UInt8UInt8SameScale", (U, -63.5, 64), (U, -63.5, 64)),
        ("Uint8Uint8LargerScale", (U, -63.5, 64), (U, -127, 128)),
        ("Uint8Uint8SmallerScale", (U, -127, 128), (U, -63.5, 64)),
        ("Int8Uint8SmallerScale", ("int8", -127, 128), (U, -63.5, 64)),
        ("Int8Uint8LargerScale", ("int8", -127, 128), (U, -254, 256)),
        ("UInt8Int8SameScale128Diff", (U, -127, 128), ("int8", -127, 128)),
        ("Int8Int8SameScale", ("int8", -63.5, 64), ("int8", -63.5, 64)),
        ("Int8Int8LargerScale", ("int8", -63.5, 64), ("int8", -127, 128)),
        ("Int8Int8SmallerScale", ("int8", -127, 128), ("int8", -63.5, 64))):
    case("quantize", nm, "QUANTIZE", [T([1, 1, 2, 5], idt, ilo, ihi, data=Q10)], T([1, 1, 2, 5], odt, olo, ohi),
         exact=True)

# concat_test.cc
for dt in DTYPES:
    case("concat", f"FourInputsQuantizedSameRange_{dt}", "CONCATENATION",
         [T([2, 1, 1, 2], dt, -12.7, 12.8, data=[v + k / 10 for v in (1.0, 3.0, 4.0, 7.0)]) for k in range(4)],
         T([2, 1, 1, 8], dt, -12.7, 12.8), 0.2, options={"axis": 3})
    lim = LIMITS[dt]
    case("concat", f"TwoInputsNegativeAxis_{dt}", "CONCATENATION",
         [T([2, 3], dt, *lim, data=[1, 2, 3, 4, 5, 6]), T([2, 3], dt, *lim, data=[7, 8, 9, 10, 11, 12])],
         T([4, 3], dt, *lim), exact=True, options={"axis": -2})
MIXED = [(-10.7, 10.8), (0, 12.8), (-11, 11.8), (0, 7.4)]
case("concat", "FourInputsQuantizedMixedRange", "CONCATENATION",
     [T([2, 1, 1, 2], U, *r, data=[v + k / 10 for v in (1.0, 3.0, 4.0, 7.0)]) for k, r in enumerate(MIXED)],
     T([2, 1, 1, 8], U, -12.7, 12.8), 0.2, options={"axis": 3})
AX2 = [[1.0, -3.0, -4.0, -7.0], [1.1, 3.1, 4.1, 7.1], [1.2, -3.2, -4.2, 7.2], [1.3, 3.3, 4.3, 7.3]]
case("concat", "FourInputsAxis2_UInt8", "CONCATENATION",
     [T([2, 1, 2], U, *r, data=AX2[k]) for k, r in enumerate(MIXED)], T([2, 1, 8], U, -1.0, 1.0), 0.2,
     options={"axis": 2})
case("concat", "FourInputsQuantizedMixedRange_LargeData", "CONCATENATION",
     [T([1, 35, 35, c], U, 0, hi) for c, hi in ((64, 11.30514), (64, 10.38416), (96, 13.52495), (32, 5.883808))],
     T([1, 35, 35, 256], U, 0, 13.52495), 0.1, options={"axis": 3})

# pad_test.cc
for dt in DTYPES:
    case("pad", f"SimpleConstTest_{dt}", "PAD",
         [T([1, 2, 2, 1], dt, -1, 1, data=[-0.8, 0.2, 0.9, 0.7]),
          T([4, 2], "int32", codes=[0, 0, 1, 1, 1, 1, 0, 0], const=True)],
         T([1, 4, 4, 1], dt, -1, 1), 2 / 255)
    case("pad", f"AdvancedConstTest_{dt}", "PAD",
         [T([1, 2, 3, 1], dt, -1, 1, data=[-0.8, 0.2, 0.9, 0.7, 0.1, -0.3]),
          T([4, 2], "int32", codes=[0, 0, 0, 2, 1, 3, 0, 0], const=True)], T([1, 4, 7, 1], dt, -1, 1), 2 / 255)

# transpose_test.cc (codes compared exactly)
for dt in DTYPES:
    for nm, shape, perm in (("1D", [3], [0]), ("2D", [3, 2], [1, 0]), ("4D", [2, 2, 3, 1], [3, 0, 1, 2])):
        n = int(np.prod(shape))
        case("transpose", f"Test{nm}_{dt}", "TRANSPOSE", [T(shape, dt, -10, 10, codes=list(range(n))), i32(perm)],
             T([shape[p] for p in perm], dt, -10, 10), exact=True)

# space_to_depth_test.cc (codes compared exactly)
for dt in DTYPES:
    case("space_to_depth", f"SpaceToDepth_{dt}", "SPACE_TO_DEPTH", [T([1, 2, 2, 1], dt, -5, 5, codes=[1, 2, 3, 4])],
         T([1, 1, 1, 4], dt, -5, 5), exact=True, options={"block_size": 2})
    case("space_to_depth", f"DepthToSpace_{dt}", "DEPTH_TO_SPACE",
         [T([1, 1, 2, 4], dt, -8, 8, codes=list(range(1, 9)))], T([1, 2, 4, 1], dt, -8, 8), exact=True,
         options={"block_size": 2})

# reduce_test.cc (MEAN; the SUM tests are DISABLED_ in the delegate suite)
for dt in DTYPES:
    for nm, shape, axis, keep, oshape in (("NotKeepDims", [1, 1, 3, 2], 2, False, [1, 1, 2]),
                                          ("NotKeepDims_3D", [1, 3, 2], 1, False, [1, 2]),
                                          ("KeepDims", [1, 1, 3, 2], 3, True, [1, 1, 3, 1]),
                                          ("KeepDims_3D", [1, 3, 2], 2, True, [1, 3, 1])):
        case("reduce", f"Mean{nm}_{dt}", "MEAN",
             [T(shape, dt, -1.0, 1.0, data=[0.4, 0.2, 0.3, 0.4, 0.5, 0.6]), i32([axis])], T(oshape, dt, -1.0, 1.0),
             2 / 255, options={"keep_dims": keep})

# arg_min_max_test.cc (8-bit input without quantization parameters; SymmetricQuantizeAndPopulate codes)
for dt in DTYPES:
    case("arg_min_max", f"GetArgMin_{dt}", "ARG_MIN", [T([1, 1, 1, 4], dt, codes=[18, 91, 0, 127]), i32([3])],
         T([1, 1, 1], "int32"), exact=True, options={"output_type": 2}, int_out=True)
    case("arg_min_max", f"GetArgMinNegative_{dt}", "ARG_MIN",
         [T([1, 1, 2, 4], dt, codes=[14, 28, 99, 113, 14, 127, 99, 42]), i32([-2])], T([1, 1, 4], "int32"),
         exact=True, options={"output_type": 2}, int_out=True)
    case("arg_min_max", f"GetArgMax_{dt}", "ARG_MAX", [T([1, 1, 1, 4], dt, codes=[18, 91, 0, 127]), i32([3])],
         T([1, 1, 1], "int32"), exact=True, options={"output_type": 2}, int_out=True)

# l2_norm_test.cc: TensorData{scale 2.0, zero_point 128} on input and output
for dt in DTYPES:
    for nm, shape, data in (("ZerosVector", [1, 1, 1, 6], [0] * 6),
                            ("MultipleBatch", [3, 1, 1, 6], [-1.1, 0.6, 0.7, 1.2, -0.7, 0.1] * 3)):
        case("l2_norm", f"{nm}_{dt}", "L2_NORMALIZATION", [T(shape, dt, -2.0, 2.0, scale=2.0, zp=128, data=data)],
             T(shape, dt, -1.0, 127 / 128, scale=2.0, zp=128), 0.1)


# mirror_pad_test.cc (codes compared exactly)
for nm, dt, shape, pads, mode, oshape in (
        ("EmptyPad_UInt8", U, [2, 3], [0, 0, 0, 0], "REFLECT", [2, 3]),
        ("PadBothSides_Symmetric_Int8", "int8", [2, 3], [1, 1, 1, 1], "SYMMETRIC", [4, 5]),
        ("PadBothSides_Reflect_UInt8", U, [2, 3], [1, 1, 1, 1], "REFLECT", [4, 5]),
        ("PadOneSide_left_Reflect_Int8", "int8", [2, 3], [1, 0, 1, 0], "REFLECT", [3, 4]),
        ("PadOneSide_right_Symmetric_UInt8", U, [2, 3], [0, 1, 0, 1], "SYMMETRIC", [3, 4]),
        ("Pad_1D_Reflect_Int8", "int8", [3], [0, 2], "REFLECT", [5]),
        ("Pad_1D_Symmetric_UInt8", U, [3], [0, 2], "SYMMETRIC", [5]),
        ("PadBothSides_Reflect_Whole_UInt8", U, [2, 3], [1, 1, 2, 2], "REFLECT", [4, 7])):
    n = int(np.prod(shape))
    case("mirror_pad", nm, "MIRROR_PAD",
         [T(shape, dt, -1.0, 1.0, codes=list(range(1, n + 1))),
          T([len(shape), 2], "int32", codes=pads, const=True)], T(oshape, dt, -1.0, 1.0), exact=True,
         options={"mode": mode})

# pack_test.cc
for dt in DTYPES:
    for nm, shape, rng, axis, datas, oshape in (
            ("ThreeInputs", [2], (-10, 10), 0, ([1, 4], [2, 5], [3, 6]), [3, 2]),
            ("ThreeInputsDifferentAxis", [2], (-10, 10), 1, ([1, 4], [2, 5], [3, 6]), [2, 3]),
            ("ThreeInputsNegativeAxis", [2], (-10, 10), -1, ([1, 4], [2, 5], [3, 6]), [2, 3]),
            ("MultilDimensions", [2, 3], (-10, 20), 1, ([1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]), [2, 2, 3])):
        case("pack", f"{nm}_{dt}", "PACK", [T(shape, dt, *rng, data=d) for d in datas], T(oshape, dt, *rng),
             options={"values_count": len(datas), "axis": axis})

# resize_test.cc (tolerances in real units: 1, or 2 for half-pixel / align-corners bilinear)
RB, RN = "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"
R8 = [3, 6, 9, 12, 4, 10, 12, 16]
R3 = [3, 4, 6, 10, 10, 12, 14, 16]
for nm, op, dt, shape, rng, size, data, tol, align, half in (
        ("HorizontalResizeBiliear_UInt8", RB, U, [1, 1, 2, 1], (-2, 10), [1, 3], [3, 6], 1, False, False),
        ("HorizontalResizeNearestNeighbor_Int8", RN, "int8", [1, 1, 2, 1], (-2, 10), [1, 3], [3, 6], 1, False, False),
        ("VerticalResizeBiliear_Int8", RB, "int8", [1, 2, 1, 1], (-2, 20), [3, 1], [3, 9], 1, False, False),
        ("VerticalResizeNearestNeighbor_UInt8", RN, U, [1, 2, 1, 1], (-2, 20), [3, 1], [3, 9], 1, False, False),
        ("ThreeDimensionalResizeBiliear_UInt8", RB, U, [1, 2, 2, 2], (-2, 30), [3, 3], R3, 1, False, False),
        ("ThreeDimensionalResizeNearestNeighbor_Int8", RN, "int8", [1, 2, 2, 2], (-2, 30), [3, 3], R3, 1, False,
         False),
        ("TwoDimensionalResizeBilinearWithTwoBatches_Int8", RB, "int8", [2, 2, 2, 1], (-2, 30), [3, 3], R8, 1, False,
         False),
        ("TwoDimensionalResizeNNWithTwoBatches_UInt8", RN, U, [2, 2, 2, 1], (-2, 30), [3, 3], R8, 1, False, False),
        ("TwoDimResizeBilinearWithTwoBatches_HalfPixelCenters_UInt8", RB, U, [2, 2, 2, 1], (-2, 20), [3, 3], R8, 2,
         False, True),
        ("TwoDimResizeBilinearWithTwoBatches_AlignCorners_UInt8", RB, U, [2, 2, 2, 1], (-2, 20), [3, 3], R8, 2, True,
         False),
        ("ThreeDimensionalResizeNN_AlignCorners_UInt8", RN, U, [1, 2, 2, 2], (-2, 20), [3, 3], R3, 1, True, False),
        ("ThreeDimensionalResizeNN_HalfPixelCenters_UInt8", RN, U, [1, 2, 2, 2], (-2, 20), [3, 3], R3, 1, False,
         True)):
    case("resize", nm, op, [T(shape, dt, *rng, data=data), i32(size)], T([shape[0], *size, shape[3]], dt, *rng), tol,
         options={"align_corners": align, "half_pixel_centers": half})

# slice_test.cc (begin / size int32 or int64)
for nm, dt, shape, begin, size, oshape, idt, data in (
        ("Input_1D_Uint8", U, [4], [1], [2], [2], "int32", [1, 2, 3, 4]),
        ("Input_2D_Uint8", U, [2, 3], [1, 0], [1, 2], [1, 2], "int32", [1, 2, 3, 4, 5, 6]),
        ("SizeInt64_Uint8", U, [4, 1, 1, 1], [1, 0, 0, 0], [3, 1, 1, 1], [3, 1, 1, 1], "int64", [1, 2, 3, 4]),
        ("SizeMinus1", U, [3, 2, 3, 1], [1, 0, 0, 0], [2, 1, -1, 1], [2, 1, 3, 1], "int64",
         [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6]),
        ("BeginNonZeroSizeMinus1Axis1", U, [3, 3, 2, 1], [1, 1, 0, 0], [2, -1, 1, 1], [2, 2, 1, 1], "int64",
         [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9]),
        ("BeginNonZeroSizeMinus1Axis2", U, [3, 2, 3, 1], [1, 0, 1, 0], [2, 1, -1, 1], [2, 1, 2, 1], "int64",
         [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6]),
        ("BeginNonZeroSizeMinus1Axis2_Int8", "int8", [3, 2, 3, 1], [1, 0, 1, 0], [2, 1, -1, 1], [2, 1, 2, 1],
         "int64", [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6])):
    case("slice", nm, "SLICE", [T(shape, dt, -10, 10, data=data), T([len(begin)], idt, codes=begin, const=True),
                                T([len(size)], idt, codes=size, const=True)], T(oshape, dt, -10, 10), 0.1)

# split_test.cc (the "FourDim" tests split a 1-D tensor, as the test file's TESTs call them)
for dt in DTYPES:
    for nm, axis, n, shape, oshape in (("CheckFourDimSplitImpl", 0, 8, [8], [1]),
                                       ("CheckOneDimensionalSplit", 0, 8, [8], [1]),
                                       ("CheckNegativeAxisSplit", -4, 2, [2, 2, 2, 2], [1, 2, 2, 2])):
        data = list(range(1, int(np.prod(shape)) + 1))
        rng = (0.0, float(max(data)))
        case("split", f"{nm}_{dt}", "SPLIT", [i32([axis]), T(shape, dt, *rng, data=data)],
             [T(oshape, dt, *rng) for _ in range(n)], 0.1, options={"num_splits": n})

# strided_slice_test.cc (codes compared exactly)
for nm, dt, shape, rng, b_, e_, st, bm, em, sm, oshape, data in (
        ("In1D_UInt8", U, [4], (-10, 10), [1], [3], [1], 0, 0, 0, [2], [1, 2, 3, 4]),
        ("In1D_NegativeBegin_Int8", "int8", [4], (-10, 10), [-3], [3], [1], 0, 0, 0, [2], [1, 2, 3, 4]),
        ("In1D_NegativeEnd_Int8", "int8", [4], (-10, 10), [1], [-2], [1], 0, 0, 0, [1], [1, 2, 3, 4]),
        ("In2D_MultipleStrides_UInt8", U, [2, 3], (-10, 10), [1, -1], [2, -4], [2, -1], 0, 0, 0, [1, 3],
         [1, 2, 3, 4, 5, 6]),
        ("In2D_EndMask_Int8", "int8", [2, 3], (-127, 128), [1, 0], [2, 2], [1, 1], 0, 2, 0, [1, 3],
         [1, 2, 3, 4, 5, 6]),
        ("In2D_NegStrideBeginMask_UInt8", U, [2, 3], (-10, 10), [1, -2], [2, -4], [1, -1], 2, 0, 0, [1, 3],
         [1, 2, 3, 4, 5, 6]),
        ("In2D_ShrinkAxis2_BeginEndAxis1_NegativeSlice_Int8", "int8", [4, 1], (-10, 10), [0, -1], [0, 0], [1, 1], 1,
         1, 2, [4], [0, 1, 2, 3]),
        ("In2D_ShrinkAxisMask3_Int8", "int8", [2, 3], (-10, 10), [0, 0], [1, 1], [1, 1], 0, 0, 3, [],
         [1, 2, 3, 4, 5, 6]),
        ("In3D_Identity_UInt8", U, [2, 3, 2], (-15, 15), [0, 0, 0], [2, 3, 2], [1, 1, 1], 0, 0, 0, [2, 3, 2],
         list(range(1, 13))),
        ("In3D_IdentityShrinkAxis4_Int8", "int8", [2, 3, 2], (-15, 15), [0, 0, 0], [2, 3, 1], [1, 1, 1], 0, 0, 4,
         [2, 3], list(range(1, 13)))):
    case("strided_slice", nm, "STRIDED_SLICE", [T(shape, dt, *rng, codes=data), i32(b_), i32(e_), i32(st)],
         T(oshape, dt, *rng), exact=True, options={"begin_mask": bm, "end_mask": em, "shrink_axis_mask": sm})

# ---- the checks -------------------------------------------------------------------------------------
#: case name -> (worst code difference measured vs LiteRT, why it exceeds the delegate test's tolerance)
KNOWN: dict[str, tuple[int, str]] = {
    "SimpleConvTestReLU6Activation_NoRequantizeRequired": (
        1, "exact ties: the real outputs 5 and 3 are 212.5 and 127.5 output steps; SEMANTICS §5 rounds half up "
           "(213, 128), LiteRT's fixed-point multiplier lands just below (212, 127). Both meet the test's own "
           "check against its expected values (2e-2 > 0.0118)"),
    "SimpleTestQuantizedPerChannelSingleChannel": (
        1, "ours is the test's expected value (236, code -10) exactly; LiteRT's kernel gives 238 (code -9)"),
}


def allowed_codes(c: dict, out_scale: float | None) -> float:
    """The delegate test's tolerance in output codes (0 when it compares codes, or without a scale);
    in output steps, not whole codes, when the case is checked against expected real values."""
    if c.get("exact") or out_scale is None:
        return 0
    steps = c["tol"] / out_scale
    return steps if "expect" in c else int(np.floor(steps + 1e-6))


@pytest.mark.parametrize("c", CASES, ids=[f"{c['file']}:{c['name']}" for c in CASES])
def test_delegate_case(c: dict) -> None:
    """Engine vs LiteRT within the delegate test's own tolerance (or a recorded, explained difference)."""
    worst, out_scale = run_case(c)
    bound = max(allowed_codes(c, out_scale), KNOWN.get(c["name"], (0, ""))[0])
    assert worst <= bound, f"{c['file']}:{c['name']}: worst difference {worst} codes, allowed {bound}"


def figures() -> dict[str, dict[str, int]]:
    """Per delegate test file: cases, exact, within 1 code, worse, refused (not converted / not runnable)."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for c in CASES:
        row = table[c["file"]]
        row["cases"] += 1
        try:
            worst, _ = run_case(c)
        except Exception:  # noqa: BLE001 - a figure, not a check
            row["refused"] += 1
            continue
        row["exact" if worst == 0 else "within1" if worst <= 1 else "worse"] += 1
    return {k: dict(v) for k, v in table.items()}


if __name__ == "__main__":
    for file, row in sorted(figures().items()):
        print(f"{file:20s} {row}")
