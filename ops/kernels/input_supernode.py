"""InputSupernode_8x8p8to8_outd32 / InputSupernode_8x8p32to8_outd32: a Supernode on the flat graph input (depth
1..4), output d32, as hexagon_nn's device code runs it (nnlib op_supernode_new.c, the "shortin" supernode).

The arithmetic is the flat Supernode's (:mod:`.supernode`, SEMANTICS.md §5: its constants, sums and output stage)
with these things of its own, each from op_supernode_new.c or the assembly it calls:

* ``shortin_supernode_check``: an auto output range starts from ``setup_initial_output_range(..., -1.0f/128,
  1.0f/128)`` (the d32 Supernode starts from [0, 0.5]); the node's range state is seeded with it.
* ``shortin_supernode_check`` / ``nn_ops_for_InputSupernode_*`` (``NN_IOCOUNT_RANGE(12,13)``): a 13th input
  (channel scales) is accepted and never read ("by the time we get to here, it should be dealt with and will be
  just a scalar [1.0]. so we can ignore it"): ``info->has_channel_scale`` stays 0, so ``fill_bias_buf`` and the
  requantize take no per-channel scale. The engine drops it too; scales other than 1.0 get a
  :class:`~hexnn_import.errors.DeviceDefectWarning` (prepare.c ``depth32_replacement_op`` never makes such a
  node: ``srcnode->n_inputs < 13``).
* ``shortin_supernode_execute_hvx_slice``: the ``inconv2dbbb*`` kernels take the range's extremes
  (``minmax.words``, ``gvrmaxmin``) over whole output vectors of 4 pixels: ``info->out_width`` is the output
  width rounded up to 4 (``out_width_pad``), so the columns up to it count too. They are convolutions of the
  input as the device stages it (``shortin_prepare_indata``: every byte right of the data is ``in_offset``, the
  input's zero code): the conv over the input extended on the right by zero-code columns. With an auto range
  the engine computes those columns' sums as well, lets them decide the range and keeps only the logical
  columns' codes. (The depth-padding lanes have weights at ``filt_offset``, ``shortin_rearrange_weights_Ndto4``:
  their value is the output's zero code, inside every range.)
* The general kernel (``inconv2dbbb_v60_asm``, hexagon/asm_src/inconv2dbbb_d32_v60_h.S: stride widths other than
  1, save a 3-wide filter at stride 2 by 2, which ``inconv2dbbb332_v60_asm`` takes) loses the third pixel of each vector from its maximum when
  ``recip_shamt`` is 0: after ``maxo.w = vmax(maxe.w, s2.w)`` the next packet writes ``maxo.w = vmax(maxe.w,
  s3.w)`` (its ``.L_apply_shamt`` path, taken for a nonzero shift, chains ``vmax(maxo.w, s3.w)``). The minimum
  takes every pixel. The engine's maximum skips the output columns ``4k + 2`` there.
* ``shortin_supernode_execute_call``: at most 3 computations; when the third still asks for a wider range the
  node fails ("Extreme recursion detected in shortin_supernode"), keeping the widened range for the next run
  (the d32 Supernode keeps its codes instead).
* ``shortin_filt_sumb``: ``gemsumb`` runs over the weights at depth 4 (the d32 Supernode's over the depth rounded
  up to 32): ``fill_bias_buf`` subtracts ``gemsumb * in_offset`` in float32, so the bias words round as the
  device's do (:func:`shortin_const`).

The staged row (``next_in_width``) is longer than what ``incopy_expand_*to4`` writes (src/incopy_expand4.c: the
data and at most one vector more) only past every column the kernels and ``gvsuma_asm`` read (checked for strides
1-4, filters 1-11 and widths 1-2999), so no byte the engine cannot know enters a result.
"""
from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np
from hexnn_import.ops.compiled import conv_sums
from hexnn_import.ops.conv_core import (
    ConvGeometry,
    check_exact,
    check_filter,
    conv_geometry,
    conv_plan,
    conv_sum_at,
    read_stride,
    u8_tensor,
)
from hexnn_import.ops.d32_io import D32Twin, d32_output, flat_input
from hexnn_import.ops.kernel_io import kept_range_out
from hexnn_import.ops.kernels.supernode import (
    SupernodeOperands,
    data_stand_in,
    output_plans,
    read_operands,
    settle,
    store_replay,
)
from hexnn_import.ops.node_cache import node_cached, replay_get
from hexnn_import.ops.output_stage.codes import presat, presat_extremes, saturated
from hexnn_import.ops.output_stage.nnlib_constants import SnConst, check_for_retry, setup_range
from hexnn_import.ops.output_stage.nnlib_execute import STATE_KEY, BiasOnlyPlan, ExactPlan, initial_state
from hexnn_import.ops.registry import KernelContext, register

