"""The order in which lib_nn's dense convolutions accumulate a padded window (conv2d_deep, conv2d_shallowin).

Saturating accumulation is not associative (lib_nn note 3), so where an
accumulator can saturate the order of the steps decides the result. lib_nn's
C (``src/c/conv2d_deep.c`` / ``conv2d_shallowin.c`` with
``nn_conv2d_hstrip_deep_padded_ref``, ``nn_conv2d_hstrip_tail_deep_padded_ref``,
``nn_conv2d_hstrip_shallowin_padded_ref``, ``nn_conv2d_hstrip_tail_shallowin_padded_ref``)
handles one output row at a time. For a row whose window has ``pad_t`` rows
above the image and ``pad_b`` rows below it, the bias first takes those
rows' taps (all of them reading the zero point): the ``pad_t`` top rows, then
the ``pad_b`` bottom rows, each row left to right. That "adjusted bias" is
stored, and every pixel of the row starts from it and adds the window rows
inside the image, top to bottom; within such a row the left padding taps,
the image taps and the right padding taps come in their natural order. Rows
without top or bottom padding therefore keep the natural order.

Every window row has the same steps (the 32-channel chunks of each tap for
conv2d_deep, one 32-byte step per row for conv2d_shallowin), so the order is
a permutation of whole window rows.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.xs3.window import Window


def row_order(win: Window, x_h: int, out_row: int) -> np.ndarray:
    """Window rows (0 .. K_h - 1) in lib_nn's accumulation order for output row ``out_row``."""
    rows = np.arange(win.k_h)
    image_rows = win.start_row + out_row * win.stride_v + rows
    above, below = rows[image_rows < 0], rows[image_rows >= x_h]
    inside = rows[(image_rows >= 0) & (image_rows < x_h)]
    return np.concatenate([above, below, inside])


def row_order_groups(win: Window, x_h: int, out_h: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(output rows, window row order), ...]``: the output rows that share each order (module doc)."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for r in range(out_h):
        groups.setdefault(tuple(int(v) for v in row_order(win, x_h, r)), []).append(r)
    return [(np.array(rows), np.array(order)) for order, rows in groups.items()]
