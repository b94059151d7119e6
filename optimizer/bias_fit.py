"""Will a fused Supernode's bias fit? The convert-time test :func:`~.supernodes.fuse_conv` runs before it fuses.

hexagon_nn's supernodes (op_supernode_new.c, op_dwise_snode_8bit.c; include/supernode_utils.h) fold the
bias, the output minimum and the input zero's correction into one int32 per channel, in units of the
product step ``prod = in_level * w_level`` scaled by the channel scale (``fill_bias_buf``)::

    v[c] = ((b[c] - b_off) * (b_level / prod) - out_min / prod) * (1 / k[c]) - gemsumb[c] * in_zero

and refuse the node ("Final too big, will cause overflow") when a ``v[c]`` does not fit int32. That
happens when ``prod`` is tiny against the bias or the output minimum (a squeeze-excite conv reading a
nearly dead ReLU with a tiny calibrated range) or when a channel scale ``k[c]`` is small. The
canonical chain ``product -> [QuantizedChannelScale_32xf] -> QuantizedBiasAdd_32p32to32 ->
Requantize_32to8`` adds the bias in units of ``prod`` itself (the channel scale applies to the
product only), so it holds what the supernode cannot; its kernels refuse nothing for these values,
but its qint32 arithmetic saturates the rescaled bias (``convert_sf2w``) and wraps the sum, so it is
exact only where ``|bias / prod|`` and ``|k[c] * S + bias / prod|`` fit int32 (:func:`chain_fit`).

The values are the kernels' own (:mod:`hexnn_import.ops.output_stage.nnlib_constants`: ``sn_const``,
``setup_range``, ``minmax_basics``, ``bias_buf``), so the test is exact for the output ranges the
execute loop tries:

- a fixed output range (both ends Const and finite): one computation, on the range
  ``setup_initial_output_range`` makes of it - one ``out_min``;
- an auto end: the first computation's range (defaults, the first-guess widening) and every retry's
  (``round_up_quarter_octave`` of the extreme output, zero-fixed). ``v[c]`` is affine in ``out_min``,
  so it fits over an interval of minima iff it fits at both ends: the first range's minimum and a
  floor no retry passes (:func:`lowest_min`: twice the lowest output any input can give, from the
  weights' extreme sums, plus a margin).

The input range is the one Consts fix (:func:`.bias_fit_inputs.input_range`), or, for a range known only
at run time, every range its producer can report, no narrower than its floor
(:func:`.bias_fit_inputs.input_floor`: AutoQuantize, auto-range supernodes); where neither is known (a
data-range op's range, as narrow as the data) there is no answer (None): the caller gives a shrink's range
a floor first (:mod:`.bias_fit_floor`, passed here as ``floor_given``) and keeps prepare.c's fusion
elsewhere (an auto-range add's range; module doc of :mod:`.supernodes`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hexnn_import.graph import Node, Ref
from hexnn_import.ops.nnlib_f32_conv import product_range_f32
from hexnn_import.ops.output_stage import nnlib_constants as snf
from hexnn_import.ops.quant import adjust_range
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.bias_fit_inputs import input_floor, input_range
from hexnn_import.optimizer.ranges import const_array, const_scalar
from hexnn_import.optimizer.slots import (PRODUCT_FILTER, PRODUCT_FILTER_MAX, PRODUCT_FILTER_MIN, PRODUCT_IN_MAX,
                                         PRODUCT_IN_MIN, slot, slots)

I32_MAX = 2 ** 31 - 1
#: a run-time input range is also tried this power of two wider than its floor (gather)
WIDE = 40
#: channel scales load_channel_scales accepts: [1/2048, 1] (include/supernode_utils.h)
K_LOW = np.float32(1.0 / 2048.0)


@dataclass(frozen=True)
class FusedOperands:
    """What a fused node would read, all known at convert time (float32 ends as the kernels read them)."""

    in_range: tuple[float, float]
    w: np.ndarray                      # uint8 [fh, fw, din, dout] (depthwise: [fh, fw, din, dmul])
    w_range: tuple[float, float]
    bias: np.ndarray                   # int32 (p32) or uint8 (p8) codes, one per output channel
    b_range: tuple[float, float]
    bias32: bool
    dwise: bool
    k: np.ndarray | None               # float32 [dout] channel scales, or None
    out_spec: tuple[float, float]      # requested output ends (+-inf: auto)
    floor: float | None = None         # a run-time input range: the least width it can have (in_range: there)
    floor_persists: bool = True        # ... and it never narrows between runs (an auto-range supernode's)

    def consts(self) -> snf.SnConst | None:
        """The supernode's constants (``sn_const``), None when the input range is not finite."""
        return snf.sn_const(*self.in_range, *self.w_range, self.w, self.bias, *self.b_range, self.bias32,
                            self.dwise, self.k)


