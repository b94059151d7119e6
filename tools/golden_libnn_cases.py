"""Inputs of the lib_nn golden cases (random and from the bundled models), for golden_libnn.py.

A case is a dict: ``x`` (int8 input: ``[1, H, W, C]`` or ``[R, N]``), ``k``
(kernel-layout weights), ``bso`` (packed int16), ``meta`` (kernel, mode,
zero point, window, output size, source, ``order_sensitive``). The outputs
are not computed here: they come from lib_nn's C (golden_libnn_lib.py).
The project's BSO helpers only build plausible parameters; ``order_sensitive``
(metadata: would 32-element steps in natural order give other outputs than
lib_nn's steps - a padded window's outer rows first, conv2d_1x1's one
product per step?) uses the project's arithmetic to label and pick cases, so
that the tests can check that such cases exist.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hexnn_import.xs3.bso import BSOParams, bso_params, join_bias, pack_bso
from hexnn_import.xs3.kernels_conv import accumulate_rows, shallowin_weights
from hexnn_import.xs3.lower import lower_model
from hexnn_import.api import import_model
from hexnn_import.xs3.vpu import bso_output_stage, chunked_steps, step_bounds, vlmaccr
from hexnn_import.xs3.window import Window, patches

KERNELS = ("conv2d_deep", "conv2d_shallowin", "conv2d_1x1", "conv2d_depthwise", "fully_connected_8",
           "fully_connected_16")
MODES = ("full", "full0", "real", "nz")
#: saturating modes, only for the kernels whose C saturates step by step (golden_libnn.py's doc)
SAT_MODES = {"conv2d_deep": ("sat", "satx", "satpad"), "conv2d_shallowin": ("sat", "satx", "satpad"),
             "conv2d_1x1": ("sat", "satx")}
MODELS = ("small_int8.tflite", "digits_int8.tflite", "mobilenet_v2_int8.tflite")


def rand_bso(rng: np.random.Generator, c: int, mode: str, wsum: np.ndarray) -> BSOParams:
    """BSO parameters of ``c`` channels for a mode (golden_libnn.py's doc)."""
    def i16() -> np.ndarray:
        return rng.integers(-32768, 32768, c)
    if mode == "real":
        s_in = float(np.exp(rng.uniform(np.log(1e-3), np.log(0.1))))
        s_w = np.exp(rng.uniform(np.log(1e-4), np.log(0.05), c))
        s_out = max(float(np.exp(rng.uniform(np.log(1e-3), np.log(0.5)))), float((s_in * s_w).max()) * 2)
        return bso_params(rng.integers(-2 ** 17, 2 ** 17, c), wsum, s_in, int(rng.integers(-128, 128)), s_w, s_out,
                          int(rng.integers(-128, 128)))
    if mode in ("full", "full0"):
        bias = join_bias(i16().astype(np.int16), i16().astype(np.int16))
        return BSOParams(bias, rng.integers(0, 32, c), i16(), i16(), i16(),
                         rng.integers(8 if mode == "full" else 0, 32, c))
    if mode == "sat":
        bias = rng.choice([-1, 1], c) * (2 ** 31 - 1 - rng.integers(0, 2 ** 21, c))
        return BSOParams(bias, rng.integers(14, 24, c), i16(), rng.integers(-200, 200, c),
                         rng.integers(-200, 200, c), rng.integers(8, 24, c))
    if mode in ("satx", "satpad"):  # y = (acc >> 16) -+ 32740: the accumulator shows through the output
        sign = rng.choice([-1, 1], c)
        bias = sign * (2 ** 31 - 1 - rng.integers(0, 2 ** 20, c))
        return BSOParams(bias, np.full(c, 16), np.full(c, 256), np.full(c, 256), -sign * 32740, np.full(c, 8))
    if mode == "nz":
        return BSOParams(rng.integers(-3000, 3000, c), rng.integers(0, 12, c), i16(), rng.integers(-40, 40, c),
                         rng.integers(-40, 40, c), rng.integers(8, 20, c))
    raise ValueError(mode)


def rand_int8(rng: np.random.Generator, shape: tuple[int, ...], mode: str) -> np.ndarray:
    if mode in ("sat", "satx", "satpad"):  # extreme values push partial sums far
        return rng.choice([-128, 127, -127, 126], size=shape).astype(np.int8)
    if mode == "nz":
        return rng.integers(-6, 7, size=shape).astype(np.int8)
    return rng.integers(-128, 128, size=shape).astype(np.int8)


def _count(start: int, stride: int, size: int) -> int:
    """Output positions whose window still starts inside the input."""
    return len([o for o in range(64) if start + stride * o < size])


def rand_window(rng: np.random.Generator, kh: int, kw: int, pad_rows: bool) -> tuple[int, int, Window, tuple]:
    """``(X_h, X_w, window, (Y_h, Y_w))``; with ``pad_rows`` the windows reach above and below the image."""
    sv, sh = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    xw, c0 = int(rng.integers(1, 7)), -int(rng.integers(0, kw))
    if pad_rows:  # kh >= 3: an image of 1 .. kh - 2 rows, windows starting 1 .. kh - xh - 1 rows above it
        xh = int(rng.integers(1, kh - 1))
        r0 = -int(rng.integers(1, kh - xh))
    else:
        xh, r0 = int(rng.integers(1, 7)), -int(rng.integers(0, kh))
    oh = int(rng.integers(1, _count(r0, sv, xh) + 1))
    ow = int(rng.integers(1, _count(c0, sh, xw) + 1))
    return xh, xw, Window(kh, kw, r0, c0, sv, sh), (oh, ow)


def _order_sensitive(x: np.ndarray, w_rows: np.ndarray, p: BSOParams, zp: int, win: Window,
                     out_hw: tuple[int, int], steps: list[tuple[int, int]]) -> bool:
    """Whether 32-element steps in natural order would give other outputs than lib_nn's padded-row order."""
    natural = vlmaccr(p.bias, patches(x, win, out_hw, zp).reshape(-1, w_rows[0].size),
                      w_rows.reshape(w_rows.shape[0], -1).T, steps)
    ordered = accumulate_rows(x, win, out_hw, zp, p.bias, w_rows, steps)
    return bool(np.any(_outputs(natural, p) != _outputs(ordered, p)))


def _outputs(acc: np.ndarray, p: BSOParams) -> np.ndarray:
    return bso_output_stage(acc, p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)


def _conv_case(rng: np.random.Generator, kernel: str, mode: str) -> dict[str, Any]:
    """A random conv case; ``satpad`` draws until lib_nn's order of the padded rows shows in the output."""
    for _ in range(40 if mode == "satpad" else 1):
        case = _conv_draw(rng, kernel, mode)
        if case["meta"]["order_sensitive"]:
            break
    return case


def _conv_draw(rng: np.random.Generator, kernel: str, mode: str) -> dict[str, Any]:
    pad_rows = mode == "satpad"
    if kernel == "conv2d_shallowin":
        xc = int(rng.choice([4, 8, 16, 32]))
        kw, kh = int(rng.integers(1, min(32 // xc, 4) + 1)), int(rng.integers(3 if pad_rows else 1, 5))
    else:
        xc = 4 * int(rng.integers(1, 11))
        kh, kw = int(rng.integers(3 if pad_rows else 1, 5 if pad_rows else 4)), int(rng.integers(1, 4))
    yc = xc if kernel == "conv2d_depthwise" else 4 * int(rng.integers(1, 7))
    xh, xw, win, out_hw = rand_window(rng, kh, kw, pad_rows)
    x = rand_int8(rng, (1, xh, xw, xc), mode)
    k = rand_int8(rng, (kh, kw, xc) if kernel == "conv2d_depthwise" else (yc, kh, kw, xc), mode)
    wsum = k.reshape(-1, xc).sum(0) if kernel == "conv2d_depthwise" else k.reshape(yc, -1).sum(1)
    zp = int(rng.integers(-128, 128))
    p = rand_bso(rng, yc, mode, wsum)
    sensitive = False
    if kernel != "conv2d_depthwise":
        steps = chunked_steps([xc] * (kh * kw)) if kernel == "conv2d_deep" else step_bounds([kw * xc] * kh)
        sensitive = _order_sensitive(x, k.reshape(yc, kh, kw * xc), p, zp, win, out_hw, steps)
    if kernel == "conv2d_shallowin":
        k = shallowin_weights(k)
    meta = dict(kernel=kernel, mode=mode, zero_point=zp, out_hw=list(out_hw), y_c=yc, source="random",
                window=dict(shape=[kh, kw], start=[win.start_row, win.start_col], stride=[win.stride_v, win.stride_h]),
                order_sensitive=sensitive)
    return dict(x=x, k=k, bso=pack_bso(p), meta=meta)


def _dense_case(rng: np.random.Generator, kernel: str, mode: str) -> dict[str, Any]:
    """A random 1x1 / fully-connected case; conv2d_1x1 ``satx`` draws until its per-product steps show."""
    for _ in range(40 if (kernel, mode) == ("conv2d_1x1", "satx") else 1):
        case = _dense_draw(rng, kernel, mode)
        if case["meta"]["order_sensitive"]:
            break
    return case


def _dense_draw(rng: np.random.Generator, kernel: str, mode: str) -> dict[str, Any]:
    if kernel == "conv2d_1x1":
        xc, yc = 4 * int(rng.integers(1, 17)), 4 * int(rng.integers(1, 7))
        x = rand_int8(rng, (1, int(rng.integers(1, 5)), int(rng.integers(1, 5)), xc), mode)
        k = rand_int8(rng, (yc, xc), mode)
    else:
        n, yc = 4 * int(rng.integers(1, 31)), int(rng.integers(1, 25))
        x, k = rand_int8(rng, (int(rng.integers(1, 3)), n), mode), rand_int8(rng, (yc, n), mode)
    p = rand_bso(rng, yc, mode, k.astype(np.int64).sum(1))
    x2 = x.reshape(-1, x.shape[-1])
    sensitive = kernel == "conv2d_1x1" and bool(np.any(_outputs(vlmaccr(p.bias, x2, k.T, step_bounds([1] * xc)), p)
                                                       != _outputs(vlmaccr(p.bias, x2, k.T, chunked_steps([xc])), p)))
    meta = dict(kernel=kernel, mode=mode, zero_point=0, y_c=yc, source="random", order_sensitive=sensitive)
    return dict(x=x, k=k, bso=pack_bso(p), meta=meta)


def random_cases(kernel: str, rng: np.random.Generator, per_mode: int) -> list[dict[str, Any]]:
    """``per_mode`` random cases of every mode that applies to ``kernel``."""
    make = _dense_case if kernel == "conv2d_1x1" or kernel.startswith("fully_connected") else _conv_case
    return [make(rng, kernel, mode) for mode in MODES + SAT_MODES.get(kernel, ()) for _ in range(per_mode)]


def model_cases(models: Path, rng: np.random.Generator, per_kernel: int = 2) -> dict[str, list[dict[str, Any]]]:
    """The ``per_kernel`` smallest lowered layers of each kernel in the bundled int8 models, random int8 inputs."""
    layers = []
    for name in MODELS:
        for r in lower_model(import_model(models / name)).lowered:
            low = r.lowered
            assert low is not None
            # conv / FC layers as this tool has always taken them (the files regenerate byte for byte): not the
            # kernels without weights (golden_libnn_ops.py), not a mean as a depthwise conv, not a clamped layer
            if low.weights is None or low.op.clamp is not None or low.op.rule == "global-mean-as-depthwise":
                continue
            layers.append((low.weights.size + int(np.prod(low.op.x_shape)), name, r.name, low))
    out: dict[str, list[dict[str, Any]]] = {}
    for _, model, layer, low in sorted(layers, key=lambda t: t[0]):
        op = low.op
        if len(out.setdefault(op.kernel, [])) >= per_kernel:
            continue
        meta: dict[str, Any] = dict(kernel=op.kernel, mode="model", zero_point=op.zero_point, y_c=op.y_shape[-1],
                                    source=f"{model}:{layer}", order_sensitive=False)
        if op.window is not None and op.kernel not in ("conv2d_1x1",) and not op.kernel.startswith("fully"):
            w = op.window
            meta.update(out_hw=[op.y_shape[1], op.y_shape[2]], window=dict(
                shape=[w.k_h, w.k_w], start=[w.start_row, w.start_col], stride=[w.stride_v, w.stride_h]))
        x = rng.integers(-128, 128, op.x_shape).astype(np.int8)
        out[op.kernel].append(dict(x=x, k=low.weights, bso=low.bso, meta=meta))
    return out
