"""Supernode_8x8p32to8 / Supernode_8x8p8to8 (flat) as hexagon_nn's registered device code computes them.

nnlib df7ad3c registers the flat 8-bit supernodes in op_supernode.c (``nn_ops_for_Supernode_8x8p32to8`` /
``_8x8p8to8``: ``supernode_check_ref`` then ``supernode_execute_hvx``), older code than the _d32 node
(op_supernode_new.c). prepare.c turns every flat supernode of a graph into the _d32 node, so only a graph the
engine runs as prepared in part (``hx.prepare(g, passes=...)`` without ``convert_to_depth32``) and
:func:`run_flat_device` reach this code; an unprepared graph (as imported, the XS3 path's Hexagon layers) and
``run_op`` compute what prepare's _d32 node computes (:func:`for_graph`).

* ``supernode_check_ref``: a ``+inf`` output max is automatic and starts at 1/128, a ``-inf`` min automatic at
  ``-max``; a given end is used as given. The range persists in the node between runs.
* ``supernode_execute_hvx`` refuses ``batches > 1`` when ``filt_h * filt_w * depth`` is not a multiple of 16 (or
  the padding is SAME_CAFFE): "Batch size > 1 not supported with odd in depth for now"; an output of at most 3
  rows goes to ``supernode_execute_ref`` (plain C), taller ones to the HVX / assembly path
  (:mod:`.supernode_flat_hvx`).
* ``supernode_execute_ref`` (float32 and int32 as written, compiled for Hexagon): levels ``(max - min) / 255``
  (bias ``/ 2**32`` or ``/ 255``), zero codes ``quantize_uint8(0, min, max)``; windows at
  ``nn_pad_compute_before(out_size, ...)`` (the output size where the input size belongs), taps outside the input
  skipped; ``biasbuf = fast_roundf((bias - bias_zero) * bias_level / out_level)``; ``maxrange = (int)((max - min)
  / out_level + 0.5f)``, ``recip = 0x00ff0000 / maxrange``; a code is ``clip((s * recip + 2**15) >> 16, 0, 255)``
  with ``s = (int)((float)(biasbuf + sum) + minval_offset)`` (uint32 product, wrapping). An automatic max doubles
  until ``max - min >= maxsum * out_level``, an automatic min doubles while ``minsum * out_level < 0``, and the
  node runs again.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hexnn_import.ops.conv_core import (
    check_filter,
    read_stride,
    u8_tensor,
)
from hexnn_import.ops.kernel_io import i32_codes, range_out, u8_codes
from hexnn_import.ops.nnlib_f32 import fast_roundf, quantize_uint8, trunc_i32
from hexnn_import.ops.registry import PAD_NA, Kernel, KernelContext, get_kernel

from hexnn_import.errors import OpError
from hexnn_import.ops.kernels.supernode_flat_common import (bad_depth, initial_range,
                                                            recip_ref, ref_geometry, settle_ref,
                                                            conv_sums, level, quantize_uint, wrap32)
from hexnn_import.ops.kernels.supernode_flat_hvx import execute_hvx

F = np.float32
STATE_KEY = "sn8_flat_range"


def execute_ref(ctx: KernelContext, sums: np.ndarray, bias: np.ndarray, bias32: bool, ends: list[F], lvl: F,
                r: list) -> np.ndarray:
    """``supernode_execute_ref`` on the product sums (module doc): the codes; ``r`` settles in place."""
    bmn, bmx = ends[4], ends[5]
    amt = F(level(ctx, bmn, bmx, F(2.0 ** 32) if bias32 else F(255), "bias") / lvl)
    b = bias.astype(np.int64) - (0 if bias32 else quantize_uint(0.0, bmn, bmx))
    off = settle_ref(ctx, r, max(0, int(sums.max(initial=0))), min(0, int(sums.min(initial=0))), lvl)
    recip = recip_ref(ctx, r, lvl)
    biasbuf = fast_roundf((b.astype(F) * amt).astype(F))
    s = trunc_i32((wrap32(biasbuf + sums).astype(F) + off).astype(F))
    return np.clip(wrap32((s * recip + 2 ** 15) % 2 ** 32) >> 16, 0, 255).astype(np.uint8)


def flat_device_supernode(ctx: KernelContext, x: np.ndarray, w: np.ndarray, ends: list[float], bias: np.ndarray,
                          bias32: bool, stride: tuple[int, int]) -> tuple[np.ndarray, F, F]:
    """(codes, out_min, out_max) of one ``supernode_execute_hvx`` (module doc); ``ends`` = in, weight, bias,
    output ends."""
    e = [F(v) for v in ends]
    fh, fw, din, _ = w.shape
    if x.shape[0] > 1 and bad_depth(fh, fw, din, ctx.padding):
        raise ctx.fail(f"batch {x.shape[0]} with filter {fh}x{fw}x{din} ({fh * fw * din} values, not a multiple "
                       "of 16): op_supernode.c refuses it (\"Batch size > 1 not supported with odd in depth\")")
    lvl = F(level(ctx, e[0], e[1], F(255), "input") * level(ctx, e[2], e[3], F(255), "weights"))
    if not (np.isfinite(lvl) and lvl > 0):
        raise ctx.fail(f"product level {lvl} is not a positive float32 (op_supernode.c divides by it)")
    in_off, f_off = int(quantize_uint8(0.0, e[0], e[1])), int(quantize_uint8(0.0, e[2], e[3]))
    g = ref_geometry(x.shape[1], x.shape[2], fh, fw, *stride, ctx.padding)
    r = ctx.state.get(STATE_KEY)
    if r is None:
        r = ctx.state[STATE_KEY] = initial_range(e[6], e[7])
    if g.out_h <= 3:
        q = execute_ref(ctx, conv_sums(x, w, in_off, f_off, g), bias, bias32, e, lvl, r)
    else:
        q = execute_hvx(ctx, x, w, bias, bias32, e, lvl, (in_off, f_off), g, r)
    return q, r[0], r[1]


def device_compute(ctx: KernelContext, inputs: Sequence[np.ndarray], bias32: bool) -> tuple[np.ndarray, ...]:
    """``(codes, out_min, out_max)`` of a flat node on the device code; a 13th input (channel scales) is ignored,
    as ``supernode_check_ref`` says the device does."""
    x_arr, w_arr, *rng, stride, b_arr, b_min, b_max, o_min, o_max = inputs[:12]
    x, w = u8_tensor(ctx, x_arr, "input data"), u8_tensor(ctx, w_arr, "weights")
    check_filter(ctx, x.shape, w.shape)
    bias = (i32_codes(ctx, b_arr, "bias") if bias32 else u8_codes(ctx, b_arr, "bias")).reshape(-1)
    if bias.size != w.shape[3]:
        raise ctx.fail(f"bias has {bias.size} elements, expected {w.shape[3]} (one per output channel)")
    names = ("input min", "input max", "weights min", "weights max", "bias min", "bias max", "output min",
             "output max")
    ends = [ctx.scalar(v, n) for v, n in zip((*rng, b_min, b_max, o_min, o_max), names)]
    q, mn, mx = flat_device_supernode(ctx, x, w, ends, bias, bias32, read_stride(ctx, stride))
    return (q, *range_out(mn, mx))


def for_graph(kernel: Kernel, prepared: bool) -> Kernel:
    """The engine's kernel of a node: a flat 8-bit supernode of a graph marked prepared (prepared in part: its
    passes left the node flat) follows the device code; in an unprepared graph it computes what prepare's _d32
    node computes, as hexagon_nn would prepare that graph (module doc)."""
    if hasattr(kernel, "device_flat"):
        kernel.device_flat = prepared  # type: ignore[attr-defined]
    return kernel


def run_flat_device(op: str, inputs: Sequence[Any], padding: int = PAD_NA, state: dict | None = None,
                    n_outputs: int | None = None, node: str = "run_op") -> tuple[np.ndarray, ...]:
    """``run_op`` for a flat 8-bit supernode on the device code (as in a graph marked prepared)."""
    from hexnn_import.ops.registry import _as_array

    kernel = get_kernel(op, node)
    if not hasattr(kernel, "device_flat"):
        raise OpError(node, op, "not a flat 8-bit supernode (Supernode_8x8p32to8 / Supernode_8x8p8to8)")
    kernel.device_flat = True  # type: ignore[attr-defined]
    ctx = KernelContext(node=node, op=op, padding=int(padding), state=state if state is not None else {},
                        n_outputs=n_outputs)
    return kernel(ctx, [_as_array(v) for v in inputs])

