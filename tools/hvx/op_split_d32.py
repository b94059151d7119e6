"""QuantizedSplit_8_d32 on nnlib's device code (op_chanshuffle_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``split_d32_execute`` (no check): a channel shuffle with k = 1
(``common_chanshuffle_split_d32_execute``), each part copied slice by slice by ``channelshuf_d32_k1_template``'s
HVX loop (aligned, rotated or vdelta-realigned by the part's depth offset), the output range ``(fminf(0, in_min),
in_max)``. Depth only: input 0 an int32 3 (or -1), or wired where input 1 is. The whole file is compiled unedited
with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "split_d32"
OPS = ("QuantizedSplit_8_d32",)
SOURCE = "hexagon/ops/src/op_chanshuffle_d32.c"
FUNCTIONS = ["split_d32_execute", "common_chanshuffle_split_d32_execute", "chanshuf_worker_func",
             "channelshuf_d32_k1_template"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_split_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
SHAPE_UTIL = ["nn_tensor_addressing_d32", "tensor_slice_from_tensor_d32", "tensor_slice_on_dimension"]


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, the d32 addressing and slicing helpers of src/shape_util.c and quantize.c's
    ``adjust_minmax_for_zero`` verbatim, then the whole op_chanshuffle_d32.c."""
    return op_common.os_body(nnlib, SHAPE_UTIL, [SOURCE], mcmanager=False, quantize=["adjust_minmax_for_zero"])


def _case(rng: np.random.Generator, shape: list[int] | None = None, n_out: int | None = None) -> dict:
    n_out = n_out or int(rng.choice([2, 2, 3, 4, 5, 8]))
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 10)), int(rng.integers(1, 14)),
                      n_out * int(rng.integers(1, 70))]
    wired = int(rng.random() < 0.2)
    lo = -rng.uniform(0, 8) if rng.random() < 0.85 else rng.uniform(0.01, 2)   # a few ranges above 0
    return {"hdr": [*shape, n_out, wired, int(rng.choice([3, -1]))],
            "range": np.array([lo, lo + rng.uniform(0.01, 16)], F), "x": rng.integers(0, 256, shape, dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (parts of 1 / 16 / 31 / 32 / 33 / 48 / 64 channels, so each alignment path; heights 7 / 8 / 9 about
    the two-chunk row split; a range above 0; refusals: dimension 2, -2 or 4, a depth that does not divide) and ``n``
    random ones (2-8 parts of 1-69 channels, batches 1-2, height 1-9, width 1-13, a fifth wired)."""
    out = [_case(rng, [1, 3, 5, k * p], k) for p in (1, 16, 31, 32, 33, 48, 64) for k in (2, 3, 4)]
    out += [_case(rng, [2, h, 6, 96], 3) for h in (7, 8, 9)]
    c = _case(rng, [1, 2, 3, 64], 2)
    c["range"] = np.array([0.5, 2.5], F)
    out.append(c)
    for dim in (2, -2, 4):
        c = _case(rng, [1, 2, 3, 64], 2)
        c["hdr"][5:] = [0, dim]
        out.append(c)
    c = _case(rng, [1, 2, 3, 65], 2)
    out.append(c)
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (b, h, w, d, parts, wired, dim), the input range, the input codes (``x`` /
    ``x_off``); per part (``part_case``: its case) the status, output range and shape, the codes (``codes`` /
    ``offsets``)."""
    pos, part_case, status, rmin, rmax, shapes, codes = 0, [], [], [], [], [], []
    for i, c in enumerate(cases):
        for _ in range(c["hdr"][4]):
            pos, (st, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos)
            codes.append(run_codes); part_case.append(i); status.append(st); rmin.append(lo); rmax.append(hi)
            shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32), "range": np.stack([c["range"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "part_case": np.array(part_case, np.int32), "status": np.array(status, np.int32),
            "out_min": np.array(rmin, F), "out_max": np.array(rmax, F), "out_shape": np.array(shapes, np.int32),
            "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list:
    """The engine's inputs for case ``i``: the dimension (or the data again when wired), the d32 input with the
    defaults, its range."""
    from hexnn_import.ops.d32 import to_d32

    b, h, w, d, _, wired, dim = (int(v) for v in g["hdr"][i])
    x = to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d))
    return [x if wired else np.full((1, 1, 1, 1), dim, np.int32), x,
            *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - every part's codes and range - or both refuse, first
    difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        parts = np.flatnonzero(gold["part_case"] == i)
        try:
            outs = run_op("QuantizedSplit_8_d32", case_inputs(gold, i), n_outputs=len(parts) + 2)
        except HexnnError as e:
            ok, msg = bool(gold["status"][parts].all()), f"engine error {e}"
        else:
            runs = [op_common.d32_run(q, outs[-2], outs[-1], gold, r) for q, r in zip(outs, parts)]
            ok, msg = all(r[3] for r in runs), f"status {gold['status'][parts].tolist()}, parts {[r[3] for r in runs]}"
        exact += ok
        if not ok and not first:
            first = f"case {i} hdr {gold['hdr'][i].tolist()}: {msg}"
    return len(gold["hdr"]), exact, first
