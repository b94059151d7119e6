"""Elementwise _d32 ops: QuantizedAdd/Sub_8p8to8_d32 (early names QuantizedAdd/Sub_8x8to8_d32),
QuantizedMul_8x8to8_d32 (SEMANTICS.md §6, §7; op texts), QuantizedTanh_8_d32, QuantizedSigmoid_8_d32
(op_tanh_d32.c).

The arithmetic is the flat twins' (``kernels/add8.py``, ``kernels/binary.py``,
``kernels/nonlinear.py``) on the logical data; only the broadcast rules of the
_d32 texts are added: "Supports broadcast from B input to A, however,
broadcast along w, d dimensions is only supported when B input has
batches=1, height=1"; Sub "also supports broadcast from A to B (with same
restrictions; done as rsub(B,A))". Add and Mul therefore refuse a shape
pair where A would have to broadcast (swap the operands: both are
commutative); the output has A's shape (B's for Sub's A-to-B case).
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.broadcast import AXES
from hexnn_import.ops.d32_io import D32Twin, d32_output, run_flat
from hexnn_import.ops.kernels.add8 import f32_range, flat_direct, scaled_codes, spec_ends
from hexnn_import.ops.kernels.nonlinear import TANH_RANGE, UNIT_RANGE
from hexnn_import.ops.nnlib_f32_nonlin import read_any_range
from hexnn_import.ops.nnlib_f32 import F
from hexnn_import.ops.nnlib_add_d32 import (LEFT_KEY, SCALED_KEY, bc1111_scaling, check_ends, copy_scaled,
                                            min_max_precalc, scaling_left, setup_key, single_operand)
from hexnn_import.ops.nnlib_addsub import INFO_KEY, AddInfo, Scaling, ScalingFailedError, check_info
from hexnn_import.ops.nnlib_mul_d32 import MulInfo, mul_d32, mul_scalar_b
from hexnn_import.ops.nnlib_tanh_d32 import tanh_d32_table
from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.registry import KernelContext, register

Shape = tuple[int, ...]


def broadcasts_to(small: Shape, big: Shape) -> bool:
    """Every axis of ``small`` equals ``big``'s or is 1."""
    return all(s == g or s == 1 for s, g in zip(small, big))


def check_d32_broadcast(ctx: KernelContext, small: Shape, big: Shape, small_name: str, big_name: str) -> None:
    """The _d32 restriction: broadcasting along w or d needs batches=1 and height=1 on the broadcast input."""
    along = [AXES[i] for i in (2, 3) if small[i] == 1 < big[i]]
    if along and (small[0] != 1 or small[1] != 1):
        raise ctx.fail(f"input {small_name} {list(small)} broadcasts to {big_name} {list(big)} along "
                       f"{'/'.join(along)}, which the d32 op supports only when {small_name} has batches=1, height=1")


def d32_operand_order(ctx: KernelContext, a: Shape, b: Shape, allow_rsub: bool) -> None:
    """Check the shapes against the text's broadcast rules (B to A; A to B only with ``allow_rsub``)."""
    if broadcasts_to(b, a):
        check_d32_broadcast(ctx, b, a, "B", "A")
    elif allow_rsub and broadcasts_to(a, b):
        check_d32_broadcast(ctx, a, b, "A", "B")
    else:
        how = "B to A or A to B" if allow_rsub else "B to A only"
        raise ctx.fail(f"input shapes A {list(a)} and B {list(b)} do not broadcast {how} (d32 op text)")


