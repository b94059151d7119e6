"""Transpose_8, Transpose_16, Transpose_f, Transpose_int32 and AxisShuffle_8 on nnlib's device code (op_transpose.c,
op_axisshuffle.c, src/gentranspose.c, whole): cases, I/O, comparison.

Each node's check, then its execute twice (the second on the strategy the first cached): ``nn_transpose_check``,
``nn_transpose_analyze`` (AxisShuffle: ``nn_transpose_analyze_direct`` on 5 dims) and ``nn_transpose_execute``,
whose strategy table picks a plain copy, the asm ``vmemcpy_asm`` / ``vmemcpy_2d_general_asm``, strided scalar
copies or one of gentranspose.c's HVX kernels (src/bulk_transpose.c among them). The vendor files are compiled
whole, unedited, with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``); the input buffer ends
with a fixed tail byte and the output buffer starts filled with it (``harness_flat.h``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "transpose"
OPS = ("Transpose_8", "Transpose_16", "Transpose_f", "Transpose_int32", "AxisShuffle_8")
SOURCE = "hexagon/ops/src/op_transpose.c"
FUNCTIONS = ["transpose_check", "transpose_execute", "axisshuffle_check (op_axisshuffle.c)",
             "axisshuffle_execute (op_axisshuffle.c)", "nn_transpose_execute (src/gentranspose.c)"]
C_FILES = ["hexagon/src/gentranspose.c", "hexagon/src/bulk_transpose.c", "hexagon/src/hvx_constants.c",
           "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_transpose.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
EL = (np.uint8, np.uint16, np.float32, np.int32, np.uint8)


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_copy`` and its run from the memcpy manager to ``nn_tensor_out_prepare_normal_fromshape`` verbatim,
    then the whole
    op_transpose.c and op_axisshuffle.c."""
    return op_common.os_body(nnlib, ["nn_tensor_copy"], [SOURCE, "hexagon/ops/src/op_axisshuffle.c"])


def _data(rng: np.random.Generator, op: int, shape: list[int]) -> np.ndarray:
    if op == 2:
        return rng.standard_normal(shape).astype(F)
    info = np.iinfo(EL[op])
    return rng.integers(info.min, int(info.max) + 1, shape, dtype=EL[op])


def _case(rng: np.random.Generator, op: int, shape: list[int], ctl: list[int]) -> dict:
    lo = -rng.uniform(0, 8)
    return {"hdr": [op, *shape, len(ctl) if op != 4 else 2, *ctl, *[0] * (4 - len(ctl))],
            "range": np.array([lo, rng.uniform(0.01, 8)], F), "x": _data(rng, op, shape)}


def _random(rng: np.random.Generator, op: int) -> dict:
    dims = [int(rng.choice([1, 1, 2, 3])), *(int(rng.choice([1, 2, 3, 4, 5, 6, 8, 16, 17, 32, 33, 64, 96, 128, 130]))
                                          for _ in range(3))]
    while int(np.prod(dims)) > 2000:
        dims[int(rng.integers(1, 4))] //= 2
    dims = [max(1, v) for v in dims]
    if op == 4:
        axis = int(rng.integers(-4, 4))
        n = dims[axis]
        divs = [g for g in range(1, n + 1) if n % g == 0]
        return _case(rng, op, dims, [axis, int(rng.choice(divs))])
    k = int(rng.choice([2, 3, 4, 4, 4]))
    return _case(rng, op, dims, [int(v) for v in rng.permutation(k)])


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (every 4-axis permutation on a (2, 3, 4, 5) input for Transpose_8; NHWC <-> NCHW at depths 1-130
    for each element width; the (.., W=4, D power of 2) and (D=16, W=6) shapes gentranspose.c's HVX kernels take;
    controls of 0-3 values; refusals: a repeated or out-of-range control value, an AxisShuffle group count that does
    not divide) and ``n`` random ones spread over the five ops."""
    import itertools

    out = [_case(rng, 0, [2, 3, 4, 5], list(p)) for p in itertools.permutations(range(4))]
    for op in range(4):
        for d in (1, 2, 3, 4, 8, 16, 32, 64, 128, 130):
            out.append(_case(rng, op, [1, 9, 7, d], [0, 3, 1, 2]))
            out.append(_case(rng, op, [1, d, 9, 7], [0, 2, 3, 1]))
        out += [_case(rng, op, [2, 8, 4, d], [0, 2, 1, 3]) for d in (1, 2, 4, 8, 16, 32)]
        out += [_case(rng, op, [1, h, 6, 16], [0, 2, 1, 3]) for h in (4, 8, 12, 20)]
        out += [_case(rng, op, [1, 64, 64, 1], [0, 2, 1, 3]), _case(rng, op, [1, 1, 128, 128], [1, 0])]
        out += [_case(rng, op, [2, 3, 4, 5], c) for c in ([], [0], [1, 0], [2, 0, 1], [0, 0, 1], [0, 1, 4])]
    out += [_case(rng, 4, [1, 4, 6, 24], [a, g]) for a, g in ((3, 2), (3, 3), (3, 8), (-1, 4), (2, 3), (1, 2),
                                                               (0, 1), (3, 5), (3, 0))]
    return out + [_random(rng, int(rng.choice([0, 0, 0, 1, 2, 3, 4]))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d, n, ctl[4]), the input range, the input as bytes (``x`` /
    ``x_off``), the first run's status, output range and shape, its output bytes (``out`` / ``offsets``), and
    ``rerun_same``: whether the second run (on the cached strategy) gave the same record byte for byte."""
    runs, recs = op_common.read_byte_runs(out, [np.dtype(EL[c["hdr"][0]]).itemsize for c in cases], 2)
    same = [a[1] == b[1] or (a[0][0] != 0 and b[0][0] != 0) for a, b in recs]
    return {**op_common.byte_case_arrays(cases), **runs, "rerun_same": np.array(same, bool)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list[np.ndarray]]:
    """The op and the engine's inputs for case ``i``."""
    op, b, h, w, d, n, *ctl = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].view(EL[op]).reshape(b, h, w, d)
    lo, hi = (np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])
    if op == 4:
        return OPS[op], [x, np.array([ctl[0]], np.int32), np.array([ctl[1]], np.int32), lo, hi]
    c = np.array(ctl[:n], np.int32).reshape(1, 1, 1, n)
    return OPS[op], [x, c, lo, hi] if op < 2 else [x, c]


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (the output bytes, shape and the quantized ops' range bit for bit,
    the device's second run the same; or both refuse), and a message."""
    name, outs, err = op_common.run_case(g, i, case_inputs)
    if outs is None:
        return bool(g["status"][i]), err
    q = np.ascontiguousarray(outs[0])
    dev = g["out"][g["offsets"][i]:g["offsets"][i + 1]]
    if g["status"][i] or list(q.shape) != g["out_shape"][i].tolist() or q.view(np.uint8).tobytes() != dev.tobytes():
        return False, f"{name}: status {g['status'][i]}, shape {list(q.shape)} vs {g['out_shape'][i].tolist()}"
    if len(outs) == 3 and (F(outs[1].reshape(-1)[0]).tobytes() != g["out_min"][i].tobytes()
                           or F(outs[2].reshape(-1)[0]).tobytes() != g["out_max"][i].tobytes()):
        return False, f"{name}: range differs"
    return bool(g["rerun_same"][i]), f"{name}: the device's second run differs"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit (both device runs) or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