from hexnn_import.errors import DeviceDefectWarning

#: The graph input's depth must be in this range (op text; op_supernode_new.c "Make this code work for input
#: depth > 4").
INPUT_DEPTH = (1, 4)
#: The auto-range guess (op_supernode_new.c shortin_supernode_check).
INPUT_DEFAULT = (np.float32(-1.0 / 128), np.float32(1.0 / 128))
#: The depth the device stages the input at (``in_depth_total = 4``).
DEPTH4 = 4
#: Pixels per d32 output vector: the width the device computes is a multiple of it (``out_width_pad``).
VECTOR_PIXELS = 4
#: The pixel of each vector the general kernel's maximum loses when ``recip_shamt`` is 0 (``s2``).
LOST_PIXEL = 2
#: Computations of one execute (shortin_supernode_execute_call: ``while(count < 3)``).
MAX_COMPUTATIONS = 3


def general_kernel(sh: int, sw: int, fw: int) -> bool:
    """Whether ``shortin_supernode_execute_hvx_slice`` picks ``inconv2dbbb_v60_asm`` (not the stride-1 or the
    ``path223`` kernel)."""
    return sw != 1 and not (sw == 2 and sh == 2 and fw == 3)


def shortin_execute(ctx: KernelContext, sums: np.ndarray, plan: ExactPlan | BiasOnlyPlan, spec: tuple[float, float],
                    lossy_max: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(presat-saturated codes, out_min, out_max)`` of shortin_supernode_execute_call on the sums of whole
    vectors (module doc); ``lossy_max``: the general kernel, whose maximum skips pixel 2 of each vector when
    ``recip_shamt`` is 0."""
    rng = initial_state(ctx, spec[0], spec[1], False)
    for _ in range(MAX_COMPUTATIONS):
        rng, ols, rq, fs = plan.stage(ctx, rng)
        codes = presat(sums, rq, fs)
        if not rng.auto or not codes.size:
            break
        seen = codes
        if lossy_max and rq.shamt == 0 and rq.fixed is None:
            seen = codes[:, :, np.arange(codes.shape[2]) % VECTOR_PIXELS != LOST_PIXEL]
        vmin = presat_extremes(codes)[0]
        vmax = presat_extremes(seen)[1] if seen.size else 0
        wider = check_for_retry(rng, ols, min(vmin, 0), max(vmax, 0))
        if wider is None:
            break
        rng = wider
    else:
        ctx.state[STATE_KEY] = rng
        raise ctx.fail(f"output range still too narrow after {MAX_COMPUTATIONS} computations (op_supernode_new.c "
                       f"shortin_supernode_execute_call: \"Extreme recursion detected in shortin_supernode\")")
    ctx.state[STATE_KEY] = rng
    return (saturated(codes), *kept_range_out(ctx.state, float(rng.lo), float(rng.hi)))


def vector_geometry(g: ConvGeometry, in_w: int, fw: int) -> ConvGeometry:
    """``g`` with the output width rounded up to whole vectors and the right padding (zero code) that the extra
    columns' windows reach (``shortin_supernode_execute_everything``: ``out_width_pad``)."""
    ow = -(-g.out_w // VECTOR_PIXELS) * VECTOR_PIXELS
    right = max(g.pad_right, (ow - 1) * g.stride_w + fw - g.pad_left - in_w)
    return ConvGeometry(g.out_h, ow, g.pad_top, g.pad_bottom, g.pad_left, right, g.stride_h, g.stride_w)


def twelve_inputs(ctx: KernelContext, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """The first 12 inputs: a 13th (channel scales) is ignored as the device ignores it (module doc)."""
    if len(inputs) <= 12:
        return inputs
    k = np.asarray(inputs[12], dtype=np.float32)
    if not np.all(k == np.float32(1.0)) and not ctx.state.get("input_sn_scales_told"):
        ctx.state["input_sn_scales_told"] = True
        warnings.warn(f"{ctx.node} ({ctx.op}): channel scales (input 12) other than 1.0 are ignored, as "
                      f"hexagon_nn's device code ignores them (op_supernode_new.c shortin_supernode_check)",
                      DeviceDefectWarning, stacklevel=2)
    return inputs[:12]


def shortin_const(sc: SnConst, w: np.ndarray) -> SnConst:
    """``sc`` with ``gemsumb`` as ``shortin_filt_sumb`` finds it: over the weights rearranged to depth 4
    (``shortin_rearrange_weights_Ndto4`` fills lanes ``din..3`` with ``filt_offset``), where the d32 Supernode's
    runs over the depth rounded up to 32. ``fill_bias_buf`` subtracts ``gemsumb * in_offset`` in float32, so the
    bias words can round differently; the sums the conv adds back (``suma``) hold the same lanes."""
    fh, fw, din, _ = w.shape
    gsum = w.astype(np.int64).sum(axis=(0, 1, 2)) + (DEPTH4 - din) * fh * fw * sc.w_zero
    return replace(sc, gx=gsum * sc.in_zero)


class _InputSupernode(D32Twin):
    """Flat graph input (depth 1..4) -> Supernode -> d32 output (module doc)."""

    D32_INPUTS = ()
    QINT32_BIAS = True

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        """``(d32 codes, out_min, out_max)`` of shortin_supernode_execute_call (module doc)."""
        inputs = twelve_inputs(ctx, inputs)
        depth = np.shape(flat_input(ctx, inputs[0], "input data"))[-1:]
        if len(depth) and not INPUT_DEPTH[0] <= depth[0] <= INPUT_DEPTH[1]:
            raise ctx.fail(f"input data has shape {list(np.shape(inputs[0]))}: the op takes a depth of "
                           f"{INPUT_DEPTH[0]}..{INPUT_DEPTH[1]}")
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            q, mn, mx = replay(inputs[0])
            return (d32_output(q), mn, mx)
        s = read_operands(ctx, inputs)
        if STATE_KEY not in ctx.state:
            init = setup_range(s.out_min, s.out_max, INPUT_DEFAULT)
            if not isinstance(init, str):        # an invalid range: the supernode's own error
                ctx.state[STATE_KEY] = init
        w_shape, conv, plan = node_cached(ctx.state, "input_supernode", (s.w_arr, s.b_arr), s.ranges,
                                          lambda: self._plans(ctx, s))
        check_filter(ctx, s.x.shape, w_shape)
        g = conv_geometry(ctx, s.x.shape, w_shape, *read_stride(ctx, s.stride))
        fixed = bool(np.isfinite(s.out_min) and np.isfinite(s.out_max))
        gv = g if fixed else vector_geometry(g, s.x.shape[2], w_shape[1])
        lossy = general_kernel(g.stride_h, g.stride_w, w_shape[1])
        first = [not ctx.state.get("input_sn_ran")]

        def sums(x_new: np.ndarray, geom: ConvGeometry) -> np.ndarray:
            # the first run of a node takes numpy's sums (the compiled forms are checked against them later)
            fast = None if first[0] else conv_sums(x_new, conv, geom)
            first[0] = False
            return conv_sum_at(x_new, conv, geom) if fast is None else fast

        def run(x_new: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            q, mn, mx = shortin_execute(ctx, sums(x_new, gv), plan, (s.out_min, s.out_max), lossy)
            return np.ascontiguousarray(q[:, :, :g.out_w]), mn, mx

        out = run(s.x)
        ctx.state["input_sn_ran"] = True
        if s.x is s.x_arr:
            kept = data_stand_in(inputs)
            settle(ctx, kept, out, run, lambda got, rq, fs: store_replay(ctx, kept, got, lambda x: sums(x, g), rq, fs),
                   plan)
        return (d32_output(out[0]), out[1], out[2])

    def _plans(self, ctx: KernelContext, s: SupernodeOperands) -> tuple:
        """``(weight shape, sums plan, output plan)`` from the constant inputs, ``gemsumb`` over depth 4."""
        w = u8_tensor(ctx, s.w_arr, "weights")
        check_filter(ctx, s.x.shape, w.shape)
        check_exact(ctx, w.shape[0] * w.shape[1] * w.shape[2])
        conv, plan = output_plans(ctx, w, s.b_arr, None, s.ranges, w.shape[3], self.QINT32_BIAS, False, conv_plan)
        if isinstance(plan, ExactPlan):
            plan = ExactPlan(shortin_const(plan.sc, w), plan.bound, False)
        return w.shape, conv, plan


@register("InputSupernode_8x8p8to8_outd32")
class InputSupernode8x8p8to8OutD32(_InputSupernode):
    """Supernode_8x8p8to8 on a flat input of depth 1..4, output d32."""

    FLAT_OP = "Supernode_8x8p8to8"
    QINT32_BIAS = False


@register("InputSupernode_8x8p32to8_outd32")
class InputSupernode8x8p32to8OutD32(_InputSupernode):
    """Supernode_8x8p32to8 on a flat input of depth 1..4, output d32."""

    FLAT_OP = "Supernode_8x8p32to8"
