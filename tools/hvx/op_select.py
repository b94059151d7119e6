"""Select_8 on nnlib's device code (op_select_8.c, whole): cases, I/O, comparison.

nnlib registers Select_8 with ``select_execute``: the output range ``adjust_minmax_for_zero(fminf(a_min, b_min),
fmaxf(a_max, b_max))``, both inputs moved onto it by HVX ``jointly_quantize`` (offsets ``quantize_uint8(0, ..)``,
multipliers ``(int)(4096 * level / out_level)``, shift 12) and picked per byte by a vector predicate loaded from
the condition bytes (``qselect_hvx``). The vendor file is compiled unedited with nnlib's own ``nn_graph.h``.
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "select"
OPS = ("Select_8",)
SOURCE = "hexagon/ops/src/op_select_8.c"
FUNCTIONS = ["select_execute", "qselect_thread_process", "qselect_hvx", "jointly_quantize",
             "adjust_minmax_for_zero"]
C_FILES = ["hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast",)]
HEADERS: list[str] = []
HARNESS = "harness_select.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c / src/quantize.c helpers verbatim, then the whole op_select_8.c."""
    return op_common.os_body(nnlib, ["nn_tensor_out_prepare_normal_fromshape"], [SOURCE], mcmanager=False,
                             quantize=["adjust_minmax_for_zero"])


def _range(rng: np.random.Generator) -> tuple[F, F]:
    """A float32 range holding 0."""
    lo = F(-rng.uniform(0.01, 8)) if rng.random() < 0.85 else F(0.0)
    return lo, F(rng.uniform(0.01, 16))


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (condition bytes 0 / 1 / 255 / other values, equal ranges, one range inside the other), then
    ``n`` random ones of 1 to 700 elements."""
    cases = []
    for i in range(n + 6):
        shp = (1, 1, 1, int(rng.integers(1, 8))) if i < 6 else (int(rng.integers(1, 3)), int(rng.integers(1, 5)),
                                                                int(rng.integers(1, 6)), int(rng.integers(1, 70)))
        ar = _range(rng)
        br = ar if i % 5 == 0 else _range(rng)
        ck = i % 4
        cond = (rng.integers(0, 2, shp) * (1 if ck < 2 else 255) if ck != 3 else rng.integers(0, 256, shp)).astype(np.uint8)
        cases.append({"hdr": list(shp), "ranges": np.array([*ar, *br], F), "c": cond,
                      "a": rng.integers(0, 256, shp, dtype=np.uint8), "b": rng.integers(0, 256, shp, dtype=np.uint8)})
    return cases


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "ranges", "c", "a", "b")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (shape), ranges, condition / a / b codes (offsets), status, range, codes."""
    pos, status, rmin, rmax, shapes, codes = 0, [], [], [], [], []
    for _ in cases:
        pos, (st, lo, hi, shp), c = op_common.read_d32_run(out, pos)
        status.append(st); rmin.append(lo); rmax.append(hi); shapes.append(shp); codes.append(c)
    op_common.check_end(out, pos)
    cat = lambda k: np.concatenate([c[k].ravel() for c in cases])
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "ranges": np.stack([c["ranges"] for c in cases]),
            "c": cat("c"), "a": cat("a"), "b": cat("b"), "in_off": op_common.offsets([c["a"] for c in cases]),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The engine's seven inputs for case ``i``."""
    sl = slice(g["in_off"][i], g["in_off"][i + 1])
    shp = g["hdr"][i]
    s = lambda v: np.array(v, F).reshape(1, 1, 1, 1)
    r = g["ranges"][i]
    return [g["c"][sl].reshape(shp), g["a"][sl].reshape(shp), s(r[0]), s(r[1]), g["b"][sl].reshape(shp), s(r[2]), s(r[3])]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range -, first difference)."""
    from hexnn_import.ops.registry import run_op

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        q, mn, mx = run_op(OPS[0], case_inputs(gold, i))
        q, dev, same, ok = op_common.flat_run(np.asarray(q), mn, mx, gold, i)
        exact += ok
        if not ok and not first:
            d = np.abs(q.astype(int) - dev) if q.shape == dev.shape else np.ones(1)
            first = (f"case {i} {gold['hdr'][i].tolist()} ranges {gold['ranges'][i].tolist()}: {int((d > 0).sum())} "
                     f"differ (max {int(d.max())}), range same {same}")
    return len(gold["hdr"]), exact, first
