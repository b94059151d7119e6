"""Test ops that compare a result with a reference: Check, Close_f, Close_quint8, Close_int32,
Close_qint32, Close_q_quint8 (op texts, first section of hexagon_nn_ops.txt).

Input 0 is the result under test ("dut", *got*), input 1 (input 3 for
Close_q_quint8) the reference (*expected*). Both must have the same 4-D
shape. A failed check raises the project's :class:`OpError` naming the node
and op, how many elements failed, and the worst one: its ``[b,h,w,d]``
position, expected and got values, the difference and the tolerance.
Passing gives no outputs.

Tolerances (the texts give Close_f's and Close_q_quint8's; the rest are
choices where the texts only say "close", taken from hexagon_nn's checker):

- **Check**: exact equality of values (NaN equals NaN).
- **Close_f**: ``|got - expected| <= tol * R`` where ``R = max(0, max(ref))
  - min(0, min(ref))`` is the range of the reference and ``tol`` is input 2
  (default 0.07; the text's "% of the range" is a fraction). NaN in the
  result always fails. (hexagon_nn also never lets the tolerance drop below
  0.07 in absolute terms; that floor would pass any result against a small
  reference, so it is not copied.)
- **Close_quint8 / Close_int32 / Close_qint32**: ``|got - expected| <=
  0.07 * max(|ref|)`` (a reference of zeros needs an exact match).
- **Close_q_quint8**: both tensors are dequantized (SEMANTICS §1, sane
  ranges) and ``|got - expected| / (ref_max - ref_min)`` must not exceed the
  error ratio (default 0.07, "FUDGE_FACTOR"). Optional inputs: hexagon_nn
  reads input 6 as the error ratio when there are 7 inputs, and as the
  offset index (of its loop stack) when there are 8; here a 7th input of
  integer dtype is read as the offset index too. The offset index only
  matters inside hexagon_nn loops, which this engine does not run, so it
  must be an integer and is otherwise unused (offset 0).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.kernel_io import float_data, i32_codes, u8_codes
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.quant import dequantize_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: hexagon_nn's FUDGE_FACTOR: default relative tolerance of the Close ops.
FUDGE_FACTOR = 0.07


def shape4(a: np.ndarray) -> tuple[int, ...]:
    """The shape left-padded with 1s to 4-D."""
    return (1,) * max(0, 4 - a.ndim) + tuple(a.shape)


def same_shape(ctx: KernelContext, got: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays reshaped to their common 4-D shape; different shapes fail the check."""
    gs, es = shape4(got), shape4(expected)
    if gs != es:
        raise ctx.fail(f"check failed: shapes differ: got (input 0) {list(gs)}, expected (reference) {list(es)}")
    return got.reshape(gs), expected.reshape(es)


def position(shape: tuple[int, ...], flat: int) -> str:
    """``[b,h,w,d]`` text of a flat index."""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def fail_close(ctx: KernelContext, got: np.ndarray, expected: np.ndarray, err: np.ndarray, bad: np.ndarray,
               tolerance: str, extra: str = "") -> None:
    """Raise the mismatch error when ``bad`` has any element (module doc); ``err`` ranks the worst."""
    n_bad = int(np.count_nonzero(bad))
    if n_bad == 0:
        return
    ranked = np.where(bad, np.nan_to_num(err, nan=np.inf), -np.inf).reshape(-1)
    worst = int(np.argmax(ranked))
    g, e = got.reshape(-1)[worst], expected.reshape(-1)[worst]
    raise ctx.fail(f"check failed: {n_bad} of {got.size} elements outside the tolerance {tolerance}; worst at "
                   f"[b,h,w,d]={position(got.shape, worst)}: expected {str(e)}, got {str(g)}, "
                   f"error {float(err.reshape(-1)[worst]):.7g}{extra}")


@register("Check")
class Check(Kernel):
    """Input 0 must equal input 1 exactly (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()`` when equal; OpError describing the first difference otherwise."""
        got, expected = same_shape(ctx, np.asarray(inputs[0]), np.asarray(inputs[1]))
        diff = got != expected
        if got.dtype.kind == "f" and expected.dtype.kind == "f":
            diff &= ~(np.isnan(got) & np.isnan(expected))
        n_bad = int(np.count_nonzero(diff))
        if n_bad:
            first = int(np.argmax(diff.reshape(-1)))
            raise ctx.fail(f"check failed: {n_bad} of {got.size} elements differ (exact equality required); "
                           f"first at [b,h,w,d]={position(got.shape, first)}: expected "
                           f"{str(expected.reshape(-1)[first])}, got {str(got.reshape(-1)[first])}")
        return ()


