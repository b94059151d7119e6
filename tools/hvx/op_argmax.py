"""ArgMax_8toInt32, ArgMax_8 and ArgMin_8 on nnlib's device code (op_argmax.c, op_argmin.c, whole): cases, I/O,
comparison.

ArgMax_8toInt32 (check, then execute): when the axis has stride 1 the rows go to the HVX work items
(``horizontal_argmax128_hvx`` for rows of at most 128 codes - lanes masked by ``Q6_Q_vsetq_R(dim)``, value and
inverse lane packed in 16 bits -, ``horizontal_argmax_hvx`` above), else the scalar ``maxIdx_8toInt32``.
ArgMax_8: the scalar ``maxIdx_8`` only (an 8-bit index; an axis over 256 refused). ArgMin_8: src/argminmax.c's
HVX ``hvx_argmin_or_max_in_rows`` (stride 1) or ``hvx_argmin_or_max_in_cols``. The vendor files are compiled
whole, unedited, with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``); the input buffer ends
with a fixed tail byte (``harness_flat.h``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "argmax"
OPS = ("ArgMax_8toInt32", "ArgMax_8", "ArgMin_8")
SOURCE = "hexagon/ops/src/op_argmax.c"
FUNCTIONS = ["argmax_execute_8toInt32", "argmax_check_8toInt32", "argmax_thread_work", "horizontal_argmax_hvx",
             "horizontal_argmax128_hvx", "argmax_execute_8", "argmin_execute_8 (op_argmin.c)"]
C_FILES = ["hexagon/src/argminmax.c", "hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c",
           "hexagon/src/nn_pipe_portable.c"]
ASM = ["hexagon/asm_src/nn_os_fast.S"]
HEADERS = ["quantize.h"]
HARNESS = "harness_argmax.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_out_prepare_normal_fromshape`` verbatim, then the whole
    op_argmax.c and op_argmin.c."""
    return op_common.os_body(nnlib, ["nn_tensor_out_prepare_normal_fromshape"],
                             [SOURCE, "hexagon/ops/src/op_argmin.c"], mcmanager=False)


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None, axis: int | None = None,
          alphabet: int | None = None) -> dict:
    if shape is None:
        shape = [int(rng.choice([1, 1, 2])), int(rng.integers(1, 6)), int(rng.integers(1, 8)), 1]
        shape[3] = int(rng.choice([1, 2, 5, 31, 64, 100, 127, 128, 129, 200, 255, 256, 300, 384, 500]))
        if op == 1 and shape[3] >= 256:
            shape[3] = 255
    if axis is None:
        axis = int(rng.choice([3, 3, 3, -1, 2, 1, 0, -2]))
    alphabet = alphabet or int(rng.choice([2, 5, 256]))
    lo = int(rng.integers(0, 257 - alphabet))
    return {"hdr": [op, *shape, axis], "x": rng.integers(lo, lo + alphabet, shape, dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases, per op: axis lengths 1 / 2 / 127 / 128 / 129 / 255 / 256 / 257 / 384 at stride 1 (the two HVX row
    kernels and the ``dim == 128`` mask), an axis of stride 1 that is not the depth (the dims after it 1), strided
    axes, all codes equal, the maximum only in the last 128-code chunk, axes 4 and -5 (refused), ArgMax_8's axis of
    300 (refused); then ``n`` random cases over the three ops (1-5 x 1-7 rows, depths 1-500, alphabets of 2, 5 or
    256 codes for ties)."""
    out = []
    for op in (0, 1, 2):
        for d in (1, 2, 127, 128, 129, 255, 256, 257, 384):
            if op == 1 and d >= 256:
                continue
            out.append(_case(rng, op, [1, 2, 3, d], 3, 256))
            out.append(_case(rng, op, [1, 2, 3, d], 3, 2))
        out.append(_case(rng, op, [2, 3, 130, 1], 2, 256))
        out.append(_case(rng, op, [1, 70, 1, 1], -3, 5))
        out += [_case(rng, op, [2, 3, 4, 5], a, 5) for a in (0, 1, 2, -4)]
        for d in (128, 256, 300):
            c = _case(rng, op, [1, 1, 2, d], 3, 256)
            c["x"][:] = 7
            if op == 1:
                c["hdr"][4] = c["x"].shape[3] if d < 256 else 255
                c["x"] = np.full([1, 1, 2, c["hdr"][4]], 7, np.uint8)
            out.append(c)
        c = _case(rng, op, [1, 1, 3, 300], 3, 256)
        c["x"][:] = 100
        c["x"][..., 260] = 200 if op != 2 else 3
        out.append(c)
        out += [_case(rng, op, [1, 2, 2, 9], a, 256) for a in (4, -5)]
    out.append(_case(rng, 1, [1, 1, 2, 300], 3, 256))
    return out + [_case(rng, int(rng.integers(0, 3))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d, axis), the input codes (``x`` / ``x_off``), the status,
    output range and shape, the output as int32 (``out`` / ``offsets``)."""
    pos, status, rmin, rmax, shapes, res = 0, [], [], [], [], []
    for c in cases:
        st, lo, hi, *shp = struct.unpack_from("<iff4i", out, pos); pos += 28
        n = int(np.prod(shp))
        dt = np.uint8 if c["hdr"][0] == 1 else np.int32
        res.append(np.frombuffer(out, dt, n, pos).astype(np.int32)); pos += n * np.dtype(dt).itemsize
        status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "out": np.concatenate(res), "offsets": op_common.offsets(res)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The engine's inputs for case ``i``: the codes, the axis, the input range the harness gives (-1, 1)."""
    _, b, h, w, d, axis = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
    return [x, np.array([axis], np.int32), np.array([-1.0], F), np.array([1.0], F)]


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (output, shape, and for ArgMax_8 the range [0, 255] bit for bit;
    or both refuse), and a message."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    op = OPS[int(g["hdr"][i][0])]
    try:
        outs = run_op(op, case_inputs(g, i))
    except HexnnError as e:
        return bool(g["status"][i]), f"{op}: engine error {e}"
    if g["status"][i]:
        return False, f"{op}: device refused, engine ran"
    dev = g["out"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["out_shape"][i])
    q = np.asarray(outs[0])
    same = q.shape == dev.shape and np.array_equal(q.astype(np.int64), dev)
    if op == "ArgMax_8":
        same = same and (F(outs[1].reshape(-1)[0]).tobytes() == g["out_min"][i].tobytes()
                         and F(outs[2].reshape(-1)[0]).tobytes() == g["out_max"][i].tobytes())
    return same, f"{op}: shape {q.shape} vs {dev.shape}, {int((q.reshape(-1) != dev.reshape(-1)).sum()) if q.size == dev.size else -1} differ"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