class _BinaryD32(D32Twin):
    """Two d32 operands (inputs 0, 1) checked against the d32 broadcast rules, then the flat twin."""

    D32_INPUTS = (0, 1)
    ALLOW_RSUB = False

    #: Expand the broadcast operand before the flat arithmetic (Add / Sub): see QuantizedAdd8p8to8D32.
    EXPAND = False

    #: op_add_d32.c's scalar-B re-coding (:func:`scalar_b_recode`): None (not this op), False (add), True (sub)
    SCALAR_B_SUBTRACT: bool | None = None

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        flat = self.flat_inputs(ctx, inputs)
        if self.SCALAR_B_SUBTRACT is not None:
            recoded = scalar_b_recode(ctx, flat, self.SCALAR_B_SUBTRACT)
            if recoded is not None:
                return (d32_output(recoded[0]), *recoded[1:])
            return self.addsub_run(ctx, d32_checked_ends(ctx, flat))
        return self.d32_run(ctx, flat)

    def d32_run(self, ctx: KernelContext, flat: list[Any], left: Scaling | None = None) -> tuple[Any, ...]:
        """The flat twin's outputs on the operands broadcast as the d32 text allows, laid out as d32; with ``left``
        the add / subtract's codes of that scaling on its fixed output range instead."""
        d32_operand_order(ctx, flat[0].shape, flat[1].shape, self.ALLOW_RSUB)
        if self.EXPAND and flat[0].shape != flat[1].shape:
            shape = np.broadcast_shapes(flat[0].shape, flat[1].shape)
            flat = [np.ascontiguousarray(np.broadcast_to(flat[0], shape)),
                    np.ascontiguousarray(np.broadcast_to(flat[1], shape)), *flat[2:]]
        if left is not None:
            a, b = (u8_codes(ctx, flat[i], f"input {'AB'[i]} data") for i in (0, 1))
            info: AddInfo = ctx.state[INFO_KEY]
            return (d32_output(scaled_codes(ctx, left, a, b)), *range_out(info.out_min, info.out_max))
        outs = self.flat_result(ctx, flat)
        return (d32_output(outs[0]), *outs[1:])

    def addsub_run(self, ctx: KernelContext, flat: list[Any]) -> tuple[Any, ...]:
        """:meth:`d32_run` of an add / subtract, after a failed set-up of a fixed output range as the device goes
        on (:mod:`hexnn_import.ops.nnlib_add_d32`): the next run with the same shapes and input ranges runs on the
        scaling left, with a warning naming the node; any other run sets up again."""
        left = ctx.state.get(LEFT_KEY)
        if left is not None and left[0] == setup_key((flat[0].shape, flat[1].shape), self.ranges(ctx, flat[2:6])):
            if not left[2]:
                ctx.state[LEFT_KEY] = (*left[:2], True)
                warnings.warn(f"{ctx.node} ({ctx.op}): its output range was too narrow for the input ranges (the "
                              f"last run failed, \"scaling failed\"); hexagon_nn's device code runs it again on the "
                              f"scaling left in the node (op_add_d32.c elementwise_strategy_valid_check), as here",
                              DeviceDefectWarning, stacklevel=2)
            return self.d32_run(ctx, flat, left[1])
        info: AddInfo = ctx.state[INFO_KEY]
        try:
            out = self.d32_run(ctx, flat)
        except ScalingFailedError:
            if info.min_pre and info.max_pre:
                scaled = ctx.state.get(SCALED_KEY)
                kept = scaling_left(info, None if scaled is None else self.ranges(ctx, scaled),
                                    bool(self.SCALAR_B_SUBTRACT))
                key = setup_key((flat[0].shape, flat[1].shape), self.ranges(ctx, flat[2:6]))
                ctx.state[LEFT_KEY] = (key, kept, False)
            raise
        if info.min_pre and info.max_pre:
            ctx.state[SCALED_KEY] = tuple(flat[2:6])
            if left is not None:
                del ctx.state[LEFT_KEY]
        return out

    @staticmethod
    def ranges(ctx: KernelContext, arrs: Sequence[Any]) -> tuple[float, ...]:
        """Inputs 2-5 (A min, max, B min, max) as ``tensor_get_float`` reads them."""
        return tuple(float(F(ctx.scalar(a, f"input {n}"))) for a, n in zip(arrs, ("A min", "A max", "B min", "B max")))

    def flat_result(self, ctx: KernelContext, flat: list[Any]) -> tuple[Any, ...]:
        """The flat twin's outputs."""
        return run_flat(ctx, self.FLAT_OP, flat)


