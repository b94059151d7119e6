"""lib_nn's element-wise and pooling kernels (as simulated by hexnn_import.xs3) against LiteRT on real layers.

For every ADD layer and the MEAN layer of ``models/real/keras_mobilenet_v2_1.0_224_int8.tflite``, and every
int8 AVERAGE_POOL_2D / MAX_POOL_2D layer of the int8-input models under ``models/`` and ``models/real/``,
LiteRT runs the model on two photos (``experimental_preserve_all_tensors``); the layer's own LiteRT inputs go
through the lib_nn kernel with this project's parameters (``add_params``, ``global_avg_params``; avgpool2d's
window arithmetic), a fused activation the output range does not imply through ``lookup8(clamp_lut)``, and
the result is compared with LiteRT's output: >= 99 % of the outputs exactly LiteRT's and none more than one
code apart (max pool: all exact). Pooling layers lib_nn cannot run (padding, channels not a multiple of 4,
input and output quantization that differ for avgpool2d) must be refused with XS3Error. The figures per layer
are printed (``pytest -s``) and recorded as test properties.
"""
from __future__ import annotations

import math
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_add import add_elementwise, add_params
from hexnn_import.xs3.kernels_misc import clamp_lut, lookup8
from hexnn_import.xs3.kernels_pool import (avgpool2d, avgpool2d_global, avgpool2d_scale_shift, check_tflite_avgpool,
                                           global_avg_error_bound, global_avg_params, maxpool2d)
from hexnn_import.xs3.window import tflite_window

pytest.importorskip("ai_edge_litert", reason="LiteRT (ai-edge-litert, a test dependency) is needed as the reference")
tflite = pytest.importorskip("tflite", reason="the tflite flatbuffer package (a dependency) reads layer options")

MODELS = Path(__file__).resolve().parents[2] / "models"
MNV2 = MODELS / "real" / "keras_mobilenet_v2_1.0_224_int8.tflite"
PHOTOS = 2
EXACT, MAX_DIFF = 0.99, 1


def _photo_inputs(lite: Any) -> list[np.ndarray]:
    """The repository's two test photo crops on the model's int8 input (as bench/speed_real.py maps them)."""
    from hexnn_import.testing.photos import photo_batch

    d = lite.get_input_details()[0]
    _, h, w, c = (int(v) for v in d["shape"])
    scale, zp = float(d["quantization"][0]), int(d["quantization"][1])
    lo, hi = (-128 - zp) * scale, (127 - zp) * scale
    imgs = lo + photo_batch(PHOTOS, h, w, c) / 255.0 * (hi - lo)
    return [np.clip(np.round(im / scale) + zp, -128, 127).astype(np.int8)[None] for im in imgs]


