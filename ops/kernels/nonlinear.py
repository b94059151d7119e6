"""QuantizedSigmoid_8, QuantizedTanh_8 and QuantizedSoftmax_8 on flat quint8 data, as hexagon_nn's C computes them.

SEMANTICS §0: the C code wins (issue 19; the oracle compiles these functions and compares):

* Tanh / Sigmoid: nnlib registers the flat ops with op_tanh_d32.c's ``tanh_d32_execute`` (the
  ``nn_ops_for_QuantizedTanh_8`` / ``_Sigmoid_8`` tables), so on the device they run the same
  fixed-point 256-entry table as the _d32 ops (:func:`hexnn_import.ops.nnlib_tanh_d32.tanh_d32_table`),
  output ranges ``[-1, 128/127]`` (zero code 127, top code 254) and ``[0, 1]``. nnlib's separate
  ``QuantizedTanh_8_ref`` op (op_tanh.c ``qtanh_execute_ref``: float32 ``tanhf`` per code)
  is not in the documented op set and not modelled; it differs from the table by up to 5 codes.
* Softmax: nnlib registers QuantizedSoftmax_8 with op_softmax_d32.c's ``softmax_flat_execute`` (its depth-2
  table, its HVX fixed-point loops and its large-depth histogram path,
  :mod:`hexnn_import.ops.nnlib_softmax_device`, issue 36); the portable ``op_softmax.c qsoftmax_execute_ref``
  (:func:`qsoftmax_ref_codes`) answers where the device refuses a run-time range ("beta too large"), with a
  one-line :class:`~hexnn_import.errors.DeviceDefectWarning` naming the node.

The C accepts any input range (also ranges that exclude 0, or min > max) and so do these kernels;
only non-finite ends are refused.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.nnlib_f32 import fast_roundf
from hexnn_import.ops.nnlib_tanh_d32 import tanh_d32_table
from hexnn_import.ops.node_cache import replay_get, replay_store
from hexnn_import.ops.nnlib_f32_nonlin import expf_approx, read_any_range
from hexnn_import.ops.nnlib_softmax_device import (LARGE_DEPTH, LARGE_SIZE, d2_codes, expf_cr, expm1f_cr, hvx_codes,
                                                    larged_codes, larged_table, scaling_parms)
from hexnn_import.ops.registry import Kernel, KernelContext, register

F = np.float32
#: op_tanh.c: tanh's output range ``[-1, (float)(128.0/127.0)]`` (zero code 127, max code 254).
TANH_RANGE = (-1.0, float(F(128.0 / 127.0)))
#: Sigmoid's and Softmax's output range.
UNIT_RANGE = (0.0, 1.0)
#: op_softmax.c: below this step (``beta * range / 255``) the row maximum is not subtracted.
SOFTMAX_NO_MAX_STEP = F(0.63529)


class _QTanh(Kernel):
    """Shared body: one table of 256 codes, applied to every element."""

    SIGMOID = False
    OUT_RANGE = TANH_RANGE

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        mn, mx = read_any_range(ctx, mn_arr, mx_arr, "input")
        q = u8_codes(ctx, require_4d(ctx, data, "input data"), "input data")
        return (tanh_d32_table(mn, mx, self.SIGMOID)[q], *range_out(*self.OUT_RANGE))


@register("QuantizedSigmoid_8")
class QuantizedSigmoid8(_QTanh):
    """``(1 + tanh(x/2)) / 2`` onto ``[0, 1]``: op_tanh_d32.c ``tanh_d32_execute``'s table (sigmoid)."""

    SIGMOID = True
    OUT_RANGE = UNIT_RANGE


@register("QuantizedTanh_8")
class QuantizedTanh8(_QTanh):
    """``tanh(x)`` onto ``[-1, 128/127]`` (zero code 127): op_tanh_d32.c ``tanh_d32_execute``'s table.

    The op text's "-1.0 .. +0.992188" (127/128) is not what hexagon_nn does; its code says 128/127.
    """