def d32_checked_ends(ctx: KernelContext, flat: list[Any]) -> list[Any]:
    """The add / sub's inputs with the output ends as ``addsub_d32_check`` keeps them (:func:`check_ends`; the
    same objects where nothing changes) and the node's range state made as op_add_d32.c's (``AddInfo.d32``:
    the range tracked whenever an end is free)."""
    spec = [F(ctx.scalar(flat[i], f"output {n}")) if len(flat) > i else None for i, n in ((6, "min"), (7, "max"))]
    ends = check_ends(*spec)
    out = list(flat)
    for i, (given, kept) in enumerate(zip(spec, ends)):
        if given is not None and not F(given).tobytes() == kept.tobytes():
            out[6 + i] = np.full((1, 1, 1, 1), kept, np.float32)
    if INFO_KEY not in ctx.state:
        ctx.state[INFO_KEY] = dataclasses.replace(check_info(*spec_ends(ctx, out)), d32=True)
    return out


def scalar_b_recode(ctx: KernelContext, flat: list[Any], subtract: bool) -> tuple[Any, ...] | None:
    """op_add_d32.c's ``mode_broadcast_1111`` (one operand a single value, neither output end given: absent,
    ``-inf`` / ``+inf``): the other operand re-coded onto its own range moved by the single value
    (:mod:`hexnn_import.ops.nnlib_add_d32`, issue 36), or None where that mode does not apply. A single A
    with a tensor B is the device's A-to-B swap (``op_subtract_rev`` for a subtraction)."""
    spec = [F(ctx.scalar(flat[i], f"output {n}")) if len(flat) > i else None for i, n in ((6, "min"), (7, "max"))]
    which = single_operand(np.shape(flat[0]), np.shape(flat[1]))
    if which is None or min_max_precalc(*spec) != 0:
        return None
    t, s = (0, 1) if which == "B" else (1, 0)
    x = u8_codes(ctx, flat[t], f"input {'AB'[t]} data")
    code = int(u8_codes(ctx, flat[s], f"input {'AB'[s]} data").reshape(-1)[0])
    rngs = [f32_range(ctx, flat[i], flat[i + 1], f"input {n}") for i, n in ((2, "A"), (4, "B"))]
    op = ("rsub" if which == "A" else "sub") if subtract else "add"
    sc = bc1111_scaling(rngs[t], code, rngs[s], op)
    return (copy_scaled(x, sc), *range_out(sc.out_min, sc.out_max))


@register("QuantizedAdd_8p8to8_d32", "QuantizedAdd_8x8to8_d32")
class QuantizedAdd8p8to8D32(_BinaryD32):
    """``a + b`` as QuantizedAdd_8p8to8 (given or auto range); B broadcasts to A.

    nnlib's d32 add (op_add_d32.c) is HVX code, not modelled; it broadcasts B inside its own element
    loop. The engine expands B to A's shape and runs the flat op's same-shape arithmetic
    (``addsub_flat_direct_execute``, nnlib-exact) - not the flat op's broadcast path (``qadd_888_hvx``,
    whose reciprocal clips at 32767 and whose ``expand`` only follows a depth broadcast), which is a
    different code path the d32 op never takes.
    """

    FLAT_OP = "QuantizedAdd_8p8to8"
    EXPAND = True
    SCALAR_B_SUBTRACT = False


