"""DepthToSpace_8_d32 on nnlib's device code (op_depthspace_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``depthspace_d32_check`` and ``depthspace_d32_execute``: ``setup_x2s_plan`` checks the
block (``get_d2s_dims``: block width 1-4 or 8, output depth a multiple of 32 or 16 with block width 2, crops
[top, bottom, left, right(, depth)]) and plans height extents; ``x2s_d32_workfunc`` runs the HVX width-interleave
loops (``width_interleave_8_loop`` with its intermediate buffer for block width 8). The whole file is compiled
unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``). The range passes through.
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "depthspace_d32"
OPS = ("DepthToSpace_8_d32",)
SOURCE = "hexagon/ops/src/op_depthspace_d32.c"
FUNCTIONS = ["depthspace_d32_check", "depthspace_d32_execute", "x2s_d32_workfunc", "get_d2s_dims",
             "setup_x2s_plan", "width_interleave_8_loop"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemset_h", "vmemcpy_h", "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS: list[str] = []
HARNESS = "harness_depthspace_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
#: header fields per case (harness_depthspace_d32.c)
HDR = ("b", "h", "w", "d", "bsH", "bsW", "nbs", "ncrop", "osize")


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, ``nn_tensor_copy`` and the d32 addressing helpers (src/shape_util.c) verbatim, the whole
    op_depthspace_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_copy", "nn_tensor_addressing_d32", "nn_tensor_addressing_d32_16b"],
                             [SOURCE], mcmanager=False)


def _case(rng: np.random.Generator, bs: tuple[int, int] | None = None, dout: int | None = None,
          crop: list[int] | None = None, shape: tuple[int, int, int] | None = None) -> dict:
    bsh, bsw = bs or (int(rng.integers(1, 4)), int(rng.choice([1, 2, 2, 3, 4, 8])))
    if dout is None:
        dout = 16 if bsw == 2 and rng.random() < 0.3 else 32 * int(rng.choice([1, 1, 2]))
    b, h, w = shape or (int(rng.choice([1, 1, 2])), int(rng.integers(1, 6)), int(rng.integers(1, 8)))
    if crop is None:
        crop = [int(rng.integers(0, bsh)) if rng.random() < 0.3 else 0 for _ in range(2)] + \
               [int(rng.integers(0, bsw)) if rng.random() < 0.3 else 0 for _ in range(2)]
        kind = int(rng.integers(0, 3))
        crop = [] if kind == 0 else crop if kind == 1 else crop + [int(rng.integers(max(1, dout - 31), dout + 1))]
    d = dout * bsh * bsw
    nbs = 1 if bsh == bsw and rng.random() < 0.5 else 2
    osize = b * (h * bsh + 8) * (w * bsw + 8) * ((dout + 31) & ~31) + 4096
    lo = F(-rng.uniform(0, 5))
    return {"hdr": [b, h, w, d, bsh, bsw, nbs, len(crop), osize], "crop": np.array((crop + [0] * 5)[:5], np.int32),
            "range": np.array([lo, lo + F(rng.uniform(0.1, 10))], F), "x": rng.integers(0, 256, (b, h, w, d), np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases and ``n`` random ones (blocks 1-3 by 1-4 / 8, output depth 32 / 64 or 16 with block width 2,
    batches 1-2, height 1-5, width 1-7; no crop, 4 crops, or 5 with a depth kept 1-31 below the output's).

    Edges: every block width on 2x2 blocks and 1x bsW; prepare.c's transposed-conv form (2x2 blocks, 5 crops with
    the depth cropped); block width 8 on wide rows; crops of a whole block less one; refusals (block width 5, output
    depth 48, a depth crop 32 below)."""
    out = [_case(rng, (bh, bw), 32, [0, 0, 0, 0]) for bw in (1, 2, 3, 4, 8) for bh in (1, 2)]
    out += [_case(rng, (2, 2), 16, [0, 0, 0, 0]), _case(rng, (2, 2), 32, [0, 1, 0, 1, 21]),
            _case(rng, (2, 2), 64, [1, 0, 1, 0, 40], (1, 5, 7)), _case(rng, (2, 8), 32, [], (1, 3, 13)),
            _case(rng, (3, 3), 32, [2, 2, 2, 2], (1, 4, 4)), _case(rng, (4, 4), 32, [3, 0, 0, 3, 1], (2, 2, 3))]
    out += [_case(rng, (2, 5), 32, []), _case(rng, (2, 2), 48, []), _case(rng, (2, 2), 64, [0, 0, 0, 0, 32])]
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "crop", "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (:data:`HDR`), the crops (5, zero-filled), the input range and codes
    (``x`` / ``x_off``), the status, the output range and shape, the codes (``codes`` / ``offsets``)."""
    return {**op_common.case_arrays(cases, "range"), "crop": np.stack([c["crop"] for c in cases]),
            **op_common.read_d32_runs(out, len(cases))}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list:
    """The engine's inputs for case ``i``: the d32 input with the defaults, the block ([bs] or [bsH, bsW]), the
    range, the crops when the node has them."""
    from hexnn_import.ops.d32 import to_d32

    b, h, w, d, bsh, bsw, nbs, ncrop, _ = (int(v) for v in g["hdr"][i])
    x = to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d))
    block = np.array([bsh, bsw][:nbs], np.int32).reshape(1, 1, 1, nbs)
    ins = [x, block, *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])]
    return ins + ([g["crop"][i][:ncrop].reshape(1, 1, 1, ncrop)] if ncrop else [])


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes, shape and range - or both refuse, first
    difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    def one(i: int) -> tuple[bool, str]:
        try:
            q, mn, mx = run_op("DepthToSpace_8_d32", case_inputs(gold, i))
        except HexnnError as e:
            return bool(gold["status"][i] != 0), f"engine error {e}"
        q, dev, same, ok = op_common.d32_run(q, mn, mx, gold, i)
        nd = int((q != dev).sum()) if q.shape == dev.shape else -1
        return ok, f"status {gold['status'][i]} shape {q.shape} vs {dev.shape}; {nd} differ; range same {same}"

    return op_common.count_exact(len(gold["hdr"]), one, lambda i: f" hdr {gold['hdr'][i].tolist()}")