def softmax_codes(ctx: KernelContext, q: np.ndarray, mn: F, mx: F, beta: F, flat: bool) -> np.ndarray:
    """QuantizedSoftmax_8 (``flat``) / _d32 on the device (op_softmax_d32.c): see
    :mod:`hexnn_import.ops.nnlib_softmax_device`. The flat op gives 255 at depth 1 and takes its table path at
    depth 2; from depth 1408 and 5632 bytes it takes the large-depth path (its libm ``expf`` taken correctly
    rounded). The d32 op runs its HVX loop on every depth."""
    depth = q.shape[-1]
    if depth == 0:
        raise ctx.fail("depth 0: the device refuses it (op_softmax_d32.c)")
    if flat and depth == 1:
        return np.full_like(q, 255)
    if flat and depth == 2:
        return d2_codes(q, F(F(beta) * F(mx - mn)))
    if flat and depth >= LARGE_DEPTH and q.size >= LARGE_SIZE:
        if depth > 65536:
            raise ctx.fail(f"depth {depth}: the device's large-depth softmax takes at most 65536 (op_softmax_d32.c)")
        return larged_codes(q, *larged_table(F(F(beta) * F(mx - mn)), expf_cr, expm1f_cr))
    parms = scaling_parms(mn, mx, beta, depth)
    if parms is None:
        # The device refuses the node here ("beta too large"); the range is only known at run time, so the
        # model converted. The engine keeps the model running with the portable C's answer and says, once per
        # node, that hexagon_nn's DSP would stop here.
        warnings.warn(f"{ctx.node} ({ctx.op}): input range {float(mn)} ... {float(mx)} with beta {float(beta)} "
                      f"is past what hexagon_nn's device softmax takes (op_softmax_d32.c set_scaling_parms: "
                      f"range * beta / (255 ln 2) must be below 256, 'beta too large'); the DSP refuses this run, "
                      f"the engine gives the portable C's answer (op_softmax.c)", DeviceDefectWarning, stacklevel=2)
        return qsoftmax_ref_codes(q, mn, mx, beta)
    return hvx_codes(q, parms)


def qsoftmax_ref_codes(q: np.ndarray, in_min: F, in_max: F, beta: F) -> np.ndarray:
    """op_softmax.c ``qsoftmax_execute_ref`` on codes ``q`` (softmax along the last axis).

    ``step = beta * (max - min) / 255``; below 0.63529 each term is ``expf_approx(step * q - 83)``,
    else ``expf_approx(step * (q - row_max))``; the row sum is accumulated in order in float32 and
    every code is ``saturate_u8(fast_roundf((255 / sum) * term))``.
    """
    step = F(beta * F(in_max - in_min)) / F(255.0)
    qf = q.astype(F)
    if step < SOFTMAX_NO_MAX_STEP:
        terms = expf_approx(step * qf - F(83.0)).reshape(q.shape)
    else:
        rowmax = q.max(axis=-1, keepdims=True).astype(np.int32)
        terms = expf_approx(step * (q.astype(np.int32) - rowmax).astype(F)).reshape(q.shape)
    # numpy's accumulate adds in order (no pairwise summation), as the C loop does
    total = np.add.accumulate(terms, axis=-1, dtype=F)[..., -1:]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        recip = F(255.0) / total
        return np.clip(fast_roundf(recip * terms), 0, 255).astype(np.uint8)


class _QSoftmax(Kernel):
    """Shared body of the flat and _d32 softmax: inputs data, min, max, optional beta (default 1.0; finite)."""

    FLAT = True

    def params(self, ctx: KernelContext, inputs: tuple[np.ndarray, ...]) -> tuple[F, F, F]:
        """(input min, input max, beta) as the C reads them."""
        beta = ctx.scalar(inputs[3], "beta") if len(inputs) > 3 else 1.0
        if not math.isfinite(beta):
            raise ctx.fail(f"beta {beta} is not finite")
        mn, mx = read_any_range(ctx, inputs[1], inputs[2], "input")
        return mn, mx, F(beta)

    def codes(self, ctx: KernelContext, q: np.ndarray, params: tuple[F, F, F]) -> np.ndarray:
        # an empty tensor gives an empty output, but a depth of 0 is the device's error
        return softmax_codes(ctx, q, *params, self.FLAT) if q.size or not q.shape[-1] else q.copy()


@register("QuantizedSoftmax_8")
class QuantizedSoftmax8(_QSoftmax):
    """Softmax along depth onto ``[0, 1]`` as the device computes it (op_softmax_d32.c ``softmax_flat_execute``;
    see :func:`softmax_codes`)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        q = u8_codes(ctx, require_4d(ctx, inputs[0], "input data"), "input data")
        params = self.params(ctx, inputs)
        out = self.codes(ctx, q, params)
        out_mn, out_mx = range_out(*UNIT_RANGE)
        if q is inputs[0] and q.size:
            # later runs with the same range and beta skip the checks (node_cache.Replay; speed, issue 37)
            out_mn.flags.writeable = out_mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda q_new: (self.codes(ctx, q_new, params), out_mn, out_mx))
        return (out, out_mn, out_mx)
