"""onnxruntime's U8S8 integer product, used where the node's own worst case proves it exact (issue 37).

The 1x1 products go to onnxruntime's ``MatMulInteger`` (:func:`hexnn_import.ops.compiled.conv_sums`). Its two
x86-64 kernels differ in what they can hold (onnxruntime's MLAS QGEMM kernels):

- U8U8 (uint8 weights) widens both operands to 16 bits and accumulates products in 32: exact below 2**31 on
  every x86-64 CPU. It is the choice on AVX2 without VNNI.
- U8S8 (int8 weights) on AVX2 without VNNI multiplies with ``vpmaddubsw``, which adds two uint8 x int8
  products into a *saturating* int16 lane: 255 * 127 * 2 = 64770 does not fit, so its sums can be wrong. With
  AVX-512 VNNI or AVX-VNNI (``vpdpbusd``) four products go straight into an int32 lane, exact; and it is there
  several times faster than U8U8.

:func:`u8s8_session` therefore builds the U8S8 session only when asked (:func:`want_u8s8`: by default where
the CPU flags say VNNI; ``HEXNN_INT8_PRODUCTS=u8s8`` / ``u8u8`` force either) and keeps it only when it gives
the exact sums on the node's worst case (:func:`worst_rows`): for each output channel, the input that makes
every product of that channel's column as large as it can be (255 where its int8 weight is positive, 0
elsewhere), and the one that makes them all as negative. Any pairing of products into a saturating lane is
then at its extreme on those rows, and a saturation there only shrinks a sum whose terms all have one sign, so
it shows. On AVX2 the check refuses every node whose weights can saturate (most: int8 weights reach +-127) and
keeps the others, whose U8S8 sums are exact here too. The first real input is then still compared with numpy's
sums (:func:`~hexnn_import.ops.compiled.conv_sums`), as for every onnxruntime product.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # types only
    from hexnn_import.ops.conv_core import ConvPlan

#: Environment variable choosing onnxruntime's integer kernel for the 1x1 products: auto (default), u8s8, u8u8.
INT8_ENV = "HEXNN_INT8_PRODUCTS"
#: CPU flags (``/proc/cpuinfo``) that give onnxruntime's U8S8 kernel exact int32 sums.
VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni"})


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (Linux); empty where it cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            lines = [line for line in f if line.startswith("flags")]
    except OSError:
        lines = []
    return frozenset(lines[0].partition(":")[2].split()) if lines else frozenset()


def has_vnni() -> bool:
    """True when the CPU has AVX-512 VNNI or AVX-VNNI."""
    return bool(cpu_flags() & VNNI_FLAGS)


def want_u8s8() -> bool:
    """Whether to try the U8S8 kernel: ``$HEXNN_INT8_PRODUCTS`` u8s8 / u8u8, else (auto) where the CPU has VNNI."""
    mode = os.environ.get(INT8_ENV, "auto").strip().lower()
    if mode in ("u8s8", "u8u8"):
        return mode == "u8s8"
    return has_vnni()


def int8_zero(wmat: np.ndarray) -> int | None:
    """A zero point ``z`` with ``wmat + z`` in -128..127 (the centred weights as int8 codes): 0 for symmetric
    int8 weights, else the one that centres their span; None when the span is wider than 255."""
    lo, hi = float(wmat.min(initial=0.0)), float(wmat.max(initial=0.0))
    for z in (0, int(-128 - lo)):
        if -128 <= z <= 127 and lo + z >= -128 and hi + z <= 127:
            return z
    return None


def worst_rows(ws: np.ndarray) -> np.ndarray:
    """uint8 ``[2 * dout, din]``: row ``2j`` is 255 where column ``j`` of the int8 weights ``ws [din, dout]`` is
    positive (0 elsewhere), row ``2j + 1`` 255 where it is negative: every product of column ``j`` at its largest,
    then at its most negative."""
    pos = np.where(ws.T > 0, 255, 0).astype(np.uint8)
    neg = np.where(ws.T < 0, 255, 0).astype(np.uint8)
    return np.ascontiguousarray(np.stack([pos, neg], axis=1).reshape(-1, ws.shape[0]))


def exact_on_worst_case(run: Callable[[np.ndarray], np.ndarray], ws: np.ndarray, x_zero: int, w_zero: int) -> bool:
    """True when ``run`` (``X [M, din] uint8 -> int32 [M, dout]``) gives ``sum((x - x_zero) * (ws - w_zero))``
    exactly on :func:`worst_rows`, channel by channel (each row is checked in its own channel's column)."""
    rows = worst_rows(ws)
    got = np.asarray(run(rows))
    dout = ws.shape[1]
    centred = ws.astype(np.int64).T - w_zero                                   # [dout, din]
    idx = np.arange(dout)
    for half in (0, 1):
        want = ((rows[half::2].astype(np.int64) - x_zero) * centred).sum(axis=1)
        if not np.array_equal(got[half::2][idx, idx].astype(np.int64), want):
            return False
    return True


def u8s8_session(plan: ConvPlan, ort: Any, session: Callable[[Any, Any], Any]) -> Any | None:
    """A ``MatMulInteger`` session ``X [M, din] uint8 -> S [M, dout] int32`` with int8 weights (U8S8) for a
    1x1 product, proven exact on the node's worst case (module doc), or None (not wanted on this CPU, the
    weights have no int8 form, or the proof fails). ``session(graph, ort)`` makes the session (the caller's
    options: threads, logging)."""
    if not want_u8s8():
        return None
    zs = int8_zero(plan.wmat)
    if zs is None:
        return None
    from onnx import TensorProto, helper, numpy_helper
    ws = np.rint(plan.wmat.astype(np.float64) + zs).astype(np.int8)
    din, dout = plan.shape[2], plan.shape[3]
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["X", "W", "XZ", "WZ"], ["S"])], "hexnn_matmul_u8s8",
        [helper.make_tensor_value_info("X", TensorProto.UINT8, ["M", din])],
        [helper.make_tensor_value_info("S", TensorProto.INT32, ["M", dout])],
        [numpy_helper.from_array(ws, "W"), numpy_helper.from_array(np.array(plan.x_zero, np.uint8), "XZ"),
         numpy_helper.from_array(np.array(zs, np.int8), "WZ")])
    sess = session(graph, ort)
    if not exact_on_worst_case(lambda x: sess.run(None, {"X": x})[0], ws, plan.x_zero, zs):
        return None
    return sess
