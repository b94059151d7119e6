"""QuantizedPad_8_d32 on nnlib's device code (op_pad_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``pad_d32_check`` (the node's opaque strategy block) and ``pad_d32_execute``:
``pad32_build_strategy`` reads the pads tensor (width n = 1..4 rows of before / after, back-filled onto b, h, w, d,
no depth padding), ``pad32_setup_scaling`` the fill code, and ``pad32_execute`` writes the output with the memcpy
manager's HVX fills and 2-D copy (asm ``vmemset_h`` / ``vmemcpy_2d_h`` / ``vmemset_2d_h``); a later run on the same
input keeps the strategy and redoes only the scaling. The whole file is compiled unedited with nnlib's own
``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "pad_d32"
OPS = ("QuantizedPad_8_d32",)
SOURCE = "hexagon/ops/src/op_pad_d32.c"
FUNCTIONS = ["pad_d32_check", "pad_d32_execute", "pad32_check_strategy", "pad32_build_strategy",
             "pad32_setup_scaling", "pad32_execute"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_pad_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
#: header fields sent per case (harness_pad_d32.c)
HDR = ("b", "h", "w", "d", "n_in", "rows", "nruns", "osize", "pads_depth", "flag")


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, the d32 addressing helpers and the memcpy manager of src/shape_util.c verbatim, then the
    whole op_pad_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_addressing_d32", "nn_tensor_addressing_d32_16b"], [SOURCE])


def _osize(shape: list[int], pads: np.ndarray) -> int:
    """Output bytes enough for the padded shape (the device's layout: 4 rows above and below, width padded by 4
    to a multiple of 4, depth to 32)."""
    rows = len(pads) // 2
    pairs = [(0, 0)] * (4 - rows) + [(max(int(pads[2 * i]), 0), max(int(pads[2 * i + 1]), 0)) for i in range(rows)] \
        if rows <= 4 else [(0, 0)] * 4
    b, h, w, d = (n + lo + hi for n, (lo, hi) in zip(shape, pairs))
    return b * (h + 8) * (w + 8) * ((d + 31) & ~31) + 1024


def _range(rng: np.random.Generator) -> np.ndarray:
    kind = int(rng.integers(0, 5))
    if kind <= 1:
        lo = -rng.uniform(0, 8)
        return np.array([lo, lo + rng.uniform(0.01, 16)], F)
    if kind == 2:       # a range that excludes 0 (the device does not check it)
        lo = rng.uniform(0.1, 3) * rng.choice([-1, 1])
        return np.array(sorted([lo, lo + rng.uniform(0.01, 3) * np.sign(lo)]), F)
    if kind == 3:
        return np.array([0.0, rng.uniform(0.01, 10)], F)
    return np.array([-rng.uniform(1e-4, 1e3), rng.uniform(1e-4, 1e3)], F)


def _pad_value(rng: np.random.Generator, r: np.ndarray) -> F:
    kind = int(rng.integers(0, 8))
    if kind <= 2:
        return F(0.0)
    if kind <= 5:                 # inside the range, or somewhat beyond it
        span = r[1] - r[0]
        return F(rng.uniform(r[0] - 0.3 * span, r[1] + 0.3 * span))
    if kind == 6:
        return F(rng.choice([np.inf, -np.inf]))
    return F(rng.uniform(-100, 100))


def _case(rng: np.random.Generator, shape: list[int] | None = None, pads: list[int] | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 1, 2])), int(rng.integers(1, 8)), int(rng.integers(1, 12)),
                      int(rng.integers(1, 80))]
    if pads is None:
        rows = int(rng.integers(1, 5))
        vals = rng.integers(0, 4, (rows, 2)) * (rng.random((rows, 2)) < 0.7)
        vals[-1] = 0                                    # no depth padding (a random case always converts)
        if rows == 4 and rng.random() < 0.7:
            vals[0] = 0                                 # batch padding in a few cases only
        pads = [int(v) for v in vals.ravel()]
    n_in = int(rng.choice([4, 5, 5, 6]))
    nruns = int(rng.choice([1, 1, 2]))
    ranges = [_range(rng) for _ in range(nruns)]
    runs = np.array([[*r, _pad_value(rng, r)] for r in ranges], F)
    hdr = [*shape, n_in, len(pads) // 2, nruns, 0, 2, int(n_in == 6 and rng.random() < 0.5)]
    c = {"hdr": hdr, "pads": np.array(pads, np.int32), "runs": runs, "x": rng.integers(0, 256, shape, dtype=np.uint8)}
    c["hdr"][7] = _osize(shape, c["pads"])
    return c


def _edit(c: dict, n_in: int | None = None, runs: list[list[float]] | None = None, flag: int | None = None) -> dict:
    if n_in is not None:
        c["hdr"][4] = n_in
    if runs is not None:
        c["runs"] = np.array(runs, F)
        c["hdr"][6] = len(runs)
    if flag is not None:
        c["hdr"][9] = flag
    return c


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases and ``n`` random ones (batches 1-2, height 1-7, width 1-11, depth 1-79; 1-4 pad rows of 0-3 with
    no depth padding; 4-6 inputs, pad values 0, inside / beyond the range, +-inf, far out; ranges with and without
    0; 1-2 runs, the second with another range and pad value).

    Edges: depth 1 / 31 / 32 / 33 / 64 / 128 with each left / right width padding; top / bottom only; batch padding;
    each row count 1-4; +-inf, NaN and far-out pad values (saturated, not refused); a zero-width range; refusals:
    depth padding, a negative pad, 5 rows, a pads tensor of depth 1, a pad value outside the range with input 5 set.
    """
    out = [_case(rng, [1, 2, w, d], [0, 0, t, 0, lft, rt, 0, 0]) for d in (1, 31, 32, 33, 64, 128)
           for w, t, lft, rt in ((1, 1, 1, 0), (2, 0, 0, 3), (3, 2, 2, 2), (5, 1, 4, 1), (4, 0, 5, 0))]
    out += [_case(rng, [2, 3, 4, 40], [0, 0, 3, 2, 0, 0, 0, 0]), _case(rng, [2, 3, 4, 40], [1, 2, 1, 0, 0, 1, 0, 0])]
    out += [_case(rng, [1, 3, 4, 20], p) for p in ([0, 0], [2, 1, 0, 0], [1, 0, 2, 3, 0, 0])]
    base = [[-1.0, 3.0, v] for v in (np.inf, -np.inf, np.nan, 100.0, -100.0, 3.05, -1.02)]
    out += [_edit(_case(rng, [1, 2, 3, 33], [1, 1, 1, 1, 0, 0]), n_in=5, runs=[r]) for r in base]
    out.append(_edit(_case(rng, [1, 2, 3, 8], [1, 1, 1, 1, 0, 0]), n_in=5, runs=[[1.5, 1.5, 0.0]]))
    out.append(_edit(_case(rng, [1, 2, 3, 8], [1, 1, 1, 1, 0, 0]), n_in=4, runs=[[1.5, 1.5, 0.0]]))
    out.append(_edit(_case(rng, [1, 2, 3, 8], [1, 1, 1, 1, 0, 0]), n_in=6, runs=[[-1.0, 3.0, 0.5]], flag=1))
    out.append(_edit(_case(rng, [1, 2, 3, 8], [1, 1, 1, 1, 0, 0]), n_in=6, runs=[[-1.0, 3.0, 0.5], [-1.0, 3.0, 3.5]],
                     flag=1))
    out.append(_edit(_case(rng, [1, 2, 3, 8], [1, 1, 1, 1, 0, 0]), n_in=5, runs=[[-1.0, 3.0, 0.5], [-2.0, 6.0, 1.0]]))
    out += [_case(rng, [1, 2, 3, 8], p) for p in ([0, 0, 1, 1, 0, 0, 0, 1], [0, 0, 1, -1, 0, 0, 0, 0],
                                                  [0, 0, 0, 0, 1, 1, 0, 0, 0, 0])]
    c = _case(rng, [1, 2, 3, 8], [0, 0, 1, 1, 0, 0, 0, 0])
    c["hdr"][8] = 1
    out.append(c)
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "pads", "runs", "x")


