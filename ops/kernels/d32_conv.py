"""Convolution-family _d32 ops: Supernode_*_d32, DepthwiseSupernode_*_d32, QuantizedBatchNorm_*_d32 (SEMANTICS.md
§5, §7); InputSupernode_*_outd32 is in :mod:`.input_supernode`.

DepthwiseSupernode_*_d32 also take the optional 13th input (channel scales) that prepare.c's
make_supernodes gives them (hexagon_nn 2.14.1 op_dwise_snode_8bit.c, NN_IOCOUNT_RANGE(12,13)); that
arithmetic is in :mod:`.dwise_scaled`, the 3x3 kernels' output padding columns (which enter an auto range on the
device) in :mod:`.dwise_pad_columns`.

Each is its flat twin (``kernels/supernode.py``, ``kernels/depthwise.py``,
``kernels/batchnorm.py``) on the logical data of the d32 input, with the
result laid out as d32 with the default padding (:class:`D32Twin`); weights,
bias and every scalar stay flat, in the catalog's input order. Auto output
ranges widen and persist on the _d32 node exactly as on the flat one.
Zero-width and narrow input, weight and output ranges are handled as on the
flat twin (its docstring; hexagon_nn: op_supernode_new.c, op_dwise_snode_8bit.c,
op_batchnorm_d32.c): a zero-width input or weight range gives the bias alone,
a zero-width output range codes 0 / 255 by sign (issue 18).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.ops.d32 import D32Tensor, right_padding
from hexnn_import.ops.d32_io import D32Twin, d32_output
from hexnn_import.ops.kernels.dwise_scaled import dwise_supernode_scaled
from hexnn_import.ops.registry import KernelContext, register


@register("Supernode_8x8p8to8_d32")
class Supernode8x8p8to8D32(D32Twin):
    """Supernode_8x8p8to8 (quint8 bias) on d32 data; 12/13 inputs (channel scales optional)."""

    FLAT_OP = "Supernode_8x8p8to8"


@register("Supernode_8x8p32to8_d32")
class Supernode8x8p32to8D32(D32Twin):
    """Supernode_8x8p32to8 (qint32 bias) on d32 data; 12/13 inputs (channel scales optional)."""

    FLAT_OP = "Supernode_8x8p32to8"


class _DepthwiseSupernodeD32(D32Twin):
    """A DepthwiseSupernode on d32 data; with a 13th input (channel scales, as prepare.c's
    make_supernodes gives it) the flat arithmetic is :mod:`.dwise_scaled`'s."""

    QINT32_BIAS: bool = True

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        """The flat body on the logical data, with the d32 input's width padding (the 3x3 kernels' padding
        columns: :mod:`.dwise_pad_columns`); output 0 to d32."""
        x = inputs[0]
        if isinstance(x, D32Tensor):
            pad = (x.left, x.right, x.w_total)
        else:    # a plain array: the default layout (d32.py)
            w = int(np.shape(x)[2]) if np.ndim(x) == 4 else 0
            pad = (4, right_padding(4, w), 4 + w + right_padding(4, w))
        outs = dwise_supernode_scaled(ctx, self.flat_inputs(ctx, inputs), self.QINT32_BIAS, pad)
        return (d32_output(outs[0]), *outs[1:])


@register("DepthwiseSupernode_8x8p8to8_d32")
class DepthwiseSupernode8x8p8to8D32(_DepthwiseSupernodeD32):
    """DepthwiseSupernode_8x8p8to8 on d32 data (weights ``[fh,fw,din,dmul]`` flat); 12/13 inputs."""

    FLAT_OP = "DepthwiseSupernode_8x8p8to8"
    QINT32_BIAS = False


@register("DepthwiseSupernode_8x8p32to8_d32")
class DepthwiseSupernode8x8p32to8D32(_DepthwiseSupernodeD32):
    """DepthwiseSupernode_8x8p32to8 on d32 data (weights ``[fh,fw,din,dmul]`` flat); 12/13 inputs."""

    FLAT_OP = "DepthwiseSupernode_8x8p32to8"
    QINT32_BIAS = True


@register("QuantizedBatchNorm_8x8p8to8_d32")
class QuantizedBatchNorm8x8p8to8D32(D32Twin):
    """QuantizedBatchNorm_8x8p8to8 on d32 data (scale and quint8 bias flat)."""

    FLAT_OP = "QuantizedBatchNorm_8x8p8to8"


@register("QuantizedBatchNorm_8x8p32to8_d32")
class QuantizedBatchNorm8x8p32to8D32(D32Twin):
    """QuantizedBatchNorm_8x8p32to8 on d32 data (scale flat, qint32 bias)."""

    FLAT_OP = "QuantizedBatchNorm_8x8p32to8"
