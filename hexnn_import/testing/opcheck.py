"""Small helpers for kernel tests: typed 4-D tensors, the OpError check, random quint8
operands, and references written from SEMANTICS alone (dequantization, window geometry,
convolution sums, the §5 output stage).

Every ``tests/ops`` file builds inputs the same way; these keep that in one
place.
"""
from __future__ import annotations

import math

from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_SAME, PAD_VALID


def f4(values: Any, shape: Sequence[int] | None = None) -> np.ndarray:
    """float32 tensor, ``[1,1,1,n]`` unless a shape is given."""
    a = np.asarray(values, dtype=np.float32)
    return a.reshape(tuple(shape) if shape else (1, 1, 1, a.size))


def u4(values: Any, shape: Sequence[int] | None = None) -> np.ndarray:
    """uint8 (quint8 codes) tensor, ``[1,1,1,n]`` unless a shape is given."""
    a = np.asarray(values, dtype=np.uint8)
    return a.reshape(tuple(shape) if shape else (1, 1, 1, a.size))


def i4(values: Any, shape: Sequence[int] | None = None) -> np.ndarray:
    """int32 tensor, ``[1,1,1,n]`` unless a shape is given."""
    a = np.asarray(values, dtype=np.int32)
    return a.reshape(tuple(shape) if shape else (1, 1, 1, a.size))


def assert_op_error(op: str, inputs: list, *fragments: str, **kwargs: Any) -> str:
    """The op raises OpError naming node and op, with each fragment in the message; returns it."""
    with pytest.raises(OpError) as info:
        run_op(op, inputs, node="n7", **kwargs)
    msg = str(info.value)
    assert f"node n7 ({op})" in msg
    for frag in fragments:
        assert frag in msg, msg
    return msg


def f32(values: Any) -> np.ndarray:
    """float32 ``[1,1,1,n]`` (scalars, channel scales)."""
    return np.asarray(values, dtype=np.float32).reshape(1, 1, 1, -1)


def i32(values: Any) -> np.ndarray:
    """int32 ``[1,1,1,n]`` (biases, int parameters)."""
    return np.asarray(values, dtype=np.int32).reshape(1, 1, 1, -1)


def u8(values: Any, shape: Sequence[int]) -> np.ndarray:
    """uint8 codes of the given shape."""
    return np.asarray(values, dtype=np.uint8).reshape(tuple(shape))


def stride(sh: int, sw: int) -> np.ndarray:
    """A stride shape tensor: only its shape ``[1, sh, sw, 1]`` matters."""
    return np.zeros((1, sh, sw, 1), dtype=np.int32)


def deq(q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    """Real values (float64) of quint8 codes on ``[mn, mx]``: zero code ``round(-mn / step)``."""
    step = (mx - mn) / 255
    return (q.astype(np.float64) - round(-mn / step)) * step


def random_operands(rng: np.random.Generator, count: int,
                    random_range: Callable[[np.random.Generator], tuple[float, float]],
                    *shapes: Sequence[int]) -> Iterator[list[tuple[np.ndarray, tuple[float, float]]]]:
    """``count`` random draws of quint8 operands for property tests, taken from ``rng`` lazily.

    Each draw takes one range per shape (``random_range``), then uniform codes of each shape, in that
    order; it yields ``[(codes, range), ...]``, one pair per shape. The loop body may draw from ``rng``
    too: the next draw follows it.
    """
    for _ in range(count):
        ranges = [random_range(rng) for _ in shapes]
        yield [(rng.integers(0, 256, size=tuple(shape)).astype(np.uint8), r) for shape, r in zip(shapes, ranges)]


def geometry(size: int, f: int, s: int, padding: int) -> tuple[int, int, int]:
    """(out, pad before, pad after) of one axis per SEMANTICS §3, written out again for the references.

    ``padding`` is NN_PAD_VALID, _SAME (the odd pad after) or _SAME_CAFFE (the odd pad before).
    """
    if padding == PAD_VALID:
        return (size - f) // s + 1, 0, 0
    out = -(-size // s)
    pad = max(0, (out - 1) * s + f - size)
    before = pad // 2 if padding == PAD_SAME else pad - pad // 2
    return out, before, pad - before


def reference_codes(sums: np.ndarray, prod: float, bias32: Sequence[float], lo: float, hi: float,
                    k: Sequence[float] | None = None) -> np.ndarray:
    """The SEMANTICS §5 output stage worked with Python integers (no int64 limits), element by
    element, for a zero-exact fixed output range ``[lo, hi]``; ``k`` channel scales (1.0 if absent).

    Written from the formula alone, independently of ``ops/output_stage/``.
    """
    k = [1.0] * len(bias32) if k is None else list(k)
    out_step = (hi - lo) / 255
    final = max(k) * prod / out_step
    shamt = 0 if final <= 1 else math.frexp(final)[1]

    def round_away(v: float) -> int:
        return math.trunc(v + math.copysign(0.5, v))

    recip = [min(round_away(math.ldexp(prod / out_step, 31 - shamt) * kc), 2 ** 31 - 1) for kc in k]
    bb = [round((b32 + (-lo / prod)) / kc) for b32, kc in zip(bias32, k)]  # round(): half to even
    out = np.empty(sums.shape, np.uint8)
    for idx in np.ndindex(sums.shape):
        c = idx[-1]
        acc = bb[c] + int(sums[idx])
        out[idx] = max(0, min(255, ((acc << shamt) * recip[c] + 2 ** 30) >> 31))
    return out


def reference_conv(x: np.ndarray, x_zero: int, w: np.ndarray, w_zero: int, sh: int, sw: int,
                   padding: int) -> np.ndarray:
    """``sum((x - x_zero) * (w - w_zero))`` in float64, pads holding ``x_zero`` (SEMANTICS §3).

    A plain loop over filter taps with explicit padding, written independently of
    ``ops/conv_core.py``; ``padding`` is NN_PAD_VALID, _SAME or _SAME_CAFFE.
    """
    b, h, wd, _ = x.shape
    fh, fw, _, dout = w.shape
    oh, top, _ = geometry(h, fh, sh, padding)
    ow, left, _ = geometry(wd, fw, sw, padding)
    big = np.full((b, h + fh + sh * oh, wd + fw + sw * ow, x.shape[3]), float(x_zero))
    big[:, top:top + h, left:left + wd] = x
    xc, wc = big - x_zero, w.astype(np.float64) - w_zero
    acc = np.zeros((b, oh, ow, dout))
    for i in range(fh):
        for j in range(fw):
            acc += np.einsum("bhwc,cd->bhwd", xc[:, i:i + sh * oh:sh, j:j + sw * ow:sw][:, :oh, :ow], wc[i, j])
    return acc