def _act_range(act: int, scale: float, zp: int) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized for int8."""
    lo, hi = -128, 127
    q = lambda v: zp + int(round(v / scale))  # noqa: E731
    if act == 1:  # RELU
        lo = max(lo, q(0.0))
    elif act == 2:  # RELU_N1_TO_1
        lo, hi = max(lo, q(-1.0)), min(hi, q(1.0))
    elif act == 3:  # RELU6
        lo, hi = max(lo, q(0.0)), min(hi, q(6.0))
    elif act != 0:
        raise XS3Error(f"fused activation {act} has no clamp LUT here")
    return lo, hi


def _clamp(y: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return y if (lo, hi) == (-128, 127) else lookup8(y, clamp_lut(lo, hi))


@lru_cache(maxsize=None)
def run_model(path: Path) -> tuple[list[dict[str, Any]], list[dict[int, np.ndarray]]]:
    """(ops with their options, [tensors per photo]) of a LiteRT run on the two photos."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # TFLite's own builtin kernels, no XNNPACK delegate: every intermediate tensor is computed and kept
        lite = Interpreter(model_path=str(path), experimental_preserve_all_tensors=True,
                           experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    lite.allocate_tensors()
    details = {t["index"]: t for t in lite.get_tensor_details()}
    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sub = model.Subgraphs(0)
    ops = []
    for o in lite._get_ops_details():
        fb = sub.Operators(int(o["index"]))
        assert list(fb.OutputsAsNumpy()) == list(o["outputs"]), "flatbuffer and LiteRT disagree on the op order"
        op = {"index": int(o["index"]), "name": o["op_name"], "inputs": [int(i) for i in o["inputs"]],
              "outputs": [int(i) for i in o["outputs"]], "fb": fb}
        op["quant"] = [(float(details[i]["quantization"][0]), int(details[i]["quantization"][1]),
                        np.dtype(details[i]["dtype"])) if i >= 0 else None for i in op["inputs"] + op["outputs"]]
        ops.append(op)
    runs = []
    for x in _photo_inputs(lite):
        lite.set_tensor(lite.get_input_details()[0]["index"], x)
        lite.invoke()
        needed = {i for op in ops if op["name"] in ("ADD", "MEAN", "AVERAGE_POOL_2D", "MAX_POOL_2D")
                  for i in op["inputs"][:2] + op["outputs"] if i >= 0}
        runs.append({i: np.array(lite.get_tensor(i)) for i in needed})
    return ops, runs


def _figures(ours: list[np.ndarray], ref: list[np.ndarray]) -> tuple[float, int, int]:
    a = np.concatenate([o.astype(np.int16).ravel() for o in ours])
    b = np.concatenate([r.astype(np.int16).ravel() for r in ref])
    d = np.abs(a - b)
    return float(np.mean(d == 0)), int(d.max()), int(a.size)


def _report(record_property: Any, label: str, fig: tuple[float, int, int]) -> None:
    exact, diff, n = fig
    print(f"\n{label}: {exact * 100:.3f} % exact, max diff {diff}, {n} outputs")
    record_property(label, f"exact={exact:.6f} max_diff={diff} n={n}")


def _layers(path: Path, name: str) -> list[dict[str, Any]]:
    return [op for op in run_model(path)[0] if op["name"] == name]


def test_mnv2_has_the_layers() -> None:
    assert len(_layers(MNV2, "ADD")) == 10
    assert len(_layers(MNV2, "MEAN")) == 1


@pytest.mark.parametrize("k", range(10))
def test_add_layers_agree_with_litert(k: int, record_property: Any) -> None:
    op = _layers(MNV2, "ADD")[k]
    _, runs = run_model(MNV2)
    (s0, z0, _), (s1, z1, _), (so, zo, _) = op["quant"]
    p = add_params(s0, z0, s1, z1, so, zo)
    opts = tflite.AddOptions()
    opts.Init(op["fb"].BuiltinOptions().Bytes, op["fb"].BuiltinOptions().Pos)
    lo, hi = _act_range(opts.FusedActivationFunction(), so, zo)
    a, b = op["inputs"][:2]
    ours = [_clamp(add_element(t[a], t[b], p), lo, hi) for t in runs]
    fig = _figures(ours, [t[op["outputs"][0]] for t in runs])
    _report(record_property, f"ADD op {op['index']} {p}", fig)
    assert fig[0] >= EXACT and fig[1] <= MAX_DIFF


def add_element(x0: np.ndarray, x1: np.ndarray, p: Any) -> np.ndarray:
    if x0.shape != x1.shape:
        raise XS3Error(f"ADD with broadcasting {x0.shape} + {x1.shape}: lib_nn's add_elementwise does not broadcast")
    return add_elementwise(x0, x1, p)


# MEAN / AVERAGE_POOL_2D on lib_nn's avgpool2d_global / avgpool2d are held to the error bound of their int8
# scale (at most 7 significant bits), not to 99 % exact: outputs a few tenths of a code from a rounding boundary
# can land one code off. The lowering takes a mean over the whole image through conv2d_depthwise instead
# (tests/xs3/test_mean.py).


@lru_cache(maxsize=None)
def mean_figures() -> tuple[str, tuple[float, int, int], float]:
    """(label, figures against LiteRT, largest |ours - exact real value| in codes) of the MEAN layer."""
    (op,) = _layers(MNV2, "MEAN")
    _, runs = run_model(MNV2)
    x, y = op["inputs"][0], op["outputs"][0]
    (si, zi, _), _axes, (so, zo, _) = op["quant"]
    shape = runs[0][x].shape
    assert len(shape) == 4
    pix = shape[1] * shape[2]
    bias, scale, shift = global_avg_params(si, zi, so, zo, pix)
    ours = [avgpool2d_global(t[x], bias, scale, shift) for t in runs]
    ref = [t[y].reshape(-1) for t in runs]
    assert all(r.size == shape[3] for r in ref)  # the mean over H, W only
    exact = [zo + (t[x].astype(np.float64).mean(axis=(0, 1, 2)) - zi) * si / so for t in runs]
    off = max(float(np.max(np.abs(o - np.clip(e, -128, 127)))) for o, e in zip(ours, exact))
    bound = global_avg_error_bound(bias, scale, shift, si, zi, so, zo, pix)
    assert off <= 0.5 + bound + 1e-9, (off, bound)  # the kernel is as close to exact as its parameters promise
    return f"MEAN op {op['index']} bias={bias} scale={scale} shift={shift}", _figures(ours, ref), off


def test_mean_layer_within_one_code_of_litert(record_property: Any) -> None:
    label, fig, off = mean_figures()
    _report(record_property, label, fig)
    print(f"  largest distance from the exact real value: {off:.3f} codes")
    assert fig[1] <= MAX_DIFF


#: int8 models with pooling layers that LiteRT's builtin resolver cannot load (MediaPipe custom ops such as
#: Convolution2DTransposeBias live only in the default resolver, whose XNNPACK delegate takes over layers and
#: leaves their intermediate tensors unwritten): not comparable layer by layer
NO_BUILTIN = {"mediapipe_selfie_segmentation_aeq_int8.tflite"}


def test_excluded_models_really_need_custom_ops() -> None:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    for name in NO_BUILTIN:
        lite = Interpreter(model_path=str(MODELS / "real" / name),
                           experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        with pytest.raises(RuntimeError, match="custom op"):
            lite.allocate_tensors()


def _pool_models() -> list[tuple[Path, int]]:
    """(int8-input model, op index) of every int8 AVERAGE_POOL_2D / MAX_POOL_2D layer under models/."""
    from ai_edge_litert.interpreter import Interpreter

    found = []
    for path in sorted(MODELS.glob("*.tflite")) + sorted((MODELS / "real").glob("*.tflite")):
        lite = Interpreter(model_path=str(path))
        if lite.get_input_details()[0]["dtype"] != np.int8 or path.name in NO_BUILTIN:
            continue
        dtypes = {t["index"]: np.dtype(t["dtype"]) for t in lite.get_tensor_details()}
        for o in lite._get_ops_details():
            if o["op_name"] in ("AVERAGE_POOL_2D", "MAX_POOL_2D") and dtypes[int(o["outputs"][0])] == np.int8:
                found.append((path, int(o["index"])))
    return found


POOLS = _pool_models()


def test_pool_layers_found() -> None:
    kinds = {next(op["name"] for op in run_model(p)[0] if op["index"] == i) for p, i in POOLS}
    assert kinds == {"AVERAGE_POOL_2D", "MAX_POOL_2D"}, POOLS


def _pool_window(op: dict[str, Any], runs: list[dict[int, np.ndarray]]) -> tuple[Any, Any]:
    opts = tflite.Pool2DOptions()
    opts.Init(op["fb"].BuiltinOptions().Bytes, op["fb"].BuiltinOptions().Pos)
    xs, ys = runs[0][op["inputs"][0]].shape, runs[0][op["outputs"][0]].shape
    window = tflite_window(xs[1:3], ys[1:3], (opts.FilterHeight(), opts.FilterWidth()),
                           (opts.StrideH(), opts.StrideW()), same=opts.Padding() == tflite.Padding.SAME)
    return window, opts


@lru_cache(maxsize=None)
def pool_figures(path: Path, index: int) -> tuple[str, str, tuple[float, int, int] | None]:
    """(op name, label, figures against LiteRT or None when lib_nn cannot run the layer and the simulation says so)."""
    ops, runs = run_model(path)
    op = next(o for o in ops if o["index"] == index)
    window, opts = _pool_window(op, runs)
    x, y = op["inputs"][0], op["outputs"][0]
    (si, zi, _), (so, zo, _) = op["quant"]
    xs, ys = runs[0][x].shape, runs[0][y].shape
    lo, hi = _act_range(opts.FusedActivationFunction(), so, zo)
    label = f"{op['name']} {path.name} op {index} {window} C={xs[3]}"
    same_quant = math.isclose(si, so, rel_tol=1e-6) and zi == zo
    supported = window.start_row >= 0 and window.start_col >= 0 and xs[3] % 4 == 0
    if op["name"] == "MAX_POOL_2D":
        assert same_quant  # TFLite's int8 max pool requires it
        run = lambda t: maxpool2d(t[x], window, ys[1:3])  # noqa: E731
    else:
        supported = supported and same_quant
        if supported:
            check_tflite_avgpool(si, zi, so, zo, window, xs[1:3], ys[1:3], xs[3])
        run = lambda t: avgpool2d(t[x], window, ys[1:3])  # noqa: E731
    if not supported:  # lib_nn cannot run it: the simulation must say so
        with pytest.raises(XS3Error):
            run(runs[0])
        return op["name"], label, None
    if op["name"] == "AVERAGE_POOL_2D":  # as close to the exact average as lib_nn's own scale allows
        scale, shift = avgpool2d_scale_shift(window)
        pix = window.k_h * window.k_w
        for t in runs:
            sums = sum(tap.astype(np.int64) for tap in _window_taps(t[x][0], window, ys[1:3]))
            exact = sums / pix  # equal input / output quantization: the output code is the mean code
            slack = abs(scale / 2.0 ** shift - 1.0 / pix) * float(np.abs(sums).max())
            assert float(np.abs(run(t)[0].astype(np.float64) - exact).max()) <= 0.5 + slack + 1e-9, label
    ours = [_clamp(run(t), lo, hi) for t in runs]
    return op["name"], label, _figures(ours, [t[y] for t in runs])


def _window_taps(x: np.ndarray, window: Any, out_hw: tuple[int, int]) -> list[np.ndarray]:
    """Each window tap's [Y_h, Y_w, C] slice of ``x`` [H, W, C] (windows inside the image)."""
    oh, ow = out_hw
    return [x[window.start_row + i:window.start_row + i + window.stride_v * (oh - 1) + 1:window.stride_v,
              window.start_col + j:window.start_col + j + window.stride_h * (ow - 1) + 1:window.stride_h]
            for i in range(window.k_h) for j in range(window.k_w)]


@pytest.mark.parametrize("path,index", POOLS, ids=[f"{p.stem}-op{i}" for p, i in POOLS])
def test_pool_layers_agree_with_litert(path: Path, index: int, record_property: Any) -> None:
    """Max pool: every output LiteRT's; average pool: none more than one code apart; refused layers raise."""
    name, label, fig = pool_figures(path, index)
    if fig is None:
        print(f"\n{label}: refused (lib_nn has no padding / needs C % 4 == 0 / equal quantization)")
        record_property(label, "refused")
        return
    _report(record_property, label, fig)
    if name == "MAX_POOL_2D":
        assert fig[0] == 1.0
    else:
        assert fig[1] <= MAX_DIFF
