"""Pad_f and MirrorPad_f on plain float tensors (op texts; SEMANTICS.md §6).

The padding input is read by QuantizedPad_8's
:func:`~hexnn_import.ops.kernels.pad.pad_table` (``[1,1,n,2]``, n = 1..4,
the first n of b,h,w,d; the rest 0; values >= 0); the mirror positions are
MirrorPad_8's (:func:`~hexnn_import.ops.kernels.move_core.mirror_pad`).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernels.move_core import mirror_pad
from hexnn_import.ops.kernels.pad import pad_table
from hexnn_import.ops.plain_io import plain_tensor, slot_dtype
from hexnn_import.ops.registry import (
    PAD_MIRROR_REFLECT,
    PAD_MIRROR_SYMMETRIC,
    Kernel,
    KernelContext,
    register,
)


@register("Pad_f")
class PadF(Kernel):
    """Pad a float tensor on its edges with zeros (0.0): inputs data, padding ``[1,1,n,2]``."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, pads_arr = inputs
        x = plain_tensor(ctx, data, "input data", slot_dtype(self.spec.inputs[0]))
        pairs = pad_table(ctx, pads_arr, x.shape)
        return (np.pad(x, pairs, mode="constant", constant_values=0),)


@register("MirrorPad_f")
class MirrorPadF(Kernel):
    """Mirror-pad a float tensor: inputs data, padding ``[1,1,n,2]``; the node's padding picks the mode.

    NN_PAD_MIRROR_REFLECT mirrors about the edge element (``[a b c] -> b | a b
    c | b``), NN_PAD_MIRROR_SYMMETRIC repeats it (``a | a b c | c``); any
    other padding is an error (op text). Per side at most size-1 (REFLECT)
    or size (SYMMETRIC), as TF's MirrorPad, where the text is silent.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, pads_arr = inputs
        if ctx.padding not in (PAD_MIRROR_REFLECT, PAD_MIRROR_SYMMETRIC):
            raise ctx.fail(f"the node's padding must be NN_PAD_MIRROR_REFLECT ({PAD_MIRROR_REFLECT}) or "
                           f"NN_PAD_MIRROR_SYMMETRIC ({PAD_MIRROR_SYMMETRIC}), not {ctx.padding}")
        x = plain_tensor(ctx, data, "input data", slot_dtype(self.spec.inputs[0]))
        pairs = pad_table(ctx, pads_arr, x.shape)
        return (mirror_pad(ctx, x, pairs, ctx.padding == PAD_MIRROR_REFLECT),)
