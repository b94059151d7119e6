"""AveragePool with explicit pads and ``count_include_pad=0``: bands of VALID pools (issue 33, item 2).

ONNX's AveragePool without counted pads averages, at each output, the
taps of its window that lie inside the input (onnx ``docs/Operators.md``,
AveragePool: "the padded values are excluded from the average"). Along
one spatial axis the window of output ``o`` starts at ``o * stride - pad``
and its in-bounds taps are the contiguous range ``[max(0, start),
min(L, start + k))``; the 2-D window is the product of the two axes'
ranges, so the in-bounds count is the product of their lengths.

hexagon_nn's own padding modes count only in-bounds taps too, but only for
the pads SAME / SAME_CAFFE imply (SEMANTICS §6). Any other pads are done
exactly here: the outputs of each axis split into *bands* - the run of
outputs whose windows lie wholly inside the input (one band, kernel ``k``,
the op's stride) and each output whose window is clipped (a band of its
own, kernel = its in-bounds length). Every pair of a row band and a column
band is a VALID QuantizedAvgPool_8 (or its one-rounding depthwise form)
over exactly the slice of the input its windows cover, which averages
exactly the in-bounds taps; the pieces are joined by QuantizedConcat_8 on
one range (codes copied). A window wholly inside the padding has no taps
and is refused by the check.

A piece of a single output (a corner, 1x1) would take the device's
reduce-to-1x1 path (op_avgpool_d32.c ``avgpool_special_reduce_to_1x1``),
whose output range is made from the piece's own sums, not the input's: the
concat then re-codes every band onto the merged range and the whole pool
loses accuracy (issue 36). Such a piece reads one more window along an axis
with room for it, or over a few zeros padded on (:func:`widen_single`: its
1x2 or 2x1 output takes the ordinary path, which keeps the input's range),
and a QuantizedSlice_8 keeps the wanted output.
"""
from __future__ import annotations

from dataclasses import dataclass

from hexnn_import.importers.nodes.core import Range
from hexnn_import.importers.nodes.movement import concat, pad, slice_value
from hexnn_import.importers.nodes.values import Value


@dataclass(frozen=True)
class Band:
    """Consecutive outputs of one axis that one VALID pool computes: the first input index its
    windows read, the kernel length, and how many outputs."""

    start: int
    kernel: int
    count: int

    def span(self, stride: int) -> int:
        """Input length the band's windows cover."""
        return (self.count - 1) * stride + self.kernel


def axis_bands(length: int, kernel: int, stride: int, pad_before: int, outputs: int) -> list[Band] | None:
    """The bands of one axis (module doc), in output order; None when some window has no in-bounds tap."""
    bands: list[Band] = []
    for o in range(outputs):
        start = o * stride - pad_before
        lo, hi = max(0, start), min(length, start + kernel)
        if hi <= lo:
            return None
        last = bands[-1] if bands else None
        if hi - lo == kernel and last is not None and last.kernel == kernel and \
                last.start + last.count * stride == lo:  # an unclipped window continuing an unclipped band
            bands[-1] = Band(last.start, kernel, last.count + 1)
        else:
            bands.append(Band(lo, hi - lo, 1))
    return bands


def widen_single(rb: Band, cb: Band, strides: tuple[int, int], hw: tuple[int, int]) -> tuple[int, int, int, int]:
    """For a 1x1 piece (module doc): ``(axis, input start shift, index of the wanted output, columns of zero
    padding)`` of one more window along that axis (1 rows, 2 columns): after the piece when the input has room,
    else before; when neither axis has room, after the piece's columns over ``stride`` padded zeros (that output
    is dropped)."""
    for axis, band in ((2, cb), (1, rb)):
        step, length = strides[axis - 1], hw[axis - 1]
        if band.start + band.kernel + step <= length:
            return axis, 0, 0, 0
        if band.start - step >= 0:
            return axis, -step, 1, 0
    return 2, 0, 0, strides[1]


def average_in_bounds(imp, x: Value, rows: list[Band], cols: list[Band], strides: tuple[int, int],  # type: ignore[no-untyped-def]
                      out_range: Range | None, name: str, valid_pool) -> Value:  # type: ignore[no-untyped-def]
    """The count_include_pad=0 average of NHWC ``x`` (module doc); ``valid_pool(x, kernel, name)`` emits one
    VALID pool at ``strides`` onto ``out_range``."""
    b, _, _, d = x.shape
    row_values = []
    for i, rb in enumerate(rows):
        pieces = []
        for j, cb in enumerate(cols):
            begin, size = [0, rb.start, cb.start, 0], [b, rb.span(strides[0]), cb.span(strides[1]), d]
            axis, shift, keep, zeros = widen_single(rb, cb, strides, (x.shape[1], x.shape[2])) \
                if rb.count == cb.count == 1 else (0, 0, 0, 0)
            if axis:
                begin[axis] += shift
                size[axis] += strides[axis - 1] - zeros
            part = slice_value(imp, x, begin, size, f"{name}/band{i}_{j}/slice")
            if zeros:
                part = pad(imp, part, [(0, 0), (0, 0), (0, zeros), (0, 0)], 0.0, f"{name}/band{i}_{j}/widen")
            pooled = valid_pool(part, (rb.kernel, cb.kernel), f"{name}/band{i}_{j}")
            if axis:
                at = [0, 0, 0, 0]
                at[axis] = keep
                pooled = slice_value(imp, pooled, at, [b, 1, 1, d], f"{name}/band{i}_{j}/single")
            pieces.append(pooled)
        width = sum(p.shape[2] for p in pieces)
        row_values.append(pieces[0] if len(pieces) == 1 else
                          concat(imp, pieces, 2, (b, rb.count, width, d), out_range, f"{name}/row{i}"))
    if len(row_values) == 1:
        return row_values[0]
    height = sum(r.shape[1] for r in row_values)
    return concat(imp, row_values, 1, (b, height, row_values[0].shape[2], d), out_range, f"{name}/rows")
