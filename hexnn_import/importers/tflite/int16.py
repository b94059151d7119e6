"""What counts as an int16x8 activation in a TFLite model (TFLiteConverter's 16x8 mode,
``EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8``): an int16 tensor with one scale and zero
point 0 (TFLite's quantization spec for 16-bit activations). Its graph value is quint16 on
``[-32768 s, 32768 s]`` (``nodes.int16`` module doc); the importer core and the handlers both read this.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.tflite.reader import TFTensor


def is_int16(t: TFTensor) -> bool:
    """A per-tensor int16 tensor with zero point 0 (an int16x8 activation)."""
    q = t.quant
    return (t.dtype == "int16" and q is not None and not q.per_channel and q.scale.size == 1
            and float(q.scale[0]) > 0 and not np.any(q.zero_point))


def scale_of(t: TFTensor) -> float:
    """The one scale of an int16 activation tensor."""
    assert t.quant is not None
    return float(t.quant.scale[0])
