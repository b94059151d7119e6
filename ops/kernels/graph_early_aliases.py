"""Op names only the early edition (hexagon_nn_ops_early.txt) documents, whose arithmetic an
existing kernel already implements.

- **QuantizedAdd_8x8to8**: the early name of the flat quint8 add, "Elementwise
  Add" of two quint8 tensors to quint8 with inputs A, B, their ranges and
  the output range - the very op the main document calls
  QuantizedAdd_8p8to8 (SEMANTICS §6). The early text lists all 8 inputs
  without "optional", so the catalog requires 8; the kernel is
  :class:`add8.QuantizedAdd8p8to8` itself, so -inf / +inf output ends are
  auto ranges exactly as there.
"""
from __future__ import annotations

from hexnn_import.ops.kernels.add8 import QuantizedAdd8p8to8
from hexnn_import.ops.registry import register


@register("QuantizedAdd_8x8to8")
class QuantizedAdd8x8to8(QuantizedAdd8p8to8):
    """QuantizedAdd_8p8to8 under its early name (module doc)."""
