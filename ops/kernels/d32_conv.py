"""Convolution-family _d32 ops: Supernode_*_d32, DepthwiseSupernode_*_d32, InputSupernode_*_outd32,
QuantizedBatchNorm_*_d32 (SEMANTICS.md §5, §7).

DepthwiseSupernode_*_d32 also take the optional 13th input (channel scales) that prepare.c's
make_supernodes gives them (hexagon_nn 2.14.1 op_dwise_snode_8bit.c, NN_IOCOUNT_RANGE(12,13)); that
arithmetic is in :mod:`.dwise_scaled`.

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

from hexnn_import.ops.d32_io import D32Twin, d32_output, flat_input
from hexnn_import.ops.kernels.dwise_scaled import dwise_supernode_scaled
from hexnn_import.ops.output_stage.nnlib_constants import setup_range
from hexnn_import.ops.output_stage.nnlib_execute import STATE_KEY
from hexnn_import.ops.registry import KernelContext, register

#: InputSupernode: the graph input's depth must be in this range (op text).
INPUT_DEPTH = (1, 4)
#: InputSupernode's auto-range guess (op_supernode_new.c shortin_supernode_check).
INPUT_DEFAULT = (np.float32(-1.0 / 128), np.float32(1.0 / 128))


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
        """Flat twin on the logical data (12 inputs) or the channel-scaled body (13); output 0 to d32."""
        if len(inputs) < 13:
            return super().compute(ctx, *inputs)
        outs = dwise_supernode_scaled(ctx, self.flat_inputs(ctx, inputs), self.QINT32_BIAS)
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


class _InputSupernode(D32Twin):
    """Flat graph input (depth 1..4, op text) -> Supernode -> d32 output; 12 inputs, no channel scales.

    An auto output range starts from the device's own guess (op_supernode_new.c ``shortin_supernode_check``:
    ``setup_initial_output_range(..., -1.0f/128, 1.0f/128)``, where the d32 Supernode starts from [0, 0.5]):
    the node's range state is seeded with it before the first run (issue 36)."""

    D32_INPUTS = ()

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        depth = np.shape(flat_input(ctx, inputs[0], "input data"))[-1:]
        if len(depth) and not INPUT_DEPTH[0] <= depth[0] <= INPUT_DEPTH[1]:
            raise ctx.fail(f"input data has shape {list(np.shape(inputs[0]))}: the op takes a depth of "
                           f"{INPUT_DEPTH[0]}..{INPUT_DEPTH[1]}")
        if STATE_KEY not in ctx.state:
            init = setup_range(ctx.scalar(inputs[10], "output min"), ctx.scalar(inputs[11], "output max"),
                               INPUT_DEFAULT)
            if not isinstance(init, str):        # an invalid range: the supernode's own error
                ctx.state[STATE_KEY] = init
        return super().compute(ctx, *inputs)


@register("InputSupernode_8x8p8to8_outd32")
class InputSupernode8x8p8to8OutD32(_InputSupernode):
    """Supernode_8x8p8to8 on a flat input of depth 1..4, output d32."""

    FLAT_OP = "Supernode_8x8p8to8"


@register("InputSupernode_8x8p32to8_outd32")
class InputSupernode8x8p32to8OutD32(_InputSupernode):
    """Supernode_8x8p32to8 on a flat input of depth 1..4, output d32."""

    FLAT_OP = "Supernode_8x8p32to8"
