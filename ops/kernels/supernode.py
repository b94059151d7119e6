"""Supernode_8x8p32to8 and Supernode_8x8p8to8: convolution + bias + requantize, as hexagon_nn 2.14.1
computes them (op_supernode_new.c, include/supernode_utils.h; SEMANTICS.md §5).

Inputs (catalog order): data, weights, in_min, in_max, w_min, w_max, stride,
bias, bias_min, bias_max, out_min, out_max, optional channel scales.

- Constants in float32 as the C finds them (:mod:`hexnn_import.ops.output_stage.nnlib_constants`): input and
  weight levels and zeros from ``get_qu8_level_size_zero`` (ranges excluding 0 are accepted; the input
  max is floored at ``min + 1e-18f``), the bias as fill_bias_buf reads it, the channel scales as
  ``check_channelscale_present`` / ``load_channel_scales`` do (:func:`read_channel_scales`).
- The exact product sums (:mod:`hexnn_import.ops.conv_core`) go through the device's per-element
  arithmetic and the C's output-range logic (:mod:`hexnn_import.ops.output_stage.nnlib_execute`: setup, first guess,
  quarter-octave retries, at most 3 computations, the range persisting in ``ctx.state``); an auto-range
  retry redoes only the output stage.
- The C's errors are the engine's: an output range that is not ``min <= 0 <= max, min < max`` (a
  zero-width one included), a bias that does not fit int32 in accumulator units ("Final too big", e.g.
  a zero-width input range with a nonzero bias), a non-finite range. Where the C divides by zero
  (``prod == 0`` from a zero-width weight range) the engine gives the bias alone instead
  (:class:`~hexnn_import.ops.output_stage.nnlib_execute.BiasOnlyPlan`).
- Speed (issue 11): the centred weights in the narrowest exact float type, the constants and the sum bound
  are built on the first run and kept in ``ctx.state`` (:mod:`hexnn_import.ops.node_cache`: weights, bias
  and scales by identity, ranges by value), the per-range constants in the output plan; with a fixed
  output range a later run with the same non-data inputs replays only the arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Sequence, TypeVar

import numpy as np

from hexnn_import.ops.compiled import available as compiled_available, compiled_replay, conv_sums
from hexnn_import.ops.conv_core import (ConvPlan, check_exact, check_filter, conv_geometry, conv_plan, conv_sum_at,
                                        read_stride, u8_tensor)
from hexnn_import.ops.depthwise_core import DepthwisePlan
from hexnn_import.ops.kernel_io import i32_codes, u8_codes
from hexnn_import.ops.kernels.supernode_flat_device import device_compute
from hexnn_import.ops.node_cache import node_cached, replay_get, replay_store
from hexnn_import.ops.output_stage import nnlib_constants as snf
from hexnn_import.ops.output_stage.codes import requantize_fixed
from hexnn_import.ops.output_stage.nnlib_execute import (STATE_KEY, BiasOnlyPlan, ExactPlan, bias_real,
                                                         read_channel_scales, run_exact)
from hexnn_import.ops.output_stage.requant import FloatStage, Requant
from hexnn_import.ops.registry import Kernel, KernelContext, register

P = TypeVar("P", ConvPlan, DepthwisePlan)
#: What a supernode derives once from its constant inputs: the plan of its product sums and the
#: hexagon_nn-exact output plan, or (``prod == 0``, where the C divides by zero) the bias-only plan.
SupernodePlan = tuple[tuple[int, ...], ConvPlan, "ExactPlan | BiasOnlyPlan"]


@dataclass(frozen=True)
class SupernodeOperands:
    """A flat (Depthwise)Supernode's inputs as read once: the data, the constant tensors (by identity, for the
    node caches), the six input / weight / bias range ends, and the requested output ends."""

    x: np.ndarray
    x_arr: np.ndarray
    w_arr: np.ndarray
    stride: np.ndarray
    b_arr: np.ndarray
    k_arr: np.ndarray | None
    ranges: tuple[float, ...]
    out_min: float
    out_max: float


def read_operands(ctx: KernelContext, inputs: Sequence[np.ndarray]) -> SupernodeOperands:
    """Inputs 0..11 in catalog order, and the optional 13th (per-channel scales)."""
    x_arr, w_arr, in_min, in_max, w_min, w_max, stride, b_arr, b_min, b_max, o_min, o_max = inputs[:12]
    sc = ctx.scalar
    ranges = (sc(in_min, "input min"), sc(in_max, "input max"), sc(w_min, "weights min"),
              sc(w_max, "weights max"), sc(b_min, "bias min"), sc(b_max, "bias max"))
    return SupernodeOperands(u8_tensor(ctx, x_arr, "input data"), x_arr, w_arr, stride, b_arr,
                             inputs[12] if len(inputs) > 12 else None, ranges,
                             sc(o_min, "output min"), sc(o_max, "output max"))


class _Supernode(Kernel):
    """Shared body of the flat supernodes; ``qint32_bias`` picks the p32 or p8 bias."""

    qint32_bias: ClassVar[bool] = True
    #: run the registered flat device code (op_supernode.c) instead of the _d32 node's arithmetic: set by the
    #: engine in a graph marked prepared (:func:`~.supernode_flat_device.for_graph`); a _d32 twin's call (its
    #: own ``ctx.op``) always takes the _d32 arithmetic
    device_flat: bool = False

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``: exact product sum, then hexagon_nn's output stage (op_supernode_new.c);
        on the flat node's own device code when :attr:`device_flat` (:mod:`.supernode_flat_device`)."""
        if self.device_flat and ctx.op == self.op:
            return device_compute(ctx, inputs, self.qint32_bias)
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        s = read_operands(ctx, inputs)
        x, x_arr, w_arr, b_arr, k_arr, ranges = s.x, s.x_arr, s.w_arr, s.b_arr, s.k_arr, s.ranges

        def build() -> SupernodePlan:
            w = u8_tensor(ctx, w_arr, "weights")
            dout = w.shape[3] if w.ndim == 4 else 0
            check_filter(ctx, x.shape, w.shape)
            check_exact(ctx, w.shape[0] * w.shape[1] * w.shape[2])
            k = read_channel_scales(ctx, k_arr, dout)
            return (w.shape, *output_plans(ctx, w, b_arr, k, ranges, dout, self.qint32_bias, False, conv_plan))

        w_shape, conv, plan = node_cached(ctx.state, "supernode", (w_arr, b_arr, k_arr), ranges, build)
        sh, sw = read_stride(ctx, s.stride)
        check_filter(ctx, x.shape, w_shape)
        g = conv_geometry(ctx, x.shape, w_shape, sh, sw)
        def sums(x_new: np.ndarray) -> np.ndarray:
            # onnxruntime's exact product where it applies (hexnn_import.ops.compiled.conv_sums), else numpy
            fast = conv_sums(x_new, conv, g)
            return conv_sum_at(x_new, conv, g) if fast is None else fast

        # the first run of a node takes numpy's sums (the compiled forms are checked against them later)
        out = run_exact(ctx, sums(x) if STATE_KEY in ctx.state else conv_sum_at(x, conv, g), plan, s.out_min,
                        s.out_max)
        if x is x_arr:
            omin, omax, kept = s.out_min, s.out_max, data_stand_in(inputs)
            settle(ctx, kept, out, lambda x_new: run_exact(ctx, sums(x_new), plan, omin, omax),
                   lambda got, rq, fs: store_replay(ctx, kept, got, sums, rq, fs), plan)
        return out


