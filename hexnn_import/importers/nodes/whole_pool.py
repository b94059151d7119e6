"""A QuantizedAvgPool_8 with a 1x1 output over a depth that is not a multiple of 32, in a form the device computes.

hexagon_nn's prepare (``src/prepare.c`` ``depth32_replacement_op``) turns every QuantizedAvgPool_8 into
QuantizedAvgPool_8_d32, with no condition. For a 1x1 output that op takes its "reduce to 1x1" path
(``ops/src/op_avgpool_d32.c``, ``avgpool_reduce_to_1x1_worker_thread``), which makes the output range from the
window sums' least and largest value. Over a depth that is not a multiple of 32 it means to give the d32
depth-padding lanes the zero sum, but its byte mask (``Q6_Q_vand_VR(depthmask, 1)``: one byte in four) replaces
only the low byte of those lanes' sums, so whatever the padding holds reaches the range (for the last pixel of a
``Convert_to_d32`` output, memory that op never set): the device's answer is not deterministic there.

The importer pools a depth that is a multiple of 32 instead, which has no padding lanes: the input joined with
copies of its own channels (QuantizedConcat_8; d32 after prepare) - ``lcm(d, 32) / d`` whole copies when
that is at most :data:`MAX_COPIES`, else whole copies and a QuantizedSlice_8 of the first channels to fill the
last d32 slice. A copied channel's window sum equals its original's, so the sums' least and largest value, the
output range and every code are those the device means; QuantizedSlice_8 keeps the first ``d`` channels.
"""
from __future__ import annotations

import math

from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.movement import concat, slice_value
from hexnn_import.importers.nodes.values import Value

#: most whole copies joined (lcm(d, 32) / d): depths 8, 16, 24, 40, 48, 56, ... take whole copies only
MAX_COPIES = 4

NOTE = ("{name}: the whole-image average pool over {d} channels is pooled over {wide} (copies of its channels, "
        "then the first {d} kept), as hexagon_nn's QuantizedAvgPool_8_d32 reducing to 1x1 reads its d32 "
        "depth-padding lanes into the output range (op_avgpool_d32.c): the device's answer would not be "
        "deterministic")


def needs_wide_depth(out_shape: tuple[int, int, int, int]) -> bool:
    """True for the pools the defect reaches: a 1x1 output (the d32 reduce-to-1x1 path) over a depth that is not a
    multiple of 32 (prepare.c converts every QuantizedAvgPool_8 to d32)."""
    return out_shape[1] == 1 and out_shape[2] == 1 and out_shape[3] % 32 != 0


def wide_depth(d: int) -> int:
    """The depth pooled: ``lcm(d, 32)`` when that is at most :data:`MAX_COPIES` copies, else ``d`` rounded up
    to a multiple of 32."""
    lcm = d * 32 // math.gcd(d, 32)
    return lcm if lcm // d <= MAX_COPIES else -(-d // 32) * 32


def widen(b: GraphBuilder, x: Value, name: str) -> Value:
    """``x`` joined along depth with copies of its own channels up to :func:`wide_depth`."""
    d = x.shape[3]
    wide = wide_depth(d)
    parts = [x] * (wide // d)
    rest = wide % d
    if rest:
        parts.append(slice_value(b, x, [0, 0, 0, 0], [*x.shape[:3], rest], f"{name}/fill"))
    shape = (*x.shape[:3], wide)
    b.note(NOTE.format(name=name, d=d, wide=wide))
    return concat(b, parts, 3, shape, None, f"{name}/widen")  # type: ignore[arg-type]


def narrow(b: GraphBuilder, y: Value, d: int, name: str) -> Value:
    """The pool's first ``d`` channels (QuantizedSlice_8)."""
    return slice_value(b, y, [0, 0, 0, 0], [*y.shape[:3], d], f"{name}/narrow")
