"""A hint for an open input dimension nothing implies: the step of the sizes its layers accept (issue 34).

A fully convolutional detector (PP-OCRv3's DB text detector, Paddle2ONNX) takes any height and width
whose feature maps still line up where its FPN adds an upsampled map to a skip connection: a multiple of
its total stride. Nothing in the file picks one size, so none is chosen; but the error can say which
sizes fit. onnx's shape inference in strict mode (its ``strict_mode``: an op whose inputs cannot agree,
such as an Add of 10- and 11-wide maps, is an error) checks a size in a few milliseconds:
:func:`size_hint` tries ``BASE + d`` for the offsets of :data:`OFFSETS` (the other open dimensions at
``BASE``) and reports the step the accepted sizes show, e.g. 32 when 320 and 352 fit and 321, 322,
324, 328 and 336 do not. Where ``BASE`` itself does not fit (PP-OCRv3's text recognizer, whose backbone
must bring the height down to 1 row: heights up to 48), it halves the size until one fits and reports
the largest size that fits (a bisection). It is a hint worded as such, never a size the importer uses.
"""
from __future__ import annotations

from typing import Mapping

from hexnn_import.importers.onnx.implied_shapes import Probe

BASE = 320
MIN = 8  # the smallest size tried where BASE does not fit
OFFSETS = (1, 2, 4, 8, 16, 32, 64)  # BASE + each is tried after BASE; the first that fits gives the step


def fits(probe: Probe, values: Mapping[str, list[int | None]]) -> bool:
    """onnx's strict shape inference accepts the graph with these input sizes (module doc)."""
    try:
        probe.infer(values, strict=True)
    except Exception:  # noqa: BLE001 - InferenceError: the sizes do not line up (or the graph is not followable)
        return False
    return True


def _trial(values: Mapping[str, list[int | None]], name: str, axis: int, size: int,
           held: Mapping[tuple[str, int], int]) -> dict[str, list[int | None]]:
    """``values`` with dimension (name, axis) at ``size`` and every other open one held (BASE by default)."""
    return {n: [(size if (n, k) == (name, axis) else held.get((n, k), BASE)) if v is None else v
                for k, v in enumerate(dims)] for n, dims in values.items()}


def size_hint(probe: Probe, values: Mapping[str, list[int | None]], name: str, axis: int,
              held: dict[tuple[str, int], int]) -> str | None:
    """What the module doc says of dimension ``axis`` of input ``name``, or None (any size fits, or none of
    those tried): "a multiple of S fits its layers, e.g. 320", or "sizes up to L fit its layers" where BASE
    is too big (L is then held for the dimensions hinted after this one)."""
    if fits(probe, _trial(values, name, axis, BASE, held)):
        for d in OFFSETS:
            if fits(probe, _trial(values, name, axis, BASE + d, held)):
                return None if d == OFFSETS[0] else f"a multiple of {d} fits its layers, e.g. {BASE}"
        return None
    lo = BASE // 2
    while lo >= MIN and not fits(probe, _trial(values, name, axis, lo, held)):
        lo //= 2
    if lo < MIN:
        return None
    hi = lo * 2  # lo fits, hi does not: the largest size that fits lies between
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(probe, _trial(values, name, axis, mid, held)) else (lo, mid)
    held[(name, axis)] = lo
    return f"sizes up to {lo} fit its layers"


__all__ = ["size_hint", "fits", "BASE"]
