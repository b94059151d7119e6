"""QuantizedResizeBilinear_8_d32 on nnlib's device code (op_resizebilinear_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``resize_bilinear_d32_execute`` (no check): the same size copied (the memcpy manager),
an exact 2x without align corners on an even left padding by ``bilin_interp_work`` with asm
``do_bilin_interp_x2_single_slice_HVX``, any other size by ``do_bilin_interp_general_all_HVX`` on the plan of
``obtain_scaling_plan`` (a 32-bit vertical step, 15-bit horizontal fractions). The whole file is compiled unedited
with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``). The range passes through.
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "resize_d32"
OPS = ("QuantizedResizeBilinear_8_d32",)
SOURCE = "hexagon/ops/src/op_resizebilinear_d32.c"
FUNCTIONS = ["resize_bilinear_d32_execute", "bilin_interp_work", "do_bilin_interp_general_all_HVX",
             "obtain_scaling_plan", "do_bilin_interp_x2_single_slice_HVX"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("resizebilinear_d32_h", "nn_os_fast", "vmemset_h", "vmemcpy_h",
                                          "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_resize_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
#: header fields per case (harness_resize_d32.c)
HDR = ("b", "h", "w", "d", "new_h", "new_w", "n_inputs", "align_corners", "osize")


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, the d32 addressing helpers and the memcpy manager of src/shape_util.c verbatim, the whole
    op_resizebilinear_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_copy", "nn_tensor_addressing_d32"], [SOURCE])


def _case(rng: np.random.Generator, t: int, shape: tuple[int, int, int, int] | None = None,
          new: tuple[int, int] | None = None, align: int | None = None) -> dict:
    b, h, w, d = shape or (int(rng.choice([1, 1, 2])), int(rng.integers(1, 9)), int(rng.integers(1, 11)),
                           int(rng.integers(1, 80)))
    if new is None:
        kind = t % 4
        new = (2 * h, 2 * w) if kind == 0 else (h, w) if kind == 1 and rng.random() < 0.3 else \
            (int(rng.integers(1, 3 * h + 2)), int(rng.integers(1, 3 * w + 2)))
    align = int(rng.random() < 0.3) if align is None else align
    n_in = 5 if align or rng.random() < 0.5 else 4
    # twice the batches: with 2+ batches and an even number of d32 slices the general path's job count,
    # batches * (nd32 + 1) / 2 pairs, runs past the last batch (see overrun_jobs): room for its writes
    osize = 2 * b * (new[0] + 8) * (new[1] + 12) * ((d + 31) & ~31) + 4096
    lo = F(-rng.uniform(0, 5))
    return {"hdr": [b, h, w, d, *new, n_in, align, osize], "range": np.array([lo, lo + F(rng.uniform(0.1, 10))], F),
            "x": rng.integers(0, 256, (b, h, w, d), dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases and ``n`` random ones (a quarter exact 2x, some the same size, the rest any size to 3x + 1 each
    way; batches 1-2, height 1-8, width 1-10, depth 1-79; a third with align corners).

    Edges: 2x of 1x1, of odd and even widths, on 32 / 33 / 64 channels, with align corners; halving; 1xN rows and
    Nx1 columns; 3x; the same size."""
    out = [_case(rng, 0, (1, h, w, d), (2 * h, 2 * w), a) for (h, w) in ((1, 1), (3, 5), (4, 8)) for d in (32, 33, 64)
           for a in (0, 1)]
    out += [_case(rng, 2, (1, 8, 8, 40), (4, 4), 0), _case(rng, 2, (1, 1, 9, 20), (1, 17), 0),
            _case(rng, 2, (1, 9, 1, 20), (17, 1), 1), _case(rng, 2, (1, 4, 4, 16), (12, 12), 0),
            _case(rng, 1, (2, 5, 6, 70), (5, 6), 0)]
    return out + [_case(rng, t) for t in range(n)]


def overrun_jobs(b: int, d: int) -> int:
    """The pair-jobs ``resize_bilinear_d32_execute`` gives the general path beyond the input's batches:
    ``runstate.jobs = 2*(batches * (nd32+1)/2u)`` multiplies before it halves, so with 2+ batches and an even
    number of d32 slices it counts more (batch, slice-pair) units than there are; ``do_bilin_interp_general_all_HVX``
    runs them on batch indices past the last, reading past the input and writing past the output tensor."""
    nd32 = (d + 31) // 32
    return 2 * (b * (nd32 + 1) // 2) - 2 * b * ((nd32 + 1) // 2)


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (:data:`HDR`), the input range and codes (``x`` / ``x_off``), the status,
    the output range and shape, the codes (``codes`` / ``offsets``)."""
    return {**op_common.case_arrays(cases, "range"), **op_common.read_d32_runs(out, len(cases))}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list:
    """The engine's inputs for case ``i``: the d32 input with the defaults, the new size, the range, the align
    corners flag when the node has 5 inputs."""
    from hexnn_import.ops.d32 import to_d32

    b, h, w, d, nh, nw, n_in, align, _ = (int(v) for v in g["hdr"][i])
    x = to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d))
    ins = [x, np.array([nh, nw], np.int32), *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])]
    return ins + ([np.array([align], np.int32).reshape(1, 1, 1, 1)] if n_in == 5 else [])


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes, shape and range - or both refuse, first
    difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    def one(i: int) -> tuple[bool, str]:
        try:
            q, mn, mx = run_op("QuantizedResizeBilinear_8_d32", case_inputs(gold, i))
        except HexnnError as e:
            return bool(gold["status"][i] != 0), f"engine error {e}"
        q, dev, _, ok = op_common.d32_run(q, mn, mx, gold, i)
        d = q.astype(int) - dev if q.shape == dev.shape else None
        return ok, (f"status {gold['status'][i]} shape {q.shape} vs {dev.shape}; "
                    f"{-1 if d is None else int((d != 0).sum())} differ (max {0 if d is None or not d.size else int(abs(d).max())})")

    return op_common.count_exact(len(gold["hdr"]), one, lambda i: f" hdr {gold['hdr'][i].tolist()}")
