"""A 16-bit layer whose input byte planes the device misaligns: widen its padded input row (issue 36).

prepare makes every stride-1 16-bit layer (:func:`..int16.emit_linear16`) a ``Supernode_u16x16p32to16_d32``
(hexagon_nn 2.14.1 prepare.c ``depth32_replacement_op``). Its device code (op_supernode_16b.c, nnlib df7ad3c)
splits the 16-bit input into an even and an odd byte plane, the odd one ``in_oedelta`` bytes after the even one.
``supernode_u16b_check`` sets ``in_oedelta`` (l. 3830-3874) from the input's format, which another node's output
does not have yet at check (l. 3837's comment: the right pad reads 0), with the left pad and top / bottom pads
taken as 4, the depth padded by ``32 - (depth & 31)`` (32 for a multiple of 32) and room for the activation sum of
a row narrower than 24 (``more_byte_suma``):

    in_oedelta = b * (w + 4) * dc * (h + 8) + (24 * dc if w + 4 < 24 else 0),   dc = 32 * (depth // 32 + 1)

``supernode_split_input`` (l. 1008-1019) keeps that value unless the real size ``b * W * roundup(depth, 32) *
(h + 8)`` (``W`` = ``w + 4`` rounded up to a multiple of 4, the right pad the d32 producers give) is larger. When it
is kept and is not a multiple of 128, the odd plane does not start on a vector: the HVX kernels' aligned loads read
it 64 bytes off and the outputs are wrong (the int16x8 digit models' Dense heads, 1 x 1 x 32 inputs: a code of 84
where the engine and LiteRT give 4470). Traced on the op harness (tools/hvx/op_supernode_u16_d32.py with the right
pad hidden at check, 52 shapes): the device is wrong exactly where :func:`u16_planes_misaligned` says.

Where a layer's padded input meets it, the layer pads the fewest zero columns on the right (1-3; ``w + 4`` a
multiple of 4 always ends it) and widens its filter by as many columns of zero weights on the right: the output
shape is the same and every added product is ``(x - x_zero) * 0``. The layer's codes are the engine's either way
for the bundled models' heads (a 1 x 1 filter made 1 x 4); the device's 16-bit arithmetic is not in general
independent of the filter's width, so another layer may move by a code - to what the device then computes right.
"""
from __future__ import annotations

import numpy as np

#: the HVX vector: the odd byte plane must start on one
VECTOR = 128


def u16_planes_misaligned(batches: int, height: int, width: int, depth: int) -> bool:
    """Whether a Supernode_u16x16p32to16_d32 on a ``[batches, height, width, depth]`` input made by another node
    keeps check's ``in_oedelta`` at execute and it is not a multiple of 128 bytes (module doc)."""
    dc = 32 * (depth // 32 + 1)
    check = batches * (width + 4) * dc * (height + 8) + (24 * dc if width + 4 < 24 else 0)
    run = batches * -(-(width + 4) // 4) * 4 * -(-depth // 32) * 32 * (height + 8)
    return run <= check and check % VECTOR != 0


def narrow_row_extra(shape: tuple[int, int, int, int], pads: tuple[int, int, int, int]) -> int:
    """Zero columns to add on the right of a stride-1 16-bit layer's input ``shape`` (NHWC) padded by ``pads``
    (top, bottom, left, right) so that its byte planes are aligned; 0 for none (or negative pads: crops)."""
    if min(pads) < 0:
        return 0
    b, h, w, d = (int(v) for v in shape)
    h, w = h + pads[0] + pads[1], w + pads[2] + pads[3]
    return next(e for e in range(4) if not u16_planes_misaligned(b, h, w + e, d))


def widen_for_narrow_row(w_real: np.ndarray, pads: tuple[int, int, int, int],
                         shape: tuple[int, int, int, int]) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """The filter ``[O, H, W, I]`` and pads (top, bottom, left, right) of :func:`narrow_row_extra`: ``extra``
    columns of zero weights after the filter's last and as many more zero columns on the input's right."""
    extra = narrow_row_extra(shape, pads)
    if extra == 0:
        return w_real, pads
    zeros = np.zeros(w_real.shape[:2] + (extra,) + w_real.shape[3:], np.float64)
    widened = np.concatenate([np.asarray(w_real, np.float64), zeros], axis=2)
    return widened, (pads[0], pads[1], pads[2], pads[3] + extra)
