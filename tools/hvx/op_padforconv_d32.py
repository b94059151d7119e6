"""QuantizedPadForConv_8_d32 on nnlib's device code (op_pad_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``pad_d32_check`` (``is_padforconv`` from the node type) and ``pad_d32_execute``:
``pad32_build_strategy``'s PadForConv branch takes the amounts from the filter's shape, the stride and the node's
padding (``nn_pad_compute_outsize_and_pad``, a negative after-padding taken as 0), ``pad32_setup_scaling`` the
code of 0.0, and ``pad32_execute`` writes the output with the memcpy manager's HVX fills and 2-D copy (asm
``vmemset_h`` / ``vmemcpy_2d_h`` / ``vmemset_2d_h``); a later run keeps the strategy and redoes only the scaling.
The whole file is compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_common
import op_pad_d32

NAME = "padforconv_d32"
OPS = ("QuantizedPadForConv_8_d32",)
SOURCE = op_pad_d32.SOURCE
FUNCTIONS = op_pad_d32.FUNCTIONS
C_FILES = op_pad_d32.C_FILES
ASM = op_pad_d32.ASM
HEADERS = op_pad_d32.HEADERS
HARNESS = "harness_padforconv_d32.c"
INCLUDES = op_pad_d32.INCLUDES
F = np.float32
PAD_NA, PAD_SAME, PAD_VALID, PAD_SAME_CAFFE = 0, 1, 2, 5
#: header fields per case (harness_padforconv_d32.c)
HDR = ("b", "h", "w", "d", "fh", "fw", "sh", "sw", "padding", "osize", "nruns")


def body(nnlib: pathlib.Path) -> str:
    """As op_pad_d32's: the OS stand-ins, the d32 addressing helpers and the memcpy manager, then op_pad_d32.c."""
    return op_pad_d32.body(nnlib)


def _range(rng: np.random.Generator) -> np.ndarray:
    kind = int(rng.integers(0, 4))
    if kind == 0:
        return np.array([0.0, rng.uniform(0.01, 10)], F)
    if kind == 1:                                   # a range that excludes 0: the code of 0.0 saturates
        lo = rng.uniform(0.1, 3) * rng.choice([-1, 1])
        return np.array(sorted([lo, lo + rng.uniform(0.01, 3) * np.sign(lo)]), F)
    lo = -rng.uniform(0, 8)
    return np.array([lo, lo + rng.uniform(0.01, 16)], F)


def _case(rng: np.random.Generator, shape: tuple[int, int, int, int] | None = None,
          geom: tuple[int, int, int, int] | None = None, pad: int | None = None, nruns: int | None = None) -> dict:
    b, h, w, d = shape or (int(rng.choice([1, 1, 2])), int(rng.integers(1, 12)), int(rng.integers(1, 14)),
                           int(rng.integers(1, 80)))
    fh, fw, sh, sw = geom or (*(int(v) for v in rng.integers(1, 8, 2)), *(int(v) for v in rng.integers(1, 4, 2)))
    pad = int(rng.choice([PAD_SAME, PAD_SAME, PAD_SAME_CAFFE])) if pad is None else pad
    nruns = int(rng.choice([1, 1, 2])) if nruns is None else nruns
    osize = b * (h + fh + 8) * (w + fw + 8) * ((d + 31) & ~31) + 1024
    return {"hdr": [b, h, w, d, fh, fw, sh, sw, pad, osize, nruns],
            "runs": np.stack([_range(rng) for _ in range(nruns)]),
            "x": rng.integers(0, 256, (b, h, w, d), dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases and ``n`` random ones (batches 1-2, height 1-11, width 1-13, depth 1-79, filters 1-7 by 1-7,
    strides 1-3, SAME or SAME_CAFFE, 1-2 runs on ranges with and without 0).

    Edges: the oversize filters prepare.c pads for (7x7 / 2 on 224x224-like rows, 5x5 / 1, 9x9 / 1, 1x7 and 7x1)
    on depth 3 / 32 / 33; a stride larger than the filter (negative after-padding); NA and VALID padding; a filter
    larger than the input."""
    out = [_case(rng, (1, 9, 11, d), g, PAD_SAME, 2) for d in (3, 32, 33)
           for g in ((7, 7, 2, 2), (5, 5, 1, 1), (9, 9, 1, 1), (1, 7, 1, 1), (7, 1, 1, 1))]
    out += [_case(rng, (1, 10, 10, 8), (2, 2, 4, 4), PAD_SAME), _case(rng, (1, 10, 10, 8), (3, 3, 4, 4), PAD_SAME_CAFFE)]
    out += [_case(rng, (1, 5, 6, 40), (3, 3, 1, 1), p) for p in (PAD_NA, PAD_VALID)]
    out += [_case(rng, (1, 3, 2, 16), (7, 7, 1, 1), PAD_SAME), _case(rng, (2, 3, 2, 16), (7, 5, 2, 3), PAD_SAME_CAFFE)]
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "runs", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (:data:`HDR`) and the input codes (``x`` / ``x_off``); per run (``run_case``:
    its case) the range sent (``run_in``), the status, output range and shape, the codes (``codes`` / ``offsets``)."""
    pos, run_case, run_in, status, rmin, rmax, shapes, codes = 0, [], [], [], [], [], [], []
    for i, c in enumerate(cases):
        for r in range(c["hdr"][10]):
            pos, (st, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos)
            codes.append(run_codes); run_case.append(i); run_in.append(c["runs"][r]); status.append(st)
            rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "run_case": np.array(run_case, np.int32), "run_in": np.array(run_in, F),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def run_inputs(g: dict[str, np.ndarray], r: int) -> tuple[list, int]:
    """(the engine's inputs for run ``r``, padding): the d32 input with the defaults, its range, a weights array of
    the filter's shape [fh, fw, d, 1], the stride as a [1, sh, sw, 1] shape."""
    from hexnn_import.ops.d32 import to_d32

    i = int(g["run_case"][r])
    b, h, w, d, fh, fw, sh, sw, pad, _, _ = (int(v) for v in g["hdr"][i])
    x = to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d))
    lo, hi = (np.array(v, F).reshape(1, 1, 1, 1) for v in g["run_in"][r])
    return [x, lo, hi, np.zeros((fh, fw, d, 1), np.uint8), np.zeros((1, sh, sw, 1), np.int32)], pad


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes, shape and range - or both refuse, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    def one(r: int) -> tuple[bool, str]:
        ins, pad = run_inputs(gold, r)
        try:
            q, mn, mx = run_op("QuantizedPadForConv_8_d32", ins, padding=pad)
        except HexnnError as e:
            return bool(gold["status"][r] != 0), f"engine error {e}"
        q, dev, same, ok = op_common.d32_run(q, mn, mx, gold, r)
        return ok, f"status {gold['status'][r]} shape {q.shape} vs {dev.shape}; range same {same}"

    return op_common.count_exact(len(gold["run_case"]), one,
                                 lambda r: f" case {gold['run_case'][r]} hdr {gold['hdr'][gold['run_case'][r]].tolist()}")
