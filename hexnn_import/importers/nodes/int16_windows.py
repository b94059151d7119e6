"""16-bit layers on windows laid side by side (``nodes.int16`` module doc): a strided convolution through
SpaceToDepth_16, and pools whose windows tile the input exactly in 16 bits (max by tap pickers and
QuantizedSub_u16 / QuantizedAdd_u16, mean by one transposed conv).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import node3
from hexnn_import.importers.nodes.int16 import (STEPS16, Range, adjust_range_u16, binary16, emit_linear16, mean_steps,
                                               pad16, reshape16, step16)
from hexnn_import.importers.nodes.values import Value


def zero_exact(rng: Range | None) -> bool:
    """A 16-bit range on which 0.0 is a code (what the 16-bit ops' outputs are)."""
    return rng is not None and bool(np.allclose(adjust_range_u16(*rng), rng, rtol=1e-9, atol=0.0))


def window_phases(b: GraphBuilder, x: Value, k: int | tuple[int, int], name: str) -> tuple[Value, int]:
    """SpaceToDepth_16 by ``k``: each ``k x k`` window's taps side by side, tap ``p = dy * k + dx`` in
    channels ``[p C, (p + 1) C)`` (the order of TFLite's SPACE_TO_DEPTH); returns it and ``C``. The op has
    one block size: ``(kh, kw)`` must be square."""
    kh, kw = (k, k) if isinstance(k, int) else k
    assert kh == kw, "SpaceToDepth_16 takes one block size"
    n, h, w, c = x.shape
    shape = (n, h // kh, w // kw, kh * kw * c)
    refs = [x.data, b.int_const(kh, f"{name}/block"), x.mn, x.mx]
    wins = node3(b, "SpaceToDepth_16", refs, shape, f"{name}/windows", x.range,  # type: ignore[arg-type]
                 etype="quint16")
    return wins, c


def _tap_weights(c: int, taps: list[int], k: int, value: float) -> np.ndarray:
    """``[C, 1, 1, k*k*C]`` weights taking ``value`` times channel ``c`` of each listed tap into ``c``."""
    w = np.zeros((c, 1, 1, k * k * c))
    for p in taps:
        w[np.arange(c), 0, 0, p * c + np.arange(c)] = value
    return w


def tiling_windows(shape: tuple[int, int, int, int], k: tuple[int, int], stride: tuple[int, int]) -> str | None:
    """How windows ``k`` of ``stride`` that tile the input are laid side by side: "square" (``k x k`` of
    stride ``k``: SpaceToDepth_16), "row" (``1 x k`` along the width, or ``k x 1`` on a width of 1: a
    Reshape to ``[N, H W / k, k, C]``), or None (overlapping or ragged windows)."""
    (kh, kw), (sh, sw), (_, h, w, _) = k, stride, shape
    if kh == kw == sh == sw and h % kh == 0 and w % kw == 0 and kh > 1:
        return "square"
    if (kh == sh == 1 and kw == sw and w % kw == 0) or (kw == sw == 1 and kh == sh and w == 1 and h % kh == 0):
        return "row"
    return None


def _windows(b: GraphBuilder, x: Value, k: tuple[int, int], layout: str, name: str
             ) -> tuple[Value, Callable[[list[int], float], np.ndarray], tuple[int, int, int, int]]:
    """The windows side by side, the filter maker (taps, weight) of a VALID transposed conv over them, and
    the shape it gives."""
    n, h, w, c = x.shape
    if layout == "square":
        wins, _ = window_phases(b, x, k[0], name)
        return wins, (lambda taps, v: _tap_weights(c, taps, k[0], v)), (n, h // k[0], w // k[0], c)
    size = k[0] * k[1]
    rows = reshape16(b, x, (n, h * w // size, size, c), f"{name}/windows")

    def filt(taps: list[int], v: float) -> np.ndarray:
        out = np.zeros((c, 1, size, c))
        for t in taps:
            out[np.arange(c), 0, t, np.arange(c)] = v
        return out

    return rows, filt, (n, h * w // size, 1, c)


def max_pool16(b: GraphBuilder, x: Value, k: tuple[int, int], layout: str, out_shape: tuple[int, int, int, int],
               name: str) -> Value:
    """Max over tiling windows (:func:`tiling_windows`), exactly in 16 bits: each tap picked by a transposed
    conv of weight 1 onto the input's range (exact), then ``max(m, t) = m + relu(t - m)``: QuantizedSub_u16
    onto ``[0, 65536 s]`` (negatives saturate at code 0) and QuantizedAdd_u16, both of gain 1 (integer)."""
    assert x.range is not None
    src, filt, shape = _windows(b, x, k, layout, name)
    c = x.shape[3]
    taps = [emit_linear16(b, f"{name}/tap{p}", src, filt([p], 1.0), np.zeros(c), x.range, (0, 0, 0, 0), shape)
            for p in range(k[0] * k[1])]
    m, above = taps[0], (0.0, STEPS16 * step16(x.range))
    for p, t in enumerate(taps[1:], 1):
        d = binary16(b, "QuantizedSub_u16", t, m, above, shape, f"{name}/above{p}")
        m = binary16(b, "QuantizedAdd_u16", m, d, x.range, shape, f"{name}/max{p}")
    return reshape16(b, m, out_shape, f"{name}/reshape")


def avg_pool16(b: GraphBuilder, x: Value, k: tuple[int, int], layout: str, out_range: Range,
               out_shape: tuple[int, int, int, int], name: str) -> Value:
    """Mean over tiling windows in one rounding: the taps summed with weight ``1 / (kh kw)`` by one
    transposed conv (the weight on ``nodes.int16.mean_steps``)."""
    src, filt, shape = _windows(b, x, k, layout, name)
    size, c = k[0] * k[1], x.shape[3]
    y = emit_linear16(b, name, src, filt(list(range(size)), 1.0 / size), np.zeros(c), out_range, (0, 0, 0, 0),
                      shape, mean_steps(size, c))
    return reshape16(b, y, out_shape, f"{name}/reshape")


def emit_strided16(b: GraphBuilder, name: str, x: Value, w_real: np.ndarray, bias_real: np.ndarray,
                   out_range: Range, stride: tuple[int, int], pads: tuple[int, int],
                   out_shape: tuple[int, int, int, int], exact_steps: np.ndarray | None = None) -> Value:
    """A convolution of stride ``(sh, sw)`` (``pads`` = top, left of the input) without a strided 16-bit
    conv: the input padded (QuantizedPad_u16 with 0.0, an exact code) to whole ``sh x sw`` blocks,
    SpaceToDepth_16, then a stride-1 VALID :func:`emit_linear16` whose ``ceil(k / s)`` taps hold the filter's
    tap ``s q + r`` in the channels of block phase ``r`` (TFLite's SPACE_TO_DEPTH order), the rows and
    columns past the output cropped by the transposed conv. The same sums, one rounding."""
    (sh, sw), (pt, pl) = stride, pads
    o, kh, kw, c = w_real.shape
    qh, qw = -(-kh // sh), -(-kw // sw)
    _, h, w, _ = x.shape
    hp, wp = sh * max(out_shape[1] + qh - 1, -(-(pt + h) // sh)), sw * max(out_shape[2] + qw - 1, -(-(pl + w) // sw))
    if (pt, pl, hp, wp) != (0, 0, h, w):
        x = pad16(b, x, [(0, 0), (pt, hp - pt - h), (pl, wp - pl - w), (0, 0)], (x.shape[0], hp, wp, c), name)
    wins, _ = window_phases(b, x, (sh, sw), name)
    full = np.zeros((o, qh * sh, qw * sw, c))
    full[:, :kh, :kw, :] = w_real
    taps = full.reshape(o, qh, sh, qw, sw, c).transpose(0, 1, 3, 2, 4, 5).reshape(o, qh, qw, sh * sw * c)
    extra_h, extra_w = hp // sh - qh + 1 - out_shape[1], wp // sw - qw + 1 - out_shape[2]
    return emit_linear16(b, name, wins, taps, bias_real, out_range, (0, -extra_h, 0, -extra_w), out_shape,
                         exact_steps)
