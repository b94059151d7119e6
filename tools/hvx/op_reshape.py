"""QuantizedReshape and Reshape on nnlib's device code (op_reshape.c, whole): cases, I/O, comparison.

nnlib registers ``reshape_execute`` (no check) for both: a new shape of 1-4 values, back-filled onto b, h, w, d,
at most one negative (found from the element count), none 0, the product equal to the element count (saturating
``mulu32_sat``), the data copied by the memcpy manager's HVX copy, QuantizedReshape's range copied. The whole file
is compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "reshape"
OPS = ("QuantizedReshape", "Reshape")
SOURCE = "hexagon/ops/src/op_reshape.c"
FUNCTIONS = ["reshape_execute"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c", "hexagon/src/hvx_constants.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_reshape.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
EL = (np.uint8, np.int32)


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_copy`` and its run from the memcpy manager to
    ``nn_tensor_out_prepare_normal_fromshape`` verbatim, then the whole op_reshape.c."""
    return op_common.os_body(nnlib, ["nn_tensor_copy"], [SOURCE])


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None, new: list[int] | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 7)), int(rng.integers(1, 9)),
                      int(rng.integers(1, 70))]
    if new is None:
        n = int(np.prod(shape))
        k = int(rng.integers(1, 5))
        dims = [1] * k
        rest = n
        for j in range(k - 1):
            divs = [v for v in range(1, rest + 1) if rest % v == 0]
            dims[j] = int(rng.choice(divs)); rest //= dims[j]
        dims[k - 1] = rest
        rng.shuffle(dims)
        if rng.random() < 0.4:
            dims[int(rng.integers(0, k))] = -1
        new = [int(v) for v in dims]
    lo = -rng.uniform(0, 8)
    data = rng.integers(0, 256, shape, dtype=np.uint8) if op == 0 else rng.integers(-2 ** 31, 2 ** 31, shape,
                                                                                   dtype=np.int64).astype(np.int32)
    return {"hdr": [op, *shape, len(new), *new, *[0] * (5 - len(new))],
            "range": np.array([lo, lo + rng.uniform(0.01, 16)], F), "x": data}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (each rank 1-4, a -1 in each place, the same shape; refusals: two -1, a 0, a product that does
    not match, a -1 that cannot divide, rank 0 and 5, a product past 2^32) and ``n`` random ones over both ops."""
    out = []
    for op in (0, 1):
        s = [2, 3, 4, 5]
        out += [_case(rng, op, s, nw) for nw in ([120], [6, 20], [2, 3, 20], [2, 3, 4, 5], [-1], [-1, 20], [6, -1],
                                                 [2, -1, 4, 5], [1, 1, 1, -1], [2, 3, 4, -2], [-1, -1, 30], [0, 120],
                                                 [7, 20], [-1, 7], [], [1, 1, 2, 3, 20], [65536, 65536, 1, 120])]
    return out + [_case(rng, int(rng.integers(0, 2))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d, rank, shape[5]), the input range and data as bytes (``x`` /
    ``x_off``), the status, output range and shape, the output bytes (``out`` / ``offsets``)."""
    runs, _ = op_common.read_byte_runs(out, [np.dtype(EL[c["hdr"][0]]).itemsize for c in cases])
    return {**op_common.byte_case_arrays(cases), **runs}


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (bytes, shape and QuantizedReshape's range bit for bit; or both
    refuse)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    op, b, h, w, d, rank, *new = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].view(EL[op]).reshape(b, h, w, d)
    ins = [x, np.array(new[:rank], np.int32).reshape(1, 1, 1, rank),
           *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])]
    try:
        outs = run_op(OPS[op], ins[:4 if op == 0 else 2])
    except HexnnError as e:
        return bool(g["status"][i]), f"{OPS[op]}: engine error {e}"
    if g["status"][i]:
        return False, f"{OPS[op]}: the device refused, the engine ran"
    q, ok = op_common.byte_run(outs, g, i, op == 0)
    return ok, f"{OPS[op]}: shape {list(q.shape)} vs {g['out_shape'][i].tolist()}"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
