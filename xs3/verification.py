"""How each XS3 kernel is verified (issue 19): its rows of ``hexnn-import ops --json`` (the ``verified`` field).

- ``libnn-exact``: every golden case taken from XMOS lib_nn's C (``tools/golden_libnn.py``,
  ``tools/golden_libnn_ops.py``, ``tools/golden_libnn_im2col.py``; tests/data/golden/libnn/) is reproduced bit
  for bit by the kernel's literal simulation;
- ``hand-worked`` otherwise, with the share of golden cases that agree.

The kernel names are the kernel table's (:data:`~hexnn_import.xs3.kernel_table.KERNELS`, then
:data:`~hexnn_import.xs3.kernel_table.SIMULATED`); the hexagon_nn ops' rows are
:func:`hexnn_import.ops.verification.verification`'s, and ``hexnn_import.summary.op_coverage`` lists both.
tests/xs3/test_libnn_golden.py replays the golden files and fails when a figure here is stale.
"""
from __future__ import annotations

from typing import Any

from hexnn_import.xs3.kernel_table import KERNELS, SIMULATED

#: the lib_nn kernel names, as the XS3 kernel table has them: those layers lower to, then those only simulated
XS3_KERNELS = (*KERNELS, *SIMULATED)

#: golden-replay figures per kernel: ``kernel -> (cases, exact)`` (tests/data/golden/libnn/)
LIBNN: dict[str, tuple[int, int]] = {
    'conv2d_deep': (85, 85),
    'conv2d_shallowin': (86, 86),
    'conv2d_1x1': (74, 74),
    'conv2d_depthwise': (50, 50),
    'fully_connected_8': (50, 50),
    'fully_connected_16': (48, 48),
    # tools/golden_libnn_ops.py (issue 23)
    'add_elementwise': (58, 58),
    'avgpool2d': (31, 31),
    'avgpool2d_global': (44, 44),
    'maxpool2d': (31, 31),
    'pad': (18, 18),
    'lookup8': (20, 20),
    'requantize_16_to_8': (14, 14),
    # tools/golden_libnn_im2col.py (issue 23)
    'conv2d_im2col': (90, 90),
}


def verification(kernel: str) -> dict[str, Any]:
    """``{"verified": ..., "libnn_cases": ...}`` for an XS3 kernel name (:data:`XS3_KERNELS`)."""
    cases, exact = LIBNN.get(kernel, (0, 0))
    if cases and exact == cases:
        return {"verified": "libnn-exact", "libnn_cases": cases}
    return {"verified": "hand-worked", "libnn_cases": cases, "libnn_exact_pct": round(100 * exact / max(1, cases), 1)}
