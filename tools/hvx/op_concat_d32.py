"""QuantizedConcat_8_d32 on nnlib's device code (op_concat_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``concat_check`` and ``concat_execute_hvx``: ``concat_execute`` merges the input ranges
(``fminf`` / ``fmaxf``, a minimum above 0 set to 0, one below zero-fixed by ``adjust_minmax_for_zero``), slices the
output along the dimension (``tensor_slice_progressive_d32``) and copies each input with its scale / offset:
``scalemem_d32_hvx`` (asm) for rows aligned to 128 bytes and 32 channels, ``scaled_copy_d32_hvx`` (intrinsics,
``do_scale_ub``) for the rest, a plain copy where the input's range maps unchanged. The whole file is compiled
unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``); each input has its own depth
padding before the data. The engine: ``hexnn_import/ops/nnlib_concat_d32.py``.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "concat_d32"
OPS = ("QuantizedConcat_8_d32",)
SOURCE = "hexagon/ops/src/op_concat_d32.c"
FUNCTIONS = ["concat_check", "concat_execute_hvx", "concat_execute", "concat_copy_inputs", "scaled_copy_d32_hvx",
             "do_scale_ub"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "scalemem_d32")]
HEADERS = ["quantize.h"]
HARNESS = "harness_concat_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
SHAPE_UTIL = ["nn_tensor_addressing_d32", "find_concat_shape", "tensor_slice_from_tensor_d32",
              "tensor_slice_progressive_d32"]


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, the d32 shape helpers of src/shape_util.c and quantize.c's ``adjust_minmax_for_zero``
    verbatim, then the whole op_concat_d32.c."""
    return op_common.os_body(nnlib, SHAPE_UTIL, [SOURCE], mcmanager=False, quantize=["adjust_minmax_for_zero"])


def _range(rng: np.random.Generator) -> list[float]:
    u = rng.random()
    lo = 0.0 if u < 0.15 else (rng.uniform(0.01, 2) if u < 0.25 else -rng.uniform(0.01, 8))   # some above 0
    return [lo, lo + rng.uniform(0.05, 16)]


def _case(rng: np.random.Generator, dim: int | None = None, n_in: int | None = None,
          ranges: list[list[float]] | None = None, base: list[int] | None = None) -> dict:
    n_in = n_in or int(rng.choice([1, 2, 2, 3, 3, 4, 5]))
    dim = int(rng.choice([3, 3, 3, 2, 1, 0])) if dim is None else dim
    base = base or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 8)), int(rng.integers(1, 12)),
                    int(rng.integers(1, 70))]
    shapes = []
    for _ in range(n_in):
        s = list(base)
        if 0 <= dim <= 3:
            s[dim] = int(rng.integers(1, 70 if dim == 3 else 5))
        shapes.append(s)
    ranges = ranges or [_range(rng) for _ in range(n_in)]
    if rng.random() < 0.2 and n_in > 1:   # an input on the merged range already: the copy path
        ranges[1] = [min(r[0] for r in ranges), max(r[1] for r in ranges)]
    return {"dim": dim, "shapes": shapes, "before": [int(rng.integers(0, 32)) for _ in range(n_in)],
            "ranges": np.array(ranges, F), "x": [rng.integers(0, 256, s, dtype=np.uint8) for s in shapes]}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (the worked example [0, 127] + [-128, 127]; every dimension with 2 and 3 inputs; one input;
    equal ranges; a merged range the zero fix moves; depths 31 / 32 / 33 / 64 at offsets 0 and 5; refusals: a
    dimension of 4, shapes that do not match) and ``n`` random ones (1-5 inputs, dims 0-3, depths 1-69 with 0-31
    channels of padding before, ranges about / above 0)."""
    out = [_case(rng, 3, 2, [[0.0, 127.0], [-128.0, 127.0]], [1, 1, 3, 1])]
    out += [_case(rng, d, k) for d in range(4) for k in (2, 3)]
    out += [_case(rng, 3, 1), _case(rng, 3, 3, [[-1.0, 1.0]] * 3), _case(rng, 3, 2, [[0.0, 255.0], [-255.0, 255.0]])]
    for d in (31, 32, 33, 64):
        for before in (0, 5):
            c = _case(rng, 3, 2, base=[1, 3, 5, d])
            c["shapes"] = [[1, 3, 5, d], [1, 3, 5, d]]
            c["x"] = [rng.integers(0, 256, s, dtype=np.uint8) for s in c["shapes"]]
            c["before"] = [before, 0]
            out.append(c)
    bad = _case(rng, 3, 2)
    bad["dim"] = 4
    out.append(bad)
    bad = _case(rng, 3, 2, base=[1, 2, 3, 8])
    bad["shapes"][1][1] = 3
    bad["x"][1] = rng.integers(0, 256, bad["shapes"][1], dtype=np.uint8)
    out.append(bad)
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        parts.append(struct.pack("<2i", len(c["shapes"]), c["dim"]))
        for s, b, r in zip(c["shapes"], c["before"], c["ranges"]):
            parts += [struct.pack("<5i", *s, b), r.astype(F).tobytes()]
        parts += [x.tobytes() for x in c["x"]]
    return b"".join(parts)


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per input (``in_case``: its case) its shape, padding before, range and codes (``x`` /
    ``x_off``); per case the dimension, status, output range, shape and codes (``codes`` / ``offsets``)."""
    pos, status, rmin, rmax, shapes, codes = 0, [], [], [], [], []
    for _ in cases:
        pos, (st, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos)
        codes.append(run_codes); status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    xs = [x for c in cases for x in c["x"]]
    return {"dim": np.array([c["dim"] for c in cases], np.int32),
            "in_case": np.array([i for i, c in enumerate(cases) for _ in c["shapes"]], np.int32),
            "in_shape": np.array([s for c in cases for s in c["shapes"]], np.int32),
            "in_before": np.array([b for c in cases for b in c["before"]], np.int32),
            "in_range": np.concatenate([c["ranges"] for c in cases]).astype(F),
            "x": np.concatenate([x.ravel() for x in xs]), "x_off": op_common.offsets(xs),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list:
    """The engine's inputs for case ``i``: the dimension, the d32 inputs (default padding), their mins and maxes."""
    from hexnn_import.ops.d32 import to_d32

    k = np.flatnonzero(g["in_case"] == i)
    xs = [to_d32(g["x"][g["x_off"][j]:g["x_off"][j + 1]].reshape(g["in_shape"][j])) for j in k]
    return [np.full((1, 1, 1, 1), int(g["dim"][i]), np.int32), *xs,
            *(np.array(g["in_range"][j, 0], F).reshape(1, 1, 1, 1) for j in k),
            *(np.array(g["in_range"][j, 1], F).reshape(1, 1, 1, 1) for j in k)]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    exact, first = 0, ""
    for i in range(len(gold["dim"])):
        try:
            q, mn, mx = run_op("QuantizedConcat_8_d32", case_inputs(gold, i))
        except HexnnError as e:
            ok, msg = bool(gold["status"][i]), f"engine error {e}"
        else:
            _, _, same, ok = op_common.d32_run(q, mn, mx, gold, i)
            msg = f"status {gold['status'][i]}, range equal {same}"
        exact += ok
        if not ok and not first:
            first = f"case {i} dim {gold['dim'][i]} inputs {gold['in_shape'][gold['in_case'] == i].tolist()}: {msg}"
    return len(gold["dim"]), exact, first
