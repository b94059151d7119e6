"""QuantizedPad_u16_d32 on nnlib's device code (op_pad_d32.c, whole): cases, I/O, comparison.

The same vendor file as QuantizedPad_8_d32 (:mod:`op_pad_d32`): ``pad_d32_check`` picks ``elbytes`` 2 and
``NN_TYPE_QUINT16`` from the node type, ``pad32_setup_scaling`` the 16-bit fill code ``saturate_u16(roundf_i32((value
- in_min) * 65536 / (in_max - in_min)))`` (+-inf: 0xFFFF / 0), and ``pad32_execute`` the same memcpy-manager fills and
2-D copy over 2-byte elements. The cases are :mod:`op_pad_d32`'s with 16-bit codes; the input is laid out as
prepare.c's Convert_to_d32_16b lays it out (``harness_u16_d32.h``).
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_pad_d32

NAME = "pad_u16_d32"
OPS = ("QuantizedPad_u16_d32",)
SOURCE = op_pad_d32.SOURCE
FUNCTIONS = op_pad_d32.FUNCTIONS
C_FILES = op_pad_d32.C_FILES
ASM = op_pad_d32.ASM
HEADERS = op_pad_d32.HEADERS
HARNESS = "harness_pad_u16_d32.c"
INCLUDES = op_pad_d32.INCLUDES
HDR = op_pad_d32.HDR
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """As :func:`op_pad_d32.body`."""
    return op_pad_d32.body(nnlib)


def _as_u16(c: dict, rng: np.random.Generator) -> dict:
    """A case of :mod:`op_pad_d32` with 16-bit codes (and twice its output bytes)."""
    c["x"] = rng.integers(0, 65536, c["x"].shape, dtype=np.uint16)
    c["hdr"][7] = 2 * c["hdr"][7]
    return c


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """:func:`op_pad_d32.make_cases` (its edges and ``n`` random cases) with uint16 codes."""
    return [_as_u16(c, rng) for c in op_pad_d32.make_cases(rng, n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_pad_d32.pack(cases)


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays as :func:`op_pad_d32.unpack`, with uint16 input and output codes."""
    return op_pad_d32.unpack(out, cases, np.uint16)


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """:func:`op_pad_d32.compare` with the engine running QuantizedPad_u16_d32."""
    return op_pad_d32.compare(gold, OPS[0])