def _end(ed: GraphEditor, end: Ref | float) -> float | None:
    return end if isinstance(end, float) else const_scalar(ed, end)


def gather(ed: GraphEditor, conv: Node, bias_add: Node, k_ref: Ref | None, out_ends: tuple[Ref | float, Ref | float],
           bias32: bool, floor_given: float | None = None) -> list[FusedOperands] | None:
    """The :class:`FusedOperands` of a chain, or None when one of them is only known at run time.

    The input range is the one :func:`.bias_fit_inputs.input_range` proves; where it is known only at run
    time but its producer keeps it at least ``W`` wide (:func:`.bias_fit_inputs.input_floor`), four cases
    stand for every range the run can bring: ``[0, W]``, ``[-W, 0]`` and the same ``2**WIDE`` times
    wider. ``floor_given``: a floor the caller means to give a run-time range that has none (each run's own,
    :mod:`.bias_fit_floor`). At a given level each ``v[c]`` is affine in the input's zero code (so extreme at code 0 or
    255), and over the levels it is ``A / prod + B`` (the bias and the first range's minimum go as
    ``1 / prod``, the input-zero term and a retry's minimum, ``2 * S`` at most, do not), monotone: extreme
    at the narrowest level and, nearly ``B``, at a very wide one."""
    lo_ref, hi_ref = slots(conv, PRODUCT_IN_MIN, PRODUCT_IN_MAX)
    rin = input_range(ed, lo_ref, hi_ref)
    floor, persists = (None, True) if rin is not None else (input_floor(ed, lo_ref, hi_ref) or (None, True))
    if rin is None and floor_given is not None:
        floor, persists = floor_given, False
    w = const_array(ed, slot(conv, PRODUCT_FILTER))
    wmn, wmx = (const_scalar(ed, r) for r in slots(conv, PRODUCT_FILTER_MIN, PRODUCT_FILTER_MAX))
    bias = const_array(ed, slot(bias_add, "bias"))
    bmn, bmx = (const_scalar(ed, r) for r in slots(bias_add, "bias_min", "bias_max"))
    lo, hi = _end(ed, out_ends[0]), _end(ed, out_ends[1])
    k = None if k_ref is None else const_array(ed, k_ref)
    known = (rin or floor, w, wmn, wmx, bias, bmn, bmx, lo, hi)
    if any(v is None for v in known) or (k_ref is not None and k is None) or w.ndim != 4:  # type: ignore[union-attr]
        return None
    if conv.op == "QuantizedMatMul_8x8to32":   # [1,1,K,N] -> a 1x1 VALID conv's [1,1,K,N] filter
        w = w.reshape(1, 1, w.shape[-2], w.shape[-1])  # type: ignore[union-attr]
    kk = None if k is None else np.asarray(k, np.float32).reshape(-1)
    if kk is not None and kk.size == 1 and kk[0] == np.float32(1.0):
        kk = None   # check_channelscale_present: a single 1.0 means none
    widths = [] if rin is not None else [floor, floor * 2.0 ** WIDE]  # type: ignore[operator]
    ranges = [rin] if rin is not None else [r for f in widths for r in ((0.0, f), (-f, 0.0))]
    return [FusedOperands(r, np.asarray(w).astype(np.uint8), (wmn, wmx), np.asarray(bias).reshape(-1),  # type: ignore[arg-type]
                          (bmn, bmx), bias32, conv.op == "QuantizedDepthwiseConv2d_8x8to32", kk, (lo, hi),  # type: ignore[arg-type]
                          floor, persists) for r in ranges]


