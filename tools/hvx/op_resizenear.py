"""ResizeNearestNeighbor_8 on nnlib's device code (op_resizenear.c, whole): cases, I/O, comparison.

nnlib registers ``resizenear_8_execute`` (no check): float32 scales ``w_in / new_w`` (align corners: ``(w_in - 1) /
(new_w - 1)`` when both new sides exceed 1), the source index ``(uint32_t)(h * yscale)`` or, aligned,
``MIN(round(h * yscale), h_in - 1)`` (a double ``round``), rows split over ``NUM_THREADS`` work items, each pixel
copied by the asm ``vmemcpy_asm``; the range copied. The whole file is compiled unedited with nnlib's own
``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "resizenear"
OPS = ("ResizeNearestNeighbor_8",)
SOURCE = "hexagon/ops/src/op_resizenear.c"
FUNCTIONS = ["resizenear_8_execute", "resize8_worker_thread"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_resizenear.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_copy`` verbatim, then the whole op_resizenear.c."""
    return op_common.os_body(nnlib, ["nn_tensor_copy"], [SOURCE], mcmanager=False)


def _case(rng: np.random.Generator, shape: list[int] | None = None, new: list[int] | None = None,
          n_in: int | None = None, align: int | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 12)), int(rng.integers(1, 12)),
                      int(rng.choice([1, 3, 8, 16, 32, 33, 100]))]
    new = new or [int(rng.integers(1, 30)), int(rng.integers(1, 30))]
    n_in = n_in or int(rng.choice([4, 5]))
    align = int(rng.integers(0, 2)) if align is None else align
    lo = -rng.uniform(0, 8)
    return {"hdr": [*shape, *new, n_in, align], "range": np.array([lo, lo + rng.uniform(0.01, 16)], F),
            "x": rng.integers(0, 256, shape, dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (2x / 3x / 0.5x / 7:3 and 3:7 scales, a side of 1 with align corners (the plain scale then), the
    same size, sizes where ``h * scale`` lands on an integer and just off it in float32, depths 1-100) and ``n``
    random ones."""
    out = []
    for (h, w), (nh, nw) in (((4, 4), (8, 8)), ((3, 5), (9, 15)), ((8, 8), (4, 4)), ((7, 7), (3, 3)),
                             ((3, 3), (7, 7)), ((5, 6), (1, 9)), ((5, 6), (9, 1)), ((6, 6), (6, 6)),
                             ((10, 3), (30, 11)), ((13, 17), (29, 23)), ((1, 1), (5, 5))):
        for align in (0, 1):
            out.append(_case(rng, [1, h, w, int(rng.choice([1, 8, 33]))], [nh, nw], 5, align))
    out.append(_case(rng, [2, 3, 4, 5], [6, 8], 4, 0))
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (b, h, w, d, new h, new w, n_in, align), the input range and codes (``x`` /
    ``x_off``), the status, output range and shape, the codes (``codes`` / ``offsets``)."""
    pos, status, rmin, rmax, shapes, res = 0, [], [], [], [], []
    for _ in cases:
        pos, (st, lo, hi, shp), codes = op_common.read_d32_run(out, pos)
        res.append(codes); status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "range": np.stack([c["range"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(res), "offsets": op_common.offsets(res)}


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (codes, shape, range bit for bit; or both refuse)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    b, h, w, d, nh, nw, n_in, align = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
    ins = [x, np.array([nh, nw], np.int32).reshape(1, 1, 1, 2),
           *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i]), np.full((1, 1, 1, 1), align, np.int32)]
    try:
        q, mn, mx = run_op("ResizeNearestNeighbor_8", ins[:n_in])
    except HexnnError as e:
        return bool(g["status"][i]), f"engine error {e}"
    q, dev, same, ok = op_common.flat_run(q, mn, mx, g, i)
    return ok, f"range same {same}, shape {q.shape} vs {dev.shape}"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