def unpack(out: bytes, cases: list[dict], dtype: type = np.uint8) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (:data:`HDR`), the pads (``pads`` / ``pads_off``), the input codes (``x`` /
    ``x_off``); per run (``run_case``: its case) the range and pad value sent (``run_in``), the status, output
    range and shape, the codes (``codes`` / ``offsets``)."""
    pos, run_case, run_in, status, rmin, rmax, shapes, codes = 0, [], [], [], [], [], [], []
    for i, c in enumerate(cases):
        for r in range(c["hdr"][6]):
            pos, (st, lo, hi, shp), run_codes = op_common.read_d32_run(out, pos, dtype)
            codes.append(run_codes); run_case.append(i); run_in.append(c["runs"][r]); status.append(st)
            rmin.append(lo); rmax.append(hi); shapes.append(shp)
    op_common.check_end(out, pos)
    return {"hdr": np.array([c["hdr"] for c in cases], np.int32),
            "pads": np.concatenate([c["pads"] for c in cases]), "pads_off": op_common.offsets([c["pads"] for c in cases]),
            "x": np.concatenate([c["x"].ravel() for c in cases]), "x_off": op_common.offsets([c["x"] for c in cases]),
            "run_case": np.array(run_case, np.int32), "run_in": np.array(run_in, F),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, F), "out_max": np.array(rmax, F),
            "out_shape": np.array(shapes, np.int32), "codes": np.concatenate(codes), "offsets": op_common.offsets(codes)}


def run_inputs(g: dict[str, np.ndarray], r: int) -> list:
    """The engine's inputs for run ``r``: the d32 input with the defaults, its range, the pads tensor as the harness
    declares it ([1, 1, rows, depth]), then the pad value and flag the node has (4-6 inputs)."""
    from hexnn_import.ops.d32 import to_d32

    i = int(g["run_case"][r])
    b, h, w, d, n_in, rows, _, _, pdepth, flag = (int(v) for v in g["hdr"][i])
    x = to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d))
    pads = g["pads"][g["pads_off"][i]:g["pads_off"][i + 1]][:rows * pdepth].reshape(1, 1, rows, pdepth)
    lo, hi, value = (np.array(v, F).reshape(1, 1, 1, 1) for v in g["run_in"][r])
    return [x, lo, hi, pads, value, np.full((1, 1, 1, 1), flag, np.int32)][:n_in]


def compare(gold: dict[str, np.ndarray], op: str = "QuantizedPad_8_d32") -> tuple[int, int, str]:
    """(runs, runs the engine reproduces bit for bit - codes, shape and range - or both refuse, first difference),
    the engine running ``op``."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    exact, first = 0, ""
    for r in range(len(gold["run_case"])):
        try:
            q, mn, mx = run_op(op, run_inputs(gold, r))
        except HexnnError as e:
            ok, msg = bool(gold["status"][r] != 0), f"engine error {e}"
        else:
            _, _, same, ok = op_common.d32_run(q, mn, mx, gold, r)
            msg = f"status {gold['status'][r]}, range same {same}"
        exact += ok
        if not ok and not first:
            first = f"run {r} case {gold['run_case'][r]} hdr {gold['hdr'][gold['run_case'][r]].tolist()}: {msg}"
    return len(gold["run_case"]), exact, first