def sum_extremes(w: np.ndarray, w_zero: int, in_zero: int, dwise: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel, the least and greatest ``S = sum((x - in_zero) * (w - w_zero))`` any quint8 input
    gives (padding taps add 0, within both), float64."""
    d = w.astype(np.float64) - w_zero
    lo = np.minimum(-in_zero * d, (255 - in_zero) * d)
    hi = np.maximum(-in_zero * d, (255 - in_zero) * d)
    axes = (0, 1) if dwise else (0, 1, 2)
    return lo.sum(axis=axes).reshape(-1), hi.sum(axis=axes).reshape(-1)


def output_extremes(op: FusedOperands, sc: snf.SnConst) -> tuple[float, float]:
    """The least and greatest real output (before the output range clips it) over every input:
    ``b_real[c] + prod * k[c] * S`` at the extreme sums."""
    w_zero = sc.w_zero
    s_lo, s_hi = sum_extremes(op.w, w_zero, sc.in_zero, op.dwise)
    k = np.ones_like(s_lo) if sc.k is None else sc.k.astype(np.float64)
    b_real = sc.bias_f.astype(np.float64) * float(sc.ratio) * float(sc.prod)
    lo = b_real + float(sc.prod) * k * s_lo
    hi = b_real + float(sc.prod) * k * s_hi
    return (float(lo.min()), float(hi.max())) if lo.size else (0.0, 0.0)


def lowest_min(op: FusedOperands, sc: snf.SnConst, first: snf.OutRangeC) -> float:
    """A floor under every output minimum the execute loop can reach from ``first``: a retry moves an auto
    minimum to ``round_up_quarter_octave`` (at most ``sqrt(2)`` times out) of the real value of the lowest
    code, at most one output step below the lowest output; the zero fix moves it by less than a step.
    Twice the lowest output, less four steps of the widest range reachable, bounds all of that. A
    specified minimum (``flags`` bit 0: a Relu's 0) stays where it is but for the zero fix
    (adjust_minmax_for_zero_with_constraints leaves a minimum of 0 alone)."""
    y_lo, y_hi = output_extremes(op, sc)
    widest = 2.0 * (max(y_hi, float(first.hi), 0.0) - min(y_lo, float(first.lo), 0.0))
    step = widest / 255.0
    if first.flags & 1:
        return float(first.lo) - (4.0 * step if first.lo < 0 else 0.0)
    return min(float(first.lo), 2.0 * min(y_lo, 0.0) - 4.0 * step - 2.0 ** -6)


def tried_minima(op: FusedOperands, sc: snf.SnConst) -> list[float] | str:
    """The output minima whose ``v[c]`` decide (module doc), or the C's own refusal of the output range, or
    "unbounded": an auto minimum over an input range that can narrow between runs (AutoQuantize's). The
    node keeps its output range from run to run (only widening it) while ``prod`` follows each run's input,
    so an earlier wide input's minimum meets a later blank input's ``prod``: ``-out_min / prod`` has no
    bound. (A producer whose range persists too, an auto-range supernode, keeps ``prod`` at least what it
    was when that minimum was reached, which bounds ``-out_min / prod`` by the outputs at the floor.)"""
    init = snf.setup_range(*op.out_spec, snf.DWISE_DEFAULT if op.dwise else snf.CONV_DEFAULT)
    if isinstance(init, str):
        return init
    first = snf.minmax_basics(sc, init)[0]
    if not first.auto:
        return [float(first.lo)]
    if op.floor is not None and not op.floor_persists and not first.flags & 1:
        return "unbounded"
    return [float(first.lo), lowest_min(op, sc, first)]


def bias_values(sc: snf.SnConst, out_min: float) -> np.ndarray:
    """float64 ``v[c]`` of fill_bias_buf (float32 steps as the C, before its int64 rounding)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        offs = np.float32(np.float32(-out_min) / sc.prod)
        v = (sc.bias_f * sc.ratio) + offs
        if sc.kinv is not None:
            v = v * sc.kinv
        return v.astype(np.float64) - sc.gx.astype(np.int32).astype(np.float64)


def supernode_fit(op: FusedOperands) -> str | None:
    """None when the fused node runs on every output range its loop can try, else why it would not."""
    if op.k is not None and (op.k.size != op.bias.size or not bool(np.all((op.k >= K_LOW) & (op.k <= 1.0)))):
        return None   # load_channel_scales refuses these first: the op's check, as prepare.c leaves it
    sc = op.consts()
    if sc is None:
        return f"input range [{op.in_range[0]}, {op.in_range[1]}] is not finite"
    if sc.prod == 0:
        return None   # the engine's bias-only rule (output_stage.nnlib_execute.BiasOnlyPlan); nothing to fit
    minima = tried_minima(op, sc)
    if minima == "unbounded":
        return ("its auto output minimum persists from earlier runs while its input range, each run's own "
                f"(AutoQuantize), can narrow to {op.floor:.3g}: a blank input after a varied one overflows "
                "fill_bias_buf's int32")
    if isinstance(minima, str):
        return f"output range [{op.out_spec[0]}, {op.out_spec[1]}]: {minima}"
    for lo in minima:
        if snf.bias_buf(sc, np.float32(lo)) is None:
            v = bias_values(sc, lo)
            c = int(np.nanargmax(np.abs(np.nan_to_num(v, nan=np.inf))))
            return (f"its bias does not fit int32 in accumulator units (hexagon_nn fill_bias_buf: channel {c} "
                    f"needs {float(v[c]):.3g}; prod {float(sc.prod):.3g}, output min {lo:.4g}"
                    + ("" if sc.k is None else f", channel scale {float(sc.k[c]):.3g}") + ")")
    return None


def chain_fit(op: FusedOperands) -> str | None:
    """None when the unfused chain computes the layer exactly (no saturated bias, no wrapped sum), else why.

    QuantizedBiasAdd_32p32to32 rescales the bias onto the product's code (``prod``, the level of
    product_range_f32) with a saturating conversion and adds with wrap-around; the channel scale
    (QuantizedChannelScale_32xf, ``k <= 1``) shrinks the sums first. The qint32 bias of the 8-bit-bias
    form is rounded to 8 bits on its own range by the requantize before it, which always fits."""
    if not op.bias32:
        return None
    lo32, hi32 = product_range_f32(*op.in_range, *op.w_range)
    unit = float(hi32) / float(2 ** 31 - 1) if np.isfinite(hi32) else math.inf
    if not unit > 0 or not math.isfinite(unit):
        return f"the product's range [{float(lo32)}, {float(hi32)}] has no finite step"
    b_real = snf.bias_parts(op.bias, *op.b_range, True, np.float32(1.0))
    b_codes = b_real[0].astype(np.float64) * float(b_real[1]) / unit
    sc = op.consts()
    if sc is None:
        return f"input range [{op.in_range[0]}, {op.in_range[1]}] is not finite"
    s_lo, s_hi = sum_extremes(op.w, sc.w_zero, sc.in_zero, op.dwise)
    k = np.ones_like(s_lo) if op.k is None else op.k.astype(np.float64)
    peak = np.maximum(np.abs(b_codes + k * s_lo), np.abs(b_codes + k * s_hi))
    if np.all(np.abs(b_codes) < I32_MAX) and np.all(peak < I32_MAX):
        return None
    c = int(np.argmax(np.maximum(np.abs(b_codes), peak)))
    return (f"its bias is {abs(float(b_codes[c])):.3g} product steps in channel {c}: past the qint32 product "
            f"range, where QuantizedBiasAdd_32p32to32 saturates it")


#: the widest input widening tried (2**MAX_WIDEN): past it the input's codes all fall on its zero code
MAX_WIDEN = 40


def widened(op: FusedOperands, factor: float) -> FusedOperands:
    """``op`` reading its input on ``factor`` times its range (the zero code kept)."""
    lo, hi = op.in_range
    return replace(op, in_range=(float(np.float32(lo * factor)), float(np.float32(hi * factor))))


def widening(op: FusedOperands) -> float | None:
    """The least power of two ``s`` whose input range ``s * [in_min, in_max]`` gives the chain a product
    step its bias fits (:func:`chain_fit`), or None (no such ``s`` up to 2**MAX_WIDEN, or a range whose
    zero is not on a code: Requantize_8to8 would refuse the widened range).

    Where the bias is past the product range, the product step is what is too fine: a bias ``|b|`` needs
    ``prod >= |b| / 2**31``. Requantize_8to8 onto the wider range keeps the input's zero code and moves
    every other code ``s`` times closer to it; what the layer loses is at most half a widened input step
    per tap, and ``s`` is the least that holds the bias, so that loss stays below ``2 * |b| * taps *
    max|w - w_zero| / 2**31`` - a fraction of the bias that dominates the layer.
    """
    lo, hi = op.in_range
    if adjust_range(lo, hi) != (lo, hi):
        return None
    for n in range(1, MAX_WIDEN + 1):
        if chain_fit(widened(op, 2.0 ** n)) is None:
            return 2.0 ** n
    return None