@register("QuantizedSub_8p8to8_d32", "QuantizedSub_8x8to8_d32")
class QuantizedSub8p8to8D32(_BinaryD32):
    """``a - b`` as op_add_d32.c computes it on the device (issue 36): the add's range rules and 16-bit
    datapath with a negative B scale, the scale exponent from ``fmaxf(a_scale, b_scale)``
    (``set_addsub_scaling_for_output_range``, ``op_subtract``; :func:`~hexnn_import.ops.kernels.add8.flat_direct`
    with ``subtract``).

    B broadcasts to A, or A to B (the text's rsub(B, A), the device's ``op_subtract_rev`` on swapped
    operands, whose arithmetic is the same sum of the same two products).
    """

    ALLOW_RSUB = True
    EXPAND = True
    SCALAR_B_SUBTRACT = True

    def flat_result(self, ctx: KernelContext, flat: list[Any]) -> tuple[Any, ...]:
        a = u8_codes(ctx, flat[0], "input A data")
        b = u8_codes(ctx, flat[1], "input B data")
        a_rng = f32_range(ctx, flat[2], flat[3], "input A")
        b_rng = f32_range(ctx, flat[4], flat[5], "input B")
        a4, b4 = (x.reshape((1,) * (4 - x.ndim) + x.shape) for x in (a, b))
        return flat_direct(ctx, a4, b4, a_rng, b_rng, spec_ends(ctx, flat), subtract=True)


@register("QuantizedMul_8x8to8_d32")
class QuantizedMul8x8to8D32(_BinaryD32):
    """``a * b``; B broadcasts to A. As op_add_d32.c's own multiply runs on the device (issue 36;
    :mod:`hexnn_import.ops.nnlib_mul_d32`): a first range of 1/8 of the worst case, the 16-bit
    ``(a - za)(b - zb) - range_bias`` intermediate, a 16-bit post-scale and shift, one widening rerun where the
    extremes clip, the range kept in the node for later runs; a single B value copies or inverts A's codes
    (``mode_broadcast_1111``). Any finite input ranges (the device takes ranges that exclude 0).
    """

    FLAT_OP = "QuantizedMul_8x8to8"

    def flat_result(self, ctx: KernelContext, flat: list[Any]) -> tuple[Any, ...]:
        a, b = (u8_codes(ctx, flat[i], f"input {'AB'[i]} data") for i in (0, 1))
        a_rng = f32_range(ctx, flat[2], flat[3], "input A")
        b_rng = f32_range(ctx, flat[4], flat[5], "input B")
        if b.size == 1 and a.size != 1:
            q, mn, mx = mul_scalar_b(a_rng, int(b.reshape(-1)[0]), b_rng, a)
        else:
            bx = np.ascontiguousarray(np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)))
            info = ctx.state.setdefault("mul_d32", MulInfo())
            q, mn, mx = mul_d32(info, a, bx, a_rng, b_rng)
        return (q, *range_out(mn, mx))


class _TanhD32(D32Twin):
    """op_tanh_d32.c ``tanh_d32_execute``: one 256-code table (:func:`tanh_d32_table`) on the logical data.

    Not the flat QuantizedTanh_8 / Sigmoid_8 (op_tanh.c's float ``tanhf``): the d32 ops use
    op_tanh_d32.c's fixed-point quadratic segments, which may differ from it by a code.
    """

    SIGMOID = False
    OUT_RANGE = TANH_RANGE

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        data, mn_arr, mx_arr = self.flat_inputs(ctx, inputs)
        mn, mx = read_any_range(ctx, mn_arr, mx_arr, "input")
        table = tanh_d32_table(mn, mx, self.SIGMOID)
        return (d32_output(table[data]), *range_out(*self.OUT_RANGE))


@register("QuantizedTanh_8_d32")
class QuantizedTanh8D32(_TanhD32):
    """``tanh(x)`` onto ``[-1, 128/127]`` (zero code 127), op_tanh_d32.c's table."""


@register("QuantizedSigmoid_8_d32")
class QuantizedSigmoid8D32(_TanhD32):
    """``sigmoid(x)`` onto ``[0, 1]``, op_tanh_d32.c's table."""

    SIGMOID = True
    OUT_RANGE = UNIT_RANGE
