"""Pad_f and MirrorPad_f on plain float tensors (op texts; SEMANTICS.md §6).

Pad_f's padding input is read by QuantizedPad_8's
:func:`~hexnn_import.ops.kernels.pad.pad_table` (``[1,1,n,2]``, n = 1..4,
the first n of b,h,w,d; the rest 0; values >= 0); MirrorPad_f is MirrorPad_8
(:func:`~hexnn_import.ops.kernels.pad.nnlib_mirror_pad`, op_mirrorpad.c).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernels.pad import nnlib_mirror_pad, pad_table
from hexnn_import.ops.plain_io import plain_tensor, slot_dtype
from hexnn_import.ops.registry import Kernel, KernelContext, register


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
    """Mirror-pad a float tensor: inputs data, padding ``[1,1,4,2]``; the node's padding picks the mode.

    NN_PAD_MIRROR_REFLECT mirrors about the edge element (``[a b c] -> b | a b
    c | b``), NN_PAD_MIRROR_SYMMETRIC repeats it (``a | a b c | c``); any
    other padding is an error (op text). As op_mirrorpad.c ``mirrorpad_execute_f`` (MirrorPad_8's
    :func:`~hexnn_import.ops.kernels.pad.nnlib_mirror_pad`, checked on the device, issue 36): exactly 4
    rows, each pad below its dimension in both modes (TF's SYMMETRIC would take a pad equal to it).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, pads_arr = inputs
        x = plain_tensor(ctx, data, "input data", slot_dtype(self.spec.inputs[0]))
        return (nnlib_mirror_pad(ctx, x, pads_arr),)