def data_stand_in(inputs: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """``inputs`` with the data (input 0) replaced by a zero-strided array of its shape and type: what a replay
    needs of it, without keeping the run's tensor alive in the node state."""
    return (np.broadcast_to(np.zeros((), inputs[0].dtype), inputs[0].shape), *inputs[1:])


def settle(ctx: KernelContext, inputs: Sequence[np.ndarray], out: tuple[np.ndarray, ...],
           again: Callable[[np.ndarray], tuple[np.ndarray, ...]],
           fixed: Callable[[tuple[np.ndarray, ...], Requant, FloatStage | None], None], plan: ExactPlan | BiasOnlyPlan
           ) -> None:
    """After a full run on uint8 data (``out``; ``inputs`` as :func:`data_stand_in` keeps them): with a fixed
    output range, ``fixed(out, rq, fs)`` stores the replay of the arithmetic (:func:`store_replay`); with an
    auto range, later runs with the same non-data inputs go straight to ``again(x)`` - the sums and the range
    search of :func:`run_exact`, all a full run does once the inputs are read and the node's constants cached
    (speed, issue 37) - and settle again after it."""
    rng = ctx.state[STATE_KEY]
    if not rng.auto:
        fixed(out, *plan.stage(ctx, rng)[2:])
        return

    def replay(x_new: np.ndarray) -> tuple[np.ndarray, ...]:
        got = again(x_new)
        if not ctx.state[STATE_KEY].auto:
            settle(ctx, inputs, got, again, fixed, plan)
        return got
    replay_store(ctx.state, inputs, (0,), replay)


def store_replay(ctx: KernelContext, inputs: Sequence[np.ndarray], out: tuple[np.ndarray, ...],
                 sums: Callable[[np.ndarray], np.ndarray], rq: Requant, fs: FloatStage | None,
                 compiled: Callable[[FloatStage], Callable[[np.ndarray], np.ndarray] | None] | None = None) -> None:
    """A fixed output range and uint8 data (nothing of it to check): later runs with the same non-data
    inputs redo only the arithmetic (:mod:`hexnn_import.ops.node_cache`; the replay is used only for
    data of this run's shape and type). ``compiled(fs)`` builds the compiled form of that arithmetic
    (:mod:`hexnn_import.ops.compiled`), used from the first replay on which it gives the numpy
    path's codes."""
    mn, mx = out[1], out[2]
    mn.flags.writeable = mx.flags.writeable = False   # handed out again by every replay
    fast: list = [None, compiled is None or fs is None]   # the compiled form; whether it was tried

    def run(x_new: np.ndarray) -> tuple[np.ndarray, ...]:
        if fast[0] is not None:
            return fast[0](x_new), mn, mx
        q = requantize_fixed(sums(x_new), rq, fs)
        if not fast[1] and compiled_available():   # once, on the first replay the compiled loops serve
            fast[1] = True
            fast[0] = compiled_replay(compiled(fs), x_new, q)
        return q, mn, mx

    replay_store(ctx.state, inputs, (0,), run)


def output_plans(ctx: KernelContext, w: np.ndarray, b_arr: np.ndarray, k: np.ndarray | None,
                 ranges: tuple[float, ...], dout: int, qint32_bias: bool, dwise: bool,
                 sums_plan: Callable[[np.ndarray, int, int], P]) -> tuple[P, ExactPlan | BiasOnlyPlan]:
    """``(plan of the product sums, output plan)`` of a supernode: hexagon_nn's constants
    (:func:`~hexnn_import.ops.output_stage.nnlib_constants.sn_const`) and ``sums_plan(w, w_zero, in_zero)``
    (whose ``bound`` serves the exact float64 stage), or the bias-only plan where ``prod == 0``. A non-finite
    input range is the C's error; ``k`` are the channel scales as
    :func:`~hexnn_import.ops.output_stage.nnlib_execute.read_channel_scales` reads them."""
    in_min, in_max, w_min, w_max, b_min, b_max = ranges
    b = i32_codes(ctx, b_arr, "bias") if qint32_bias else u8_codes(ctx, b_arr, "bias")
    if b.size != dout:
        raise ctx.fail(f"bias has {b.size} elements (shape {list(np.shape(b))}), expected [1,1,1,{dout}] "
                       f"(one per output channel)")
    for what, lo, hi in (("weights", w_min, w_max), ("bias", b_min, b_max)):
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ctx.fail(f"{what} range [{lo}, {hi}] is not finite")
    consts = snf.sn_const(in_min, in_max, w_min, w_max, w, b, b_min, b_max, qint32_bias, dwise, k)
    if consts is None:
        raise ctx.fail(f"input range [{in_min}, {in_max}] is not finite (hexagon_nn fill_info_minmax_basics)")
    if consts.prod == 0 and snf.weight_level_zero(w_min, w_max, dwise)[0] != 0:
        # a zero input level: in_max <= in_min beyond the 1e-18f floor; the C divides by zero ("Final too big")
        what = f"min {in_min} > max {in_max}" if in_min > in_max else f"[{in_min}, {in_max}] has no width"
        raise ctx.fail(f"input range {what} (hexagon_nn fill_bias_buf divides by prod_level_size = 0: "
                       f"\"Final too big, will cause overflow\")")
    sums = sums_plan(w, consts.w_zero, consts.in_zero)
    if consts.prod == 0:
        return sums, BiasOnlyPlan(bias_real(b, b_min, b_max, qint32_bias), dwise)
    return sums, ExactPlan(consts, sums.bound, dwise)


@register("Supernode_8x8p32to8")
class Supernode8x8p32to8(_Supernode):
    """Convolution + qint32 bias + requantize to quint8 (SEMANTICS §5; bias zero is 0)."""

    qint32_bias = True


@register("Supernode_8x8p8to8")
class Supernode8x8p8to8(_Supernode):
    """Convolution + quint8 bias + requantize to quint8 (SEMANTICS §5)."""

    qint32_bias = False
