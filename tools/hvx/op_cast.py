"""op_cast.c's six casts on nnlib's device code (whole): cases, I/O, comparison.

``cast_execute_*`` (execute only) cast element by element in C below ``NUM_THREADS * 128`` elements; above, HVX work
items (``cast_quant8_to_int``, ``cast_float_to_int32`` and the rest) take ``NUM_THREADS`` chunks of whole 128-element
blocks and C the tail. The C casts of float to int32 / uint8 are Hexagon's conversions (``convert_sf2w`` /
``convert_sf2uw``: saturating, NaN as the hardware gives it). The whole file is compiled unedited with nnlib's own
``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "cast"
OPS = ("CastInt32ToFloat32", "CastUInt8ToFloat32", "CastFloat32ToInt32", "CastUInt8ToInt32", "CastInt32ToUInt8",
       "CastFloat32ToUInt8")
SOURCE = "hexagon/ops/src/op_cast.c"
FUNCTIONS = [f"cast_execute_{k}" for k in ("int32_to_float32", "uint8_to_float32", "float32_to_int32",
                                            "uint8_to_int32", "int32_to_uint8", "float32_to_uint8")]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c", "hexagon/src/hvx_constants.c"]
ASM = ["hexagon/asm_src/nn_os_fast.S"]
HEADERS = ["quantize.h"]
HARNESS = "harness_cast.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
IN = (np.int32, np.uint8, np.float32, np.uint8, np.int32, np.float32)
OUT = (np.float32, np.float32, np.int32, np.int32, np.uint8, np.uint8)


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, op_quantize.c's ``hvx_do_dequantize`` (with its two helpers) verbatim, then the whole
    op_cast.c."""
    return (f'#include "{hvx_build.HERE / "graph_os_standin.c"}"\n#include "hvx_inlines.h"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/ops/src/op_quantize.c",
                                          ["hvx_dequantize_64xh", "hvx_dequantize_128xb", "hvx_do_dequantize"])
            + f'#include "{nnlib / SOURCE}"\n')


def _data(rng: np.random.Generator, op: int, n: int) -> np.ndarray:
    t = IN[op]
    if t == np.uint8:
        return rng.integers(0, 256, n, dtype=np.uint8)
    if t == np.int32:
        big = rng.random() < 0.5
        return rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32) if big else \
            rng.integers(-300, 300, n).astype(np.int32)
    scale = float(2.0 ** rng.integers(0, 34))
    x = (rng.standard_normal(n) * scale).astype(F)
    k = int(rng.integers(0, 4))
    if k and n >= 8:
        x[rng.integers(0, n, k)] = rng.choice(np.array([np.inf, -np.inf, 0.5, -0.5, 2.5, 255.5, 2 ** 31, -2 ** 31], F), k)
    return x


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None) -> dict:
    shape = shape or [1, int(rng.integers(1, 5)), int(rng.integers(1, 12)),
                      int(rng.choice([1, 3, 50, 128, 200, 500]))]
    n = int(np.prod(shape))
    return {"hdr": [op, *shape], "x": _data(rng, op, n).reshape(shape)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases per cast (sizes about the C / HVX switch at 4 * 128 elements and the chunking: 1, 511, 512, 513,
    1000, 4096 + 77; floats with halves, +-inf, 2^31 and beyond, values past 255 and below 0) and ``n`` random
    ones."""
    out = [_case(rng, op, [1, 1, 1, k]) for op in range(6) for k in (1, 511, 512, 513, 1000, 4173)]
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 254.5, 255.5, 256.0, -1.0, 1e10, -1e10, np.inf, -np.inf,
                       2.0 ** 31, -2.0 ** 31, 2.0 ** 32], F)
    for op in (2, 5):
        for k in (16, 1024):
            c = _case(rng, op, [1, 1, 1, k])
            c["x"] = np.resize(halves, k).reshape(1, 1, 1, k)
            out.append(c)
    return out + [_case(rng, int(rng.integers(0, 6))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d), the input as bytes (``x`` / ``x_off``), the status, the
    output shape and bytes (``out`` / ``offsets``)."""
    pos, status, shapes, res = 0, [], [], []
    for c in cases:
        st, _, _, *shp = struct.unpack_from("<iff4i", out, pos); pos += 28
        nb = int(np.prod(shp)) * np.dtype(OUT[c["hdr"][0]]).itemsize
        res.append(np.frombuffer(out, np.uint8, nb, pos).copy()); pos += nb
        status.append(st); shapes.append(shp)
    op_common.check_end(out, pos)
    xs = [c["x"].view(np.uint8).ravel() for c in cases]
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "x": np.concatenate(xs),
            "x_off": op_common.offsets(xs), "status": np.array(status, np.int32),
            "out_shape": np.array(shapes, np.int32), "out": np.concatenate(res), "offsets": op_common.offsets(res)}


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` bit for bit (or both refuse), and a message."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    op, b, h, w, d = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].view(IN[op]).reshape(b, h, w, d)
    try:
        (q,) = run_op(OPS[op], [x])
    except HexnnError as e:
        return bool(g["status"][i]), f"{OPS[op]}: engine error {e}"
    dev = g["out"][g["offsets"][i]:g["offsets"][i + 1]].view(OUT[op])
    q = np.ascontiguousarray(q)
    ok = bool(g["status"][i] == 0 and q.dtype == OUT[op] and q.shape == tuple(g["out_shape"][i])
              and q.reshape(-1).view(np.uint8).tobytes() == dev.view(np.uint8).tobytes())
    nd = int((q.reshape(-1) != dev).sum()) if q.size == dev.size and q.dtype == dev.dtype else -1
    return ok, f"{OPS[op]}: dtype {q.dtype}, {nd} differ"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