def ratio_param(ctx: KernelContext, arr: np.ndarray, what: str) -> float:
    """A tolerance / error ratio scalar: finite and >= 0."""
    v = ctx.scalar(arr, what)
    if not (math.isfinite(v) and v >= 0):
        raise ctx.fail(f"{what} is {v}, expected a finite value >= 0")
    return v


@register("Close_f")
class CloseF(Kernel):
    """Float result within ``tol`` times the range of the reference (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()`` when close; OpError describing the worst element otherwise."""
        tol = ratio_param(ctx, inputs[2], "tolerance (input 2)") if len(inputs) > 2 else FUDGE_FACTOR
        got = np.asarray(inputs[0])
        if got.dtype.kind not in "biuf":
            raise ctx.fail(f"input 0 has dtype {got.dtype}, expected float data")
        float_data(ctx, inputs[1], "reference (input 1)")            # finite float data
        shown, ref = same_shape(ctx, got, np.asarray(inputs[1]))       # as given, for the message
        expected = ref.astype(np.float64)
        r = max(0.0, float(expected.max(initial=0.0))) - min(0.0, float(expected.min(initial=0.0)))
        err = np.abs(shown.astype(np.float64) - expected)
        bad = ~(err <= tol * r)      # NaN in the result fails
        fail_close(ctx, shown, ref, err, bad, f"{tol * r:.7g} (= {tol} x reference range {r:.7g})")
        return ()


class _CloseInt(Kernel):
    """Integer result within 0.07 of the reference's largest magnitude (module doc)."""

    QUINT8 = False

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()`` when close; OpError describing the worst element otherwise."""
        read = u8_codes if self.QUINT8 else i32_codes
        got, expected = same_shape(ctx, read(ctx, inputs[0], "input 0"), read(ctx, inputs[1], "reference (input 1)"))
        got, expected = got.astype(np.int64), expected.astype(np.int64)
        biggest = int(np.abs(expected).max(initial=0))
        err = np.abs(got - expected)
        bad = err > FUDGE_FACTOR * biggest
        fail_close(ctx, got, expected, err, bad, f"{FUDGE_FACTOR * biggest:g} (= {FUDGE_FACTOR} x largest "
                                                 f"reference magnitude {biggest})")
        return ()


@register("Close_quint8")
class CloseQuint8(_CloseInt):
    """quint8 codes within 0.07 of the largest reference code (module doc)."""

    QUINT8 = True


@register("Close_int32", "Close_qint32")
class CloseInt32(_CloseInt):
    """int32 / qint32 codes within 0.07 of the largest reference magnitude (module doc)."""

    QUINT8 = False


@register("Close_q_quint8")
class CloseQQuint8(Kernel):
    """Dequantized quint8 result within an error ratio of the reference range (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``()`` when close; OpError describing the worst element otherwise."""
        dut, d_mn, d_mx, ref, r_mn, r_mx = inputs[:6]
        extra = list(inputs[6:])
        if len(extra) == 2 or (extra and np.asarray(extra[0]).dtype.kind in "iu"):
            int_param(ctx, extra.pop(0), "offset index (input 6)")
        ratio = ratio_param(ctx, extra[0], f"error ratio (input {len(inputs) - 1})") if extra else FUDGE_FACTOR
        dlo, dhi = ctx.sane_range(d_mn, d_mx, "dut")
        rlo, rhi = ctx.sane_range(r_mn, r_mx, "reference")
        dq, rq = same_shape(ctx, u8_codes(ctx, dut, "dut (input 0)"), u8_codes(ctx, ref, "reference (input 3)"))
        got, expected = dequantize_u8(dq, dlo, dhi), dequantize_u8(rq, rlo, rhi)
        err = np.abs(got - expected) / (rhi - rlo)
        bad = err > ratio
        worst = int(np.argmax(np.where(bad, err, -1.0).reshape(-1)))
        codes = f"; codes there: dut {int(dq.reshape(-1)[worst])}, reference {int(rq.reshape(-1)[worst])}"
        fail_close(ctx, got, expected, err, bad, f"error ratio {ratio} (|got - expected| / reference range "
                                                 f"{rhi - rlo!r})", codes)
        return ()
