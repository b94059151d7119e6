"""Supernode_16x16p32to16 (flat) as hexagon_nn's device code computes it: op_supernode.c ``supernode_execute_ref``
(its ``is_16b`` path; nnlib df7ad3c registers no HVX execute for the flat 16-bit node), plain C compiled for the DSP.

The 16-bit path keeps the 8-bit supernode's output stage, in float32 and int32 as written:

* ``supernode_check_ref``: the output range inputs; ``+inf`` is automatic (max starts at 1/128), ``-inf``
  automatic (min starts at ``-max``). The range persists in the node between runs.
* levels ``(max - min) / 255`` for the input and the weights, ``(bias max - bias min) / 2**32``; zero codes
  ``quantize_uint8(0, min, max)`` (0..255) though the codes are 16-bit; ``out_level = in_level * filt_level``.
* the windows at ``nn_pad_compute_before(out_size, ...)`` (the *output* size where the input size belongs), the
  taps outside the input skipped; ``sum`` of ``(x - in_off) * (w - f_off)`` in int32 (wrapping).
* ``biasbuf = fast_roundf(bias * (bias_level / out_level))`` (``convert_sf2w``: half even, saturating);
  ``maxrange = (int)((max - min) / out_level + 0.5f)``; with ``USE_16BITS_RECIP`` (op_supernode.c defines it)
  ``recip = (uint32)(0xff0000 / maxrange)`` and a code is ``clip((int32)(s * recip + 2**15) >> 16, 0, 65535)``,
  ``s = (int)((float)(biasbuf + sum) + minval_offset)``, the product and sum in uint32 (wrapping),
  ``minval_offset = -min / out_level``: the codes are on the 8-bit scale, 0..255 across the range.
* retries: an automatic max doubles until ``max - min >= maxsum * out_level``, an automatic min doubles while
  ``minsum * out_level < 0`` (``maxsum`` / ``minsum``: extremes of the sums and 0, shifted by ``minval_offset``),
  and the node runs again.

A 13th input (channel scales, which prepare.c ``make_supernodes`` may fuse into the node) is never read:
``supernode_check_ref`` ("Supernode may have a 13th input 'ChannelScale', but it should end up being just a
scalar [1.0] if the supernode doesn't convert to d32, so ignore it") and ``supernode_execute_ref`` read inputs 0-11
only, and ``nn_ops_for_Supernode_16x16p32to16`` sets no input count. The engine drops it too
(:func:`ignored_channel_scales`), with a DeviceDefectWarning when a scale is not 1.0.

Not followed (refused): ranges whose level is not a positive finite float32 and ``maxrange`` 0 (the device
divides by it or doubles 0 forever), retries that would not end.
"""
from __future__ import annotations

import warnings

import numpy as np
from hexnn_import.ops.conv_core import centered_padded, im2col
from hexnn_import.ops.nnlib_f32 import fast_roundf, quantize_uint8, trunc_i32
from hexnn_import.ops.registry import KernelContext

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.kernels.supernode_flat_common import (initial_range, level, recip_ref, ref_geometry,
                                                            settle_ref, wrap32)

F = np.float32


def ignored_channel_scales(ctx: KernelContext, inputs: tuple) -> tuple:
    """The first 12 inputs: a 13th (channel scales) is ignored as op_supernode.c ignores it (module doc); scales
    other than 1.0 are named once per node in a DeviceDefectWarning."""
    if len(inputs) <= 12:
        return inputs
    if not np.all(np.asarray(inputs[12], dtype=F) == F(1.0)) and not ctx.state.get("sn16_flat_scales_told"):
        ctx.state["sn16_flat_scales_told"] = True
        warnings.warn(f"{ctx.node} ({ctx.op}): channel scales (input 12) other than 1.0 are ignored, as hexagon_nn's "
                      f"device code ignores them (op_supernode.c supernode_check_ref)", DeviceDefectWarning,
                      stacklevel=3)
    return inputs[:12]


def flat_device_supernode(ctx: KernelContext, x: np.ndarray, w: np.ndarray, ranges: list[float], bias: np.ndarray,
                          stride: tuple[int, int]) -> tuple[np.ndarray, F, F]:
    """(uint16 codes, out_min, out_max) of one execute (module doc); ``ranges`` = in, weight, bias, out ends."""
    imn, imx, fmn, fmx, bmn, bmx, omn, omx = (F(v) for v in ranges)
    lvl = F(level(ctx, imn, imx, F(255), "input") * level(ctx, fmn, fmx, F(255), "weights"))
    if not (np.isfinite(lvl) and lvl > 0):
        raise ctx.fail(f"product level {lvl} is not a positive float32 (op_supernode.c divides by it)")
    bias_amt = F(level(ctx, bmn, bmx, F(2.0 ** 32), "bias") / lvl)
    in_off, f_off = int(quantize_uint8(0.0, imn, imx)), int(quantize_uint8(0.0, fmn, fmx))
    fh, fw, din, dout = w.shape
    g = ref_geometry(x.shape[1], x.shape[2], fh, fw, *stride, ctx.padding)
    cols = im2col(centered_padded(x.astype(np.int64) - in_off, 0, g), fh, fw, g)
    wm = w.astype(np.float64).reshape(fh * fw * din, dout) - f_off
    sums = wrap32(np.matmul(cols, wm).astype(np.int64)).reshape(x.shape[0], g.out_h, g.out_w, dout)
    r = ctx.state.get("sn16_flat_range")
    if r is None:
        r = ctx.state["sn16_flat_range"] = initial_range(omn, omx)
    off = settle_ref(ctx, r, max(0, int(sums.max(initial=0))), min(0, int(sums.min(initial=0))), lvl)
    recip = recip_ref(ctx, r, lvl)
    biasbuf = fast_roundf((bias.astype(F) * bias_amt).astype(F))
    s = trunc_i32((wrap32(biasbuf + sums).astype(F) + off).astype(F))
    q = np.clip(wrap32((s * recip + 2 ** 15) % 2 ** 32) >> 16, 0, 65535).astype(np.uint16)
    if not ctx.state.get("sn16_flat_told"):
        ctx.state["sn16_flat_told"] = True
        warnings.warn(f"{ctx.node} ({ctx.op}): hexagon_nn's flat 16-bit supernode (op_supernode.c "
                      f"supernode_execute_ref) keeps the 8-bit output stage: its codes span 0..255 of the 16-bit "
                      f"range, as here; the _d32 form (op_supernode_16b.c) does not", DeviceDefectWarning, stacklevel=2)
    return q, r[0], r[1]
