"""QuantizedSoftmax_8's fixed-point lane functions on every input, on nnlib's device code (issue 36).

The HVX loops of op_softmax_d32.c (flat and d32) compute ``2**-f`` with ``pow2_v65_poly`` (``vlut4`` and two
``vmpa``) and the row sum's reciprocal with hvx_mathops.h's ``hvx_recip16_inline(d, 10)`` scaled by
``255 << 7``. Both are functions of one 16-bit lane, so every input is run: the golden file holds the device's
65536 results of each, which ops/nnlib_softmax_device.py must give (``tests/ops/test_hvx_softmax.py``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np

NAME = "softmax_lanes"
OPS = ("QuantizedSoftmax_8", "QuantizedSoftmax_8_d32")
SOURCE = "hexagon/ops/src/op_softmax_d32.c"
FUNCTIONS = ["pow2_v65_poly"]
ASM: list[str] = []
HEADERS = ["hvx_inlines.h", "hvx_mathops.h"]
HARNESS = "harness_softmax_lanes.c"
FIXED_CASES = True
KEYS = ("pow2", "recip", "recip_mant")


def body(nnlib: pathlib.Path) -> str:
    """``pow2_v65_poly`` verbatim (its first definition: the ``__HEXAGON_ARCH__ >= 65`` one, not the ``#if 0``)."""
    return hvx_build.extract_functions(nnlib / SOURCE, FUNCTIONS)


def make_cases(rng: np.random.Generator, n: int) -> list[int]:
    """One fixed set: every 16-bit input of each function (``rng`` and ``n`` unused)."""
    return [0]


def pack(cases: list[int]) -> bytes:
    return struct.pack("<i", len(cases))


def unpack(out: bytes, cases: list[int]) -> dict[str, np.ndarray]:
    """The three int16 tables, indexed by the 16-bit input."""
    arr = np.frombuffer(out, np.int16)
    if arr.size != 3 * 65536:
        raise ValueError(f"harness wrote {len(out)} bytes, expected {6 * 65536}")
    return {k: arr[i * 65536:(i + 1) * 65536].copy() for i, k in enumerate(KEYS)}


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(3 tables, tables the model reproduces on every input, the first that differs)."""
    from hexnn_import.ops.nnlib_softmax_device import pow2_poly, recip16

    x = np.arange(65536)
    xs = np.where(x >= 32768, x - 65536, x)
    rec = recip16(xs)
    mant = np.clip((rec * (255 << 7) * 2 + 0x8000) >> 16, -32768, 32767)
    mine = {"pow2": pow2_poly(x), "recip": rec, "recip_mant": mant}
    bad = [k for k in KEYS if not np.array_equal(mine[k], gold[k])]
    return 3, 3 - len(bad), (f"{bad[0]}: {int((mine[bad[0]] != gold[bad[0]]).sum())} inputs differ" if bad else "")
