"""QuantizedPad_u16_d32 on nnlib's device code (op_pad_d32.c, whole): cases, I/O, comparison.

The same vendor file as QuantizedPad_8_d32 (:mod:`op_pad_d32`): ``pad_d32_check`` picks ``elbytes`` 2 and
``NN_TYPE_QUINT16`` from the node type, ``pad32_setup_scaling`` the 16-bit fill code ``saturate_u16(roundf_i32((value
- in_min) * 65536 / (in_max - in_min)))`` (+-inf: 0xFFFF / 0), and ``pad32_execute`` the same memcpy-manager fills and
2-D copy over 2-byte elements. The cases are :mod:`op_pad_d32`'s with 16-bit codes; the input is laid out as
prepare.c's Convert_to_d32_16b lays it out (``harness_u16_d32.h``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common
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


def read_d32_run_u16(out: bytes, pos: int) -> tuple[int, tuple, np.ndarray]:
    """``harness_u16_d32.h`` hx_write_d32_result_u16's record at ``pos``: int32 status, float out_min, out_max, int32
    shape[4], the uint16 codes."""
    st, lo, hi, *shp = struct.unpack_from("<iff4i", out, pos); pos += 28
    n = int(np.prod(shp))
    return pos + 2 * n, (st, lo, hi, shp), np.frombuffer(out, np.uint16, n, pos).copy()


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays as :func:`op_pad_d32.unpack`, with uint16 input and output codes."""
    pos, run_case, run_in, status, rmin, rmax, shapes, codes = 0, [], [], [], [], [], [], []
    for i, c in enumerate(cases):
        for r in range(c["hdr"][6]):
            pos, (st, lo, hi, shp), run_codes = read_d32_run_u16(out, pos)
            codes.append(run_codes); run_case.append(i); run_in.append(c["runs"][r]); status.append(st)
            rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32),
            "pads": np.concatenate([c["pads"] for c in cases]), "pads_off": op_common.offsets([c["pads"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "run_case": np.array(run_case, np.int32), "run_in": np.array(run_in, F),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes, shape and range - or both refuse, first difference)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    exact, first = 0, ""
    for r in range(len(gold["run_case"])):
        try:
            q, mn, mx = run_op("QuantizedPad_u16_d32", op_pad_d32.run_inputs(gold, r))
        except HexnnError as e:
            ok, msg = bool(gold["status"][r] != 0), f"engine error {e}"
        else:
            _, _, same, ok = op_common.d32_run(q, mn, mx, gold, r)
            msg = f"status {gold['status'][r]}, range same {same}"
        exact += ok
        if not ok and not first:
            first = f"run {r} case {gold['run_case'][r]} hdr {gold['hdr'][gold['run_case'][r]].tolist()}: {msg}"
    return len(gold["run_case"]), exact, first
