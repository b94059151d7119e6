"""QuantizedSlice_8, Slice_int32 and Slice_f on nnlib's device code (op_slice.c, whole): cases, I/O, comparison.

nnlib registers ``slice_run`` / ``slice_run_f`` (no check): ``slice_prepare`` reads a start and a size spec of 1-4
values (back-filled onto b, h, w, d; a size of -1 meaning "to the end"; a size <= 0 or past the input refused),
plans row jobs once (kept in the node), and work items copy them with the asm ``vmemcpy_asm`` /
``vmemcpy_2d_general_asm``; QuantizedSlice_8 copies the range. Each node runs twice (the cached plan). The whole
file is compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "slice"
OPS = ("QuantizedSlice_8", "Slice_int32", "Slice_f")
SOURCE = "hexagon/ops/src/op_slice.c"
FUNCTIONS = ["slice_run", "slice_run_f", "slice_prepare", "slice_thread_work"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c", "hexagon/src/hvx_constants.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_slice.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
EL = (np.uint8, np.int32, np.float32)


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_copy`` and its run from the memcpy manager to
    ``nn_tensor_out_prepare_normal_fromshape`` verbatim, then the whole op_slice.c."""
    return op_common.os_body(nnlib, ["nn_tensor_copy"], [SOURCE])


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None, start: list[int] | None = None,
          size: list[int] | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2, 3])), int(rng.integers(1, 8)), int(rng.integers(1, 12)),
                      int(rng.choice([1, 3, 16, 31, 32, 33, 64, 100, 130, 200]))]
    if start is None:
        k = int(rng.integers(1, 5))
        dims = shape[4 - k:]
        start = [int(rng.integers(0, n)) for n in dims]
        size = [int(rng.integers(1, n - s + 1)) if rng.random() < 0.8 else -1 for n, s in zip(dims, start)]
    x = (rng.integers(0, 256, shape, dtype=np.uint8) if op == 0 else
         rng.integers(-2 ** 31, 2 ** 31, shape, dtype=np.int64).astype(np.int32) if op == 1 else
         rng.standard_normal(shape).astype(F))
    lo = -rng.uniform(0, 8)
    return {"hdr": [op, *shape, len(start), *start, *[0] * (4 - len(start)), *size, *[0] * (4 - len(size))],
            "range": np.array([lo, lo + rng.uniform(0.01, 16)], F), "x": x}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases per op (spec lengths 1-4, sizes -1, whole axes, single elements, depth slices at 32-byte
    boundaries; refusals: size 0, past the end, a start past the end) and ``n`` random ones over the three."""
    out = []
    for op in range(3):
        s = [2, 5, 7, 70]
        for st, sz in (([3], [40]), ([0], [-1]), ([1, 32], [3, 33]), ([0, 2, 0], [5, 3, -1]), ([1, 1, 1, 1], [1, 4, 6, 69]),
                       ([0, 0, 0, 0], [2, 5, 7, 70]), ([1, 4, 6, 69], [1, 1, 1, 1]), ([0, 0, 31], [-1, -1, 1]),
                       ([5], [0]), ([60], [20]), ([0, 6, 0], [1, 1, 1]), ([0, 0, 0, 64], [-1, -1, -1, -1])):
            out.append(_case(rng, op, s, st, sz))
    return out + [_case(rng, int(rng.integers(0, 3))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d, n, start[4], size[4]), the input range and data as bytes
    (``x`` / ``x_off``), the first run's status, output range, shape and bytes (``out`` / ``offsets``), and
    ``rerun_same`` (the second run's record equal)."""
    runs, recs = op_common.read_byte_runs(out, [np.dtype(EL[c["hdr"][0]]).itemsize for c in cases], 2)
    same = [a[1] == b[1] for a, b in recs]
    return {**op_common.byte_case_arrays(cases), **runs, "rerun_same": np.array(same, bool)}


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (bytes, shape, QuantizedSlice_8's range; or both refuse)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    op, b, h, w, d, k, *rest = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].view(EL[op]).reshape(b, h, w, d)
    start, size = (np.array(v[:k], np.int32).reshape(1, 1, 1, k) for v in (rest[:4], rest[4:]))
    ins = [x, start, size, *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])]
    try:
        outs = run_op(OPS[op], ins if op == 0 else ins[:3])
    except HexnnError as e:
        return bool(g["status"][i]), f"{OPS[op]}: engine error {e}"
    if g["status"][i]:
        return False, f"{OPS[op]}: the device refused, the engine ran"
    q, ok = op_common.byte_run(outs, g, i, op == 0)
    return bool(ok and g["rerun_same"][i]), f"{OPS[op]}: shape {list(q.shape)} vs {g['out_shape'][i].tolist()}"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
